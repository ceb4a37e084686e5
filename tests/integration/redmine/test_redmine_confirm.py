"""Deletes confirmed by the user through elicitation, on the real Redmine over stdio.

The SDK's client session answers ``elicitation/create`` as a user would; the model's
``confirm`` flag then decides nothing. A client without the capability keeps the flag.
"""

from __future__ import annotations

import sys
import uuid
import xml.etree.ElementTree as ET
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import mcp_types
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.integration.redmine.redmine_session import RedmineEnv, Session, mcp_session, server_args
from tests.support.env import REPO

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def asking_session(env: RedmineEnv, answer: str, asked: list[str]) -> AsyncIterator[Session]:
    async def elicitation(context: Any, params: Any) -> mcp_types.ElicitResult:
        asked.append(params.message)
        return mcp_types.ElicitResult(
            action=answer, content={"confirm": True} if answer == "accept" else None
        )

    variables = {"REDMINE_URL": env.url, "REDMINE_API_KEY": env.admin_key, "MCPKIT_STRICT": "1"}
    params = StdioServerParameters(command=sys.executable, args=server_args(), env=variables, cwd=REPO)
    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write, elicitation_callback=elicitation) as client,
    ):
        await client.initialize()
        yield Session(client, (env.admin_key, env.user_key))


async def test_the_user_confirms_or_declines_each_delete(redmine: RedmineEnv) -> None:
    ident = f"confirm-{uuid.uuid4().hex[:10]}"
    async with mcp_session(redmine) as plain:
        await plain.ok(
            "create_project",
            {"name": "Confirm", "identifier": ident, "enabled_modules": ["issue_tracking", "wiki"]},
        )
        made = await plain.ok("create_issue", {"project": ident, "subject": "Doomed <issue> & co"})
        issue = int(made.findtext("issue/id") or 0)
        await plain.ok("create_or_update_wiki_page", {"project": ident, "title": "Kept", "text": "stays"})
        # Without elicitation the flag decides, as before.
        assert (await plain.ok("delete_wiki_page", {"project": ident, "title": "Kept"})).findtext(
            "status"
        ) == "preview"

    asked: list[str] = []
    async with asking_session(redmine, "decline", asked) as s:
        refused = await s.ok("delete_wiki_page", {"project": ident, "title": "Kept", "confirm": True})
        assert refused.findtext("status") == "declined"
        assert (await s.ok("get_wiki_page", {"project": ident, "title": "Kept"})).findtext("text") == "stays"
    assert asked and asked[0].startswith(f"Delete wiki page Kept of project {ident}")

    asked.clear()
    async with asking_session(redmine, "accept", asked) as s:
        gone = await s.ok("delete_issue", {"id": issue})  # no confirm flag: the user's yes is enough
        assert gone.findtext("status") == "success"
        assert "404" in await s.error("get_issue", {"id": issue})
        assert "404" in await s.error("delete_issue", {"id": issue}), (
            "a failed preview is not put to the user"
        )
    assert len(asked) == 1
    assert asked[0].startswith(f"Delete issue {issue}? It cannot be undone.")
    assert "Doomed <issue> & co" in asked[0], "the user sees what goes, unescaped"
    ET.fromstring((await _raw_delete(redmine, ident)).encode())


async def _raw_delete(env: RedmineEnv, ident: str) -> str:
    async with mcp_session(env) as s:
        _, text = await s.raw("delete_project", {"project": ident, "confirm": True})
        return text
