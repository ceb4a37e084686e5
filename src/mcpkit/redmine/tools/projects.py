"""Project tools: list, show, create, update, archive, unarchive, close, reopen, delete."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from mcpkit.errors import ValidationError
from mcpkit.redmine.api import RedmineClient, seg
from mcpkit.redmine.tools.base import (
    CONFIRM,
    CUSTOM_FIELDS,
    PAGING,
    PROJECT,
    Ctx,
    as_flag,
    as_text,
    confirm_or_preview,
    custom_fields,
    define,
    done,
    entity_of,
    entity_result,
    num,
    page_result,
    paging,
    present,
    project_ref,
    require_some,
)
from mcpkit.results import Element
from mcpkit.tools import ToolSpec
from mcpkit.tools import params as p

CATEGORY = "projects"
INCLUDES = ("trackers", "issue_categories", "enabled_modules", "time_entry_activities", "issue_custom_fields")
STATUSES = {"active": 1, "closed": 5, "archived": 9}
_IDENTIFIER = re.compile(r"^[a-z][a-z0-9_-]{0,99}$")


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
            "is_public": as_flag,
            "inherit_members": as_flag,
        },
    )
    if args.get("identifier") is not None:
        ident = str(args["identifier"]).strip()
        if not _IDENTIFIER.match(ident):
            raise ValidationError(
                "identifier must start with a lowercase letter and use only lowercase letters, digits, "
                "dashes and underscores, at most 100 characters"
            )
        fields["identifier"] = ident
    if args.get("tracker_ids") is not None:
        fields["tracker_ids"] = [num(v) for v in args["tracker_ids"]]
    if args.get("enabled_modules") is not None:
        fields["enabled_module_names"] = [str(v) for v in args["enabled_modules"]]
    cfs = custom_fields(args)
    if cfs is not None:
        fields["custom_fields"] = cfs
    return fields


def _includes(args: Mapping[str, Any]) -> dict[str, Any]:
    value = args.get("include")
    if not value:
        return {}
    if not isinstance(value, list) or any(v not in INCLUDES for v in value):
        raise ValidationError(f"include must be a list of: {', '.join(INCLUDES)}")
    return {"include": ",".join(value)}


_FIELDS: dict[str, dict[str, Any]] = {
    "name": p.string("Project name", min_length=1, max_length=255),
    "description": p.string("Project description"),
    "homepage": p.string("Home page address"),
    "is_public": p.boolean("Visible to everyone"),
    "parent": p.string("Parent project number or identifier"),
    "inherit_members": p.boolean("Inherit members of the parent"),
    "tracker_ids": p.array(p.integer("Tracker number", minimum=1), "Trackers enabled in the project"),
    "enabled_modules": p.array(
        p.string("Module name"),
        "Module names such as wiki or files",
    ),
    "custom_fields": CUSTOM_FIELDS,
}


def tools(ctx: Ctx) -> list[ToolSpec]:
    """The project tools bound to ``ctx``."""
    client, fmt = ctx.client, ctx.fmt

    async def read(ref: int | str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        body = await client.get(f"projects/{seg(ref)}.json", what=f"project {ref}", params=params)
        return entity_of(body, "project")

    async def with_parent(args: Mapping[str, Any], fields: dict[str, Any]) -> dict[str, Any]:
        if args.get("parent") is not None:
            fields["parent_id"] = await project_id(client, project_ref(args["parent"]))
        return fields

    async def list_projects(args: dict[str, Any]) -> Any:
        offset, limit = paging(args)
        params = _includes(args)
        if args.get("status") is not None:
            params["status"] = STATUSES[str(args["status"])]
        page = await client.page(
            "projects.json", "projects", what="the project list", params=params, offset=offset, limit=limit
        )
        return page_result(ctx, "projects", page)

    async def get_project(args: dict[str, Any]) -> Any:
        ref = project_ref(args["project"])
        return entity_result(ctx, "project", {"project": await read(ref, _includes(args))})

    async def create_project(args: dict[str, Any]) -> Any:
        fields = await with_parent(args, project_fields(args))
        body = await client.post("projects.json", what="the new project", json={"project": fields})
        project = entity_of(body, "project")
        return done(f"Created project {project.get('identifier')}.", fmt.entity("project", project))

    async def update_project(args: dict[str, Any]) -> Any:
        ref = project_ref(args["project"])
        fields = await with_parent(args, project_fields(args))
        require_some(fields, f"project {ref}")
        await client.put(f"projects/{seg(ref)}.json", what=f"project {ref}", json={"project": fields})
        new_ref = fields.get("identifier", ref)
        return done(f"Updated project {ref}.", fmt.entity("project", await read(new_ref)))

    def status_change(action: str, past: str) -> Any:
        async def handler(args: dict[str, Any]) -> Any:
            ref = project_ref(args["project"])
            await client.put(f"projects/{seg(ref)}/{action}.json", what=f"project {ref}", json={})
            return done(f"Project {ref} {past}.")

        return handler

    async def delete_project(args: dict[str, Any]) -> Any:
        ref = project_ref(args["project"])

        async def preview() -> list[Element]:
            project = await read(ref)
            pid = project.get("id", ref)
            issues = await client.page(
                "issues.json",
                "issues",
                what=f"issues of project {ref}",
                params={"project_id": pid, "status_id": "*"},
                limit=1,
            )
            spent = await client.page(
                "time_entries.json",
                "time_entries",
                what=f"time entries of project {ref}",
                params={"project_id": pid},
                limit=1,
            )
            subs = await client.page("projects.json", "projects", what="the project list", limit=100)
            children = [s for s in subs.items if (s.get("parent") or {}).get("id") == pid]
            out = Element("project", {"id": pid, "identifier": project.get("identifier")}, None)
            out.child("name", None, project.get("name"))
            out.child("issues", None, issues.total_count)
            out.child("time_entries", None, spent.total_count)
            out.child("subprojects", None, len(children))
            return [out]

        async def delete() -> None:
            await client.delete(f"projects/{seg(ref)}.json", what=f"project {ref}")

        return await confirm_or_preview(
            args,
            what=f"project {ref} with all its issues, time entries, wiki and files",
            preview=preview,
            delete=delete,
        )

    include = p.array(p.enum("Extra data", INCLUDES), "Extra data such as trackers or enabled modules")
    only_project = {"project": PROJECT}
    changes = [
        ("archive_project", "archive", "archived", "Archive a project so it is hidden and read-only."),
        ("unarchive_project", "unarchive", "unarchived", "Bring an archived project back."),
        ("close_project", "close", "closed", "Close a project so it becomes read-only but stays visible."),
        ("reopen_project", "reopen", "reopened", "Reopen a closed project."),
    ]
    return [
        define(
            "list_projects",
            "List the projects the key can see, with paging.",
            {"status": p.enum("Only projects in this state", list(STATUSES)), "include": include, **PAGING},
            list_projects,
            category=CATEGORY,
            read_only=True,
        ),
        define(
            "get_project",
            "Show one project by number or identifier.",
            {"project": PROJECT, "include": include},
            get_project,
            category=CATEGORY,
            required=["project"],
            read_only=True,
        ),
        define(
            "create_project",
            "Create a project. Name and identifier are required; the identifier cannot change later.",
            {
                **_FIELDS,
                "identifier": p.string(
                    "Unique key of lowercase letters, digits and dashes, starting with a letter"
                ),
            },
            create_project,
            category=CATEGORY,
            required=["name", "identifier"],
        ),
        define(
            "update_project",
            "Change fields of a project. Only the fields you give are changed.",
            {"project": PROJECT, **_FIELDS},
            update_project,
            category=CATEGORY,
            required=["project"],
            idempotent=True,
        ),
        *[
            define(
                name,
                description,
                only_project,
                status_change(action, past),
                category=CATEGORY,
                required=["project"],
                idempotent=True,
            )
            for name, action, past, description in changes
        ],
        define(
            "delete_project",
            "Delete a project with its issues, time entries, wiki and files. Cannot be undone.\n"
            "Without confirm true it only shows what would be deleted.",
            {"project": PROJECT, "confirm": CONFIRM},
            delete_project,
            category=CATEGORY,
            required=["project"],
            destructive=True,
        ),
    ]
