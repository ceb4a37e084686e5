"""The README's Cursor line leaves Cursor at most 40 tools (issue 39 point 7: it left 58).

The line is read from the README's "Use it from an MCP client" paragraph, the server started
with that environment as a real child process, and ``tools/list`` counted over the MCP SDK's
stdio client; the numbers the paragraph states are the numbers counted.
"""

from __future__ import annotations

import os
import re
import sys

import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.support.env import REPO

pytestmark = pytest.mark.anyio
CURSOR_LIMIT = 40
KEY = "abcdef0123456789abcdef0123456789abcdef01"


def paragraph() -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    start = text.index("### Use it from an MCP client")
    return text[start : text.index("\n#", start + 1)]


async def tool_count(extra: dict[str, str]) -> int:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REDMINE_", "MCPKIT_TOOLS"))}
    env.update({"REDMINE_URL": "http://127.0.0.1:9", "REDMINE_API_KEY": KEY, **extra})
    params = StdioServerParameters(command=sys.executable, args=["-m", "mcpkit.redmine", "mcp"], env=env)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        listed = await session.list_tools()
        return len(listed.tools)


async def test_the_cursor_line_leaves_at_most_40_tools() -> None:
    said = paragraph()
    found = re.search(r'"MCPKIT_TOOLS_EXCLUDE": "([a-z_,]+)"', said)
    assert found, "the paragraph gives MCPKIT_TOOLS_EXCLUDE"
    left = await tool_count({"MCPKIT_TOOLS_EXCLUDE": found[1]})
    assert left <= CURSOR_LIMIT
    default = await tool_count({})
    counts = re.search(r"leaves (\d+) of the (\d+) tools", " ".join(said.split()))
    assert counts, "the paragraph says how many tools are left"
    assert (int(counts[1]), int(counts[2])) == (left, default)
