"""HTTP mode: stateless streamable HTTP, the profile from the URL, Origin check, bearer token,
and one process per downstream however many clients connect."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

from mcpkit.client import ServerConfig, Session, SessionOptions
from tests.client.procs import free_port, wait_gone
from tests.gateway.support import flaky, gateway_argv, gateway_session, wait_port, write_config
from tests.gateway.test_supervision import _descendants

pytestmark = [pytest.mark.slow]

TOKEN_ENV = "GW_TEST_TOKEN"
TOKEN = "s3cret-token-value"


@pytest.fixture
def gateway_url(tmp_path: Path) -> Iterator[str]:
    config = write_config(tmp_path / "gw.json", {"flaky": flaky(), "other": flaky()})
    port = free_port()
    env = {**os.environ, TOKEN_ENV: TOKEN, "MCPKIT_LOG": "warning"}
    proc = subprocess.Popen(
        gateway_argv(config, "--transport", "http", "--port", str(port), "--token-env", TOKEN_ENV),
        env=env,
        stdin=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wait_port(port)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
        below = _descendants(proc.pid)
        assert len(below) == 2, "one process per downstream, however many clients"
        proc.terminate()
        proc.wait(30)
        assert wait_gone(below) == []
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _session(url: str, token: str | None = TOKEN) -> Session:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return Session(
        ServerConfig(name="gw", url=url, headers=headers, transport="http"),
        SessionOptions(raise_on_error=False),
    )


@pytest.mark.anyio
async def test_clients_over_http_share_the_downstreams(gateway_url: str) -> None:
    async def one(i: int, out: list[str]) -> None:
        async with _session(gateway_url + "?client=cursor-vscode") as session:
            tools = await session.list_tools()
            # Cursor's profile: names of [A-Za-z0-9_] only, the ones the gateway made.
            assert {"flaky_echo", "other_echo"} <= {t["name"] for t in tools}
            raw = await session.request("tools/call", {"name": "flaky_echo", "arguments": {"text": f"c{i}"}})
            out.append(raw["content"][0]["text"])

    results: list[str] = []
    async with anyio.create_task_group() as tg:
        for i in range(4):
            tg.start_soon(one, i, results)
    assert sorted(results) == ["c0", "c1", "c2", "c3"]


@pytest.mark.anyio
async def test_profile_from_the_url_in_stateless_mode(gateway_url: str) -> None:
    async with _session(gateway_url + "?profile=gemini") as session:
        tools = {t["name"]: t for t in await session.list_tools()}
    # gemini: the cyclic $ref tool is quarantined, $schema is gone from choice.
    assert "flaky_tree" not in tools and "flaky_choice" in tools
    assert "$schema" not in tools["flaky_choice"]["inputSchema"]


def _post(url: str, headers: dict[str, str]) -> httpx2.Response:
    body: dict[str, Any] = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "x", "version": "1"},
        },
    }
    return httpx2.post(
        url,
        content=json.dumps(body),
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            **headers,
        },
        timeout=30,
    )


def test_foreign_origin_and_missing_token_are_refused(gateway_url: str) -> None:
    auth = {"Authorization": f"Bearer {TOKEN}"}
    assert _post(gateway_url, {**auth, "Origin": "https://evil.example"}).status_code == 403
    assert _post(gateway_url, {}).status_code == 401
    assert _post(gateway_url, {"Authorization": "Bearer wrong"}).status_code == 401
    ok = _post(gateway_url, {**auth, "Origin": "http://localhost:5173"})
    assert ok.status_code == 200, ok.text
    assert TOKEN not in ok.text


@pytest.mark.anyio
async def test_an_http_downstream_that_goes_away_is_reconnected(tmp_path: Path) -> None:
    from tests.client.procs import sdk_echo

    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    config = write_config(
        tmp_path / "gw.json",
        {"echo": {"url": url, "type": "http"}},
        {"restart": {"backoff": 0.2, "max_restarts": 50}},
    )

    def start() -> subprocess.Popen[bytes]:
        proc = subprocess.Popen([*sdk_echo(), "--http", str(port)], stderr=subprocess.DEVNULL)
        wait_port(port)
        return proc

    server = start()
    try:
        async with gateway_session(config) as session:
            ok = await session.request("tools/call", {"name": "echo_echo", "arguments": {"text": "one"}})
            assert ok["content"][0]["text"] == "one"
            server.terminate()
            server.wait(10)
            down = await session.request("tools/call", {"name": "echo_echo", "arguments": {"text": "two"}})
            assert down["isError"] is True and "echo" in down["content"][0]["text"]
            server = start()
            with anyio.fail_after(30):
                while True:
                    back = await session.request(
                        "tools/call", {"name": "echo_echo", "arguments": {"text": "three"}}
                    )
                    if not back.get("isError"):
                        break
                    await anyio.sleep(0.2)
            assert back["content"][0]["text"] == "three"
    finally:
        server.terminate()
        server.wait(10)
