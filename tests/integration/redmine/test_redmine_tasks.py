"""Redmine's bulk change as a task, end to end: ``mcpkit redmine mcp`` started as a client would,
mcpkit's own client asking for a task on ``move_issues`` against the real Redmine. The task is
answered at once, ``tasks/get`` shows how many issues have moved, ``tasks/result`` gives the
tool's own answer, and the issues are in the target project; ``Session.call(task=True)`` does
the polling itself."""

from __future__ import annotations

import sys
import uuid
import xml.etree.ElementTree as ET
from typing import Any

import anyio
import pytest

from mcpkit.client import Session, connect
from tests.integration.redmine.redmine_session import RedmineEnv, server_args

pytestmark = pytest.mark.anyio

GUARD = 120


async def _ok(session: Session, tool: str, args: dict[str, Any]) -> ET.Element:
    outcome = await session.call(tool, args)
    return ET.fromstring(outcome.text.encode())


async def test_move_issues_runs_as_a_task(redmine: RedmineEnv) -> None:
    env = {
        "REDMINE_URL": redmine.url,
        "REDMINE_API_KEY": redmine.admin_key,
        "MCPKIT_STRICT": "1",
        "REDMINE_TOOLS": "all",
    }
    async with connect([sys.executable, *server_args()], env=env) as session:
        assert session.capabilities["tasks"]["requests"] == {"tools": {"call": {}}}
        listed = {t["name"]: t for t in await session.list_tools()}
        assert listed["move_issues"]["execution"] == {"taskSupport": "optional"}
        assert "execution" not in listed["get_issue"]

        tag = uuid.uuid4().hex[:10]
        projects = []
        for side in ("src", "dst"):
            ident = f"task-{side}-{tag}"
            await _ok(session, "create_project", {"name": f"Task {side} {tag}", "identifier": ident})
            projects.append(ident)
        source, target = projects
        issues = []
        for n in range(4):
            made = await _ok(session, "create_issue", {"project": source, "subject": f"Bulk {n}"})
            issues.append(int(made.findtext("issue/id") or 0))

        created = dict(
            await session.request(
                "tools/call",
                {"name": "move_issues", "arguments": {"ids": issues[:3], "project": target}, "task": {}},
            )
        )
        task_id = created["task"]["taskId"]
        assert created["task"]["status"] in ("working", "completed")
        result = dict(await session.request("tasks/result", {"taskId": task_id}))
        assert result["isError"] is False
        assert ET.fromstring(result["content"][0]["text"]).findtext("status") == "success"
        final = dict(await session.request("tasks/get", {"taskId": task_id}))
        assert final["status"] == "completed"
        assert final["_meta"]["mcpkit/progress"] == {
            "progress": 2,
            "total": 3,
            "message": f"moving issue {issues[2]}",
        }
        for issue in issues[:3]:
            shown = await _ok(session, "get_issue", {"id": issue, "include": []})
            assert shown.findtext("project") == f"Task dst {tag}"

        with anyio.fail_after(GUARD):
            polled = await session.call("move_issues", {"ids": [issues[3]], "project": target}, task=True)
        assert ET.fromstring(polled.text.encode()).findtext("status") == "success"
        listing = dict(await session.request("tasks/list", {}))
        assert len(listing["tasks"]) == 2 and all(t["status"] == "completed" for t in listing["tasks"])
        for ident in projects:
            await _ok(session, "delete_project", {"project": ident, "confirm": True})
