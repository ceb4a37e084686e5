"""The project summary: open and closed issue counts by status, tracker, assignee and version,
and estimated against spent hours, built from the REST API alone (no plugin needed).

It reads every issue of the project (100 per request) and every time entry; a project beyond
:data:`MAX_RECORDS` of either is summarised from the first ones and the answer says so.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

import mcp_types

from mcpkit.redmine.tools.args import project_ref
from mcpkit.redmine.tools.base import RedmineContext, redmine_tool
from mcpkit.redmine.tools.projects import project_id
from mcpkit.redmine.tools.schemas import PROJECT
from mcpkit.results import Element, xml_result
from mcpkit.tools import params as p

CATEGORY = "projects"
MAX_RECORDS = 20_000
GROUPS = (
    ("status", "by_status"),
    ("tracker", "by_tracker"),
    ("assigned_to", "by_assignee"),
    ("fixed_version", "by_version"),
)


async def every(
    rc: RedmineContext, path: str, key: str, params: Mapping[str, Any]
) -> tuple[list[dict[str, Any]], int]:
    """All records of a collection (up to ``MAX_RECORDS``) and the total Redmine reports."""
    out: list[dict[str, Any]] = []
    total = 0
    while len(out) < MAX_RECORDS:
        page = await rc.client.page(
            path, key, what=f"the {key.replace('_', ' ')}", params=params, offset=len(out), limit=100
        )
        total = page.total_count
        out.extend(page.items)
        if not page.items or len(out) >= total:
            break
    return out, total


def tally(issues: list[dict[str, Any]], field: str, tag: str) -> Element:
    """Open and closed counts per value of ``field`` (``none`` for issues without one)."""
    opened: Counter[tuple[Any, str]] = Counter()
    closed: Counter[tuple[Any, str]] = Counter()
    for issue in issues:
        value = issue.get(field)
        ref: Mapping[str, Any] = value if isinstance(value, Mapping) else {}
        key = (ref.get("id"), str(ref.get("name") or "none"))
        is_closed = bool((issue.get("status") or {}).get("is_closed"))
        (closed if is_closed else opened)[key] += 1
    out = Element(tag, {"type": "array"})
    for key in sorted(set(opened) | set(closed), key=lambda k: -(opened[k] + closed[k])):
        out.child("group", {"id": key[0], "name": key[1], "open": opened[key], "closed": closed[key]})
    return out


def leaves_estimate(issues: list[dict[str, Any]]) -> float:
    """Estimated hours of issues without subtasks: a parent's estimate may be its children's sum."""
    parents = {(i.get("parent") or {}).get("id") for i in issues}
    return sum(float(i.get("estimated_hours") or 0) for i in issues if i.get("id") not in parents)


async def get_project_summary(args: dict[str, Any], rc: RedmineContext) -> mcp_types.CallToolResult:
    ref = project_ref(args["project"])
    pid = await project_id(rc.client, ref)
    scope = {"project_id": pid, "status_id": "*"}
    if not args.get("subprojects", True):
        scope["subproject_id"] = "!*"
    issues, total = await every(rc, "issues.json", "issues", scope)
    entries, entry_total = await every(rc, "time_entries.json", "time_entries", {"project_id": pid})
    closed = sum(1 for i in issues if (i.get("status") or {}).get("is_closed"))
    root = Element(
        "project_summary", {"project": ref, "issues": total, "open": len(issues) - closed, "closed": closed}
    )
    if len(issues) < total or len(entries) < entry_total:
        root.comment = f"Summarised from the first {len(issues)} of {total} issues and {len(entries)} of {entry_total} time entries."
    for field, tag in GROUPS:
        root.add(tally(issues, field, tag))
    hours = root.child("hours")
    hours.child("estimated", None, round(leaves_estimate(issues), 2))
    hours.child("spent", None, round(sum(float(e.get("hours") or 0) for e in entries), 2))
    hours.child("time_entries", None, entry_total)
    return xml_result(root)


TOOLS = (
    redmine_tool(
        "get_project_summary",
        "Summarise a project: open and closed issues by status, tracker, assignee and version,\n"
        "and estimated against spent hours.",
        {"project": PROJECT, "subprojects": p.boolean("Count the issues of subprojects too, default true")},
        get_project_summary,
        CATEGORY,
        ("project",),
    ),
)
