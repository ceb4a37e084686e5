"""Project tools: list, show, create, update, archive, unarchive, close, reopen, delete."""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import partial
from typing import Any

import mcp_types

from mcpkit.errors import ValidationError
from mcpkit.redmine.api import RedmineClient, seg
from mcpkit.redmine.tools.args import (
    as_given,
    as_text,
    custom_fields,
    ids,
    present,
    project_ref,
    require_some,
)
from mcpkit.redmine.tools.base import RedmineContext, redmine_tool
from mcpkit.redmine.tools.resource import (
    Count,
    Resource,
    delete_tool,
    get_tool,
    include_schema,
    list_tool,
    read,
)
from mcpkit.redmine.tools.results import done, done_entity, entity_of
from mcpkit.redmine.tools.schemas import CUSTOM_FIELDS, PROJECT, as_in_create, ident
from mcpkit.redmine.tools.verify import verified
from mcpkit.tools import params as p

CATEGORY = "projects"
INCLUDES = ("trackers", "issue_categories", "enabled_modules", "time_entry_activities", "issue_custom_fields")
STATUSES = {"active": 1, "closed": 5, "archived": 9}
_IDENTIFIER = re.compile(r"^[a-z][a-z0-9_-]{0,99}$")

PROJECT_RESOURCE = Resource(
    "project",
    "projects",
    "projects/{id}",
    "projects",
    paged=True,
    includes=INCLUDES,
    shown=("identifier", "name"),
    counts=(
        Count("issues", "issues.json", "issues", lambda r: {"project_id": r["id"], "status_id": "*"}),
        Count("time_entries", "time_entries.json", "time_entries", lambda r: {"project_id": r["id"]}),
        Count("subprojects", "projects.json", "projects", lambda r: {"parent_id": r["id"]}),
    ),
    id_param="project",
    id_schema=PROJECT,
    fields=(
        "id",
        "name",
        "identifier",
        "description",
        "homepage",
        "parent",
        "status",
        "is_public",
        "inherit_members",
        "custom_fields",
        "created_on",
        "updated_on",
    ),
    brief=("id", "identifier", "name", "parent", "status"),
)


async def project_id(client: RedmineClient, ref: int | str) -> int:
    """The number of a project given by number or identifier (Redmine wants numbers in bodies)."""
    if isinstance(ref, int):
        return ref
    body = await client.get(f"projects/{seg(ref)}.json", what=f"project {ref}")
    pid = entity_of(body, "project").get("id")
    if not isinstance(pid, int):
        raise ValidationError(f"project {ref} has no number in Redmine's answer")
    return pid


def project_fields(args: Mapping[str, Any]) -> dict[str, Any]:
    """Tool arguments to the body of ``{"project": ...}`` (pure; ``parent`` is resolved by the caller)."""
    fields = present(
        args,
        {
            "name": as_text,
            "description": as_text,
            "homepage": as_text,
            "is_public": as_given,
            "inherit_members": as_given,
        },
    )
    if args.get("identifier") is not None:
        ident_text = str(args["identifier"]).strip()
        if not _IDENTIFIER.match(ident_text):
            raise ValidationError(
                "identifier must start with a lowercase letter and use only lowercase letters, digits, "
                "dashes and underscores, at most 100 characters"
            )
        fields["identifier"] = ident_text
    trackers = ids(args, "tracker_ids")
    if trackers is not None:
        fields["tracker_ids"] = trackers
    if args.get("enabled_modules") is not None:
        fields["enabled_module_names"] = [str(v) for v in args["enabled_modules"]]
    cfs = custom_fields(args)
    if cfs is not None:
        fields["custom_fields"] = cfs
    return fields


def project_filters(args: Mapping[str, Any]) -> dict[str, Any]:
    """``list_projects`` arguments to query parameters."""
    params: dict[str, Any] = {}
    if args.get("include"):
        params["include"] = ",".join(args["include"])
    if args.get("status") is not None:
        params["status"] = STATUSES[str(args["status"])]
    return params


async def with_parent(rc: RedmineContext, args: Mapping[str, Any], fields: dict[str, Any]) -> dict[str, Any]:
    """Resolve ``parent`` to the number Redmine wants as ``parent_id``."""
    if args.get("parent") is not None:
        fields["parent_id"] = await project_id(rc.client, project_ref(args["parent"]))
    return fields


def _read_back_includes(fields: Mapping[str, Any]) -> list[str]:
    wanted = []
    if "tracker_ids" in fields:
        wanted.append("trackers")
    if "enabled_module_names" in fields:
        wanted.append("enabled_modules")
    return wanted


