"""Clients against the server: upstream's wire habits, and our reconnecting pipelined client."""

from __future__ import annotations

import asyncio
import socket

import pytest

from mcpkit.archive.rpc import RpcClient, RpcServer, RpcServerOptions
from mcpkit.errors import CallTimeoutError, ConnectError, HttpError, JsonRpcError
from tests.archive_faces.tiny_api import TinyAPI
from tests.archive_faces.upstream_client import upstream_send_request, upstream_vector_search_merge

pytestmark = pytest.mark.anyio


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_upstream_client_plain_and_streamed(tiny_server: RpcServer) -> None:
    assert await upstream_send_request(tiny_server.url, "add", {"a": 40, "b": 2}) == 42
    chunks = await upstream_send_request(tiny_server.url, "count", {"n": 4})
    assert [c["chunk"] for c in chunks] == [1, 2, 3, 4]
    merged = upstream_vector_search_merge(chunks)
    assert [p[0] for p in merged["data"]] == [0, 1, 2, 3]
    with pytest.raises(RuntimeError, match=r"\[-32601\] Method not found: nope"):
        await upstream_send_request(tiny_server.url, "nope")


async def test_client_call_stream_and_errors(tiny_server: RpcServer) -> None:
    async with RpcClient(tiny_server.url) as client:
        assert await client.call("add", {"a": 1, "b": 2}) == 3
        assert [c["chunk"] async for c in client.stream("count", {"n": 3})] == [1, 2, 3]
        assert [c["chunk"] for c in await client.call("count", {"n": 2})] == [1, 2]
        with pytest.raises(JsonRpcError) as info:
            await client.call("add", {"a": "x"})
        assert info.value.code == -32602


async def test_client_pipelines_on_one_connection(tiny_server: RpcServer) -> None:
    async with RpcClient(tiny_server.url) as client:
        waiting = asyncio.create_task(client.call("wait_gate"))
        sums = await asyncio.gather(*(client.call("add", {"a": i, "b": i}) for i in range(20)))
        assert sums == [2 * i for i in range(20)]
        assert await client.call("open_gate") == "opened"
        assert await waiting == "passed"


async def test_client_reconnects_after_server_restart(tiny_api: TinyAPI) -> None:
    port = _free_port()
    client = RpcClient(f"ws://127.0.0.1:{port}")
    try:
        async with RpcServer(tiny_api, RpcServerOptions(port=port)):
            assert await client.call("add", {"a": 1, "b": 1}) == 2
        with pytest.raises(ConnectError):
            await client.call("add", {"a": 1, "b": 1})
        async with RpcServer(tiny_api, RpcServerOptions(port=port)):
            assert await client.call("add", {"a": 2, "b": 2}) == 4
    finally:
        await client.aclose()


async def test_connect_timeout_when_handshake_never_completes() -> None:
    """A listener that accepts TCP but never answers the handshake: the connect timeout fires."""
    server = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        with pytest.raises(CallTimeoutError):
            await RpcClient(f"ws://127.0.0.1:{port}", connect_timeout=0.3).call("add")
    finally:
        server.close()


async def test_token_sent_by_client(tiny_api: TinyAPI) -> None:
    async with RpcServer(tiny_api, RpcServerOptions(port=0, token="tok")) as server:
        with pytest.raises(HttpError):
            await RpcClient(server.url, token="").call("add", {"a": 1, "b": 1})
        async with RpcClient(server.url, token="tok") as client:
            assert await client.call("add", {"a": 1, "b": 1}) == 2
