"""issue_report on 150 issues seeded through the REST API, every view paged by next_offset.

The expected figures are computed from what Redmine stored (read back with plain REST calls),
not from what the seeding meant to store, so the test checks the report against Redmine itself.
"""

from __future__ import annotations

import uuid
import xml.etree.ElementTree as ET
from collections import Counter
from typing import Any

import pytest

from tests.integration.redmine.redmine_session import RedmineEnv, Session, mcp_session, rest

pytestmark = pytest.mark.anyio
COUNT = 150


def seed(env: RedmineEnv, ident: str) -> dict[str, Any]:
    member = rest(env, "GET", "users/current.json", key=env.user_key)["user"]["id"]
    rest(
        env,
        "POST",
        f"projects/{ident}/memberships.json",
        {"membership": {"user_id": member, "role_ids": [4]}},
    )
    rest(env, "POST", f"projects/{ident}/memberships.json", {"membership": {"user_id": 1, "role_ids": [3]}})
    late = rest(
        env,
        "POST",
        f"projects/{ident}/versions.json",
        {"version": {"name": "Late <1.0>", "due_date": "2000-02-01"}},
    )
    ids = []
    for n in range(COUNT):
        issue: dict[str, Any] = {"project_id": ident, "subject": f"Seeded {n} <&>"}
        if n % 3 < 2:
            issue["assigned_to_id"] = 1 if n % 3 == 0 else member
        if n % 10 == 0:
            issue.update(start_date="2000-01-01", due_date="2000-01-15", estimated_hours=2)
            if n % 20 == 0:
                issue["fixed_version_id"] = late["version"]["id"]
        ids.append(rest(env, "POST", "issues.json", {"issue": issue})["issue"]["id"])
        if n % 25 == 1:  # a new issue takes the default status: close it after
            rest(env, "PUT", f"issues/{ids[-1]}.json", {"issue": {"status_id": 5}})
    a, b, c, d, e = (ids[i] for i in (2, 5, 8, 11, 14))
    for x, y in ((a, b), (b, c), (c, d), (a, e)):
        rest(
            env,
            "POST",
            f"issues/{x}/relations.json",
            {"relation": {"issue_to_id": y, "relation_type": "blocks"}},
        )
    stored, offset = [], 0
    while True:
        body = rest(env, "GET", f"issues.json?project_id={ident}&status_id=open&limit=100&offset={offset}")
        stored.extend(body["issues"])
        offset += len(body["issues"])
        if offset >= body["total_count"]:
            return {"open": stored, "chain": [a, b, c, d], "branch": [a, e]}


async def every_page(s: Session, args: dict[str, Any], tag: str) -> tuple[list[ET.Element], list[ET.Element]]:
    """All rows of a view by following next_offset, and each page's root."""
    rows: list[ET.Element] = []
    pages: list[ET.Element] = []
    offset: int | None = 0
    while offset is not None:
        root = await s.ok("issue_report", {**args, "offset": offset})
        pages.append(root)
        assert root.tag == tag
        rows.extend(list(root))
        next_offset = root.get("next_offset")
        offset = int(next_offset) if next_offset is not None else None
    return rows, pages


async def test_reports_over_150_seeded_issues(redmine: RedmineEnv) -> None:
    ident = f"report-{uuid.uuid4().hex[:10]}"
    async with mcp_session(redmine) as s:
        await s.ok("create_project", {"name": "Reports", "identifier": ident})
        data = seed(redmine, ident)
        open_issues = data["open"]
        assert COUNT - 10 <= len(open_issues) < COUNT, "the closed ones are left out"

        rows, pages = await every_page(s, {"view": "workload", "project": ident, "limit": 1}, "assignees")
        assert len(pages) == 3 and all(p.get("total_count") == "3" for p in pages)
        expected = Counter((i.get("assigned_to") or {}).get("name", "nobody") for i in open_issues)
        assert {r.get("name"): int(r.get("open") or 0) for r in rows} == dict(expected)
        overdue_by_name = Counter(
            (i.get("assigned_to") or {}).get("name", "nobody") for i in open_issues if i.get("due_date")
        )
        assert {r.get("name"): int(r.get("overdue") or 0) for r in rows} == {
            n: overdue_by_name.get(n, 0) for n in expected
        }

        rows, pages = await every_page(
            s, {"view": "stale", "project": ident, "days": 0, "limit": 40}, "issues"
        )
        ids = [int(r.get("id") or 0) for r in rows]
        assert len(pages) == 4 and sorted(ids) == sorted(i["id"] for i in open_issues), "each issue once"
        fresh = await s.ok("issue_report", {"view": "stale", "project": ident, "days": 1})
        assert fresh.get("total_count") == "0" and fresh.get("next_offset") is None

        rows, _ = await every_page(s, {"view": "overdue", "project": ident, "limit": 7}, "issues")
        late = [i for i in open_issues if i.get("due_date")]
        assert sorted(int(r.get("id") or 0) for r in rows) == sorted(i["id"] for i in late)
        by_version = Counter((i.get("fixed_version") or {}).get("name", "no version") for i in late)
        assert Counter(r.get("version") for r in rows) == by_version
        assert rows[0].get("version") == by_version.most_common(1)[0][0], "the version with most comes first"

        rows, _ = await every_page(s, {"view": "blockers", "project": ident}, "chains")
        chains = [[int(i.get("id") or 0) for i in row.findall("issue")] for row in rows]
        assert chains == [data["chain"], data["branch"]]
        assert rows[0].findtext("issue/subject", "").startswith("Seeded")

        assert "view" in await s.error("issue_report", {"view": "velocity"})
        assert "offset" in await s.error("issue_report", {"view": "stale", "offset": -1})
        await s.ok("delete_project", {"project": ident, "confirm": True})
