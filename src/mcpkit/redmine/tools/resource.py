"""Resources described as data, and the generic list, get and delete-with-preview tools built from them.

Most Redmine resources differ only in their paths, their JSON key, what may be included and
what a delete would take with it. A :class:`Resource` says exactly that; :func:`list_tool`,
:func:`get_tool` and :func:`delete_tool` make the tools, with module-level handlers that take
the resource, the context and the arguments, so each can be called directly in a test.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import mcp_types

from mcpkit.redmine.api import RedmineError, seg
from mcpkit.redmine.tools.args import MAX_LIMIT, includes, paging, project_ref, require_some
from mcpkit.redmine.tools.base import RedmineContext, redmine_tool
from mcpkit.redmine.tools.fields import SCHEMA as FIELDS_SCHEMA
from mcpkit.redmine.tools.fields import brief_schema, chosen, only
from mcpkit.redmine.tools.names import resolved
from mcpkit.redmine.tools.results import (
    confirm_or_preview,
    done_entity,
    entity_of,
    entity_result,
    local_page,
    page_result,
)
from mcpkit.redmine.tools.schemas import CONFIRM, PAGING, PROJECT, ident
from mcpkit.redmine.tools.verify import verified
from mcpkit.results import Element, Window
from mcpkit.tools import ToolSpec
from mcpkit.tools import params as p

Filters = Callable[[Mapping[str, Any]], dict[str, Any]]


@dataclass(frozen=True)
class Count:
    """A number shown in a delete preview: how many ``key`` records point at the target.

    ``params`` makes the filter from the target record as Redmine shows it.
    """

    tag: str
    path: str
    key: str
    params: Callable[[Mapping[str, Any]], dict[str, Any]]


@dataclass(frozen=True)
class Resource:
    """One kind of Redmine record.

    ``item`` and ``collection`` are paths without ``.json``; ``{id}`` stands for the record's
    id, ``{project}`` for the project argument. ``paged``: Redmine pages the collection itself
    (``offset``/``limit``/``total_count``); otherwise it returns it whole and the tool pages it.
    ``shown`` are the small fields a delete preview repeats; ``counts`` what else a delete takes.
    ``fields`` are the fields a record may have beside those an answer shows (Redmine leaves
    empty ones out), for checking the names in a ``fields`` argument; ``brief`` the fields of the
    short list form, when the list is big enough to want one (see :mod:`.fields`).
    """

    singular: str
    plural: str
    item: str
    collection: str = ""
    what: str = ""
    paged: bool = False
    includes: tuple[str, ...] = ()
    shown: tuple[str, ...] = ("name",)
    counts: tuple[Count, ...] = ()
    id_param: str = "id"
    id_schema: Mapping[str, Any] = field(default_factory=lambda: ident("Number"))
    fields: tuple[str, ...] = ()
    brief: tuple[str, ...] = ()

    @property
    def noun(self) -> str:
        return self.what or self.singular.replace("_", " ")

    def item_path(self, ref: Any) -> str:
        return self.item.replace("{id}", seg(ref)) + ".json"

    def collection_path(self, args: Mapping[str, Any]) -> str:
        """The collection's path with ``{project}`` and any ``{name_id}`` filled from ``args``."""
        path = self.collection
        for name in placeholders(path):
            ref = project_ref(args[name]) if name == "project" else args[name]
            path = path.replace("{" + name + "}", seg(ref))
        return path + ".json"


def placeholders(path: str) -> list[str]:
    """The ``{name}`` placeholders of a path template, in order."""
    return re.findall(r"\{([a-z_]+)\}", path)


def ref_of(res: Resource, args: Mapping[str, Any]) -> Any:
    """The record's id from the arguments: a number, or a project's number or identifier."""
    raw = args[res.id_param]
    return project_ref(raw) if res.id_param == "project" else raw


async def update_record(
    rc: RedmineContext, res: Resource, ref: int, fields: dict[str, Any]
) -> mcp_types.CallToolResult:
    """The shared update flow: read the record, PUT ``fields``, read it back, compare every field.

    The read before the write lets the answer name every field Redmine changed unasked (a time
    entry moved to another issue follows it into that issue's project), as issue writes do (see
    :mod:`.verify`): a side effect is said, never hidden behind a plain success."""
    require_some(fields, f"{res.noun} {ref}")
    before = await read(rc, res, ref)
    await rc.client.put(res.item_path(ref), what=f"{res.noun} {ref}", json={res.singular: fields})
    record = await read(rc, res, ref)
    message = f"Updated {res.noun} {ref}."
    return await verified(
        rc,
        fields,
        record,
        message=message,
        success=done_entity(rc, message, res.singular, record),
        before=before,
        rebuild=lambda text: done_entity(rc, text, res.singular, record),
    )


async def read(
    rc: RedmineContext, res: Resource, ref: Any, include: list[str] | None = None
) -> dict[str, Any]:
    """One record as Redmine shows it."""
    params = {"include": ",".join(include)} if include else None
    body = await rc.client.get(res.item_path(ref), what=f"{res.noun} {ref}", params=params)
    return entity_of(body, res.singular)


