"""What every Redmine tool module shares: the context, common parameters, argument readers,
and the three result shapes (entity, page, write response) plus the confirm-or-preview flow.

Keeping these here means a tool module only says what is specific to its resource.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import mcp_types

from mcpkit.errors import ValidationError
from mcpkit.redmine.api import Page, RedmineClient
from mcpkit.redmine.xml import Formatter, response
from mcpkit.results import Element, xml_result
from mcpkit.tools import ToolSpec, coerce
from mcpkit.tools import params as p

Handler = Callable[[dict[str, Any]], Awaitable[mcp_types.CallToolResult | str]]


@dataclass(frozen=True)
class Ctx:
    """What a tool handler needs: the client and the formatter."""

    client: RedmineClient
    fmt: Formatter


# -- parameter schemas shared by many tools ------------------------------------------------------

PROJECT = p.string("Project number or identifier")
OFFSET = p.integer("Records to skip", minimum=0)
LIMIT = p.integer("Page size up to 100, default 25", minimum=1, maximum=100)
CONFIRM = p.boolean("True to really delete; otherwise only a preview")
PAGING = {"offset": OFFSET, "limit": LIMIT}


def ident(description: str) -> dict[str, Any]:
    """A positive whole-number id; the handler checks the sign, keeping tools/list small."""
    return p.integer(description)


def define(
    name: str,
    description: str,
    properties: Mapping[str, Mapping[str, Any]],
    handler: Handler,
    *,
    category: str,
    required: Sequence[str] = (),
    read_only: bool = False,
    destructive: bool = False,
    idempotent: bool = False,
) -> ToolSpec:
    """A ToolSpec with the annotations derived from three honest flags."""
    return ToolSpec(
        name=name,
        description=description,
        input_schema=p.object_schema(properties, required=required),
        handler=handler,
        category=category,
        read_only=read_only,
        destructive=None if read_only else destructive,
        idempotent=True if read_only else idempotent,
    )


# -- argument readers ----------------------------------------------------------------------------


def num(value: Any) -> int:
    """A positive whole-number id given as a number or text."""
    return coerce.as_id(value)


def project_ref(value: Any) -> int | str:
    """A project number or identifier, safe to put in a URL path."""
    return coerce.as_id_or_key(value)


def text(args: Mapping[str, Any], name: str) -> str | None:
    """An optional string argument, ``None`` when absent."""
    value = args.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValidationError(f"Invalid value for {name}: must be text")
    return value


def date_text(args: Mapping[str, Any], name: str) -> str | None:
    """An optional calendar date argument as Redmine wants it: ``YYYY-MM-DD``."""
    value = args.get(name)
    if value is None or value == "":
        return None
    return coerce.as_date(value).isoformat()


def int_or_none(args: Mapping[str, Any], name: str, *, minimum: int | None = None) -> int | None:
    """An optional whole number given as a number or text."""
    value = args.get(name)
    if value is None or value == "":
        return None
    try:
        return coerce.as_int(value, minimum=minimum)
    except ValidationError as exc:
        raise ValidationError(f"{name}: {exc}") from None


def paging(args: Mapping[str, Any]) -> tuple[int, int]:
    """``offset`` and ``limit`` with their defaults."""
    offset = int_or_none(args, "offset", minimum=0) or 0
    limit = int_or_none(args, "limit", minimum=1) or 25
    return offset, min(limit, 100)


def custom_fields(args: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """``custom_fields`` given as a list of ``{id, value}`` objects with text values."""
    raw = args.get("custom_fields")
    if raw is None:
        return None
    if not isinstance(raw, list):
        raise ValidationError("custom_fields must be a list of objects with id and value")
    out: list[dict[str, Any]] = []
    for item in raw:
        if not isinstance(item, Mapping) or "id" not in item:
            raise ValidationError("each custom field needs an id and a value")
        value = item.get("value", "")
        if isinstance(value, list):
            value = [str(v) for v in value]
        elif value is not None:
            value = str(value)
        out.append({"id": num(item["id"]), "value": value})
    return out


CUSTOM_FIELDS = p.array(
    p.obj(
        {"id": p.integer("Field number"), "value": p.string("Value")},
        required=["id"],
    ),
    "Custom field values",
)


def present(
    args: Mapping[str, Any], readers: Mapping[str, Callable[[Mapping[str, Any], str], Any]]
) -> dict[str, Any]:
    """The fields the caller actually gave, each read by its reader; absent ones are left out."""
    out: dict[str, Any] = {}
    for name, read in readers.items():
        if name in args:
            value = read(args, name)
            if value is not None:
                out[name] = value
    return out


def as_text(args: Mapping[str, Any], name: str) -> str | None:
    """Reader for free text fields."""
    return text(args, name)


def as_pos_int(args: Mapping[str, Any], name: str) -> int | None:
    """Reader for optional id fields."""
    return int_or_none(args, name, minimum=1)


def as_flag(args: Mapping[str, Any], name: str) -> bool | None:
    """Reader for optional booleans."""
    value = args.get(name)
    return None if value is None else coerce.as_bool(value)


def as_hours(args: Mapping[str, Any], name: str) -> float | None:
    """Reader for hours: a positive number."""
    value = args.get(name)
    if value is None or value == "":
        return None
    hours = float(coerce.as_number_or_special(value))
    if hours < 0:
        raise ValidationError(f"{name} must not be negative")
    return hours


def require_some(fields: Mapping[str, Any], what: str) -> None:
    """Refuse an update that would change nothing."""
    if not fields:
        raise ValidationError(f"Nothing to update for {what}: give at least one field to change")


# -- results -------------------------------------------------------------------------------------


def page_result(ctx: Ctx, tag: str, page: Page, *, item_tag: str | None = None) -> mcp_types.CallToolResult:
    """A collection page as XML with its paging figures."""
    return xml_result(
        ctx.fmt.collection(
            tag,
            page.items,
            total_count=page.total_count,
            offset=page.offset,
            limit=page.limit,
            item_tag=item_tag,
        )
    )


def list_result(
    ctx: Ctx, tag: str, items: list[Any], *, item_tag: str | None = None
) -> mcp_types.CallToolResult:
    """An unpaged collection such as trackers or statuses."""
    return xml_result(ctx.fmt.collection(tag, items, total_count=len(items), item_tag=item_tag))


def entity_result(ctx: Ctx, tag: str, body: Mapping[str, Any]) -> mcp_types.CallToolResult:
    """The entity under ``body[tag]`` as XML."""
    return xml_result(ctx.fmt.entity(tag, entity_of(body, tag)))


def entity_of(body: Mapping[str, Any], tag: str) -> dict[str, Any]:
    """``body[tag]`` when it is an object, else an empty one (Redmine always nests entities)."""
    value = body.get(tag)
    return dict(value) if isinstance(value, Mapping) else {}


def done(message: str, entity: Element | None = None) -> mcp_types.CallToolResult:
    """A successful write: ``<response><status>success</status>…``."""
    return xml_result(response(message, entity))


async def confirm_or_preview(
    args: Mapping[str, Any],
    *,
    what: str,
    preview: Callable[[], Awaitable[list[Element]]],
    delete: Callable[[], Awaitable[None]],
) -> mcp_types.CallToolResult:
    """Delete only with ``confirm: true``; otherwise describe what would go.

    The preview reads the target first, so a wrong id fails here with a 404 rather than
    after the model has been told it may confirm.
    """
    impact = await preview()
    if not coerce.as_bool(args.get("confirm", False)):
        env = response(
            f"Nothing was deleted. Deleting {what} cannot be undone; call again with confirm true to delete it.",
            status="preview",
        )
        box = env.child("impact")
        for item in impact:
            box.add(item)
        return xml_result(env)
    await delete()
    return done(f"Deleted {what}.")
