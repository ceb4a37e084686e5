"""Issue category tools: the categories a project sorts its issues into."""

from __future__ import annotations

from typing import Any

from mcpkit.redmine.api import seg
from mcpkit.redmine.tools.base import (
    PROJECT,
    Ctx,
    define,
    done,
    entity_of,
    ident,
    list_result,
    num,
    project_ref,
)
from mcpkit.tools import ToolSpec
from mcpkit.tools import params as p

CATEGORY = "projects"


def tools(ctx: Ctx) -> list[ToolSpec]:
    """The issue category tools bound to ``ctx``."""
    client, fmt = ctx.client, ctx.fmt

    async def list_categories(args: dict[str, Any]) -> Any:
        ref = project_ref(args["project"])
        body = await client.get(
            f"projects/{seg(ref)}/issue_categories.json", what=f"issue categories of project {ref}"
        )
        return list_result(ctx, "issue_categories", list(body.get("issue_categories") or []))

    async def create_category(args: dict[str, Any]) -> Any:
        ref = project_ref(args["project"])
        fields: dict[str, Any] = {"name": str(args["name"])}
        if args.get("assigned_to_id") is not None:
            fields["assigned_to_id"] = num(args["assigned_to_id"])
        body = await client.post(
            f"projects/{seg(ref)}/issue_categories.json",
            what=f"an issue category of project {ref}",
            json={"issue_category": fields},
        )
        category = entity_of(body, "issue_category")
        return done(f"Created issue category {category.get('id')}.", fmt.entity("issue_category", category))

    return [
        define(
            "list_issue_categories",
            "List the issue categories of a project.",
            {"project": PROJECT},
            list_categories,
            category=CATEGORY,
            required=["project"],
            read_only=True,
        ),
        define(
            "create_issue_category",
            "Create an issue category in a project, optionally with a default assignee.",
            {
                "project": PROJECT,
                "name": p.string("Category name", min_length=1, max_length=60),
                "assigned_to_id": ident("User who gets new issues of this category"),
            },
            create_category,
            category=CATEGORY,
            required=["project", "name"],
        ),
    ]
