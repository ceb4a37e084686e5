"""Version tools: the milestones of a project."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import mcp_types

from mcpkit.redmine.api import seg
from mcpkit.redmine.tools.args import as_text, date_text, present, project_ref
from mcpkit.redmine.tools.base import RedmineContext, redmine_tool
from mcpkit.redmine.tools.resource import (
    Count,
    Resource,
    delete_tool,
    get_tool,
    list_tool,
    update_record,
)
from mcpkit.redmine.tools.results import done_entity, entity_of
from mcpkit.redmine.tools.schemas import PROJECT, as_in_create, ident
from mcpkit.redmine.tools.verify import verified
from mcpkit.tools import params as p

CATEGORY = "versions"
STATUSES = ("open", "locked", "closed")
SHARINGS = ("none", "descendants", "hierarchy", "tree", "system")
VERSION = Resource(
    "version",
    "versions",
    "versions/{id}",
    "projects/{project}/versions",
    shown=("name", "status"),
    counts=(
        Count("issues", "issues.json", "issues", lambda r: {"fixed_version_id": r["id"], "status_id": "*"}),
    ),
    id_schema=ident("Version number"),
)


def version_fields(args: Mapping[str, Any]) -> dict[str, Any]:
    """Tool arguments to the body of ``{"version": ...}`` (pure; enums are schema-checked)."""
    return present(
        args,
        {
            "name": as_text,
            "description": as_text,
            "due_date": date_text,
            "wiki_page_title": as_text,
            "status": as_text,
            "sharing": as_text,
        },
    )


async def create_version(args: dict[str, Any], rc: RedmineContext) -> mcp_types.CallToolResult:
    ref = project_ref(args["project"])
    fields = version_fields(args)
    body = await rc.client.post(
        f"projects/{seg(ref)}/versions.json", what=f"a version of project {ref}", json={"version": fields}
    )
    version = entity_of(body, "version")
    message = f"Created version {version.get('id')}."
    return await verified(
        rc, fields, version, message=message, success=done_entity(rc, message, "version", version)
    )


async def update_version(args: dict[str, Any], rc: RedmineContext) -> mcp_types.CallToolResult:
    return await update_record(rc, VERSION, args["id"], version_fields(args))


FIELDS: dict[str, dict[str, Any]] = {
    "name": p.string("Version name", min_length=1),
    "description": p.string("Short description"),
    "due_date": p.string("Due date like 2025-01-31"),
    "status": p.enum("State of the version", STATUSES),
    "sharing": p.enum("Which projects may use it", SHARINGS),
    "wiki_page_title": p.string("Title of a wiki page about the version"),
}

TOOLS = (
    list_tool(VERSION, "list_versions", "List the versions of a project, including shared ones.", CATEGORY),
    get_tool(VERSION, "get_version", "Show one version by number.", CATEGORY),
    redmine_tool(
        "create_version",
        "Create a version in a project. Only the name is required.",
        {"project": PROJECT, **FIELDS},
        create_version,
        CATEGORY,
        ("project", "name"),
        "write",
    ),
    redmine_tool(
        "update_version",
        "Change fields of a version; fields as in create version, only those given change.",
        {"id": ident("Version number"), **as_in_create(FIELDS)},
        update_version,
        CATEGORY,
        ("id",),
        "idempotent",
    ),
    delete_tool(
        VERSION,
        "delete_version",
        "Delete a version. Redmine refuses while issues still use it.\n"
        "Without confirm true it only previews.",
        CATEGORY,
    ),
)
