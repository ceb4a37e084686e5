"""What a long real session meets (issue 12), on the real Redmine through real stdio:

120 issues with long descriptions reached by ``next_offset``, 60 long notes paged to the end,
descriptions in full, writes Redmine ignores reported as errors, custom fields with every
property and several values, saved queries, and ids beyond 64 bits refused.
"""

from __future__ import annotations

import uuid
import xml.etree.ElementTree as ET
from typing import Any

import pytest

from tests.integration.redmine.redmine_session import RedmineEnv, Session, mcp_session, rest

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


def unique() -> str:
    return uuid.uuid4().hex[:10]


def new_project(env: RedmineEnv, tag: str) -> tuple[int, str]:
    ident = f"long-{tag}-{unique()}"
    body = rest(env, "POST", "projects.json", {"project": {"name": f"Long {tag}", "identifier": ident}})
    return int(body["project"]["id"]), ident


def drop_project(env: RedmineEnv, ident: str) -> None:
    rest(env, "DELETE", f"projects/{ident}.json")


def new_issue(env: RedmineEnv, project: int, subject: str, **fields: Any) -> int:
    body = rest(env, "POST", "issues.json", {"issue": {"project_id": project, "subject": subject, **fields}})
    return int(body["issue"]["id"])


async def all_pages(
    s: Session, name: str, args: dict[str, Any], offset_name: str, tag: str
) -> list[ET.Element]:
    """Step by next_offset until it is absent; return every item seen, and check the sentence."""
    seen: list[ET.Element] = []
    offset = 0
    for _ in range(100):
        root = await s.ok(name, {**args, offset_name: offset})
        page = root if root.tag == tag else root.find(tag)
        assert page is not None
        items = list(page)
        assert page.get("returned") == str(len(items))
        seen.extend(items)
        nxt = page.get("next_offset")
        if nxt is None:
            return seen
        assert int(nxt) == offset + len(items), "next_offset points at the first item not returned"
        offset = int(nxt)
    raise AssertionError("paging did not end")


async def test_120_issues_with_long_descriptions_are_all_reached_by_next_offset(redmine: RedmineEnv) -> None:
    pid, ident = new_project(redmine, "page")
    try:
        made = [
            new_issue(redmine, pid, f"Issue {n}", description=f"{n} " + "long text " * 300)
            for n in range(120)
        ]
        async with mcp_session(redmine) as s:
            first = await s.ok("list_issues", {"project": ident, "status": "*", "sort": "id", "limit": 100})
            assert first.get("total_count") == "120"
            assert int(first.get("returned") or 0) < 100, "the size cap shortens the page at an item boundary"
            desc = first.find("issue/description")
            assert desc is not None and "get_issue with id=" in (desc.text or "")
            # An agent that edits the excerpt and writes it back is stopped before Redmine is asked.
            message = await s.error(
                "update_issue", {"id": made[0], "description": (desc.text or "") + " edited"}
            )
            assert "excerpt" in message
            full = await s.ok("get_issue", {"id": made[0], "include": []})
            assert (full.findtext("description") or "").startswith("0 long text") and "excerpt" not in (
                full.findtext("description") or ""
            )
            items = await all_pages(
                s,
                "list_issues",
                {"project": ident, "status": "*", "sort": "id", "limit": 100},
                "offset",
                "issues",
            )
        ids = [int(i.findtext("id") or 0) for i in items]
        assert ids == made, "every issue exactly once, in order"
    finally:
        drop_project(redmine, ident)


async def test_60_long_notes_page_to_the_end_and_descriptions_come_whole(redmine: RedmineEnv) -> None:
    pid, ident = new_project(redmine, "journals")
    try:
        description = "".join(
            f"line {n:06d} of a long description\n" for n in range(4000)
        )  # ~128k characters
        issue = new_issue(redmine, pid, "Long history", description=description)
        notes = [f"note {n:02d} " + ("x" * 1200) for n in range(60)]
        for note in notes:
            rest(redmine, "PUT", f"issues/{issue}.json", {"issue": {"notes": note}})
        async with mcp_session(redmine) as s:
            shown = await s.ok("get_issue", {"id": issue})
            assert shown.find("journals").get("total_count") == "60"
            assert shown.find("watchers") is not None
            text = (shown.findtext("description") or "").replace("\r\n", "\n")  # Redmine stores CRLF
            assert len(text) >= 100_000, "a single issue's description is never cut below 100,000 characters"
            assert text.startswith(description[:100_000])
            assert f"issue {issue}" in text[100_000:], "the cut says where the rest is"
            journals = await all_pages(s, "get_issue", {"id": issue}, "journals_offset", "journals")
            assert [j.findtext("notes") for j in journals] == notes
            one = await s.ok("get_issue", {"id": issue, "journals_offset": 59, "journals_limit": 5})
            assert (
                one.find("journals").get("returned") == "1"
                and one.find("journals").get("next_offset") is None
            )
    finally:
        drop_project(redmine, ident)


