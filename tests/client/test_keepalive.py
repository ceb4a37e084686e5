"""Streamable HTTP calls reuse their connection, SSE answers included.

The SDK closes an SSE answer as soon as the response event is read, a few bytes before the
body ends, which makes the connection unusable: every call then opened a new TCP (over HTTPS,
TLS) connection. The client reads the rest of such a body before closing it.
"""

from __future__ import annotations

import asyncio.selector_events
from collections.abc import Iterator
from typing import Any

import pytest

from mcpkit.client import SessionOptions, connect
from tests.client.procs import start_http_server

pytestmark = pytest.mark.anyio


@pytest.fixture
def sdk_http_url() -> Iterator[str]:
    """The SDK's own streamable HTTP server (it answers requests as SSE streams)."""
    proc, port = start_http_server("--http")
    yield f"http://127.0.0.1:{port}/mcp"
    proc.terminate()
    proc.wait(10)


@pytest.fixture
def connects(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every TCP connection this process opens, counted where the event loop opens it."""
    made: list[Any] = []
    original = asyncio.selector_events.BaseSelectorEventLoop.sock_connect

    async def counting(self: Any, sock: Any, address: Any) -> Any:
        made.append(address)
        return await original(self, sock, address)

    monkeypatch.setattr(asyncio.selector_events.BaseSelectorEventLoop, "sock_connect", counting)
    return made


async def test_fifty_calls_share_a_few_connections(sdk_http_url: str, connects: list[Any]) -> None:
    async with connect(sdk_http_url, SessionOptions(timeout=30)) as session:
        before = len(connects)
        for i in range(50):
            assert (await session.call("echo", {"text": str(i)})).text == str(i)
        assert session.open_http_streams == 0
    opened = len(connects) - before
    assert opened <= 3, f"{opened} connections for 50 calls"
