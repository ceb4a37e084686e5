"""The example server as the official SDK client sees it, over real stdio and real HTTP."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from tests.support.env import REPO

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def stdio_session(*extra: str) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(command=sys.executable, args=["examples/echo_server.py", *extra], cwd=REPO)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        yield session


async def test_sdk_client_sees_tools_only() -> None:
    async with stdio_session() as session:
        init = await session.initialize()
        caps = init.capabilities.model_dump(by_alias=True, exclude_none=True)
        assert caps == {"tools": {"listChanged": False}}
        tools = await session.list_tools()
        assert {t.name for t in tools.tools} == {"echo", "add", "user-label", "divide", "crash"}
        result = await session.call_tool("add", {"a": "1.5", "b": "2"})
        assert result.structured_content == {"sum": 3.5}
        failed = await session.call_tool("crash", {})
        assert failed.is_error is True


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_streamable_http_transport() -> None:
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "examples/echo_server.py", "--transport", "http", "--port", str(port)],
        cwd=REPO,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
                assert time.monotonic() < deadline, "HTTP server did not start"
                time.sleep(0.05)
        url = f"http://127.0.0.1:{port}/mcp"
        async with streamable_http_client(url) as (read, write), ClientSession(read, write) as session:
            init = await session.initialize()
            assert init.capabilities.model_dump(by_alias=True, exclude_none=True) == {
                "tools": {"listChanged": False}
            }
            echoed = await session.call_tool("echo", {"text": "over http"})
            assert echoed.content[0].text == "over http"  # type: ignore[union-attr]
    finally:
        proc.send_signal(2)
        assert proc.wait(timeout=15) == 0
        err = proc.stderr.read().decode() if proc.stderr else ""
        assert "Traceback" not in err
