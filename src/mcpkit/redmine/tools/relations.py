"""Issue relation tools: blocks, precedes, relates and the rest between two issues."""

from __future__ import annotations

from typing import Any

import mcp_types

from mcpkit.errors import ValidationError
from mcpkit.redmine.tools.base import RedmineContext, redmine_tool
from mcpkit.redmine.tools.resource import Resource, delete_tool, list_tool
from mcpkit.redmine.tools.results import done_entity, entity_of
from mcpkit.redmine.tools.schemas import ident
from mcpkit.redmine.tools.verify import verified
from mcpkit.tools import params as p

CATEGORY = "issues"
RELATION_TYPES = (
    "relates",
    "duplicates",
    "duplicated",
    "blocks",
    "blocked",
    "precedes",
    "follows",
    "copied_to",
    "copied_from",
)
RELATION = Resource(
    "relation",
    "relations",
    "relations/{id}",
    "issues/{issue_id}/relations",
    shown=("issue_id", "issue_to_id", "relation_type"),
    id_schema=ident("Relation number"),
)


async def create_issue_relation(args: dict[str, Any], rc: RedmineContext) -> mcp_types.CallToolResult:
    """Relate two issues; the type is read from the first one."""
    issue_id: int = args["issue_id"]
    relation: dict[str, Any] = {
        "issue_to_id": args["issue_to_id"],
        "relation_type": args.get("relation_type") or "relates",
    }
    if relation["relation_type"] not in RELATION_TYPES:
        raise ValidationError(f"relation_type must be one of {', '.join(RELATION_TYPES)}")
    if args.get("delay") is not None:
        relation["delay"] = args["delay"]
    body = await rc.client.post(
        f"issues/{issue_id}/relations.json",
        what=f"a relation of issue {issue_id}",
        json={"relation": relation},
    )
    created = entity_of(body, "relation")
    message = f"Created relation {created.get('id')}."
    # Redmine stores the reversed types (blocked, follows...) the other way round: compare the rest.
    reversed_type = relation["relation_type"] in ("duplicated", "blocked", "follows", "copied_from")
    asked = {} if reversed_type else {k: v for k, v in relation.items() if k != "relation_type"}
    return await verified(
        rc, asked, created, message=message, success=done_entity(rc, message, "relation", created)
    )


TOOLS = (
    list_tool(
        RELATION,
        "list_issue_relations",
        "List the relations of an issue such as blocks, precedes or relates.",
        CATEGORY,
        properties={"issue_id": ident("Issue number")},
    ),
    redmine_tool(
        "create_issue_relation",
        "Relate two issues. The type is read from the first issue, so blocks means it blocks the other.",
        {
            "issue_id": ident("Issue number the relation starts from"),
            "issue_to_id": ident("Issue number the relation points to"),
            "relation_type": p.enum("Kind of relation, default relates", RELATION_TYPES),
            "delay": p.integer("Days between the issues for precedes or follows", minimum=0),
        },
        create_issue_relation,
        CATEGORY,
        ("issue_id", "issue_to_id"),
        "write",
    ),
    delete_tool(
        RELATION,
        "delete_issue_relation",
        "Delete a relation between two issues by its relation number.\n"
        "Without confirm true it only previews.",
        CATEGORY,
    ),
)
