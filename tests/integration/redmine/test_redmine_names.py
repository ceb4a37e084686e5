"""Statuses, trackers, priorities, activities and users by name, on the real Redmine through real stdio.

Each test makes its own project and two members with the same first name, so an ambiguous name
is real; the member's own key checks the lookup a non-administrator gets (project members).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from tests.integration.redmine.redmine_session import RedmineEnv, mcp_session, rest

pytestmark = pytest.mark.anyio


@dataclass(frozen=True)
class Place:
    ident: str
    first: str  # the two members' first name, this test's own (parallel tests make Danas too)
    dana: dict
    dana_key: str
    other: dict


def make_user(env: RedmineEnv, first: str, last: str) -> dict:
    login = f"{first.lower()}-{uuid.uuid4().hex[:8]}"
    body = {"login": login, "firstname": first, "lastname": last, "mail": f"{login}@example.com"}
    return dict(rest(env, "POST", "users.json", {"user": {**body, "password": "names-password-1"}})["user"])


@pytest.fixture
def place(redmine: RedmineEnv) -> Iterator[Place]:
    ident = f"names-{uuid.uuid4().hex[:10]}"
    rest(redmine, "POST", "projects.json", {"project": {"name": f"Names {ident}", "identifier": ident}})
    last = uuid.uuid4().hex[:6].capitalize()
    first = f"Dana{uuid.uuid4().hex[:6]}"
    dana, other = make_user(redmine, first, f"Dev{last}"), make_user(redmine, first, f"Ops{last}")
    for user in (dana, other):
        rest(
            redmine,
            "POST",
            f"projects/{ident}/memberships.json",
            {"membership": {"user_id": user["id"], "role_ids": [4]}},  # Developer
        )
    try:
        yield Place(ident, first, dana, str(dana["api_key"]), other)
    finally:
        rest(redmine, "DELETE", f"projects/{ident}.json")
        for user in (dana, other):
            rest(redmine, "DELETE", f"users/{user['id']}.json")


async def test_names_where_numbers_are_asked(redmine: RedmineEnv, place: Place) -> None:
    dana = f"{place.first} {place.dana['lastname']}"
    async with mcp_session(redmine) as s:
        made = await s.ok(
            "create_issue",
            {
                "project": place.ident,
                "subject": "By name",
                "tracker_id": "support",
                "priority_id": "HIGH",
                "assigned_to": dana.upper(),
            },
        )
        issue = made.find("issue")
        assert issue is not None
        assert issue.findtext("tracker") == "Support" and issue.findtext("priority") == "High"
        assert issue.findtext("assigned_to") == dana
        number = int(issue.findtext("id") or 0)

        going = await s.ok("update_issue", {"id": number, "status_id": "in_progress"})
        assert going.findtext("issue/status") == "In Progress"
        closed = await s.ok("update_issue", {"id": number, "status_id": "Closed", "assigned_to": "me"})
        assert (
            closed.findtext("issue/status") == "Closed"
            and closed.findtext("issue/assigned_to") == "Redmine Admin"
        )
        rejected = rest(
            redmine, "POST", "issues.json", {"issue": {"project_id": place.ident, "subject": "No"}}
        )["issue"]["id"]
        rest(redmine, "PUT", f"issues/{rejected}.json", {"issue": {"status_id": 6}})
        # As a filter, closed keeps Redmine's meaning (every closed status); a status name is that status.
        every = await s.ok("list_issues", {"project": place.ident, "status": "CLOSED"})
        assert {int(i.findtext("id") or 0) for i in every.findall("issue")} == {number, rejected}
        only = await s.ok("list_issues", {"project": place.ident, "status": "rejected", "tracker": "Bug"})
        assert [int(i.findtext("id") or 0) for i in only.findall("issue")] == [rejected]

        unknown = await s.error("create_issue", {"project": place.ident, "subject": "x", "tracker_id": "Bgu"})
        assert "no tracker is named 'Bgu'" in unknown and "1 Bug, 2 Feature, 3 Support" in unknown
        ambiguous = await s.error("list_issues", {"project": place.ident, "assigned_to": place.first.lower()})
        assert "names 2 users" in ambiguous
        assert f"{place.dana['id']} {dana}" in ambiguous and str(place.other["id"]) in ambiguous

        logged = await s.ok(
            "create_time_entry",
            {"issue_id": number, "hours": 1, "activity_id": "development", "user_id": dana},
        )
        assert logged.findtext("time_entry/activity") == "Development"
        assert logged.findtext("time_entry/user") == dana
        spent = await s.ok(
            "list_time_entries", {"project": place.ident, "activity_id": "Development", "user": dana}
        )
        assert len(spent.findall("time_entry")) == 1

    # A member may not list users: the name is found among the project's members.
    async with mcp_session(redmine, REDMINE_API_KEY=place.dana_key) as s:
        other = f"{place.first} {place.other['lastname']}"
        made = await s.ok(
            "create_issue", {"project": place.ident, "subject": "Mine", "assigned_to": other.lower()}
        )
        assert made.findtext("issue/assigned_to") == other
        nobody = await s.error(
            "create_issue", {"project": place.ident, "subject": "x", "assigned_to": "Zed Nobody"}
        )
        assert "no user is named 'Zed Nobody'" in nobody and other in nobody
        mine = await s.ok("list_issues", {"project": place.ident, "assigned_to": "Me", "author": "ME"})
        assert mine.findall("issue") == []


async def test_a_member_finds_users_by_login_first_last_full_name_and_mail(
    redmine: RedmineEnv, place: Place
) -> None:
    """Issue 39 point 4: a key that may not list users found them only by full name."""
    other = place.other
    full = f"{other['firstname']} {other['lastname']}"
    ident = place.ident
    async with mcp_session(redmine, REDMINE_API_KEY=place.dana_key) as s:
        # Redmine hides every mail address from other users by default: a hidden one finds no one.
        hidden = await s.error(
            "create_issue", {"project": ident, "subject": "x", "assigned_to": other["mail"]}
        )
        assert f"no user is named {other['mail']!r}" in hidden and "\n" not in hidden
        rest(redmine, "PUT", f"users/{other['id']}.json", {"user": {}, "pref": {"hide_mail": False}})
        for written in (other["login"], other["lastname"], other["mail"].upper(), full, full.lower()):
            made = await s.ok("create_issue", {"project": ident, "subject": "By", "assigned_to": written})
            assert made.findtext("issue/assigned_to") == full, written
        # The first name is shared by both members: one line naming both, nothing created.
        both = await s.error(
            "create_issue", {"project": ident, "subject": "x", "assigned_to": place.first.lower()}
        )
        assert "names 2 users" in both and str(other["id"]) in both and str(place.dana["id"]) in both
        # The key's own login and mail, and names outside any project: the members of the key's projects.
        for written in (place.dana["login"], place.dana["mail"], other["login"], other["lastname"]):
            found = await s.ok("list_time_entries", {"user": written})
            assert found.findall("time_entry") == [], written
        unknown = await s.error("list_time_entries", {"user": "nobody-at-all"})
        assert "no user is named 'nobody-at-all'" in unknown and "\n" not in unknown
