"""Nothing published, cut or changed behind the model's back, on the real Redmine through real stdio.

Each test makes its own project and its own Reporter-role user (created here through the REST
API with the administrator's key), so what a Reporter may not do is what Redmine's default
Reporter role says, not what an earlier run left behind.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from tests.integration.redmine.redmine_session import RedmineEnv, mcp_session, rest

pytestmark = pytest.mark.anyio


def unique() -> str:
    return uuid.uuid4().hex[:10]


@dataclass(frozen=True)
class Team:
    """A fresh project, a fresh Reporter in it, and one issue the Reporter wrote."""

    project_id: int
    ident: str
    reporter_id: int
    reporter_key: str
    issue: int


@pytest.fixture
def team(redmine: RedmineEnv) -> Iterator[Team]:
    ident = f"trust-{unique()}"
    project = rest(
        redmine, "POST", "projects.json", {"project": {"name": f"Trust {ident}", "identifier": ident}}
    )
    pid = int(project["project"]["id"])
    login = f"reporter-{unique()}"
    user = rest(
        redmine,
        "POST",
        "users.json",
        {
            "user": {
                "login": login,
                "firstname": "Rita",
                "lastname": "Reporter",
                "mail": f"{login}@example.com",
                "password": "reporter-password-1",
            }
        },
    )["user"]
    roles = {r["name"]: r["id"] for r in rest(redmine, "GET", "roles.json")["roles"]}
    rest(
        redmine,
        "POST",
        f"projects/{ident}/memberships.json",
        {"membership": {"user_id": user["id"], "role_ids": [roles["Reporter"]]}},
    )
    issue = rest(
        redmine,
        "POST",
        "issues.json",
        {"issue": {"project_id": pid, "subject": "Reported"}},
        key=user["api_key"],
    )["issue"]["id"]
    try:
        yield Team(pid, ident, int(user["id"]), str(user["api_key"]), int(issue))
    finally:
        rest(redmine, "DELETE", f"projects/{ident}.json")
        rest(redmine, "DELETE", f"users/{user['id']}.json")


def journals(env: RedmineEnv, issue: int) -> list[dict]:
    return list(rest(env, "GET", f"issues/{issue}.json?include=journals")["issue"].get("journals", []))


async def test_a_reporters_private_note_is_refused_before_it_is_sent(redmine: RedmineEnv, team: Team) -> None:
    async with mcp_session(redmine, REDMINE_API_KEY=team.reporter_key) as s:
        message = await s.error("update_issue", {"id": team.issue, "notes": "secret", "private_notes": True})
        assert message.startswith("Nothing was sent: the key's user lacks the permission set_notes_private")
        assert "store the note as public" in message
        assert journals(redmine, team.issue) == [], "no note reached Redmine"
        # A public note from the same user goes through.
        done = await s.ok("update_issue", {"id": team.issue, "notes": "public remark"})
        assert done.findtext("status") == "success"
        # The private flag of an issue and watchers are guarded the same way.
        message = await s.error(
            "create_issue", {"project": team.ident, "subject": "Hidden?", "is_private": True}
        )
        assert "set_issues_private" in message and "set_own_issues_private" in message
        message = await s.error(
            "create_issue",
            {"project": team.ident, "subject": "Watched?", "watcher_user_ids": [team.reporter_id]},
        )
        assert "add_issue_watchers" in message
        assert message.startswith("Nothing was sent")
    subjects = [
        i["subject"]
        for i in rest(redmine, "GET", f"issues.json?project_id={team.project_id}&status_id=*")["issues"]
    ]
    assert subjects == ["Reported"], "neither refused issue was created"
    notes = journals(redmine, team.issue)
    assert [(j["notes"], j["private_notes"]) for j in notes] == [("public remark", False)]


async def test_an_administrators_private_note_is_stored_private(redmine: RedmineEnv, team: Team) -> None:
    async with mcp_session(redmine) as s:
        await s.ok("update_issue", {"id": team.issue, "notes": "for staff", "private_notes": True})
        journal = journals(redmine, team.issue)[-1]
        assert journal["private_notes"] is True
        # Making a note private by editing it is guarded too: the Reporter may not.
    async with mcp_session(redmine, REDMINE_API_KEY=team.reporter_key) as s:
        await s.ok("update_issue", {"id": team.issue, "notes": "mine"})
        mine = journals(redmine, team.issue)[-1]
        message = await s.error(
            "update_journal_note",
            {"issue_id": team.issue, "id": mine["id"], "notes": "mine, hidden", "private_notes": True},
        )
        assert "set_notes_private" in message and message.startswith("Nothing was sent")


async def test_a_move_names_the_tracker_redmine_changed_and_a_lone_cr_is_no_failure(
    redmine: RedmineEnv, team: Team
) -> None:
    trackers = {t["name"]: t["id"] for t in rest(redmine, "GET", "trackers.json")["trackers"]}
    ident = f"trust-bugs-{unique()}"
    rest(
        redmine,
        "POST",
        "projects.json",
        {"project": {"name": f"Bugs only {ident}", "identifier": ident, "tracker_ids": [trackers["Bug"]]}},
    )
    try:
        async with mcp_session(redmine) as s:
            created = await s.ok(
                "create_issue",
                {"project": team.ident, "subject": "Support me", "tracker_id": trackers["Support"]},
            )
            issue = int(created.findtext("issue/id") or 0)
            moved = await s.ok("move_issues", {"ids": [issue], "project": ident})
            message = moved.findtext("message") or ""
            assert message.startswith(f"Moved 1 issue to project {ident}: {issue}.")
            assert f"Redmine also changed issue {issue}: tracker Support -> Bug because project" in message
            assert "has no Support tracker" in message

            # Redmine stores a lone carriage return as CRLF: the write is stored, not failed.
            lone = await s.ok("create_issue", {"project": team.ident, "subject": "CR", "description": "a\rb"})
            assert lone.findtext("status") == "success"
            stored = rest(redmine, "GET", f"issues/{lone.findtext('issue/id')}.json")["issue"]["description"]
            assert stored in ("a\r\nb", "a\rb")
            again = await s.ok("update_issue", {"id": issue, "description": "x\ry\r\nz\n"})
            assert again.findtext("status") == "success"
    finally:
        rest(redmine, "DELETE", f"projects/{ident}.json")


async def test_watchers_asked_at_creation_are_checked_after_it(redmine: RedmineEnv, team: Team) -> None:
    async with mcp_session(redmine) as s:
        done = await s.ok(
            "create_issue",
            {"project": team.ident, "subject": "Watched", "watcher_user_ids": [team.reporter_id]},
        )
        assert done.findtext("status") == "success"
        issue = done.findtext("issue/id")
    watchers = rest(redmine, "GET", f"issues/{issue}.json?include=watchers")["issue"]["watchers"]
    assert [w["id"] for w in watchers] == [team.reporter_id]


async def test_escapes_do_not_starve_a_text_and_read_text_returns_the_rest_exactly(
    redmine: RedmineEnv, team: Team
) -> None:
    hostile = '"<&>"' * 6000  # 30,000 characters, five to six bytes each once escaped
    plain = "plain text " * 9000  # 99,000 characters
    issue = rest(
        redmine,
        "POST",
        "issues.json",
        {"issue": {"project_id": team.project_id, "subject": "Escapes", "description": hostile}},
    )["issue"]["id"]
    other = rest(
        redmine,
        "POST",
        "issues.json",
        {"issue": {"project_id": team.project_id, "subject": "Plain", "description": plain}},
    )["issue"]["id"]
    rest(redmine, "PUT", f"issues/{other}.json", {"issue": {"notes": "long note " * 5000}})
    async with mcp_session(redmine) as s:
        shown = (await s.ok("get_issue", {"id": issue})).find("description")
        assert shown is not None and int(shown.get("shown") or 0) > 20_000
        marker = (shown.text or "").rsplit(" … [cut ", 1)[1]
        source = marker.split('source="', 1)[1].split('"', 1)[0]
        offset = int(marker.split("offset=", 1)[1].split(" ", 1)[0])
        assert source == f"issue {issue} description"
        rest_of_it = ""
        while True:
            is_error, page = await s.raw("read_text", {"source": source, "offset": offset})
            assert not is_error, page
            head, _, body = page.partition("\n")
            rest_of_it += body
            if head.endswith("the end]"):
                break
            offset = int(head.rsplit("offset=", 1)[1].split(" ", 1)[0])
        assert (shown.text or "").split(" … [cut ", 1)[0] + rest_of_it == hostile

        # A 99k description stays whole beside a long note: the journals give way first.
        root = await s.ok("get_issue", {"id": other})
        assert root.findtext("description") == plain
        note = root.find("journals/journal/notes")
        assert note is not None and (note.get("truncated") == "true" or note.text == "long note " * 5000)


async def test_a_time_entry_moved_to_an_issue_of_another_project_names_the_project_change(
    redmine: RedmineEnv, team: Team
) -> None:
    ident = f"trust-time-{unique()}"
    other = rest(
        redmine, "POST", "projects.json", {"project": {"name": f"Time {ident}", "identifier": ident}}
    )
    try:
        elsewhere = rest(
            redmine, "POST", "issues.json", {"issue": {"project_id": ident, "subject": "Elsewhere"}}
        )["issue"]["id"]
        entry = rest(
            redmine,
            "POST",
            "time_entries.json",
            {"time_entry": {"issue_id": team.issue, "hours": 1, "activity_id": 9}},
        )["time_entry"]["id"]
        async with mcp_session(redmine) as s:
            done = await s.ok("update_time_entry", {"id": entry, "issue_id": elsewhere})
            message = done.findtext("message") or ""
            assert message.startswith(f"Updated time entry {entry}. Redmine also changed project ")
            assert f"Trust {team.ident} -> Time {ident}" in message
            plain = await s.ok("update_time_entry", {"id": entry, "comments": "only this"})
            assert plain.findtext("message") == f"Updated time entry {entry}."
        stored = rest(redmine, "GET", f"time_entries/{entry}.json")["time_entry"]
        assert stored["project"]["id"] == other["project"]["id"]
    finally:
        rest(redmine, "DELETE", f"projects/{ident}.json")
