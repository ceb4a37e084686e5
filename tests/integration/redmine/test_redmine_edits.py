"""Partial edits of long texts and wiki renames, end to end on the real Redmine.

The description is stored with ``\\r\\n`` line ends, as a browser sends them, while the model
copies ``\\n`` from the XML it read: the edit must still match, and keep the other line ends.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta

import pytest

from tests.integration.redmine.redmine_session import RedmineEnv, mcp_session, rest

pytestmark = pytest.mark.anyio

DESCRIPTION = "Intro line\r\nStep one: build\r\nStep two: test\r\nrepeat\r\nrepeat\r\nEnd <&> line"


async def test_edit_one_passage_of_a_description_guarded_by_updated_on(redmine: RedmineEnv) -> None:
    async with mcp_session(redmine) as s:
        ident = f"edits-{uuid.uuid4().hex[:10]}"
        await s.ok("create_project", {"name": "Edits", "identifier": ident})
        issue = rest(
            redmine,
            "POST",
            "issues.json",
            {"issue": {"project_id": ident, "subject": "Long", "description": DESCRIPTION}},
        )["issue"]
        number, read_at = issue["id"], issue["updated_on"]

        edited = await s.ok(
            "edit_text",
            {
                "issue_id": number,
                "old": "Step one: build\nStep two",
                "new": "Step one: compile\nStep 2",
                "updated_on": read_at,
                "notes": "wording",
            },
        )
        assert edited.findtext("status") == "success"
        stored = rest(redmine, "GET", f"issues/{number}.json?include=journals")["issue"]
        assert stored["description"] == DESCRIPTION.replace("build\r\nStep two", "compile\r\nStep 2")
        assert stored["journals"][-1]["notes"] == "wording"
        assert edited.findtext("issue/updated_on") == stored["updated_on"]

        # A version read before the last change (updated_on has whole seconds: one second earlier).
        earlier = datetime.fromisoformat(stored["updated_on"].replace("Z", "+00:00")) - timedelta(seconds=1)
        stale = await s.error(
            "edit_text",
            {"issue_id": number, "old": "Intro", "new": "Preface", "updated_on": earlier.isoformat()},
        )
        assert "after the version you read" in stale and "Nothing was changed" in stale
        now = stored["updated_on"]
        several = await s.error(
            "edit_text", {"issue_id": number, "old": "repeat", "new": "once", "updated_on": now}
        )
        assert "occurs 2 times" in several
        missing = await s.error(
            "edit_text", {"issue_id": number, "old": "Step three", "new": "x", "updated_on": now}
        )
        assert "not found" in missing
        assert "updated_on is needed" in await s.error(
            "edit_text", {"issue_id": number, "old": "Intro", "new": "x"}
        )
        assert rest(redmine, "GET", f"issues/{number}.json")["issue"]["description"] == stored["description"]

        # An empty replacement deletes the passage.
        await s.ok("edit_text", {"issue_id": number, "old": "End <&> line", "new": "", "updated_on": now})
        assert rest(redmine, "GET", f"issues/{number}.json")["issue"]["description"].endswith("repeat\r\n")
        await s.ok("delete_project", {"project": ident, "confirm": True})


async def test_edit_and_rename_wiki_pages(redmine: RedmineEnv) -> None:
    async with mcp_session(redmine) as s:
        ident = f"wikied-{uuid.uuid4().hex[:10]}"
        await s.ok("create_project", {"name": "Wiki edits", "identifier": ident, "enabled_modules": ["wiki"]})
        await s.ok(
            "create_or_update_wiki_page",
            {"project": ident, "title": "Guide", "text": "Alpha\n\nBeta <b>\n\nGamma"},
        )
        edited = await s.ok(
            "edit_text",
            {"project": ident, "title": "Guide", "old": "Beta <b>", "new": "Beta & more", "version": 1},
        )
        assert edited.findtext("wiki_page/version") == "2"
        page = await s.ok("get_wiki_page", {"project": ident, "title": "Guide"})
        assert page.findtext("text") == "Alpha\n\nBeta & more\n\nGamma"
        stale = await s.error(
            "edit_text", {"project": ident, "title": "Guide", "old": "Alpha", "new": "A", "version": 1}
        )
        assert "version 2, newer than version 1" in stale
        assert "not both" in await s.error(
            "edit_text", {"issue_id": 1, "project": ident, "title": "Guide", "old": "a", "new": "b"}
        )

        renamed = await s.ok(
            "rename_wiki_page", {"project": ident, "title": "Guide", "new_title": "User guide"}
        )
        assert renamed.findtext("wiki_page/title") == "User_guide"
        assert renamed.findtext("wiki_page/text") == "Alpha\n\nBeta & more\n\nGamma"
        # Redmine answers the old title with a redirect inside itself: followed, not a config error.
        moved = await s.ok("get_wiki_page", {"project": ident, "title": "Guide"})
        assert moved.findtext("title") == "User_guide" and moved.findtext("version") == "2"
        titles = [
            p.findtext("title")
            for p in (await s.ok("list_wiki_pages", {"project": ident})).findall("wiki_page")
        ]
        assert titles == ["User_guide"]
        await s.ok(
            "rename_wiki_page",
            {"project": ident, "title": "User guide", "new_title": "Manual", "redirect": False},
        )
        assert "404" in await s.error("get_wiki_page", {"project": ident, "title": "User guide"})

        # A Developer may edit pages but not rename them: Redmine drops the title and says 204.
        member = rest(redmine, "GET", "users/current.json", key=redmine.user_key)["user"]["id"]
        rest(
            redmine,
            "POST",
            f"projects/{ident}/memberships.json",
            {"membership": {"user_id": member, "role_ids": [4]}},
        )
        async with mcp_session(redmine, REDMINE_API_KEY=redmine.user_key) as dev:
            await dev.ok(
                "edit_text",
                {"project": ident, "title": "Manual", "old": "Gamma", "new": "Delta", "version": 2},
            )
            refused = await dev.error(
                "rename_wiki_page", {"project": ident, "title": "Manual", "new_title": "Handbook"}
            )
            assert "Rename wiki pages permission" in refused
        assert (await s.ok("get_wiki_page", {"project": ident, "title": "Manual"})).findtext("version") == "3"
        await s.ok("delete_project", {"project": ident, "confirm": True})
