"""Version tools: the milestones of a project."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcpkit.redmine.api import seg
from mcpkit.redmine.tools.base import (
    CONFIRM,
    PROJECT,
    Ctx,
    as_text,
    confirm_or_preview,
    date_text,
    define,
    done,
    entity_of,
    entity_result,
    ident,
    list_result,
    num,
    present,
    project_ref,
    require_some,
)
from mcpkit.results import Element
from mcpkit.tools import ToolSpec
from mcpkit.tools import params as p

CATEGORY = "versions"
STATUSES = ("open", "locked", "closed")
SHARINGS = ("none", "descendants", "hierarchy", "tree", "system")


def version_fields(args: Mapping[str, Any]) -> dict[str, Any]:
    """Tool arguments to the body of ``{"version": ...}`` (pure; enums are schema-checked)."""
    fields = present(
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
    return fields


_FIELDS: dict[str, dict[str, Any]] = {
    "name": p.string("Version name", min_length=1, max_length=60),
    "description": p.string("Short description"),
    "due_date": p.string("Due date like 2025-01-31"),
    "status": p.enum("State of the version", STATUSES),
    "sharing": p.enum("Which projects may use it", SHARINGS),
    "wiki_page_title": p.string("Title of a wiki page about the version"),
}


def tools(ctx: Ctx) -> list[ToolSpec]:
    """The version tools bound to ``ctx``."""
    client, fmt = ctx.client, ctx.fmt

    async def read(vid: int) -> dict[str, Any]:
        return entity_of(await client.get(f"versions/{vid}.json", what=f"version {vid}"), "version")

    async def list_versions(args: dict[str, Any]) -> Any:
        ref = project_ref(args["project"])
        body = await client.get(f"projects/{seg(ref)}/versions.json", what=f"versions of project {ref}")
        return list_result(ctx, "versions", list(body.get("versions") or []))

    async def get_version(args: dict[str, Any]) -> Any:
        return entity_result(ctx, "version", {"version": await read(num(args["id"]))})

    async def create_version(args: dict[str, Any]) -> Any:
        ref = project_ref(args["project"])
        body = await client.post(
            f"projects/{seg(ref)}/versions.json",
            what=f"a version of project {ref}",
            json={"version": version_fields(args)},
        )
        version = entity_of(body, "version")
        return done(f"Created version {version.get('id')}.", fmt.entity("version", version))

    async def update_version(args: dict[str, Any]) -> Any:
        vid = num(args["id"])
        fields = version_fields(args)
        require_some(fields, f"version {vid}")
        await client.put(f"versions/{vid}.json", what=f"version {vid}", json={"version": fields})
        return done(f"Updated version {vid}.", fmt.entity("version", await read(vid)))

    async def delete_version(args: dict[str, Any]) -> Any:
        vid = num(args["id"])

        async def preview() -> list[Element]:
            version = await read(vid)
            issues = await client.page(
                "issues.json",
                "issues",
                what=f"issues of version {vid}",
                params={"fixed_version_id": vid, "status_id": "*"},
                limit=1,
            )
            out = Element("version", {"id": vid})
            out.child("name", None, version.get("name"))
            out.child("issues", None, issues.total_count)
            return [out]

        async def delete() -> None:
            await client.delete(f"versions/{vid}.json", what=f"version {vid}")

        return await confirm_or_preview(args, what=f"version {vid}", preview=preview, delete=delete)

    return [
        define(
            "list_versions",
            "List the versions of a project, including shared ones.",
            {"project": PROJECT},
            list_versions,
            category=CATEGORY,
            required=["project"],
            read_only=True,
        ),
        define(
            "get_version",
            "Show one version by number.",
            {"id": ident("Version number")},
            get_version,
            category=CATEGORY,
            required=["id"],
            read_only=True,
        ),
        define(
            "create_version",
            "Create a version in a project. Only the name is required.",
            {"project": PROJECT, **_FIELDS},
            create_version,
            category=CATEGORY,
            required=["project", "name"],
        ),
        define(
            "update_version",
            "Change fields of a version. Only the fields you give are changed.",
            {"id": ident("Version number"), **_FIELDS},
            update_version,
            category=CATEGORY,
            required=["id"],
            idempotent=True,
        ),
        define(
            "delete_version",
            "Delete a version. Redmine refuses while issues still use it.\n"
            "Without confirm true it only shows what would be deleted.",
            {"id": ident("Version number"), "confirm": CONFIRM},
            delete_version,
            category=CATEGORY,
            required=["id"],
            destructive=True,
        ),
    ]
