"""Project membership tools: who belongs to a project and with which roles."""

from __future__ import annotations

from typing import Any

from mcpkit.errors import ValidationError
from mcpkit.redmine.api import seg
from mcpkit.redmine.tools.base import (
    PAGING,
    PROJECT,
    Ctx,
    define,
    done,
    entity_of,
    ident,
    num,
    page_result,
    paging,
    project_ref,
)
from mcpkit.tools import ToolSpec
from mcpkit.tools import params as p

CATEGORY = "memberships"


def tools(ctx: Ctx) -> list[ToolSpec]:
    """The membership tools bound to ``ctx``."""
    client, fmt = ctx.client, ctx.fmt

    async def list_memberships(args: dict[str, Any]) -> Any:
        ref = project_ref(args["project"])
        offset, limit = paging(args)
        page = await client.page(
            f"projects/{seg(ref)}/memberships.json",
            "memberships",
            what=f"memberships of project {ref}",
            offset=offset,
            limit=limit,
        )
        return page_result(ctx, "memberships", page)

    async def add_membership(args: dict[str, Any]) -> Any:
        ref = project_ref(args["project"])
        roles = [num(r) for r in args.get("role_ids") or []]
        if not roles:
            raise ValidationError("role_ids needs at least one role number; see list roles")
        body = await client.post(
            f"projects/{seg(ref)}/memberships.json",
            what=f"a membership of project {ref}",
            json={"membership": {"user_id": num(args["user_id"]), "role_ids": roles}},
        )
        member = entity_of(body, "membership")
        return done(
            f"Added membership {member.get('id')} to project {ref}.", fmt.entity("membership", member)
        )

    async def remove_membership(args: dict[str, Any]) -> Any:
        mid = num(args["id"])
        await client.delete(f"memberships/{mid}.json", what=f"membership {mid}")
        return done(f"Removed membership {mid}.")

    return [
        define(
            "list_project_memberships",
            "List the users and groups of a project with their roles.",
            {"project": PROJECT, **PAGING},
            list_memberships,
            category=CATEGORY,
            required=["project"],
            read_only=True,
        ),
        define(
            "add_project_membership",
            "Add a user or group to a project with one or more roles; see list roles for numbers.",
            {
                "project": PROJECT,
                "user_id": ident("User or group number"),
                "role_ids": p.array(ident("Role number"), "Role numbers", min_items=1),
            },
            add_membership,
            category=CATEGORY,
            required=["project", "user_id", "role_ids"],
        ),
        define(
            "remove_project_membership",
            "Remove a membership from its project by membership number; it can be added again later.",
            {"id": ident("Membership number from list project memberships")},
            remove_membership,
            category=CATEGORY,
            required=["id"],
            idempotent=True,
        ),
    ]