async def create_project(args: dict[str, Any], rc: RedmineContext) -> mcp_types.CallToolResult:
    """Create, then read back with the includes needed to check trackers and modules."""
    fields = await with_parent(rc, args, project_fields(args))
    body = await rc.client.post("projects.json", what="the new project", json={"project": fields})
    project = entity_of(body, "project")
    if _read_back_includes(fields):
        project = await read(rc, PROJECT_RESOURCE, project.get("id"), _read_back_includes(fields))
    message = f"Created project {project.get('identifier')}."
    return await verified(
        rc, fields, project, message=message, success=done_entity(rc, message, "project", project)
    )


async def update_project(args: dict[str, Any], rc: RedmineContext) -> mcp_types.CallToolResult:
    """Change the given fields, read back, compare."""
    ref = project_ref(args["project"])
    fields = await with_parent(rc, args, project_fields(args))
    require_some(fields, f"project {ref}")
    await rc.client.put(f"projects/{seg(ref)}.json", what=f"project {ref}", json={"project": fields})
    project = await read(rc, PROJECT_RESOURCE, ref, _read_back_includes(fields))
    message = f"Updated project {ref}."
    return await verified(
        rc, fields, project, message=message, success=done_entity(rc, message, "project", project)
    )


async def change_status(
    action: str, past: str, status: int, args: dict[str, Any], rc: RedmineContext
) -> mcp_types.CallToolResult:
    """Archive, unarchive, close or reopen; then check the project's status says so."""
    ref = project_ref(args["project"])
    await rc.client.put(f"projects/{seg(ref)}/{action}.json", what=f"project {ref}", json={})
    message = f"Project {ref} {past}."
    if status == STATUSES["archived"]:
        return done(message)  # an archived project cannot be read back, even by an administrator
    project = await read(rc, PROJECT_RESOURCE, ref)
    return await verified(rc, {"status": status}, project, message=message, success=done(message))


FIELDS: dict[str, dict[str, Any]] = {
    "name": p.string("Project name", min_length=1),
    "description": p.string("Project description"),
    "homepage": p.string("Home page address"),
    "is_public": p.boolean("Visible to everyone"),
    "parent": p.string("Parent project number or identifier"),
    "inherit_members": p.boolean("Inherit members of the parent"),
    "tracker_ids": p.array(ident("Tracker number"), "Trackers enabled in the project"),
    "enabled_modules": p.array(p.string("Module name"), "Module names such as wiki or files"),
    "custom_fields": CUSTOM_FIELDS,
}

STATUS_CHANGES = (
    ("archive_project", "archive", "archived", 9, "Archive a project so it is hidden and read-only."),
    ("unarchive_project", "unarchive", "unarchived", 1, "Bring an archived project back."),
    ("close_project", "close", "closed", 5, "Close a project so it becomes read-only but stays visible."),
    ("reopen_project", "reopen", "reopened", 1, "Reopen a closed project for changes again."),
)

TOOLS = (
    list_tool(
        PROJECT_RESOURCE,
        "list_projects",
        "List the projects the key can see, with paging.",
        CATEGORY,
        filters=project_filters,
        properties={
            "status": p.enum("Only projects in this state", list(STATUSES)),
            "include": include_schema(INCLUDES),
        },
        item_call="get_project with project={id}",
    ),
    get_tool(PROJECT_RESOURCE, "get_project", "Show one project by number or identifier.", CATEGORY),
    redmine_tool(
        "create_project",
        "Create a project. Name and identifier are required; the identifier cannot change later.",
        {
            **FIELDS,
            "identifier": p.string(
                "Unique key of lowercase letters, digits and dashes, starting with a letter"
            ),
        },
        create_project,
        CATEGORY,
        ("name", "identifier"),
        "write",
    ),
    redmine_tool(
        "update_project",
        "Change fields of a project; fields as in create project, only those given change.",
        {"project": PROJECT, **as_in_create(FIELDS)},
        update_project,
        CATEGORY,
        ("project",),
        "idempotent",
    ),
    *(
        redmine_tool(
            name,
            description,
            {"project": PROJECT},
            partial(change_status, action, past, status),
            CATEGORY,
            ("project",),
            "idempotent",
        )
        for name, action, past, status, description in STATUS_CHANGES
    ),
    delete_tool(
        PROJECT_RESOURCE,
        "delete_project",
        "Delete a project with its issues, time entries, wiki and files. Cannot be undone.\n"
        "Without confirm true it only previews.",
        CATEGORY,
    ),
)
