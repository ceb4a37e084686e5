"""``mcpkit archive mcp --transport http`` takes the serving options every MCP server takes, and
enforces them: a real child process on a loopback port, reached over real HTTP, the SDK's client
for the MCP session. ``--allow-origin`` and ``--token-env`` used to be "No such option" here;
``mcpkit archive web`` takes ``--allow-origin`` too (it read only ``$MCPKIT_ARCHIVE_ORIGINS``)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx2 as httpx
import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.archive_faces.conftest import free_port, sample_csv

ALLOWED = "https://app.example"
TOKEN = "s3cret-archive-token"


@pytest.fixture
def small_db(tmp_path: Path) -> Path:
    from mcpkit.archive.importers import import_csv
    from mcpkit.archive.store import Store

    db = tmp_path / "a.db"
    store = Store(db)
    try:
        import_csv(sample_csv(), store)
    finally:
        store.close()
    return db


@pytest.fixture
def served(small_db: Path) -> Iterator[str]:
    """The archive's MCP server over HTTP with an allowed origin and a token; yields its URL."""
    port = free_port()
    argv = [sys.executable, "-m", "mcpkit", "archive", "mcp", "--db", str(small_db)]
    argv += [
        "--transport",
        "http",
        "--port",
        str(port),
        "--allow-origin",
        ALLOWED,
        "--token-env",
        "ARCHIVE_T",
    ]
    env = {**os.environ, "ARCHIVE_T": TOKEN}
    process = subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env
    )
    try:
        anyio.run(_wait_listening, port, process)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=30)
        if process.stderr is not None:
            process.stderr.close()


async def _wait_listening(port: int, process: subprocess.Popen[bytes]) -> None:
    with anyio.fail_after(60):
        while True:
            if process.poll() is not None:
                err = process.stderr.read().decode() if process.stderr else ""
                raise AssertionError(f"the server exited {process.returncode}: {err}")
            try:
                stream = await anyio.connect_tcp("127.0.0.1", port)
            except OSError:
                await anyio.sleep(0.05)
                continue
            await stream.aclose()
            return


async def _post(url: str, headers: dict[str, str]) -> httpx.Response:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    sent = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2025-11-25",
        **headers,
    }
    async with httpx.AsyncClient(timeout=30) as http:
        return await http.post(url, json=body, headers=sent)


@pytest.mark.anyio
async def test_archive_mcp_over_http_requires_the_token_and_checks_the_origin(served: str) -> None:
    bearer = {"authorization": f"Bearer {TOKEN}"}
    no_token = await _post(served, {})
    assert no_token.status_code == 401
    wrong = await _post(served, {"authorization": "Bearer not-it"})
    assert wrong.status_code == 401
    foreign = await _post(served, {**bearer, "origin": "https://evil.example"})
    assert foreign.status_code == 403 and "evil.example" in foreign.text

    http = httpx.AsyncClient(headers={**bearer, "origin": ALLOWED}, timeout=30)
    async with http, streamable_http_client(served, http_client=http) as (read, write, *_):  # noqa: SIM117
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = await session.list_tools()
            assert "get_database_stats" in {t.name for t in tools.tools}
            stats = await session.call_tool("get_database_stats", {})
            assert stats.is_error is False


def test_an_unset_token_variable_is_a_usage_error_before_serving(small_db: Path) -> None:
    """A ``--token-env`` naming no value never starts an open server."""
    argv = [sys.executable, "-m", "mcpkit", "archive", "mcp", "--db", str(small_db)]
    argv += ["--transport", "http", "--port", str(free_port()), "--token-env", "ARCHIVE_UNSET_T"]
    env = {k: v for k, v in os.environ.items() if k != "ARCHIVE_UNSET_T"}
    done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == "error: --token-env ARCHIVE_UNSET_T: the variable is unset or empty"


@pytest.mark.anyio
async def test_archive_web_allows_the_origin_its_flag_names(small_db: Path) -> None:
    port = free_port()
    argv = [sys.executable, "-m", "mcpkit", "archive", "web", "--db", str(small_db), "--port", str(port)]
    argv += ["--allow-origin", ALLOWED]
    env = {k: v for k, v in os.environ.items() if k != "MCPKIT_ARCHIVE_ORIGINS"}
    process = subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env
    )
    try:
        await _wait_listening(port, process)
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
            allowed = await http.get("/", headers={"origin": ALLOWED})
            assert allowed.status_code == 200, allowed.text
            foreign = await http.get("/", headers={"origin": "https://evil.example"})
            assert foreign.status_code == 403 and "evil.example" in foreign.text
    finally:
        process.terminate()
        process.wait(timeout=30)
        if process.stderr is not None:
            process.stderr.close()
