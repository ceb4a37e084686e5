"""Inputs that must not hurt the server: each limit answered in one line, the server unharmed."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus

from mcpkit.archive.api import ArchiveAPI
from mcpkit.archive.limits import InputLimits, check_depth
from mcpkit.archive.rpc import RpcServer, RpcServerOptions
from mcpkit.archive.rpc.fair import FairLimiter
from mcpkit.errors import ValidationError
from mcpkit.jsonrpc import JsonRpcError
from tests.archive_faces.test_mcp import call_text, mcp_session
from tests.archive_faces.tiny_api import TinyAPI
from tests.archive_faces.wire import raw_connect, recv_json, rpc, send_json

pytestmark = pytest.mark.anyio


def _one_line_error(answer: dict[str, Any], code: int = -32602) -> str:
    assert answer["error"]["code"] == code, answer
    message = answer["error"]["message"]
    assert "\n" not in message and "Traceback" not in message
    return str(message)


# -- texts: length and control characters, through the API every face uses ----------------------


@pytest.fixture
async def small_api(sample_db: Path) -> Any:
    api = ArchiveAPI.open(sample_db, limits=InputLimits(max_text_chars=50))
    yield api
    await api.aclose()


@pytest.mark.parametrize(
    ("method", "name"),
    [
        ("search_similar", "query"),
        ("vector_search", "query"),
        ("search_posts_by_text", "search_term"),
        ("embed_text", "text"),
    ],
)
async def test_text_length_cap(small_api: ArchiveAPI, method: str, name: str) -> None:
    with pytest.raises(JsonRpcError) as info:
        await small_api.call(method, {name: "x" * 51})
    assert info.value.code == -32602
    assert info.value.message == f"Invalid params: {name} is too long (51 characters; the limit is 50)"
    await small_api.call("search_posts_by_text", {"search_term": "x" * 50})  # at the limit: fine


@pytest.mark.parametrize("char", ["\x00", "\x07", "\x1b", "\x7f", "\x85"])
async def test_control_characters_refused(small_api: ArchiveAPI, char: str) -> None:
    with pytest.raises(JsonRpcError) as info:
        await small_api.call("search_posts_by_text", {"search_term": f"a{char}b"})
    assert info.value.code == -32602
    assert f"control character (U+{ord(char):04X})" in info.value.message


async def test_tabs_and_newlines_are_text(small_api: ArchiveAPI) -> None:
    assert isinstance(await small_api.call("search_posts_by_text", {"search_term": "a\tb\nc\r"}), list)


def test_depth_check_is_iterative() -> None:
    deep: Any = "x"
    for _ in range(100_000):  # far beyond Python's recursion limit
        deep = [deep]
    with pytest.raises(ValidationError, match="nested deeper than 8 levels"):
        check_depth({"query": deep}, 8)
    check_depth({"settings": {"user_filter": {"includes": ["a"]}}}, 8)


async def test_default_text_cap_over_websocket(sample_db: Path) -> None:
    api = ArchiveAPI.open(sample_db)
    try:
        async with RpcServer(api, RpcServerOptions(port=0)) as server:
            ws = await raw_connect(server.url)
            answer = await rpc(ws, "search_similar", {"query": "猫" * 300_000})
            assert "query is too long (300,000 characters; the limit is 2,000)" in _one_line_error(answer)
            answer = await rpc(ws, "search_posts_by_text", {"search_term": "a\x00b"}, req_id=2)
            assert "control character (U+0000)" in _one_line_error(answer)
            deep = "[" * 100_000 + "]" * 100_000
            await ws.send('{"jsonrpc":"2.0","id":3,"method":"get_status","params":{"x":' + deep + "}}")
            assert "nested too deep" in _one_line_error(await recv_json(ws))
            nested: Any = 1
            for _ in range(50):
                nested = {"a": nested}
            answer = await rpc(ws, "get_status", nested, req_id=4)
            assert "nested deeper than" in _one_line_error(answer)
            assert (await rpc(ws, "get_database_stats", {}, req_id=5))["result"]["total_posts"] > 0
            await ws.close()
    finally:
        await api.aclose()


@pytest.mark.slow
async def test_limits_over_mcp_are_one_line_errors(sample_db: Path) -> None:
    async with mcp_session("--db", str(sample_db)) as session:
        text, is_error = await call_text(session, "search_similar", {"query": "x" * 5_000_000})
        assert is_error and "\n" not in text and "too long" in text
        text, is_error = await call_text(session, "search_posts_by_text", {"search_term": "a\x00b"})
        assert is_error and "\n" not in text and "U+0000" in text
        text, is_error = await call_text(session, "get_database_stats", {})
        assert not is_error  # the server is unharmed


# -- batches and the server-wide in-flight limit ----------------------------------------------


async def test_batch_size_cap(tiny_api: TinyAPI) -> None:
    async with RpcServer(tiny_api, RpcServerOptions(port=0, max_batch=5)) as server:
        ws = await raw_connect(server.url)
        batch = [{"jsonrpc": "2.0", "id": i, "method": "add", "params": [i, 1]} for i in range(6)]
        await send_json(ws, batch)
        answer = await recv_json(ws)
        assert isinstance(answer, dict) and answer["id"] is None
        assert "a batch of 6 requests exceeds the limit of 5" in _one_line_error(answer)
        await send_json(ws, batch[:5])
        assert sorted(a["result"] for a in await recv_json(ws)) == [1, 2, 3, 4, 5]
        assert tiny_api.started.count("add") == 5  # the refused batch ran nothing
        await ws.close()


async def test_batch_items_share_the_limit_fairly(tiny_api: TinyAPI) -> None:
    """A 50-item batch of blocked calls holds only the server's 2 slots; another client's call
    is served right after one slot frees, before the rest of the batch."""
    async with RpcServer(tiny_api, RpcServerOptions(port=0, max_inflight=2)) as server:
        hog = await raw_connect(server.url)
        other = await raw_connect(server.url)
        await send_json(hog, [{"jsonrpc": "2.0", "id": i, "method": "wait_gate"} for i in range(50)])
        while tiny_api.started.count("wait_gate") < 2:
            await asyncio.sleep(0.01)
        await send_json(other, {"jsonrpc": "2.0", "id": "mine", "method": "add", "params": [2, 3]})
        while server.limiter.waiting() < 49:
            await asyncio.sleep(0.01)
        assert tiny_api.started.count("wait_gate") == 2  # batch items count against the limit
        tiny_api.gate.set()
        assert (await recv_json(other))["result"] == 5
        batch_answer = await recv_json(hog)
        assert len(batch_answer) == 50
        assert tiny_api.started.index("add") <= 3  # after at most one more batch item
        await hog.close()
        await other.close()


async def test_fair_limiter_round_robin() -> None:
    limiter = FairLimiter(1)
    order: list[str] = []
    release = asyncio.Event()

    async def job(key: str, name: str) -> None:
        async with limiter.slot(key):
            order.append(name)
            await release.wait()

    first = asyncio.create_task(job("a", "a0"))
    await asyncio.sleep(0)
    tasks = [asyncio.create_task(job("a", f"a{i}")) for i in range(1, 4)]
    tasks += [asyncio.create_task(job("b", f"b{i}")) for i in range(2)]
    cancelled = asyncio.create_task(job("c", "never"))
    await asyncio.sleep(0.01)
    cancelled.cancel()
    release.set()
    await asyncio.gather(first, *tasks, return_exceptions=True)
    # b had nothing running or waiting when b0 came: it goes first, then the lanes alternate
    assert order == ["a0", "b0", "a1", "b1", "a2", "a3"]
    assert limiter.in_use == 0 and limiter.waiting() == 0


# -- connections: cap and idle timeout ---------------------------------------------------------


async def test_connection_cap_answers_503_and_logs_once(
    tiny_api: TinyAPI, caplog: pytest.LogCaptureFixture
) -> None:
    """With every connection busy there is none to close: a new one is refused, logged once."""
    caplog.set_level(logging.INFO)
    async with RpcServer(tiny_api, RpcServerOptions(port=0, max_connections=3, max_inflight=3)) as server:
        open_ = [await raw_connect(server.url) for _ in range(3)]
        for ws in open_:
            await send_json(ws, {"jsonrpc": "2.0", "id": 1, "method": "wait_gate"})
        while tiny_api.started.count("wait_gate") < 3:
            await asyncio.sleep(0.01)
        for _ in range(20):
            with pytest.raises(InvalidStatus) as info:
                await raw_connect(server.url)
            assert info.value.response.status_code == 503
            assert info.value.response.body == b"too many connections: the limit is 3\n"
        refusals = [r for r in caplog.records if "refused" in r.getMessage()]
        assert len(refusals) == 1
        assert all("Traceback" not in r.getMessage() for r in caplog.records)
        tiny_api.gate.set()
        for ws in open_:
            assert (await recv_json(ws))["result"] == "passed"
        # now idle: the one silent the longest makes room for the next client
        again = await raw_connect(server.url)
        assert (await rpc(again, "add", [1, 1]))["result"] == 2
        with pytest.raises(ConnectionClosed) as closed:
            await asyncio.wait_for(open_[0].recv(), 10)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1001
        assert (await rpc(open_[2], "add", [2, 2]))["result"] == 4
        for ws in [*open_[1:], again]:
            await ws.close()


async def test_idle_connection_is_closed_busy_one_is_not(tiny_api: TinyAPI) -> None:
    async with RpcServer(tiny_api, RpcServerOptions(port=0, idle_timeout=0.2)) as server:
        idle = await raw_connect(server.url)
        busy = await raw_connect(server.url)
        await send_json(busy, {"jsonrpc": "2.0", "id": 1, "method": "wait_gate"})
        with pytest.raises(ConnectionClosed) as info:
            await asyncio.wait_for(idle.recv(), 10)
        assert info.value.rcvd is not None and info.value.rcvd.code == 1001
        assert info.value.rcvd.reason == "idle timeout"
        tiny_api.gate.set()  # the busy connection outlived the idle time and still gets its answer
        assert (await recv_json(busy))["result"] == "passed"
        await busy.close()


async def test_client_redials_after_an_idle_close(tiny_api: TinyAPI) -> None:
    from mcpkit.archive.rpc import RpcClient

    async with RpcServer(tiny_api, RpcServerOptions(port=0, idle_timeout=0.2)) as server:
        client = RpcClient(server.url)
        try:
            assert await client.call("add", [1, 2]) == 3
            while server.connections:  # the server closed the silent connection
                await asyncio.sleep(0.05)
            assert await client.call("add", [2, 2]) == 4
        finally:
            await client.aclose()
