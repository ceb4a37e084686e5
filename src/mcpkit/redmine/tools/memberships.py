"""Project membership tools: who belongs to a project and with which roles."""

from __future__ import annotations

from typing import Any

import mcp_types

from mcpkit.errors import ValidationError
from mcpkit.redmine.api import seg
from mcpkit.redmine.tools.args import ids, project_ref
from mcpkit.redmine.tools.base import RedmineContext, redmine_tool
from mcpkit.redmine.tools.resource import Resource, delete_tool, list_tool, read
from mcpkit.redmine.tools.results import done_entity, entity_of
from mcpkit.redmine.tools.schemas import PROJECT, ident
from mcpkit.redmine.tools.verify import verified
from mcpkit.tools import params as p

CATEGORY = "memberships"
MEMBERSHIP = Resource(
    "membership",
    "memberships",
    "memberships/{id}",
    "projects/{project}/memberships",
    paged=True,
    shown=("project", "user", "group"),
    id_schema=ident("Membership number from list project memberships"),
)


def role_ids(args: dict[str, Any]) -> list[int]:
    roles = ids(args, "role_ids") or []
    if not roles:
        raise ValidationError("role_ids needs at least one role number; see list roles")
    return roles


def own_roles(membership: dict[str, Any]) -> dict[str, Any]:
    """The membership with inherited roles left out, so a check compares only what was given."""
    roles = [r for r in membership.get("roles") or [] if isinstance(r, dict) and not r.get("inherited")]
    return {**membership, "roles": roles}


async def add_project_membership(args: dict[str, Any], rc: RedmineContext) -> mcp_types.CallToolResult:
    ref = project_ref(args["project"])
    asked = {"user_id": args["user_id"], "role_ids": role_ids(args)}
    body = await rc.client.post(
        f"projects/{seg(ref)}/memberships.json",
        what=f"a membership of project {ref}",
        json={"membership": asked},
    )
    member = entity_of(body, "membership")
    message = f"Added membership {member.get('id')} to project {ref}."
    principal = member.get("user") or member.get("group") or {}
    got = {**own_roles(member), "user_id": principal.get("id")}
    return await verified(
        rc, asked, got, message=message, success=done_entity(rc, message, "membership", member)
    )


async def update_project_membership(args: dict[str, Any], rc: RedmineContext) -> mcp_types.CallToolResult:
    mid: int = args["id"]
    asked = {"role_ids": role_ids(args)}
    await rc.client.put(f"memberships/{mid}.json", what=f"membership {mid}", json={"membership": asked})
    member = await read(rc, MEMBERSHIP, mid)
    message = f"Updated the roles of membership {mid}."
    return await verified(
        rc, asked, own_roles(member), message=message, success=done_entity(rc, message, "membership", member)
    )


TOOLS = (
    list_tool(
        MEMBERSHIP,
        "list_project_memberships",
        "List the users and groups of a project with their roles.",
        CATEGORY,
    ),
    redmine_tool(
        "add_project_membership",
        "Add a user or group to a project with one or more roles; see list roles for numbers.",
        {
            "project": PROJECT,
            "user_id": ident("User or group number"),
            "role_ids": p.array(ident("Role number"), "Role numbers", min_items=1),
        },
        add_project_membership,
        CATEGORY,
        ("project", "user_id", "role_ids"),
        "write",
    ),
    redmine_tool(
        "update_project_membership",
        "Replace the roles of a membership; roles inherited from a group stay.",
        {
            "id": ident("Membership number"),
            "role_ids": p.array(ident("Role number"), "Role numbers", min_items=1),
        },
        update_project_membership,
        CATEGORY,
        ("id", "role_ids"),
        "idempotent",
    ),
    delete_tool(
        MEMBERSHIP,
        "remove_project_membership",
        "Remove a membership from its project; it can be added again later.\n"
        "Without confirm true it only previews.",
        CATEGORY,
    ),
)
