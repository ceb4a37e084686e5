"""The result shapes every Redmine tool shares: a page, one entity, a write, a delete preview.

Lists follow the toolkit's lossless contract (:func:`mcpkit.results.page_of`): the answer
carries ``offset``, ``limit``, ``returned``, ``total_count`` and ``next_offset``, a size cap
shortens a page only at an item boundary, and long texts in a list are excerpts whose marker
names the call that reads them in full. One entity is formatted without any per-field cut;
its description or page text is never cut below :data:`FULL_TEXT_MIN` characters.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import mcp_types

from mcpkit.redmine.tools.args import confirmed
from mcpkit.redmine.tools.base import RedmineContext
from mcpkit.redmine.xml import response, singular
from mcpkit.results import DEFAULT_TEXT_LIMIT, Element, Window, page_of, xml_result

FULL_TEXT_MIN = 100_000
"""A single entity's description or wiki text is never cut below this many characters."""
DOCUMENT_FIELDS = ("description", "text")


def page_elements(
    rc: RedmineContext, items: Sequence[Any], *, item_tag: str, item_call: str | None
) -> list[Element]:
    """Each item as an element; an excerpt's marker names ``item_call`` for that item."""
    out: list[Element] = []
    for item in items:
        reader = None
        if item_call and isinstance(item, Mapping) and item.get("id") is not None:
            reader = "call " + item_call.replace("{id}", str(item["id"])) + " to read it in full"
        element = rc.fmt.with_reader(reader).value(item_tag, item)
        if element is not None:
            out.append(element)
    return out


def page_element(
    rc: RedmineContext,
    tag: str,
    items: Sequence[Any],
    window: Window,
    *,
    next_call: str,
    item_call: str | None = None,
    item_tag: str | None = None,
) -> Element:
    """One page of a list as ``<tag type="array" offset limit returned total_count next_offset>``."""
    elements = page_elements(rc, items, item_tag=item_tag or singular(tag), item_call=item_call)
    return page_of(tag, elements, window, next_call=next_call, item_call=item_call)


def page_result(
    rc: RedmineContext,
    tag: str,
    items: Sequence[Any],
    window: Window,
    *,
    tool: str,
    item_call: str | None = None,
    item_tag: str | None = None,
) -> mcp_types.CallToolResult:
    """A page as a result; the next page is ``tool`` with the same arguments and the next offset."""
    return xml_result(
        page_element(
            rc,
            tag,
            items,
            window,
            next_call=f"{tool} with the same arguments and offset={{offset}}",
            item_call=item_call,
            item_tag=item_tag,
        )
    )


def local_page(items: Sequence[Any], offset: int, limit: int) -> tuple[list[Any], Window]:
    """A page cut from a list Redmine returns whole (versions, categories, wiki pages...)."""
    return list(items[offset : offset + limit]), Window(offset, limit, len(items))


def entity_limit(data: Mapping[str, Any]) -> int:
    """The cap for one entity: the usual budget plus its description or text up to the minimum."""
    longest = max((len(v) for k, v in data.items() if k in DOCUMENT_FIELDS and isinstance(v, str)), default=0)
    return DEFAULT_TEXT_LIMIT + min(longest, FULL_TEXT_MIN)


def entity_element(rc: RedmineContext, tag: str, data: Mapping[str, Any]) -> Element:
    """One entity with every field in full."""
    return rc.fmt.full().entity(tag, data)


def entity_result(rc: RedmineContext, tag: str, data: Mapping[str, Any]) -> mcp_types.CallToolResult:
    """One entity as a result, capped losslessly."""
    return xml_result(entity_element(rc, tag, data), limit=entity_limit(data))


def entity_of(body: Mapping[str, Any], tag: str) -> dict[str, Any]:
    """``body[tag]`` when it is an object, else an empty one (Redmine always nests entities)."""
    value = body.get(tag)
    return dict(value) if isinstance(value, Mapping) else {}


def done(
    message: str, entity: Element | None = None, *, limit: int = DEFAULT_TEXT_LIMIT
) -> mcp_types.CallToolResult:
    """A successful write: ``<response><status>success</status>…``."""
    return xml_result(response(message, entity), limit=limit)


def done_entity(
    rc: RedmineContext, message: str, tag: str, data: Mapping[str, Any]
) -> mcp_types.CallToolResult:
    """A successful write with the entity as Redmine now has it."""
    return done(message, entity_element(rc, tag, data), limit=entity_limit(data))


def preview_result(what: str, impact: Sequence[Element]) -> mcp_types.CallToolResult:
    """What a delete would remove; nothing was deleted."""
    env = response(
        f"Nothing was deleted. Deleting {what} cannot be undone; call again with confirm true to delete it.",
        status="preview",
    )
    box = env.child("impact")
    box.add(*impact)
    return xml_result(env)


async def confirm_or_preview(
    args: Mapping[str, Any],
    *,
    what: str,
    preview: Callable[[], Awaitable[list[Element]]],
    delete: Callable[[], Awaitable[None]],
    verb: str = "Deleted",
) -> mcp_types.CallToolResult:
    """Delete only with ``confirm: true``; otherwise describe what would go.

    The preview reads the target first, so a wrong id fails here with a 404 rather than
    after the model has been told it may confirm.
    """
    impact = await preview()
    if not confirmed(args):
        return preview_result(what, impact)
    await delete()
    return done(f"{verb} {what}.")
