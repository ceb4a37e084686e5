"""The archive's MCP tools report progress while a search runs (ToolContext), as the SDK client sees it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from mcpkit.archive import mcp as archive_mcp
from mcpkit.tools import ToolContext

pytestmark = pytest.mark.anyio


async def test_a_search_reports_progress_to_a_client_that_asks(
    sample_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcpkit.archive.api import ArchiveAPI

    monkeypatch.setattr(archive_mcp, "HEARTBEAT_SECONDS", 0.001)
    updates: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        updates.append((progress, total, message))

    api = ArchiveAPI.open(sample_db)
    try:
        async with Client(archive_mcp.build_archive_mcp(api).lowlevel) as client:
            result = await client.call_tool(
                "search_similar", {"query": "猫", "top_k": "3"}, progress_callback=on_progress
            )
            assert not result.is_error
    finally:
        api.close()
    assert updates[-1] == (1, 1, "search_similar done")
    values = [u[0] for u in updates]
    assert values == sorted(set(values)), "progress only ever increases"


async def test_the_heartbeat_counts_up_below_one_while_the_call_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(archive_mcp, "HEARTBEAT_SECONDS", 0.01)
    sent: list[tuple[float, Any, Any]] = []
    three = anyio.Event()

    async def record(progress: float, total: Any, message: Any) -> None:
        sent.append((progress, total, message))
        if len(sent) == 3:
            three.set()

    ctx = ToolContext(tool="search_similar", _send_progress=record)
    with anyio.fail_after(60):  # a guard against a hang only: the test waits for the beats
        async with anyio.create_task_group() as tg:
            tg.start_soon(archive_mcp._heartbeat, ctx, "search_similar")
            await three.wait()
            tg.cancel_scope.cancel()
    assert len(sent) >= 3
    values = [s[0] for s in sent]
    assert values == sorted(set(values)) and all(0 < v < 1 for v in values)
    assert all(s[1] == 1 and "still running" in s[2] for s in sent)