async def test_writes_redmine_ignores_are_errors_naming_field_value_and_reason(redmine: RedmineEnv) -> None:
    pid, ident = new_project(redmine, "verify")
    try:
        issue = new_issue(redmine, pid, "Verify me")
        async with mcp_session(redmine) as s:
            # A status Redmine does not offer is refused whole before anything is sent (issue 39 point 2).
            message = await s.error("update_issue", {"id": issue, "status_id": 99, "subject": "Renamed"})
            assert message.startswith("Nothing was sent") and "status 99" in message
            assert "In Progress (2)" in message, "the statuses Redmine offers are listed"
            assert (await s.ok("get_issue", {"id": issue})).findtext("subject") == "Verify me"
            message = await s.error(
                "create_issue", {"project": ident, "subject": "Tracker", "tracker_id": 99}
            )
            assert "tracker_id asked 99" in message and "no tracker 99 exists" in message
            good = await s.ok("update_issue", {"id": issue, "status_id": 2, "done_ratio": 30})
            assert good.findtext("status") == "success"

        # A Reporter may not change a status: Redmine would ignore it and answer 204. The reason is
        # the role's missing edit_issues, not the workflow, and nothing is sent (issue 39 point 2).
        member = rest(redmine, "GET", "users.json?name=mcpkit-member")["users"][0]["id"]
        roles = {r["name"]: r["id"] for r in rest(redmine, "GET", "roles.json")["roles"]}
        rest(
            redmine,
            "POST",
            f"projects/{ident}/memberships.json",
            {"membership": {"user_id": member, "role_ids": [roles["Reporter"]]}},
        )
        seen = rest(redmine, "GET", f"issues/{issue}.json?include=allowed_statuses", key=redmine.user_key)
        allowed = {st["id"] for st in seen["issue"].get("allowed_statuses", [])}
        statuses = rest(redmine, "GET", "issue_statuses.json")["issue_statuses"]
        forbidden = next(st["id"] for st in statuses if st["id"] not in allowed)
        async with mcp_session(redmine, REDMINE_API_KEY=redmine.user_key) as s:
            message = await s.error("update_issue", {"id": issue, "status_id": forbidden})
            assert message.startswith("Nothing was sent") and "edit_issues (Edit issues)" in message
            assert "workflow" not in message
    finally:
        drop_project(redmine, ident)


async def test_custom_fields_show_their_definition_and_take_several_values(redmine: RedmineEnv) -> None:
    _, ident = new_project(redmine, "cf")
    try:
        async with mcp_session(redmine) as s:
            fields = await s.ok("list_custom_fields")
            multi = next(f for f in fields if f.findtext("name") == "mcpkit-multi")
            assert multi.findtext("field_format") == "list" and multi.findtext("multiple") == "true"
            assert [v.findtext("value") for v in multi.findall("possible_values/possible_value")] == [
                "alpha",
                "beta",
                "gamma",
            ]
            assert multi.find("trackers/tracker") is not None and multi.findtext("is_required") == "false"
            cf = int(multi.findtext("id") or 0)
            made = await s.ok(
                "create_issue",
                {
                    "project": ident,
                    "subject": "Several values",
                    "custom_fields": [{"id": cf, "values": ["alpha", "gamma"]}],
                },
            )
            issue = int(made.findtext("issue/id") or 0)
            shown = await s.ok("get_issue", {"id": issue})
            values = shown.find(f"custom_fields/custom_field[@id='{cf}']")
            assert values is not None and [v.text for v in values.findall("value")] == ["alpha", "gamma"]
            message = await s.error(
                "update_issue", {"id": issue, "custom_fields": [{"id": cf, "values": ["delta"]}]}
            )
            assert "custom field" in message.lower() or "422" in message
            found = await s.ok(
                "list_issues",
                {"project": ident, "custom_fields": [{"id": cf, "value": "gamma"}], "status": "*"},
            )
            assert found.get("total_count") == "1"
    finally:
        drop_project(redmine, ident)


async def test_saved_queries_run_and_ids_are_bounded(redmine: RedmineEnv) -> None:
    pid, ident = new_project(redmine, "query")
    try:
        me = rest(redmine, "GET", "users/current.json")["user"]["id"]
        mine = new_issue(redmine, pid, "Mine", assigned_to_id=me)
        new_issue(redmine, pid, "Not mine")
        async with mcp_session(redmine) as s:
            queries = await s.ok("list_queries")
            assigned = next(q for q in queries if q.findtext("name") == "Issues assigned to me")
            found = await s.ok(
                "list_issues", {"project": ident, "query_id": int(assigned.findtext("id") or 0)}
            )
            assert [i.findtext("id") for i in found.findall("issue")] == [str(mine)]
            message = await s.error(
                "list_issues", {"query_id": int(assigned.findtext("id") or 0), "status": "*"}
            )
            assert "ignores status" in message
            for huge in (2**63, "9223372036854775808", 10**30):
                message = await s.error("get_issue", {"id": huge})
                assert "Redmine" not in message or "Invalid" in message, message
            assert "Invalid" in await s.error("get_issue", {"id": 0})
    finally:
        drop_project(redmine, ident)
