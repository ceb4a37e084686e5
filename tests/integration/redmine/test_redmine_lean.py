"""Lean answers from the real server over real stdio: the tool list as sent, and categories.

``tools/list`` is read by the model on every turn and metered by Claude Code and Cursor, so by
default it stays under 40,000 bytes as the server writes it; the optional categories are off,
a hidden tool's call says how to turn it on, and an unknown category name is a warning.
"""

from __future__ import annotations

import json

import pytest

from tests.integration.redmine.redmine_session import RedmineEnv
from tests.support.raw_stdio import RawStdioClient, python_argv

ARGV = python_argv("-m", "mcpkit", "redmine", "mcp")


def env_for(redmine: RedmineEnv, **extra: str) -> dict[str, str]:
    return {"REDMINE_URL": redmine.url, "REDMINE_API_KEY": redmine.admin_key, "MCPKIT_STRICT": "1", **extra}


def test_the_default_tool_list_is_under_40_000_bytes_as_sent(redmine: RedmineEnv) -> None:
    with RawStdioClient(ARGV, env_for(redmine)) as client:
        client.initialize()
        client.send({"jsonrpc": "2.0", "id": 99, "method": "tools/list"})
        raw = client._lines.get(timeout=client.timeout)  # the exact line, not a re-encoding
        sent = len(raw.rstrip(b"\n"))
        tools = json.loads(raw)["result"]["tools"]
        names = {t["name"] for t in tools}
        assert sent < 40_000, f"tools/list is {sent} bytes as sent"
        assert "create_user" not in names and "list_news" not in names and "read_text" in names
        refused = client.request("tools/call", {"name": "list_news", "arguments": {}})["result"]
        assert refused["isError"] is True
        text = refused["content"][0]["text"]
        assert "REDMINE_TOOLS=news" in text and "\n" not in text
    with RawStdioClient(ARGV, env_for(redmine, REDMINE_TOOLS="all")) as client:
        client.initialize()
        everything = {t["name"] for t in client.request("tools/list")["result"]["tools"]}
        assert names < everything and {"create_user", "list_news", "list_groups"} <= everything


@pytest.mark.parametrize("value", ["news,nosuch"])
def test_an_unknown_category_is_a_warning_and_the_known_ones_turn_on(redmine: RedmineEnv, value: str) -> None:
    with RawStdioClient(ARGV, env_for(redmine, REDMINE_TOOLS=value)) as client:
        client.initialize()
        names = {t["name"] for t in client.request("tools/list")["result"]["tools"]}
        assert "list_news" in names and "create_user" not in names
        client.close()
        assert "unknown category 'nosuch'" in client.stderr
