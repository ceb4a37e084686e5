"""The real-server corpus: tool definitions fetched from third-party MCP servers over stdio.

``bash scripts/third-party.sh`` installs PyPI ``mcp-server-time`` and ``mcp-server-fetch``
into ``.third-party/venv`` and npm ``@modelcontextprotocol/server-everything`` into
``.third-party/node``. Each server is started once per test session with the official SDK
client (``stdio_client`` + ``ClientSession``) and asked for ``tools/list``; the tools are kept
in wire form, exactly what a client would lint. A missing server skips its tests locally and
fails them in CI (``tests.support.env.require``).
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import mcp_types
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.support.env import THIRD_PARTY, require

FETCH_TIMEOUT = 60.0


@dataclass(frozen=True)
class RealServer:
    name: str
    command: Path
    args: tuple[str, ...] = ()
    needs: str | None = None  # another executable the command runs under (node)

    def missing(self) -> str | None:
        if not self.command.exists():
            return f"{self.command} is not installed (run: bash scripts/third-party.sh)"
        if self.needs and shutil.which(self.needs) is None:
            return f"{self.needs} is not on PATH, needed by {self.name}"
        return None


SERVERS = {
    "time": RealServer("time", THIRD_PARTY / "venv" / "bin" / "mcp-server-time"),
    "fetch": RealServer("fetch", THIRD_PARTY / "venv" / "bin" / "mcp-server-fetch"),
    "everything": RealServer(
        "everything",
        THIRD_PARTY / "node" / "node_modules" / ".bin" / "mcp-server-everything",
        ("stdio",),
        needs="node",
    ),
}


async def _list_tools(server: RealServer) -> list[dict[str, Any]]:
    params = StdioServerParameters(
        command=str(server.command), args=list(server.args), env={"PATH": os.environ.get("PATH", "")}
    )
    with open(os.devnull, "w") as quiet:  # the servers chat on stderr
        async with stdio_client(params, errlog=quiet) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            tools: list[dict[str, Any]] = []
            cursor: str | None = None
            while True:
                request = None if cursor is None else mcp_types.PaginatedRequestParams(cursor=cursor)
                page = await session.list_tools(params=request)
                tools += [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in page.tools]
                cursor = page.next_cursor
                if not cursor:
                    return tools


def _fetch(server: RealServer) -> list[dict[str, Any]] | str:
    if reason := server.missing():
        return reason

    async def run() -> list[dict[str, Any]]:
        with anyio.fail_after(FETCH_TIMEOUT):
            return await _list_tools(server)

    try:
        return anyio.run(run)
    except Exception as exc:  # reported through require(), so CI fails with the cause
        return f"{server.name}: tools/list over stdio failed: {exc!r}"


@pytest.fixture(scope="session")
def real_corpus() -> dict[str, list[dict[str, Any]] | str]:
    """Every real server's tools (or why they are unavailable), fetched once per session."""
    return {name: _fetch(server) for name, server in SERVERS.items()}


@pytest.fixture
def real_tools(real_corpus: dict[str, list[dict[str, Any]] | str]):  # type: ignore[no-untyped-def]
    """``real_tools("time")`` -> that server's tools; skips (fails in CI) when unavailable."""

    def get(name: str) -> list[dict[str, Any]]:
        entry = real_corpus[name]
        require(not isinstance(entry, str), str(entry))
        assert isinstance(entry, list)
        return entry

    return get
