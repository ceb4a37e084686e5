"""Group tools: list, show, create, update, delete, and group members. Need an administrator key."""

from __future__ import annotations

from typing import Any

import mcp_types

from mcpkit.redmine.tools.args import as_text, ids, present, require_some
from mcpkit.redmine.tools.base import RedmineContext, redmine_tool
from mcpkit.redmine.tools.resource import Resource, delete_tool, get_tool, list_tool, read
from mcpkit.redmine.tools.results import done_entity, entity_of
from mcpkit.redmine.tools.schemas import as_in_create, ident
from mcpkit.redmine.tools.verify import verified
from mcpkit.results import error_result
from mcpkit.tools import params as p

CATEGORY = "groups"
GROUP = Resource(
    "group",
    "groups",
    "groups/{id}",
    "groups",
    includes=("users", "memberships"),
    shown=("name",),
    id_schema=ident("Group number"),
)


def group_fields(args: dict[str, Any]) -> dict[str, Any]:
    fields = present(args, {"name": as_text})
    members = ids(args, "user_ids")
    if members is not None:
        fields["user_ids"] = members
    return fields


async def create_group(args: dict[str, Any], rc: RedmineContext) -> mcp_types.CallToolResult:
    fields = group_fields(args)
    body = await rc.client.post("groups.json", what="the new group", json={"group": fields})
    group = await read(rc, GROUP, entity_of(body, "group").get("id"), ["users"])
    message = f"Created group {group.get('id')}."
    return await verified(
        rc, fields, group, message=message, success=done_entity(rc, message, "group", group)
    )


async def update_group(args: dict[str, Any], rc: RedmineContext) -> mcp_types.CallToolResult:
    """Rename, replace the members, or add and remove single members; then check all of it."""
    gid: int = args["id"]
    fields = group_fields(args)
    if fields:
        await rc.client.put(f"groups/{gid}.json", what=f"group {gid}", json={"group": fields})
    changed = await change_members(rc, gid, args)
    require_some({**fields, **dict.fromkeys(changed)}, f"group {gid}")
    group = await read(rc, GROUP, gid, ["users"])
    message = f"Updated group {gid}."
    misses = membership_misses(group, args)
    if misses:
        return error_result(f"{message[:-1]}, but {'; '.join(misses)}: check the user numbers")
    return await verified(
        rc, fields, group, message=message, success=done_entity(rc, message, "group", group)
    )


async def change_members(rc: RedmineContext, gid: int, args: dict[str, Any]) -> list[str]:
    """Add and remove single members; the names of what was asked, for the check."""
    asked = []
    for uid in ids(args, "add_user_ids") or []:
        await rc.client.post(
            f"groups/{gid}/users.json", what=f"the users of group {gid}", json={"user_id": uid}
        )
        asked.append(f"add {uid}")
    for uid in ids(args, "remove_user_ids") or []:
        await rc.client.delete(f"groups/{gid}/users/{uid}.json", what=f"user {uid} in group {gid}")
        asked.append(f"remove {uid}")
    return asked


def membership_misses(group: dict[str, Any], args: dict[str, Any]) -> list[str]:
    """Members asked to be added that are missing, and removed ones still there."""
    members = {u.get("id") for u in group.get("users") or [] if isinstance(u, dict)}
    missing = [f"user {u} is not a member" for u in ids(args, "add_user_ids") or [] if u not in members]
    kept = [f"user {u} is still a member" for u in ids(args, "remove_user_ids") or [] if u in members]
    return missing + kept


FIELDS: dict[str, dict[str, Any]] = {
    "name": p.string("Group name", min_length=1),
    "user_ids": p.array(ident("User number"), "All members of the group; replaces the current ones"),
}

TOOLS = (
    list_tool(
        GROUP,
        "list_groups",
        "List the user groups. Needs an administrator key.",
        CATEGORY,
        item_call="get_group with id={id}",
    ),
    get_tool(
        GROUP, "get_group", "Show one group, optionally with its users and project memberships.", CATEGORY
    ),
    redmine_tool(
        "create_group",
        "Create a group, optionally with its first members.",
        FIELDS,
        create_group,
        CATEGORY,
        ("name",),
        "write",
    ),
    redmine_tool(
        "update_group",
        "Rename a group, replace all its members, or add and remove single members.",
        {
            "id": ident("Group number"),
            **as_in_create(FIELDS),
            "add_user_ids": p.array(ident("User number"), "Users to add"),
            "remove_user_ids": p.array(ident("User number"), "Users to remove"),
        },
        update_group,
        CATEGORY,
        ("id",),
        "idempotent",
    ),
    delete_tool(
        GROUP,
        "delete_group",
        "Delete a group; its members stay as users. Cannot be undone.\nWithout confirm true it only previews.",
        CATEGORY,
    ),
)
