"""The gateway between eras: a server's questions (elicitation, roots) and list changes relayed
from the 2025 handshake to the 2026-07-28 wire and back, with real downstream processes and
real clients (the SDK's own client on both eras, mcpkit's client on the handshake).

The downstream tool asks its user through mcpkit's ``ask`` helper; through the gateway a 2026
client is asked by an ``InputRequiredResult`` while the downstream call waits, parked, for the
retry that carries the answer.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mcp
import mcp_types
import pytest

from tests.client.procs import free_port
from tests.gateway.support import HERE, gateway_argv, wait_port, write_config

pytestmark = [pytest.mark.slow, pytest.mark.anyio]

ASKING = HERE / "fixtures" / "asking_server.py"


def asking() -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(ASKING)]}


def text(result: Any) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


def answering(action: str, name: str | None, asked: list[str]) -> Any:
    async def callback(context: Any, params: Any) -> mcp_types.ElicitResult:
        asked.append(params.message)
        return mcp_types.ElicitResult(action=action, content={"name": name} if name else None)

    return callback


def _serve(argv: list[str], port: int) -> Iterator[str]:
    proc = subprocess.Popen(
        argv, env={**os.environ, "MCPKIT_LOG": "warning"}, stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        wait_port(port)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture
def gateway_url(tmp_path: Path) -> Iterator[str]:
    config = write_config(tmp_path / "gw.json", {"ask": asking()})
    port = free_port()
    yield from _serve(gateway_argv(config, "--transport", "http", "--port", str(port)), port)


async def test_a_2026_client_answers_a_2025_servers_question_through_the_gateway(gateway_url: str) -> None:
    asked: list[str] = []
    callback = answering("accept", "Ada", asked)
    async with mcp.Client(gateway_url, mode="2026-07-28", elicitation_callback=callback) as client:
        assert client.protocol_version == "2026-07-28"
        result = await client.call_tool("ask_greet", {"by": "the gateway"})
        assert text(result) == "hello Ada", result
        assert asked == ["Who is greeted by the gateway?"]
        plain = await client.call_tool("ask_echo", {"text": "x"})
        assert text(plain) == "x"
