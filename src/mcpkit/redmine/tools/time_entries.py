"""Time entry tools: spent time on issues and projects."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcpkit.errors import ValidationError
from mcpkit.redmine.tools.base import (
    CONFIRM,
    PAGING,
    PROJECT,
    Ctx,
    as_hours,
    as_pos_int,
    as_text,
    confirm_or_preview,
    date_text,
    define,
    done,
    entity_of,
    entity_result,
    ident,
    num,
    page_result,
    paging,
    present,
    project_ref,
    require_some,
)
from mcpkit.redmine.tools.projects import project_id
from mcpkit.results import Element
from mcpkit.tools import ToolSpec, coerce
from mcpkit.tools import params as p

CATEGORY = "time_entries"


def time_filters(args: Mapping[str, Any]) -> dict[str, Any]:
    """Tool arguments to ``/time_entries.json`` query parameters (pure)."""
    q: dict[str, Any] = {}
    if args.get("project") is not None:
        q["project_id"] = project_ref(args["project"])
    if args.get("issue_id") is not None:
        q["issue_id"] = num(args["issue_id"])
    if args.get("user") is not None:
        q["user_id"] = coerce.as_number_or_special(args["user"], allow=("me",))
    if args.get("activity_id") is not None:
        q["activity_id"] = num(args["activity_id"])
    for name in ("from", "to"):
        value = date_text(args, name)
        if value:
            q[name] = value
    return q


def time_fields(args: Mapping[str, Any], *, creating: bool) -> dict[str, Any]:
    """Tool arguments to the body of ``{"time_entry": ...}`` (pure)."""
    fields = present(
        args,
        {
            "issue_id": as_pos_int,
            "spent_on": date_text,
            "hours": as_hours,
            "activity_id": as_pos_int,
            "comments": as_text,
            "user_id": as_pos_int,
        },
    )
    if args.get("project") is not None:
        fields["project_id"] = project_ref(args["project"])
    if creating:
        if "issue_id" not in fields and "project_id" not in fields:
            raise ValidationError("A time entry needs an issue_id or a project")
        if not fields.get("hours"):
            raise ValidationError("hours must be more than 0")
    return fields


_FIELDS: dict[str, dict[str, Any]] = {
    "issue_id": ident("Issue the time was spent on"),
    "project": p.string("Project number or identifier, if no issue"),
    "hours": p.number("Hours spent such as 1.5", minimum=0),
    "activity_id": ident("Activity number"),
    "spent_on": p.string("Date like 2025-01-31, default today"),
    "comments": p.string("Short comment", max_length=1024),
    "user_id": ident("Log for this user instead of the key owner"),
}


def tools(ctx: Ctx) -> list[ToolSpec]:
    """The time entry tools bound to ``ctx``."""
    client, fmt = ctx.client, ctx.fmt

    async def read(tid: int) -> dict[str, Any]:
        return entity_of(await client.get(f"time_entries/{tid}.json", what=f"time entry {tid}"), "time_entry")

    async def list_entries(args: dict[str, Any]) -> Any:
        offset, limit = paging(args)
        page = await client.page(
            "time_entries.json",
            "time_entries",
            what="the time entry list",
            params=time_filters(args),
            offset=offset,
            limit=limit,
        )
        return page_result(ctx, "time_entries", page)

    async def get_entry(args: dict[str, Any]) -> Any:
        return entity_result(ctx, "time_entry", {"time_entry": await read(num(args["id"]))})

    async def numbered(fields: dict[str, Any]) -> dict[str, Any]:
        # Redmine rejects a project identifier in a time entry body: it wants the number.
        if "project_id" in fields:
            fields["project_id"] = await project_id(client, fields["project_id"])
        return fields

    async def create_entry(args: dict[str, Any]) -> Any:
        fields = await numbered(time_fields(args, creating=True))
        body = await client.post("time_entries.json", what="the new time entry", json={"time_entry": fields})
        entry = entity_of(body, "time_entry")
        return done(f"Created time entry {entry.get('id')}.", fmt.entity("time_entry", entry))

    async def update_entry(args: dict[str, Any]) -> Any:
        tid = num(args["id"])
        fields = await numbered(time_fields(args, creating=False))
        require_some(fields, f"time entry {tid}")
        await client.put(f"time_entries/{tid}.json", what=f"time entry {tid}", json={"time_entry": fields})
        return done(f"Updated time entry {tid}.", fmt.entity("time_entry", await read(tid)))

    async def delete_entry(args: dict[str, Any]) -> Any:
        tid = num(args["id"])

        async def preview() -> list[Element]:
            return [fmt.entity("time_entry", await read(tid))]

        async def delete() -> None:
            await client.delete(f"time_entries/{tid}.json", what=f"time entry {tid}")

        return await confirm_or_preview(args, what=f"time entry {tid}", preview=preview, delete=delete)

    return [
        define(
            "list_time_entries",
            "List spent time, filtered by project, issue, user, activity and dates.",
            {
                "project": PROJECT,
                "issue_id": ident("Issue number"),
                "user": p.string("User number, or me for the key owner"),
                "activity_id": ident("Activity number"),
                "from": p.string("First day like 2025-01-01"),
                "to": p.string("Last day like 2025-01-31"),
                **PAGING,
            },
            list_entries,
            category=CATEGORY,
            read_only=True,
        ),
        define(
            "get_time_entry",
            "Show one time entry by number.",
            {"id": ident("Time entry number")},
            get_entry,
            category=CATEGORY,
            required=["id"],
            read_only=True,
        ),
        define(
            "create_time_entry",
            "Log spent time on an issue or a project. Give hours and an issue number or a project.\n"
            "Find activity numbers with list time entry activities.",
            _FIELDS,
            create_entry,
            category=CATEGORY,
            required=["hours"],
        ),
        define(
            "update_time_entry",
            "Change a time entry. Only the fields you give are changed.",
            {"id": ident("Time entry number"), **_FIELDS},
            update_entry,
            category=CATEGORY,
            required=["id"],
            idempotent=True,
        ),
        define(
            "delete_time_entry",
            "Delete a time entry. Cannot be undone.\nWithout confirm true it only shows the entry.",
            {"id": ident("Time entry number"), "confirm": CONFIRM},
            delete_entry,
            category=CATEGORY,
            required=["id"],
            destructive=True,
        ),
    ]
