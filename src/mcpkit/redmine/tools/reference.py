"""Reference data: the ids a model needs before it writes (trackers, statuses, roles, fields...)."""

from __future__ import annotations

from mcpkit.redmine.tools.resource import Resource, get_tool, list_tool
from mcpkit.redmine.tools.schemas import ident

CATEGORY = "reference"


def _whole(singular: str, plural: str, path: str) -> Resource:
    return Resource(singular, plural, "", path)


ROLE = Resource("role", "roles", "roles/{id}", "roles", id_schema=ident("Role number"))
# tool name, resource, description
LISTS = (
    (
        "list_trackers",
        _whole("tracker", "trackers", "trackers"),
        "List the trackers such as Bug or Feature with their numbers.",
    ),
    (
        "list_issue_statuses",
        _whole("issue_status", "issue_statuses", "issue_statuses"),
        "List the issue statuses with their numbers and whether each counts as closed.",
    ),
    (
        "list_issue_priorities",
        _whole("priority", "issue_priorities", "enumerations/issue_priorities"),
        "List the issue priorities with their numbers and the default one.",
    ),
    (
        "list_time_entry_activities",
        _whole("activity", "time_entry_activities", "enumerations/time_entry_activities"),
        "List the activities a time entry can have, such as Design or Development.",
    ),
    ("list_roles", ROLE, "List the roles that project memberships can give."),
    (
        "list_custom_fields",
        _whole("custom_field", "custom_fields", "custom_fields"),
        "List custom fields with format, possible values, multiple, required, default and trackers.\n"
        "Needs an administrator key.",
    ),
    (
        "list_queries",
        _whole("query", "queries", "queries"),
        "List the saved issue queries; list issues runs one by query id.",
    ),
)

TOOLS = (
    # Short fixed lists: one page holds them all (a list past the cap still says how far it got).
    *(list_tool(res, name, description, CATEGORY, pages=False) for name, res, description in LISTS),
    get_tool(ROLE, "get_role", "Show one role with the permissions it grants.", CATEGORY),
)
