"""The tools users of Redmine MCP servers ask for (issue 12), each end to end on the real Redmine."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from tests.integration.redmine.redmine_session import RedmineEnv, Session, mcp_session, rest

pytestmark = pytest.mark.anyio


def unique() -> str:
    return uuid.uuid4().hex[:10]


async def new_project(s: Session, tag: str, modules: list[str] | None = None) -> str:
    ident = f"new-{tag}-{unique()}"
    args = {"name": f"New {tag}", "identifier": ident}
    if modules:
        args["enabled_modules"] = modules
    await s.ok("create_project", args)
    return ident


async def issue_id(s: Session, ident: str, subject: str, **fields: object) -> int:
    made = await s.ok("create_issue", {"project": ident, "subject": subject, **fields})
    return int(made.findtext("issue/id") or 0)


async def test_copy_and_move_issues(redmine: RedmineEnv, tmp_path: Path) -> None:
    async with mcp_session(redmine, REDMINE_ATTACHMENTS_DIR=str(tmp_path)) as s:
        source, target = await new_project(s, "src"), await new_project(s, "dst")
        parent = await issue_id(s, source, "Parent <with> & tricky")
        await issue_id(s, source, "Child", parent_issue_id=parent)
        (tmp_path / "spec.txt").write_text("the spec\n")
        await s.ok("upload_attachment", {"issue_id": parent, "path": "spec.txt"})

        copied = await s.ok(
            "copy_issue", {"id": parent, "project": target, "subtasks": True, "attachments": True}
        )
        copy = int(copied.findtext("issue/id") or 0)
        assert copy != parent and copied.findtext("issue/project") == "New dst"
        shown = await s.ok("get_issue", {"id": copy})
        assert shown.findtext("subject") == "Parent <with> & tricky"
        assert shown.find("children/issue") is not None, "subtasks copied"
        assert shown.findtext("attachments/attachment/filename") == "spec.txt", "attachments copied"
        linked = await s.ok("copy_issue", {"id": parent, "subject": "Linked copy"})  # same project: linked
        twin = int(linked.findtext("issue/id") or 0)
        relations = (await s.ok("get_issue", {"id": twin})).findall("relations/relation")
        assert any(r.findtext("relation_type") == "copied_to" for r in relations)

        loose = [await issue_id(s, source, f"Loose {n}") for n in range(2)]
        moved = await s.ok("move_issues", {"ids": loose, "project": target})
        assert moved.findtext("status") == "success"
        for n in loose:
            assert (await s.ok("get_issue", {"id": n, "include": []})).findtext("project") == "New dst"
        message = await s.error("move_issues", {"ids": [loose[0], 987654321], "project": source})
        assert f"Moved {loose[0]}" in message and "987654321" in message and "404" in message
        for ident in (source, target):
            await s.ok("delete_project", {"project": ident, "confirm": True})


async def test_journal_notes_edit_delete_and_private_view(redmine: RedmineEnv) -> None:
    async with mcp_session(redmine) as s:
        ident = await new_project(s, "notes")
        issue = await issue_id(s, ident, "Notes")
        await s.ok("update_issue", {"id": issue, "notes": "public note"})
        await s.ok("update_issue", {"id": issue, "notes": "secret note", "private_notes": True})
        await s.ok("update_issue", {"id": issue, "status_id": 2, "notes": "note with a change"})
        journals = (await s.ok("get_issue", {"id": issue})).findall("journals/journal")
        first, secret, changed = (int(j.findtext("id") or 0) for j in journals)

        private = await s.ok("get_issue", {"id": issue, "journals": "private"})
        assert [j.findtext("notes") for j in private.findall("journals/journal")] == ["secret note"]

        edited = await s.ok("update_journal_note", {"issue_id": issue, "id": first, "notes": "edited <note>"})
        assert edited.findtext("journal/notes") == "edited <note>"
        made_private = await s.ok(
            "update_journal_note",
            {"issue_id": issue, "id": first, "notes": "edited <note>", "private_notes": True},
        )
        assert made_private.findtext("journal/private_notes") == "true"

        preview = await s.ok("delete_journal_note", {"issue_id": issue, "id": secret})
        assert (
            preview.findtext("status") == "preview"
            and preview.findtext("impact/journal/notes") == "secret note"
        )
        await s.ok("delete_journal_note", {"issue_id": issue, "id": secret, "confirm": True})
        gone = await s.ok("delete_journal_note", {"issue_id": issue, "id": changed, "confirm": True})
        assert "field changes stay" in (gone.findtext("message") or "")
        left = (await s.ok("get_issue", {"id": issue})).findall("journals/journal")
        assert [int(j.findtext("id") or 0) for j in left] == [first, changed]
        assert "no journal" in await s.error(
            "update_journal_note", {"issue_id": issue, "id": secret, "notes": "x"}
        )
        await s.ok("delete_project", {"project": ident, "confirm": True})


async def test_news_crud(redmine: RedmineEnv) -> None:
    async with mcp_session(redmine) as s:
        ident = await new_project(s, "news", ["issue_tracking", "news"])
        title = f"Release {unique()}"
        made = await s.ok(
            "create_news",
            {"project": ident, "title": title, "summary": "short", "description": "All <about> it"},
        )
        nid = int(made.findtext("news/id") or 0)
        assert made.findtext("news/description") == "All <about> it"
        listed = await s.ok("list_news", {"project": ident})
        assert listed.findtext("news/title") == title
        assert (await s.ok("list_news", {"limit": 100})).get("total_count")
        assert (await s.ok("get_news", {"id": nid, "include": ["comments"]})).findtext("title") == title
        changed = await s.ok("update_news", {"id": nid, "summary": "longer summary"})
        assert changed.findtext("news/summary") == "longer summary"
        assert (await s.ok("delete_news", {"id": nid})).findtext("status") == "preview"
        await s.ok("delete_news", {"id": nid, "confirm": True})
        assert "404" in await s.error("get_news", {"id": nid})
        await s.ok("delete_project", {"project": ident, "confirm": True})


async def test_project_files_memberships_categories(redmine: RedmineEnv, tmp_path: Path) -> None:
    async with mcp_session(redmine, REDMINE_ATTACHMENTS_DIR=str(tmp_path)) as s:
        ident = await new_project(s, "files", ["issue_tracking", "files"])
        (tmp_path / "release.zip").write_bytes(bytes(range(200)))
        version = await s.ok("create_version", {"project": ident, "name": "1.0"})
        vid = int(version.findtext("version/id") or 0)
        up = await s.ok(
            "upload_project_file",
            {"project": ident, "path": "release.zip", "version_id": vid, "description": "build"},
        )
        assert up.findtext("file/filename") == "release.zip"
        files = await s.ok("list_project_files", {"project": ident})
        assert files.findtext("file/filesize") == "200" and files.find("file/version") is not None

        member = int((await s.ok("list_users", {"name": "mcpkit-member"})).findtext("user/id") or 0)
        roles = {r.text: int(r.get("id") or 0) for r in (await s.ok("list_roles")).findall("role")}
        added = await s.ok(
            "add_project_membership", {"project": ident, "user_id": member, "role_ids": [roles["Reporter"]]}
        )
        mid = int(added.findtext("membership/id") or 0)
        changed = await s.ok(
            "update_project_membership", {"id": mid, "role_ids": [roles["Developer"], roles["Manager"]]}
        )
        assert sorted(r.text or "" for r in changed.findall("membership/roles/role")) == [
            "Developer",
            "Manager",
        ]
        await s.error("update_project_membership", {"id": mid, "role_ids": [987654]})  # 422 or not applied

        first = await s.ok("create_issue_category", {"project": ident, "name": "Backend"})
        cat_a = int(first.findtext("issue_category/id") or 0)
        cat_b = int(
            (await s.ok("create_issue_category", {"project": ident, "name": "Frontend"})).findtext(
                "issue_category/id"
            )
            or 0
        )
        assert (await s.ok("get_issue_category", {"id": cat_a})).findtext("name") == "Backend"
        issue = await issue_id(s, ident, "Categorised", category_id=cat_a)
        renamed = await s.ok(
            "update_issue_category", {"id": cat_a, "name": "Back end", "assigned_to_id": member}
        )
        assert renamed.findtext("issue_category/name") == "Back end"
        assert renamed.find("issue_category/assigned_to").get("id") == str(member)
        preview = await s.ok("delete_issue_category", {"id": cat_a, "reassign_to_id": cat_b})
        assert (
            preview.findtext("status") == "preview"
            and preview.findtext("impact/issue_category/issues") == "1"
        )
        await s.ok("delete_issue_category", {"id": cat_a, "reassign_to_id": cat_b, "confirm": True})
        moved = await s.ok("get_issue", {"id": issue, "include": []})
        assert moved.find("category").get("id") == str(cat_b)
        await s.ok("delete_project", {"project": ident, "confirm": True})


async def test_groups_and_project_summary(redmine: RedmineEnv) -> None:
    async with mcp_session(redmine) as s:
        member = int((await s.ok("list_users", {"name": "mcpkit-member"})).findtext("user/id") or 0)
        name = f"Group {unique()}"
        made = await s.ok("create_group", {"name": name})
        gid = int(made.findtext("group/id") or 0)
        added = await s.ok("update_group", {"id": gid, "add_user_ids": [member]})
        assert added.find(f"group/users/user[@id='{member}']") is not None
        shown = await s.ok("get_group", {"id": gid, "include": ["users"]})
        assert shown.findtext("name") == name
        assert any(g.get("id") == str(gid) for g in (await s.ok("list_groups")).findall("group"))
        removed = await s.ok(
            "update_group", {"id": gid, "remove_user_ids": [member], "name": name + " renamed"}
        )
        assert removed.find(f"group/users/user[@id='{member}']") is None
        assert removed.findtext("group/name") == name + " renamed"
        await s.error("update_group", {"id": gid, "add_user_ids": [987654]})
        assert (await s.ok("delete_group", {"id": gid})).findtext("status") == "preview"
        await s.ok("delete_group", {"id": gid, "confirm": True})

        ident = await new_project(s, "summary")
        version = int(
            (await s.ok("create_version", {"project": ident, "name": "v1"})).findtext("version/id") or 0
        )
        a = await issue_id(s, ident, "A", estimated_hours=3, fixed_version_id=version, assigned_to="me")
        await issue_id(s, ident, "B", estimated_hours=2, tracker_id=2)
        await s.ok("update_issue", {"id": a, "status_id": 5})
        activity = int((await s.ok("list_time_entry_activities")).findtext("activity/id") or 0)
        await s.ok("create_time_entry", {"issue_id": a, "hours": 1.25, "activity_id": activity})
        summary = await s.ok("get_project_summary", {"project": ident})
        assert (summary.get("issues"), summary.get("open"), summary.get("closed")) == ("2", "1", "1")
        closed = summary.find("by_status/group[@name='Closed']")
        assert closed is not None and closed.get("closed") == "1"
        assert summary.find("by_tracker/group[@name='Feature']").get("open") == "1"
        assert summary.find("by_version/group[@name='v1']").get("closed") == "1"
        assert summary.find("by_assignee/group[@name='none']").get("open") == "1"
        assert summary.findtext("hours/estimated") == "5.0" and summary.findtext("hours/spent") == "1.25"
        await s.ok("delete_project", {"project": ident, "confirm": True})


async def test_filters_and_read_only_cover_the_new_tools(redmine: RedmineEnv) -> None:
    async with mcp_session(redmine, MCPKIT_TOOLS_INCLUDE="news,groups") as s:
        names = {t.name for t in (await s.client.list_tools()).tools}
        assert names == {
            "list_news",
            "get_news",
            "create_news",
            "update_news",
            "delete_news",
            "list_groups",
            "get_group",
            "create_group",
            "update_group",
            "delete_group",
        }
    async with mcp_session(redmine, REDMINE_READ_ONLY="true") as s:
        names = {t.name for t in (await s.client.list_tools()).tools}
        assert {"get_project_summary", "list_news", "list_project_files", "get_issue_category"} <= names
        writes = {
            "copy_issue",
            "move_issues",
            "update_journal_note",
            "delete_journal_note",
            "create_news",
            "upload_project_file",
            "update_project_membership",
            "update_issue_category",
            "create_group",
        }
        assert not writes & names
        assert "read-only" in await s.error("copy_issue", {"id": 1})
        rest(redmine, "GET", "users/current.json")  # the raw helper works with the same Redmine
