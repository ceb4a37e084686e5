"""A fresh install's archive MCP server: it starts, lists its tools, and every call says in one
line how to import an export, instead of exiting before ``initialize`` (which a client shows as a
dead server). Nothing is created, and an import made while it runs is served without a restart."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.archive.helpers import csv_text, row
from tests.archive_faces.conftest import cli

pytestmark = pytest.mark.anyio

CALLS = {
    "search_similar": {"query": "coffee"},
    "search_posts_by_text": {"search_term": "coffee"},
    "get_database_stats": {},
    "get_user_stats": {},
    "get_thread": {"id": "1"},
    "get_status": {},
    "embed_text": {"text": "coffee"},
}


@asynccontextmanager
async def session_of(args: list[str], env: Mapping[str, str]) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "mcpkit.archive.cli", "mcp", *args], env=dict(env)
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


def _env(home: Path, **extra: str) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "TMPDIR", "PYTHONPATH")}
    return {**keep, "HOME": str(home), "XDG_DATA_HOME": str(home / "data"), **extra}


async def _every_call_says_how_to_import(session: ClientSession, db: Path) -> None:
    listed = {tool.name for tool in (await session.list_tools()).tools}
    assert set(CALLS) <= listed
    for name, args in CALLS.items():
        result = await session.call_tool(name, args)
        assert result.is_error, name
        [item] = result.content
        text = item.text  # type: ignore[union-attr]
        assert "\n" not in text.strip(), (name, text)
        assert f"no archive at {db} yet" in text and "mcpkit archive import" in text, (name, text)


async def test_a_missing_archive_is_served_with_how_to_import(tmp_path: Path) -> None:
    db = tmp_path / "fresh" / "archive.db"
    async with session_of(["--db", str(db)], _env(tmp_path)) as session:
        await _every_call_says_how_to_import(session, db)
    assert not db.exists() and not db.parent.exists()


async def test_without_any_option_the_default_archive_is_used(tmp_path: Path) -> None:
    """What a client's one-line config starts: no --db, no --url, no server on the default port
    serving this archive (MCPKIT_ARCHIVE_DB names a fresh path no server can serve)."""
    db = tmp_path / "data" / "mcpkit" / "archive.db"
    async with session_of([], _env(tmp_path, MCPKIT_ARCHIVE_DB=str(db))) as session:
        await _every_call_says_how_to_import(session, db)
    assert not db.exists()


async def test_an_import_while_it_runs_is_answered_without_a_restart(tmp_path: Path) -> None:
    db = tmp_path / "archive.db"
    export = tmp_path / "twilog.csv"
    export.write_text(csv_text([row(1, "alice", "freshly roasted coffee beans")]))
    async with session_of(["--db", str(db)], _env(tmp_path)) as session:
        first = await session.call_tool("search_posts_by_text", {"search_term": "coffee"})
        assert first.is_error
        done = await anyio.to_thread.run_sync(lambda: cli("import", str(export), "--db", str(db)))
        assert done.returncode == 0, done.stderr
        after = await session.call_tool("search_posts_by_text", {"search_term": "coffee"})
        assert not after.is_error
        assert "freshly roasted coffee beans" in after.content[0].text  # type: ignore[union-attr]
