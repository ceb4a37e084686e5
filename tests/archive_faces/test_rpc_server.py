"""The WebSocket JSON-RPC server over real loopback sockets: codes, limits, security, concurrency."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json

import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus

from mcpkit.archive.rpc import RpcServer, RpcServerOptions, SecurityConfigError
from tests.archive_faces.tiny_api import TinyAPI
from tests.archive_faces.wire import raw_connect, recv_json, rpc, send_json

pytestmark = pytest.mark.anyio


# -- error codes --------------------------------------------------------------------------------


async def test_parse_error_keeps_the_connection(tiny_server: RpcServer) -> None:
    async with await raw_connect(tiny_server.url) as ws:
        await ws.send('{"jsonrpc": "2.0", "id": 1, "method": ')
        answer = await recv_json(ws)
        assert answer["id"] is None
        assert answer["error"]["code"] == -32700
        assert answer["error"]["message"].startswith("Parse error")
        assert (await rpc(ws, "add", {"a": 1, "b": 2}))["result"] == 3


async def test_missing_jsonrpc_uses_upstream_message(tiny_server: RpcServer) -> None:
    async with await raw_connect(tiny_server.url) as ws:
        await send_json(ws, {"id": 7, "method": "add", "params": {"a": 1, "b": 2}})
        answer = await recv_json(ws)
        assert answer == {
            "jsonrpc": "2.0",
            "id": 7,
            "error": {"code": -32600, "message": "Invalid Request: missing jsonrpc field"},
        }


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "1.0", "id": 1, "method": "add"},
        {"jsonrpc": "2.0", "id": 1},
        {"jsonrpc": "2.0", "id": 1, "method": 5},
        {"jsonrpc": "2.0", "id": True, "method": "add"},
        [],
        "just a string",
    ],
)
async def test_invalid_requests(tiny_server: RpcServer, message: object) -> None:
    async with await raw_connect(tiny_server.url) as ws:
        await send_json(ws, message)
        answer = await recv_json(ws)
        assert answer["error"]["code"] == -32600


async def test_unknown_method(tiny_server: RpcServer) -> None:
    async with await raw_connect(tiny_server.url) as ws:
        answer = await rpc(ws, "nope", {}, req_id="abc")
        assert answer["id"] == "abc"
        assert answer["error"] == {"code": -32601, "message": "Method not found: nope"}


async def test_bad_params_from_api_and_envelope(tiny_server: RpcServer) -> None:
    async with await raw_connect(tiny_server.url) as ws:
        answer = await rpc(ws, "add", {"a": "x", "b": 2})
        assert answer["error"] == {"code": -32602, "message": "Invalid params: a and b must be integers"}
        answer = await rpc(ws, "add", "not params", req_id=2)
        assert answer["error"]["code"] == -32602
        # positional params pass through to the API unchanged
        assert (await rpc(ws, "add", [2, 5], req_id=3))["result"] == 7


async def test_internal_error_does_not_leak_details(tiny_server: RpcServer) -> None:
    async with await raw_connect(tiny_server.url) as ws:
        answer = await rpc(ws, "boom", {})
        assert answer["error"]["code"] == -32603
        assert "secret" not in answer["error"]["message"]
        assert (await rpc(ws, "add", {"a": 1, "b": 1}, req_id=2))["result"] == 2


# -- size limit ---------------------------------------------------------------------------------


async def test_oversize_message_is_answered_not_dropped(tiny_server: RpcServer) -> None:
    limit = tiny_server.options.max_message_bytes
    assert limit == 1 << 20
    async with await raw_connect(tiny_server.url) as ws:
        prefix = '{"jsonrpc":"2.0","id":1,"method":"note","params":{"text":"'
        suffix = '"}}'
        body = prefix + "a" * (limit + 1 - len(prefix) - len(suffix)) + suffix
        assert len(body.encode()) == limit + 1
        await ws.send(body)
        answer = await recv_json(ws)
        assert answer["error"]["code"] == -32600
        assert str(limit) in answer["error"]["message"]
        # exactly at the limit is accepted, and the connection is still usable
        body = prefix + "b" * (limit - len(prefix) - len(suffix)) + suffix
        await ws.send(body)
        assert (await recv_json(ws))["result"] == 1


async def test_multibyte_text_is_measured_in_bytes(tiny_server: RpcServer) -> None:
    limit = tiny_server.options.max_message_bytes
    async with await raw_connect(tiny_server.url) as ws:
        text = "あ" * (limit // 3 + 10)  # fewer characters than the limit, more bytes
        await send_json(ws, {"jsonrpc": "2.0", "id": 1, "method": "note", "params": {"text": text}})
        assert (await recv_json(ws))["error"]["code"] == -32600


async def test_beyond_hard_cap_closes_with_1009(tiny_server: RpcServer) -> None:
    ws = await raw_connect(tiny_server.url)
    with contextlib.suppress(ConnectionClosed):
        await ws.send("x" * (tiny_server.options.hard_cap + 1))
    with pytest.raises(ConnectionClosed) as info:
        await ws.recv()
    assert info.value.rcvd is not None and info.value.rcvd.code == 1009


# -- security -----------------------------------------------------------------------------------


async def test_browser_origin_rejected_unless_allowed(tiny_api: TinyAPI) -> None:
    options = RpcServerOptions(port=0, allowed_origins=("http://localhost:5173",))
    async with RpcServer(tiny_api, options) as server:
        with pytest.raises(InvalidStatus) as info:
            await raw_connect(server.url, origin="https://evil.example")
        assert info.value.response.status_code == 403
        async with await raw_connect(server.url, origin="http://localhost:5173") as ws:
            assert (await rpc(ws, "add", {"a": 1, "b": 1}))["result"] == 2
        async with await raw_connect(server.url) as ws:  # no Origin: not a browser
            assert (await rpc(ws, "add", {"a": 2, "b": 1}))["result"] == 3


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.10", "::"])
def test_token_required_off_loopback(tiny_api: TinyAPI, host: str) -> None:
    with pytest.raises(SecurityConfigError, match="MCPKIT_ARCHIVE_TOKEN"):
        RpcServer(tiny_api, RpcServerOptions(host=host, port=0))
    RpcServer(tiny_api, RpcServerOptions(host=host, port=0, token="s3cret"))  # accepted (not bound here)


async def test_token_checked_when_set(tiny_api: TinyAPI) -> None:
    async with RpcServer(tiny_api, RpcServerOptions(port=0, token="s3cret")) as server:
        with pytest.raises(InvalidStatus) as info:
            await raw_connect(server.url)
        assert info.value.response.status_code == 401
        with pytest.raises(InvalidStatus):
            await raw_connect(server.url, additional_headers={"Authorization": "Bearer wrong"})
        async with await raw_connect(server.url, additional_headers={"Authorization": "Bearer s3cret"}) as ws:
            assert (await rpc(ws, "add", {"a": 1, "b": 1}))["result"] == 2
        async with await raw_connect(server.url + "/?token=s3cret") as ws:
            assert (await rpc(ws, "add", {"a": 1, "b": 2}))["result"] == 3


# -- concurrency --------------------------------------------------------------------------------


async def test_fifty_concurrent_clients(tiny_server: RpcServer) -> None:
    async def one(i: int) -> list[int]:
        async with await raw_connect(tiny_server.url) as ws:
            return [(await rpc(ws, "add", {"a": i, "b": k}, req_id=k))["result"] for k in range(5)]

    results = await asyncio.gather(*(one(i) for i in range(50)))
    assert results == [[i + k for k in range(5)] for i in range(50)]


async def test_pipelined_requests_run_concurrently(tiny_server: RpcServer) -> None:
    """The first request blocks until the second one runs: a serial server would deadlock."""
    async with await raw_connect(tiny_server.url) as ws:
        await send_json(ws, {"jsonrpc": "2.0", "id": 1, "method": "wait_gate"})
        for k in range(2, 12):
            await send_json(ws, {"jsonrpc": "2.0", "id": k, "method": "add", "params": {"a": k, "b": 0}})
        await send_json(ws, {"jsonrpc": "2.0", "id": 99, "method": "open_gate"})
        answers = {}
        while len(answers) < 12:
            msg = await asyncio.wait_for(recv_json(ws), 30)
            answers[msg["id"]] = msg["result"]
        assert answers[1] == "passed" and answers[99] == "opened"
        assert all(answers[k] == k for k in range(2, 12))


# -- batches and notifications ------------------------------------------------------------------


async def test_batch_mixed(tiny_server: RpcServer, tiny_api: TinyAPI) -> None:
    async with await raw_connect(tiny_server.url) as ws:
        await send_json(
            ws,
            [
                {"jsonrpc": "2.0", "id": 1, "method": "add", "params": {"a": 1, "b": 2}},
                {"jsonrpc": "2.0", "method": "note", "params": {"text": "from a batch"}},
                {"jsonrpc": "2.0", "id": 2, "method": "nope"},
                {"id": 3, "method": "add"},
                5,
                {"jsonrpc": "2.0", "id": 4, "method": "count", "params": {"n": 2}},
            ],
        )
        answer = await recv_json(ws)
        assert isinstance(answer, list)
        by_id = {a["id"]: a for a in answer if a["id"] is not None}
        assert by_id[1]["result"] == 3
        assert by_id[2]["error"]["code"] == -32601
        assert by_id[3]["error"]["message"] == "Invalid Request: missing jsonrpc field"
        assert [c["chunk"] for c in by_id[4]["result"]] == [1, 2]  # a stream in a batch: all its chunks
        assert [a["error"]["code"] for a in answer if a["id"] is None] == [-32600]
        assert len(answer) == 5  # the notification got no answer
        assert tiny_api.notes == ["from a batch"]


async def test_notifications_get_no_answer(tiny_server: RpcServer, tiny_api: TinyAPI) -> None:
    async with await raw_connect(tiny_server.url) as ws:
        await send_json(ws, {"jsonrpc": "2.0", "method": "note", "params": {"text": "one"}})
        await send_json(ws, [{"jsonrpc": "2.0", "method": "note", "params": {"text": "two"}}])
        await send_json(ws, {"jsonrpc": "2.0", "method": "boom"})
        await send_json(ws, {"jsonrpc": "2.0", "method": "count"})
        # Requests on a connection run concurrently: poll until both notes have landed (the
        # deadline only guards against a hang; a loaded machine may take its time).
        async with asyncio.timeout(60):
            for k in itertools.count():
                answer = await rpc(ws, "notes", {}, req_id=100 + k)
                assert answer["id"] == 100 + k  # nothing else was ever sent to us
                if len(answer["result"]) == 2:
                    break
                await asyncio.sleep(0.01)
        assert sorted(answer["result"]) == ["one", "two"]


# -- streaming ----------------------------------------------------------------------------------


async def test_streaming_sends_more_at_top_level(tiny_server: RpcServer) -> None:
    async with await raw_connect(tiny_server.url) as ws:
        await send_json(ws, {"jsonrpc": "2.0", "id": 5, "method": "count", "params": {"n": 3}})
        messages = [await recv_json(ws) for _ in range(3)]
    assert [m["more"] for m in messages] == [True, True, False]
    assert all(m["id"] == 5 and m["jsonrpc"] == "2.0" for m in messages)
    assert [m["result"]["chunk"] for m in messages] == [1, 2, 3]
    assert all("more" not in m["result"] for m in messages)


async def test_single_chunk_stream_has_more_false(tiny_server: RpcServer) -> None:
    async with await raw_connect(tiny_server.url) as ws:
        answer = await rpc(ws, "count", {"n": 1})
        assert answer["more"] is False and answer["result"]["total_chunks"] == 1


async def test_client_disconnect_mid_stream_closes_the_stream(
    tiny_server: RpcServer, tiny_api: TinyAPI
) -> None:
    ws = await raw_connect(tiny_server.url)
    await send_json(ws, {"jsonrpc": "2.0", "id": 1, "method": "endless"})
    first = await recv_json(ws)
    assert first["more"] is True
    await ws.close()
    async with asyncio.timeout(60):  # a guard against a hang, not a window
        while not tiny_api.streams_closed == tiny_api.streams_opened == 1:
            await asyncio.sleep(0.01)
    assert tiny_api.streams_closed == 1
    async with await raw_connect(tiny_server.url) as other:  # the server is unharmed
        assert (await rpc(other, "add", {"a": 2, "b": 2}))["result"] == 4


async def test_stop_server_method(tiny_api: TinyAPI) -> None:
    async with RpcServer(tiny_api, RpcServerOptions(port=0)) as server:
        async with await raw_connect(server.url) as ws:
            assert (await rpc(ws, "stop_server", {}))["result"] == {"status": "stopping"}
        await asyncio.wait_for(server.wait_stopped(), 10)


async def test_utf8_on_the_wire(tiny_server: RpcServer) -> None:
    async with await raw_connect(tiny_server.url) as ws:
        await send_json(ws, {"jsonrpc": "2.0", "id": 1, "method": "note", "params": {"text": "日本語"}})
        await recv_json(ws)
        await send_json(ws, {"jsonrpc": "2.0", "id": 2, "method": "notes"})
        raw = await ws.recv()
        assert "日本語" in raw and "\\u" not in raw
        assert json.loads(raw)["result"] == ["日本語"]
