"""Parameter schemas many Redmine tools share, written once so every tool says it the same way."""

from __future__ import annotations

import re
from typing import Any

from mcpkit.redmine.tools.hours import EXAMPLES as HOUR_FORMS
from mcpkit.tools import params as p

PROJECT = p.string()  # number or identifier: said once in the server instructions
OFFSET = p.integer()
LIMIT = p.integer("At most 100", minimum=1)
CONFIRM = p.boolean("True to delete")
PAGING = {"offset": OFFSET, "limit": LIMIT}
USER_OR_ME = "User number, name, or me for the key owner"
NUMBER_OR_NAME = "Number or name"
"""Statuses, trackers, priorities, activities and users are taken by name too (see :mod:`.names`)."""
DATE = "Date like 2025-01-31"


def hours_schema(what: str) -> dict[str, Any]:
    """Hours as text in any form Redmine reads (a number is taken too, see :mod:`.hours`)."""
    return p.string(f"{what} such as {HOUR_FORMS}", min_length=1)


def as_in_create(fields: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The field schemas of a create tool for its update twin, without repeated descriptions.

    The model sees both tools in the same list, so an update tool says "as in create" once in
    its own description; only format hints (dates, ranges) stay on the parameters.
    """
    out: dict[str, dict[str, Any]] = {}
    for name, schema in fields.items():
        node = dict(schema)
        said = str(node.get("description", ""))
        if not re.search(r"\d", said):
            node.pop("description", None)
        out[name] = node
    return out


def ident(description: str) -> dict[str, Any]:
    """A positive whole-number id; the server refuses 0, negatives and numbers beyond 64 bits."""
    return p.integer(description, minimum=1)


CUSTOM_FIELDS = p.array(
    p.obj(
        {
            "id": ident("Field number"),
            "value": p.string(),
            "values": p.array(p.string(), "For a multiple field"),
        },
        required=["id"],
    ),
    "Custom field values",
)
