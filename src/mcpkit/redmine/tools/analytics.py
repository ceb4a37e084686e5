"""Analytics over the REST API: open work per assignee, stale issues, blocker chains, overdue work.

Redmine has no report endpoint a non-administrator can use, so each view reads issues through
the ordinary list (100 per request, sorted by id so a scan is stable while issues are added) and
groups them here. Every view is a page of rows with ``next_offset`` like every list of this
server; the stale view pages through Redmine itself, the others page their computed rows.
A scan stops at :data:`MAX_SCAN` issues with one line saying how to narrow it.
"""

from __future__ import annotations

import contextlib
from collections import defaultdict
from collections.abc import Mapping
from datetime import UTC, date, datetime, timedelta
from typing import Any

import mcp_types

from mcpkit.errors import ValidationError
from mcpkit.redmine.tools.args import paging, project_ref
from mcpkit.redmine.tools.base import RedmineContext, redmine_tool
from mcpkit.redmine.tools.schemas import PAGING, PROJECT
from mcpkit.results import Element, Window, page_of, xml_result
from mcpkit.tools import params as p

CATEGORY = "analytics"
MAX_SCAN = 5_000
"""Issues one view reads at most (50 requests)."""
MAX_CHAINS = 1_000
"""Blocker chains computed at most; a larger web of relations is reported as cut."""
VIEWS = ("workload", "stale", "blockers", "overdue")


def scope(args: Mapping[str, Any]) -> dict[str, Any]:
    """The issue filter every view shares: open issues, of one project when given."""
    params: dict[str, Any] = {"status_id": "open", "sort": "id"}
    if args.get("project") is not None:
        params["project_id"] = project_ref(args["project"])
    return params


async def scan(rc: RedmineContext, params: dict[str, Any]) -> list[dict[str, Any]]:
    """Every issue the filter matches, read 100 at a time."""
    out: list[dict[str, Any]] = []
    while True:
        page = await rc.client.page(
            "issues.json", "issues", what="the issues", params=params, offset=len(out), limit=100
        )
        out.extend(page.items)
        if not page.items or len(out) >= page.total_count:
            return out
        if len(out) >= MAX_SCAN:
            raise ValidationError(
                f"more than {MAX_SCAN} open issues match; give a project to narrow the report"
            )


def name_of(ref: Any, default: str) -> str:
    return str(ref.get("name")) if isinstance(ref, Mapping) and ref.get("name") else default


def issue_row(issue: Mapping[str, Any], **extra: object) -> Element:
    """The brief form of an issue: id, subject, status, assignee, dates that matter here."""
    out = Element("issue", {"id": issue.get("id"), **extra})
    out.child("subject", {"untrusted": True}, issue.get("subject"))
    out.child("status", None, name_of(issue.get("status"), ""))
    if issue.get("assigned_to"):
        out.child("assigned_to", None, name_of(issue.get("assigned_to"), ""))
    for key in ("due_date", "updated_on"):
        if issue.get(key):
            out.child(key, None, issue[key])
    return out


def page(
    tag: str, rows: list[Element], args: Mapping[str, Any], total: int | None = None, **attrs: Any
) -> mcp_types.CallToolResult:
    """Rows already cut to the window, as a page whose next call repeats these arguments."""
    offset, limit = paging(args)
    window = Window(offset, limit, len(rows) if total is None else total)
    shown = rows[offset : offset + limit] if total is None else rows
    element = page_of(
        tag,
        shown,
        window,
        next_call="issue_report with the same arguments and offset={offset}",
        item_call="get_issue with id={id}" if tag != "assignees" else None,
        attrs={"view": args["view"], **attrs},
    )
    return xml_result(element)


async def workload(args: Mapping[str, Any], rc: RedmineContext) -> mcp_types.CallToolResult:
    """Open issues per assignee: how many, how many overdue, estimated hours, the oldest update."""
    today = date.today().isoformat()
    groups: dict[Any, list[dict[str, Any]]] = defaultdict(list)
    names: dict[Any, str] = {}
    for issue in await scan(rc, scope(args)):
        who = issue.get("assigned_to")
        key = who.get("id") if isinstance(who, Mapping) else None
        names[key] = name_of(who, "nobody")
        groups[key].append(issue)
    rows = []
    for key, issues in sorted(groups.items(), key=lambda kv: (-len(kv[1]), names[kv[0]])):
        hours = sum(float(i.get("estimated_hours") or 0) for i in issues)
        overdue = sum(1 for i in issues if i.get("due_date") and str(i["due_date"]) < today)
        oldest = min(str(i.get("updated_on") or "") for i in issues)
        row = Element("assignee", {"id": key, "name": names[key], "open": len(issues), "overdue": overdue})
        row.set("estimated_hours", round(hours, 2) if hours else None).set("oldest_update", oldest or None)
        rows.append(row)
    return page("assignees", rows, args)


