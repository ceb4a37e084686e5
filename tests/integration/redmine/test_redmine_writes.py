"""Writes that never half-apply, 403s that name the permission, and parents that follow their subtasks
(issue 39 points 2, 3 and 5), on the real Redmine through real stdio.

Each test makes its own project with a fresh Reporter and a fresh Developer in it (Redmine's default
roles and workflow: a Reporter may add notes but not edit issues; a Developer may edit, but moves a
New issue only to In Progress, Resolved, Feedback or Closed), so what each may do is what Redmine's
defaults say, not what an earlier run left behind.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from tests.integration.redmine.redmine_session import RedmineEnv, mcp_session, rest

pytestmark = pytest.mark.anyio


def unique() -> str:
    return uuid.uuid4().hex[:10]


@dataclass(frozen=True)
class Crew:
    """A fresh project, a Reporter and a Developer in it, and one New issue the Reporter wrote."""

    project_id: int
    ident: str
    reporter_key: str
    developer_key: str
    developer_id: int
    issue: int


def _member(env: RedmineEnv, ident: str, role: str, name: str) -> dict[str, Any]:
    login = f"{name.lower()}-{unique()}"
    user = rest(
        env,
        "POST",
        "users.json",
        {
            "user": {
                "login": login,
                "firstname": name,
                "lastname": role,
                "mail": f"{login}@example.com",
                "password": "crew-password-1",
            }
        },
    )["user"]
    roles = {r["name"]: r["id"] for r in rest(env, "GET", "roles.json")["roles"]}
    rest(
        env,
        "POST",
        f"projects/{ident}/memberships.json",
        {"membership": {"user_id": user["id"], "role_ids": [roles[role]]}},
    )
    return dict(user)


@pytest.fixture
def crew(redmine: RedmineEnv) -> Iterator[Crew]:
    ident = f"writes-{unique()}"
    project = rest(
        redmine,
        "POST",
        "projects.json",
        {
            "project": {
                "name": f"Writes {ident}",
                "identifier": ident,
                "enabled_module_names": ["issue_tracking", "wiki", "time_tracking"],
            }
        },
    )
    pid = int(project["project"]["id"])
    reporter = _member(redmine, ident, "Reporter", "Rita")
    developer = _member(redmine, ident, "Developer", "Dev")
    issue = rest(
        redmine,
        "POST",
        "issues.json",
        {"issue": {"project_id": pid, "subject": "Reported"}},
        key=reporter["api_key"],
    )["issue"]["id"]
    try:
        yield Crew(
            pid, ident, str(reporter["api_key"]), str(developer["api_key"]), int(developer["id"]), issue
        )
    finally:
        rest(redmine, "DELETE", f"projects/{ident}.json")
        for user in (reporter, developer):
            rest(redmine, "DELETE", f"users/{user['id']}.json")


def issue_of(env: RedmineEnv, issue: int) -> dict[str, Any]:
    return dict(rest(env, "GET", f"issues/{issue}.json?include=journals,children")["issue"])


def notes_of(env: RedmineEnv, issue: int) -> list[str]:
    return [j["notes"] for j in issue_of(env, issue).get("journals", []) if j.get("notes")]


# -- point 2: all or nothing ------------------------------------------------------------------------


async def test_a_reporters_note_with_a_status_change_is_refused_whole_naming_edit_issues(
    redmine: RedmineEnv, crew: Crew
) -> None:
    # Redmine's workflow lets a Reporter close a New issue; what the role lacks is edit_issues.
    async with mcp_session(redmine, REDMINE_API_KEY=crew.reporter_key) as s:
        message = await s.error("update_issue", {"id": crew.issue, "notes": "closing", "status_id": "Closed"})
    assert message.startswith("Nothing was sent"), message
    assert "edit_issues" in message and "Edit issues" in message, message
    assert "workflow" not in message, message
    after = issue_of(redmine, crew.issue)
    assert notes_of(redmine, crew.issue) == [], "the note was not stored either"
    assert after["status"]["name"] == "New"


async def test_a_status_the_workflow_forbids_is_refused_whole_listing_the_allowed_ones(
    redmine: RedmineEnv, crew: Crew
) -> None:
    async with mcp_session(redmine, REDMINE_API_KEY=crew.developer_key) as s:
        message = await s.error(
            "update_issue", {"id": crew.issue, "notes": "rejecting", "status_id": "Rejected"}
        )
        assert message.startswith("Nothing was sent"), message
        assert "Rejected" in message
        for allowed in ("In Progress", "Resolved", "Feedback", "Closed"):
            assert allowed in message, message
        assert notes_of(redmine, crew.issue) == []
        # One of the statuses named goes through, with its note.
        done = await s.ok("update_issue", {"id": crew.issue, "notes": "resolving", "status_id": "Resolved"})
        assert done.findtext("status") == "success"
    assert notes_of(redmine, crew.issue) == ["resolving"]
    assert issue_of(redmine, crew.issue)["status"]["name"] == "Resolved"


# -- point 5: parents take fields from their subtasks -------------------------------------------------


async def test_a_field_a_parent_derives_is_reported_as_derived_and_the_stored_note_is_not_invited_again(
    redmine: RedmineEnv, crew: Crew
) -> None:
    child = rest(
        redmine,
        "POST",
        "issues.json",
        {"issue": {"project_id": crew.project_id, "subject": "Child", "parent_issue_id": crew.issue}},
    )["issue"]["id"]
    async with mcp_session(redmine, REDMINE_API_KEY=crew.developer_key) as s:
        message = await s.error(
            "update_issue",
            {"id": crew.issue, "notes": "bumping", "priority_id": "Urgent", "subject": "Bumped"},
        )
    assert "derived from its subtasks" in message, message
    assert "permission" not in message, message
    assert "the note was saved" in message.lower() and "do not send it again" in message.lower(), message
    assert "subject" in message  # what was stored is named
    after = issue_of(redmine, crew.issue)
    assert after["subject"] == "Bumped"
    assert after["priority"]["name"] == "Normal"
    assert notes_of(redmine, crew.issue) == ["bumping"]
    assert [c["id"] for c in after["children"]] == [child]


async def test_creating_a_subtask_reports_the_change_it_made_to_its_parent(
    redmine: RedmineEnv, crew: Crew
) -> None:
    started = issue_of(redmine, crew.issue)["start_date"]  # Redmine's default: the day it was created
    async with mcp_session(redmine, REDMINE_API_KEY=crew.developer_key) as s:
        done = await s.ok(
            "create_issue",
            {
                "project": crew.ident,
                "subject": "Urgent part",
                "parent_issue_id": crew.issue,
                "priority_id": "Urgent",
                "start_date": "2026-03-02",
                "due_date": "2026-03-20",
            },
        )
    message = done.findtext("message") or ""
    assert f"parent issue {crew.issue}" in message, message
    assert "priority Normal -> Urgent" in message, message
    assert f"start_date {started} -> 2026-03-02" in message, message
    assert "due_date nothing -> 2026-03-20" in message, message
    parent = issue_of(redmine, crew.issue)
    assert parent["priority"]["name"] == "Urgent"


# -- point 3: every 403 names the permission ----------------------------------------------------------


async def test_every_403_names_the_permission_the_action_needs(redmine: RedmineEnv, crew: Crew) -> None:
    other = rest(
        redmine, "POST", "issues.json", {"issue": {"project_id": crew.project_id, "subject": "Other"}}
    )["issue"]["id"]
    calls: list[tuple[str, dict[str, Any], str]] = [
        ("add_issue_watcher", {"issue_id": crew.issue, "user_id": crew.developer_id}, "add_issue_watchers"),
        (
            "create_issue_relation",
            {"issue_id": crew.issue, "issue_to_id": other},
            "manage_issue_relations",
        ),
        ("create_version", {"project": crew.ident, "name": "v1"}, "manage_versions"),
        (
            "create_or_update_wiki_page",
            {"project": crew.ident, "title": "Plan", "text": "x"},
            "edit_wiki_pages",
        ),
        ("delete_issue", {"id": other, "confirm": True}, "delete_issues"),
        ("copy_issue", {"id": crew.issue}, "copy_issues"),
    ]
    async with mcp_session(redmine, REDMINE_API_KEY=crew.reporter_key) as s:
        for tool, args, permission in calls:
            message = await s.error(tool, args)
            assert permission in message, f"{tool}: {message}"
            assert "403" in message, f"{tool}: {message}"
    assert rest(redmine, "GET", f"issues/{other}.json")["issue"]["id"] == other, "nothing was deleted"


async def test_updating_a_subtask_reports_the_change_it_made_to_its_parent(
    redmine: RedmineEnv, crew: Crew
) -> None:
    child = rest(
        redmine,
        "POST",
        "issues.json",
        {"issue": {"project_id": crew.project_id, "subject": "Part", "parent_issue_id": crew.issue}},
    )["issue"]["id"]
    async with mcp_session(redmine, REDMINE_API_KEY=crew.developer_key) as s:
        done = await s.ok("update_issue", {"id": child, "priority_id": "High", "due_date": "2030-04-30"})
    message = done.findtext("message") or ""
    assert f"parent issue {crew.issue}: priority Normal -> High" in message, message
    assert "due_date nothing -> 2030-04-30" in message, message


async def test_a_subtask_the_role_may_not_make_is_refused_before_anything_is_created(
    redmine: RedmineEnv, crew: Crew
) -> None:
    # Redmine would create the issue and drop its parent: a Reporter lacks manage_subtasks.
    async with mcp_session(redmine, REDMINE_API_KEY=crew.reporter_key) as s:
        message = await s.error(
            "create_issue", {"project": crew.ident, "subject": "Sub?", "parent_issue_id": crew.issue}
        )
    assert message.startswith("Nothing was sent") and "manage_subtasks (Manage subtasks)" in message, message
    subjects = [
        i["subject"]
        for i in rest(redmine, "GET", f"issues.json?project_id={crew.project_id}&status_id=*")["issues"]
    ]
    assert subjects == ["Reported"]
