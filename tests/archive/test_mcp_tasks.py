"""The archive MCP's ``embed`` tool as a task: a client that takes tasks gets one at once, sees the
batches in ``tasks/get`` and the summary from ``tasks/result``; the default tool list has no
``embed`` (the face stays upstream's read-only tools unless asked)."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
import numpy as np
import pytest

from mcpkit.archive.api import ArchiveAPI
from mcpkit.archive.embedding import embed_missing
from mcpkit.archive.importers import import_csv
from mcpkit.archive.mcp import build_archive_mcp
from mcpkit.client import connect
from mcpkit.server import ServerOptions

from .helpers import HashEmbedder, row, write_csv

pytestmark = pytest.mark.anyio

GUARD = 60


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_embed_runs_as_a_task_and_embeds_what_was_missing(tmp_path: Path) -> None:
    embedder = HashEmbedder()
    api = ArchiveAPI.open(tmp_path / "a.db", embedder=embedder)
    first = [row(i, "alice", f"post {i} about things") for i in range(1, 4)]
    import_csv(write_csv(tmp_path / "one.csv", first), api.engine.store)
    embed_missing(api.engine.store, "content", embedder)  # the space exists, with its model
    later = [row(i, "bob", f"later post {i} on other things") for i in range(4, 604)]
    import_csv(write_csv(tmp_path / "two.csv", later), api.engine.store)

    assert "embed" not in [t.name for t in build_archive_mcp(api).tools]
    port = _free_port()
    server = build_archive_mcp(
        api, options=ServerOptions().with_http(port=port, stateless=True), embed_tool=True
    )
    assert server.tasks is not None
    server.tasks.poll_interval_ms = 50
    url = f"http://127.0.0.1:{port}/mcp"
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.run_http)
        with anyio.fail_after(GUARD):
            while True:
                try:
                    await (await anyio.connect_tcp("127.0.0.1", port)).aclose()
                    break
                except OSError:
                    await anyio.sleep(0.02)
        async with connect(url) as session:
            created: dict[str, Any] = dict(
                await session.request("tools/call", {"name": "embed", "arguments": {}, "task": {}})
            )
            task_id = created["task"]["taskId"]
            result = dict(await session.request("tasks/result", {"taskId": task_id}))
            assert result["content"][0]["text"] == (
                "content: 600 embedded, 3 already, 0 empty after stripping (test-hash)"
            )
            final = dict(await session.request("tasks/get", {"taskId": task_id}))
            assert final["status"] == "completed"
            assert final["_meta"]["mcpkit/progress"]["progress"] == 600
            again = await session.call("embed", {}, task=True)
            assert again.text == "content: 0 embedded, 603 already, 0 empty after stripping (test-hash)"
        tg.cancel_scope.cancel()
    api.close()


async def test_the_cli_serves_embed_only_when_asked_and_only_in_process(tmp_path: Path) -> None:
    db = tmp_path / "cli.db"
    api = ArchiveAPI.open(db)
    import_csv(write_csv(tmp_path / "one.csv", [row(1, "alice", "a post")]), api.engine.store)
    api.close()
    command = [sys.executable, "-m", "mcpkit", "archive", "mcp", "--db", str(db)]
    async with connect([*command, "--embed-tool"]) as session:
        assert session.capabilities["tasks"]["requests"] == {"tools": {"call": {}}}
        listed = {t["name"]: t for t in await session.list_tools()}
        assert listed["embed"]["execution"] == {"taskSupport": "optional"}
        assert listed["embed"]["annotations"]["readOnlyHint"] is False
    async with connect(command) as session:
        assert "embed" not in {t["name"] for t in await session.list_tools()}
        assert "tasks" not in session.capabilities
    refused = subprocess.run(
        [*command[:5], "--url", "ws://127.0.0.1:1", "--embed-tool"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert refused.returncode == 2 and "--embed-tool needs --db" in refused.stderr


class GatedEmbedder(HashEmbedder):
    """While ``hold``, embeds a batch only once ``gate`` opens, so a test can cancel while the
    first batch is in hand."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()
        self.held = 0
        self.hold = False

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if self.hold:
            self.held += 1
            self.gate.wait(GUARD)
        return super().embed_documents(texts)


async def test_a_cancelled_embed_stops_after_the_batch_in_hand(tmp_path: Path) -> None:
    embedder = GatedEmbedder()
    api = ArchiveAPI.open(tmp_path / "a.db", embedder=embedder)
    import_csv(write_csv(tmp_path / "one.csv", [row(1, "alice", "first post")]), api.engine.store)
    embed_missing(api.engine.store, "content", embedder)
    later = [row(i, "bob", f"post number {i} of many") for i in range(2, 1002)]
    import_csv(write_csv(tmp_path / "two.csv", later), api.engine.store)
    embedder.hold = True
    server = build_archive_mcp(api, options=ServerOptions(), embed_tool=True)
    async with connect(server) as session:
        created = dict(await session.request("tools/call", {"name": "embed", "arguments": {}, "task": {}}))
        task_id = created["task"]["taskId"]
        with anyio.fail_after(GUARD):
            while dict(await session.request("tasks/get", {"taskId": task_id})).get("statusMessage") is None:
                await anyio.sleep(0.02)
        await session.request("tasks/cancel", {"taskId": task_id})
        embedder.gate.set()  # the batch in hand ends and is kept; the next is never started
        with anyio.fail_after(GUARD):
            while dict(await session.request("tasks/get", {"taskId": task_id}))["status"] == "working":
                await anyio.sleep(0.02)
        embedder.hold = False
        rest = await session.call("embed", {})
        assert rest.text == "content: 744 embedded, 257 already, 0 empty after stripping (test-hash)"
        assert embedder.held == 1, "the cancelled run embedded the batch in hand and no other"
    api.close()