@dataclass(frozen=True)
class Listing:
    """How one list tool reads its resource: filters, its own name, the item reader, paging."""

    res: Resource
    tool: str
    filters: Filters | None = None
    item_call: str | None = None
    pages: bool = True


async def list_records(
    listing: Listing, args: dict[str, Any], rc: RedmineContext
) -> mcp_types.CallToolResult:
    """A page of records: Redmine's own paging when it has it, else a slice of the whole list."""
    res = listing.res
    offset, limit = paging(args) if listing.pages else (0, MAX_LIMIT)
    params = listing.filters(args) if listing.filters else {}
    params = await resolved(rc, params, params.get("project_id"))
    path = res.collection_path(args)
    what = f"the {res.plural.replace('_', ' ')}"
    if res.paged:
        page = await rc.client.page(path, res.plural, what=what, params=params, offset=offset, limit=limit)
        window = Window(offset, limit, page.total_count)
        items: list[Any] = page.items
    else:
        body = await rc.client.get(path, what=what, params=params or None)
        whole = list(body.get(res.plural) or [])
        if not listing.pages:
            offset, limit = 0, max(1, len(whole))
        items, window = local_page(whole, offset, limit)
    keep = chosen(args, noun=res.plural.replace("_", " "), known=known(res), seen=items, brief=res.brief)
    items = [only(item, keep) for item in items]
    return page_result(rc, res.plural, items, window, tool=listing.tool, item_call=listing.item_call)


def known(res: Resource) -> tuple[str, ...]:
    """The fields a ``fields`` argument may name for ``res`` besides those its answer shows."""
    return (*res.fields, *res.includes)


async def get_record(res: Resource, args: dict[str, Any], rc: RedmineContext) -> mcp_types.CallToolResult:
    """One record, with the includes asked for."""
    include = includes(args.get("include")) if res.includes else None
    record = await read(rc, res, ref_of(res, args), include)
    keep = chosen(args, noun=f"a {res.noun}", known=known(res), seen=[record])
    return entity_result(rc, res.singular, only(record, keep))


async def impact_of(rc: RedmineContext, res: Resource, ref: Any) -> list[Element]:
    """The delete preview: the record's small fields and how many records go with it."""
    record = await read(rc, res, ref)
    out = Element(res.singular, {"id": record.get("id", ref)})
    for name in res.shown:
        if record.get(name) is not None:
            value = record[name]
            out.child(name, None, value.get("name") if isinstance(value, Mapping) else value)
    for count in res.counts:
        try:
            page = await rc.client.page(
                count.path,
                count.key,
                what=f"the {count.tag.replace('_', ' ')}",
                params=count.params({"id": ref, **record}),
                limit=1,
            )
        except RedmineError as exc:
            # A module that is off (no time tracking) or a permission the key lacks: say so, do not fail.
            out.child(count.tag, {"counted": "false", "status": exc.status})
            continue
        out.child(count.tag, None, page.total_count)
    return [out]


async def delete_record(res: Resource, args: dict[str, Any], rc: RedmineContext) -> mcp_types.CallToolResult:
    """Preview without ``confirm: true``; delete with it."""
    ref = ref_of(res, args)

    async def delete() -> None:
        await rc.client.delete(res.item_path(ref), what=f"{res.noun} {ref}")

    return await confirm_or_preview(
        args, what=f"{res.noun} {ref}", preview=partial(impact_of, rc, res, ref), delete=delete
    )


def list_tool(
    res: Resource,
    name: str,
    description: str,
    category: str,
    *,
    filters: Filters | None = None,
    properties: Mapping[str, Mapping[str, Any]] | None = None,
    item_call: str | None = None,
    pages: bool = True,
) -> ToolSpec:
    """A paged list tool; each placeholder of the collection path becomes a required argument."""
    props: dict[str, Mapping[str, Any]] = {}
    for placeholder in placeholders(res.collection):
        props[placeholder] = PROJECT if placeholder == "project" else ident("Number of the parent record")
    required = tuple(props)
    props.update(properties or {})
    if pages:
        props["fields"] = FIELDS_SCHEMA
        if res.brief:
            props["brief"] = brief_schema(res.brief)
        props.update(PAGING)
    handler = partial(list_records, Listing(res, name, filters, item_call, pages))
    return redmine_tool(name, description, props, handler, category, required, "read")


def include_schema(names: tuple[str, ...]) -> dict[str, Any]:
    """The ``include`` parameter: a list of extra data names."""
    return p.array(p.enum("", names), "Extra data")


def get_tool(res: Resource, name: str, description: str, category: str) -> ToolSpec:
    """A tool that shows one record, with an ``include`` choice when the resource has any."""
    props: dict[str, Mapping[str, Any]] = {res.id_param: res.id_schema}
    if res.includes:
        props["include"] = include_schema(res.includes)
    props["fields"] = FIELDS_SCHEMA
    return redmine_tool(name, description, props, partial(get_record, res), category, (res.id_param,), "read")


def delete_tool(res: Resource, name: str, description: str, category: str) -> ToolSpec:
    """A delete tool that previews unless called with confirm true."""
    props = {res.id_param: res.id_schema, "confirm": CONFIRM}
    return redmine_tool(
        name, description, props, partial(delete_record, res), category, (res.id_param,), "destructive"
    )