async def stale(args: Mapping[str, Any], rc: RedmineContext) -> mcp_types.CallToolResult:
    """Open issues with no update in ``days`` days, oldest first, paged by Redmine itself."""
    days = args.get("days")
    days = 30 if days is None else days
    cutoff = (datetime.now(UTC) - timedelta(days=days)).replace(microsecond=0)
    params = {
        **scope(args),
        "updated_on": "<=" + cutoff.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "sort": "updated_on,id",
    }
    offset, limit = paging(args)
    found = await rc.client.page(
        "issues.json", "issues", what="the stale issues", params=params, offset=offset, limit=limit
    )
    now = datetime.now(UTC)
    rows = []
    for issue in found.items:
        idle = None
        with contextlib.suppress(ValueError):
            idle = (now - datetime.fromisoformat(str(issue.get("updated_on")).replace("Z", "+00:00"))).days
        rows.append(issue_row(issue, idle_days=idle))
    return page("issues", rows, args, total=found.total_count, days=days)


def chains(issues: list[dict[str, Any]]) -> tuple[list[list[int]], bool]:
    """Every maximal path of ``blocks`` relations between open issues, root blocker first.

    Issues on a cycle (A blocks B blocks A) have no root; each cycle is reported once, from its
    smallest id. The second value says whether :data:`MAX_CHAINS` cut the list.
    """
    open_ids = {i["id"] for i in issues}
    blocks: dict[int, set[int]] = defaultdict(set)
    for issue in issues:
        for rel in issue.get("relations") or []:
            if not isinstance(rel, Mapping):
                continue
            a, b = rel.get("issue_id"), rel.get("issue_to_id")
            if rel.get("relation_type") == "blocked":
                a, b = b, a
            elif rel.get("relation_type") != "blocks":
                continue
            if isinstance(a, int) and isinstance(b, int) and a in open_ids and b in open_ids and a != b:
                blocks[a].add(b)
    blocked = {b for targets in blocks.values() for b in targets}
    out: list[list[int]] = []
    reached: set[int] = set()

    def walk(path: list[int]) -> None:
        if len(out) >= MAX_CHAINS:
            return
        reached.add(path[-1])
        nexts = [n for n in sorted(blocks.get(path[-1], ())) if n not in path]
        if not nexts:
            out.append(path)
        for n in nexts:
            walk([*path, n])

    for root in sorted(a for a in blocks if a not in blocked):
        walk([root])
    for start in sorted(blocks):  # only issues on cycles are left unreached
        if start not in reached:
            walk([start])
    return out, len(out) >= MAX_CHAINS


async def blockers(args: Mapping[str, Any], rc: RedmineContext) -> mcp_types.CallToolResult:
    issues = await scan(rc, {**scope(args), "include": "relations"})
    by_id = {i["id"]: i for i in issues}
    found, cut = chains(issues)
    found.sort(key=lambda c: (-len(c), c))
    rows = []
    for chain in found:
        row = Element("chain", {"id": chain[-1], "length": len(chain)})
        row.add(*(issue_row(by_id[n]) for n in chain))
        rows.append(row)
    return page("chains", rows, args, cut="true" if cut else None)


async def overdue(args: Mapping[str, Any], rc: RedmineContext) -> mcp_types.CallToolResult:
    """Open issues whose due date has passed, grouped by version; the versions with most first."""
    yesterday = (date.today() - timedelta(days=1)).isoformat()
    issues = await scan(rc, {**scope(args), "due_date": "<=" + yesterday})
    groups: dict[Any, list[dict[str, Any]]] = defaultdict(list)
    names: dict[Any, str] = {}
    for issue in issues:
        version = issue.get("fixed_version")
        key = version.get("id") if isinstance(version, Mapping) else None
        names[key] = name_of(version, "no version")
        groups[key].append(issue)
    rows: list[Element] = []
    for key, members in sorted(groups.items(), key=lambda kv: (-len(kv[1]), names[kv[0]])):
        members.sort(key=lambda i: (str(i.get("due_date")), i.get("id", 0)))
        rows.extend(issue_row(i, version=names[key], version_id=key) for i in members)
    summary = ", ".join(f"{names[k]} {len(v)}" for k, v in sorted(groups.items(), key=lambda kv: -len(kv[1])))
    return page("issues", rows, args, versions=summary or None)


REPORTS = {"workload": workload, "stale": stale, "blockers": blockers, "overdue": overdue}


async def issue_report(args: dict[str, Any], rc: RedmineContext) -> mcp_types.CallToolResult:
    return await REPORTS[args["view"]](args, rc)


TOOLS = (
    redmine_tool(
        "issue_report",
        "Open issue reports: workload per assignee, stale, blocker chains, overdue per version.",
        {
            "view": p.enum("", VIEWS),
            "project": PROJECT,
            "days": p.integer("Stale after, default 30", minimum=0, maximum=36500),
            **PAGING,
        },
        issue_report,
        CATEGORY,
        ("view",),
    ),
)
