"""Issue category tools: the categories a project sorts its issues into."""

from __future__ import annotations

from typing import Any

import mcp_types

from mcpkit.redmine.api import seg
from mcpkit.redmine.tools.args import as_given, as_text, confirmed, present, project_ref
from mcpkit.redmine.tools.base import RedmineContext, redmine_tool
from mcpkit.redmine.tools.resource import Count, Resource, get_tool, impact_of, list_tool, read, update_record
from mcpkit.redmine.tools.results import done, done_entity, entity_of, preview_result
from mcpkit.redmine.tools.schemas import CONFIRM, PROJECT, ident
from mcpkit.redmine.tools.verify import verified
from mcpkit.tools import params as p

CATEGORY = "projects"


def category_scope(record: Any) -> dict[str, Any]:
    """Issues of a category: Redmine filters by category only inside the category's project."""
    return {
        "project_id": (record.get("project") or {}).get("id"),
        "category_id": record["id"],
        "status_id": "*",
    }


ISSUE_CATEGORY = Resource(
    "issue_category",
    "issue_categories",
    "issue_categories/{id}",
    "projects/{project}/issue_categories",
    what="issue category",
    shown=("name", "project", "assigned_to"),
    counts=(Count("issues", "issues.json", "issues", lambda r: category_scope(r)),),
    id_schema=ident("Issue category number"),
)


def category_fields(args: dict[str, Any]) -> dict[str, Any]:
    return present(args, {"name": as_text, "assigned_to_id": as_given})


async def create_issue_category(args: dict[str, Any], rc: RedmineContext) -> mcp_types.CallToolResult:
    ref = project_ref(args["project"])
    fields = category_fields(args)
    body = await rc.client.post(
        f"projects/{seg(ref)}/issue_categories.json",
        what=f"an issue category of project {ref}",
        json={"issue_category": fields},
    )
    category = entity_of(body, "issue_category")
    message = f"Created issue category {category.get('id')}."
    return await verified(
        rc, fields, category, message=message, success=done_entity(rc, message, "issue_category", category)
    )


async def update_issue_category(args: dict[str, Any], rc: RedmineContext) -> mcp_types.CallToolResult:
    return await update_record(rc, ISSUE_CATEGORY, args["id"], category_fields(args))


async def delete_issue_category(args: dict[str, Any], rc: RedmineContext) -> mcp_types.CallToolResult:
    """Preview, or delete moving its issues to ``reassign_to_id`` (else they lose their category)."""
    cid: int = args["id"]
    target: int | None = args.get("reassign_to_id")
    then = f"; its issues move to category {target}" if target else "; its issues keep no category"
    what = f"issue category {cid}{then}"
    impact = await impact_of(rc, ISSUE_CATEGORY, cid)
    if target is not None:
        await read(rc, ISSUE_CATEGORY, target)  # a wrong target fails before anything changes
    if not confirmed(args):
        return preview_result(what, impact)
    params = {"reassign_to_id": target} if target else None
    await rc.client.delete(f"issue_categories/{cid}.json", what=f"issue category {cid}", params=params)
    return done(f"Deleted {what}.")


TOOLS = (
    list_tool(ISSUE_CATEGORY, "list_issue_categories", "List the issue categories of a project.", CATEGORY),
    get_tool(
        ISSUE_CATEGORY, "get_issue_category", "Show one issue category with its default assignee.", CATEGORY
    ),
    redmine_tool(
        "create_issue_category",
        "Create an issue category in a project, optionally with a default assignee.",
        {
            "project": PROJECT,
            "name": p.string("Category name", min_length=1),
            "assigned_to_id": ident("User who gets new issues of this category"),
        },
        create_issue_category,
        CATEGORY,
        ("project", "name"),
        "write",
    ),
    redmine_tool(
        "update_issue_category",
        "Rename an issue category or change its default assignee.",
        {
            "id": ident("Issue category number"),
            "name": p.string("Category name", min_length=1),
            "assigned_to_id": ident("User who gets new issues of this category"),
        },
        update_issue_category,
        CATEGORY,
        ("id",),
        "idempotent",
    ),
    redmine_tool(
        "delete_issue_category",
        "Delete an issue category; its issues move to the category given, or lose their category.\n"
        "Without confirm true it only previews.",
        {
            "id": ident("Issue category number"),
            "reassign_to_id": ident("Category of the same project that takes its issues"),
            "confirm": CONFIRM,
        },
        delete_issue_category,
        CATEGORY,
        ("id",),
        "destructive",
    ),
)
