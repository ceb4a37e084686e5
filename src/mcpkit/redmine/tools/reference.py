"""Reference data: the ids a model needs before it writes (trackers, statuses, roles...)."""

from __future__ import annotations

from typing import Any

from mcpkit.redmine.tools.base import Ctx, define, entity_result, ident, list_result, num
from mcpkit.tools import ToolSpec

CATEGORY = "reference"

# tool name, path, JSON key, description
_LISTS = (
    (
        "list_trackers",
        "trackers.json",
        "trackers",
        "List the trackers such as Bug or Feature with their numbers.",
    ),
    (
        "list_issue_statuses",
        "issue_statuses.json",
        "issue_statuses",
        "List the issue statuses with their numbers and whether each counts as closed.",
    ),
    (
        "list_issue_priorities",
        "enumerations/issue_priorities.json",
        "issue_priorities",
        "List the issue priorities with their numbers and the default one.",
    ),
    (
        "list_time_entry_activities",
        "enumerations/time_entry_activities.json",
        "time_entry_activities",
        "List the activities a time entry can have, such as Design or Development.",
    ),
    ("list_roles", "roles.json", "roles", "List the roles that project memberships can give."),
    ("list_groups", "groups.json", "groups", "List the user groups. Needs an administrator key."),
    (
        "list_custom_fields",
        "custom_fields.json",
        "custom_fields",
        "List every custom field definition with its possible values. Needs an administrator key.",
    ),
    ("list_queries", "queries.json", "queries", "List the saved issue queries the key can use."),
)


def tools(ctx: Ctx) -> list[ToolSpec]:
    """The reference data tools bound to ``ctx``."""
    client = ctx.client

    def lister(path: str, key: str) -> Any:
        async def handler(args: dict[str, Any]) -> Any:
            body = await client.get(path, what=f"the {key.replace('_', ' ')}")
            return list_result(ctx, key, list(body.get(key) or []))

        return handler

    async def get_role(args: dict[str, Any]) -> Any:
        rid = num(args["id"])
        return entity_result(ctx, "role", await client.get(f"roles/{rid}.json", what=f"role {rid}"))

    specs = [
        define(name, description, {}, lister(path, key), category=CATEGORY, read_only=True)
        for name, path, key, description in _LISTS
    ]
    specs.append(
        define(
            "get_role",
            "Show one role with the permissions it grants.",
            {"id": ident("Role number")},
            get_role,
            category=CATEGORY,
            required=["id"],
            read_only=True,
        )
    )
    return specs
