"""Time entry tools: spent time on issues and projects."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import mcp_types

from mcpkit.errors import ValidationError
from mcpkit.redmine.tools import autofill
from mcpkit.redmine.tools.args import as_given, as_hours, as_text, date_text, present, project_ref
from mcpkit.redmine.tools.base import RedmineContext, redmine_tool
from mcpkit.redmine.tools.names import ACTIVITY, USER, ref, resolved
from mcpkit.redmine.tools.projects import project_id
from mcpkit.redmine.tools.resource import Resource, delete_tool, get_tool, list_tool, update_record
from mcpkit.redmine.tools.results import done_entity, entity_of
from mcpkit.redmine.tools.schemas import (
    NUMBER_OR_NAME,
    PROJECT,
    USER_OR_ME,
    as_in_create,
    hours_schema,
    ident,
)
from mcpkit.redmine.tools.verify import verified
from mcpkit.tools import params as p

CATEGORY = "time_entries"
TIME_ENTRY = Resource(
    "time_entry",
    "time_entries",
    "time_entries/{id}",
    "time_entries",
    paged=True,
    shown=("hours", "spent_on", "user", "issue", "project"),
    id_schema=ident("Time entry number"),
)


def time_filters(args: Mapping[str, Any]) -> dict[str, Any]:
    """Tool arguments to ``/time_entries.json`` query parameters (pure)."""
    q: dict[str, Any] = {}
    if args.get("project") is not None:
        q["project_id"] = project_ref(args["project"])
    if args.get("issue_id") is not None:
        q["issue_id"] = args["issue_id"]
    if args.get("user") is not None:
        q["user_id"] = ref(args["user"], USER, "user", words=("me",))
    if args.get("activity_id") is not None:
        q["activity_id"] = ref(args["activity_id"], ACTIVITY, "activity_id")
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
            "issue_id": as_given,
            "spent_on": date_text,
            "hours": as_hours,
            "comments": as_text,
        },
    )
    if args.get("activity_id") is not None:
        fields["activity_id"] = ref(args["activity_id"], ACTIVITY, "activity_id")
    if args.get("user_id") is not None:
        fields["user_id"] = ref(args["user_id"], USER, "user_id")
    if args.get("project") is not None:
        fields["project_id"] = project_ref(args["project"])
    if creating:
        if "issue_id" not in fields and "project_id" not in fields:
            raise ValidationError("A time entry needs an issue_id or a project")
        if not fields.get("hours"):
            raise ValidationError("hours must be more than 0")
    return fields


async def numbered(rc: RedmineContext, fields: dict[str, Any]) -> dict[str, Any]:
    """Redmine rejects a project identifier in a time entry body: it wants the number; names too."""
    if "project_id" in fields:
        fields["project_id"] = await project_id(rc.client, fields["project_id"])
    return await resolved(rc, fields, fields.get("project_id"))


async def create_time_entry(args: dict[str, Any], rc: RedmineContext) -> mcp_types.CallToolResult:
    fields = await numbered(rc, time_fields(args, creating=True))
    given = await autofill.prefill(rc, "time_entry", fields)
    body = await rc.client.post("time_entries.json", what="the new time entry", json={"time_entry": fields})
    entry = entity_of(body, "time_entry")
    message = f"Created time entry {entry.get('id')}.{autofill.said(given, entry)}"
    asked = {k: v for k, v in fields.items() if not (k == "project_id" and "issue_id" in fields)}
    return await verified(
        rc, asked, entry, message=message, success=done_entity(rc, message, "time_entry", entry)
    )


async def update_time_entry(args: dict[str, Any], rc: RedmineContext) -> mcp_types.CallToolResult:
    tid: int = args["id"]
    return await update_record(rc, TIME_ENTRY, tid, await numbered(rc, time_fields(args, creating=False)))


FIELDS: dict[str, dict[str, Any]] = {
    "issue_id": ident("Issue the time was spent on"),
    "project": p.string("Project number or identifier, if no issue"),
    "hours": hours_schema("Hours spent"),
    "activity_id": p.string(NUMBER_OR_NAME),
    "spent_on": p.string("Date like 2025-01-31, default today"),
    "comments": p.string("Short comment"),
    "user_id": p.string("Log for this user instead of the key owner, by number or name"),
}

TOOLS = (
    list_tool(
        TIME_ENTRY,
        "list_time_entries",
        "List spent time, filtered by project, issue, user, activity and dates.",
        CATEGORY,
        filters=time_filters,
        properties={
            "project": PROJECT,
            "issue_id": ident("Issue number"),
            "user": p.string(USER_OR_ME),
            "activity_id": p.string(NUMBER_OR_NAME),
            "from": p.string("First day like 2025-01-01"),
            "to": p.string("Last day like 2025-01-31"),
        },
        item_call="get_time_entry with id={id}",
    ),
    get_tool(TIME_ENTRY, "get_time_entry", "Show one time entry by number.", CATEGORY),
    redmine_tool(
        "create_time_entry",
        "Log spent time on an issue or a project. Give hours and an issue number or a project.\n"
        "Find activity numbers with list time entry activities.",
        FIELDS,
        create_time_entry,
        CATEGORY,
        ("hours",),
        "write",
    ),
    redmine_tool(
        "update_time_entry",
        "Change a time entry; fields as in create time entry, only those given change.",
        {"id": ident("Time entry number"), **as_in_create(FIELDS)},
        update_time_entry,
        CATEGORY,
        ("id",),
        "idempotent",
    ),
    delete_tool(
        TIME_ENTRY,
        "delete_time_entry",
        "Delete a time entry. Cannot be undone.\nWithout confirm true it only previews.",
        CATEGORY,
    ),
)
