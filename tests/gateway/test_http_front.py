"""The gateway's HTTP hot path (mcpkit.gateway.http_front), against a real gateway child.

Plain tool calls are answered as JSON without the SDK's per-request server; everything else,
and everything odd, must behave exactly as the SDK app does behind it.
"""

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
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpkit.server._plain_calls import FAST_METHODS, plain_request
from tests.client.procs import free_port
from tests.gateway.support import flaky, gateway_argv, wait_port, write_config

HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


def _http_gateway(config: Path) -> Iterator[str]:
    """A gateway child on stateless HTTP for ``config``: its URL until the fixture ends."""
    port = free_port()
    proc = subprocess.Popen(
        gateway_argv(config, "--transport", "http", "--port", str(port)),
        env={**os.environ, "MCPKIT_LOG": "warning"},
        stdin=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_port(port)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(30)


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    config = write_config(tmp_path_factory.mktemp("front") / "gw.json", {"flaky": flaky()})
    yield from _http_gateway(config)


def post(
    url: str, body: Any, headers: dict[str, str] | None = None, raw: bytes | None = None
) -> httpx2.Response:
    content = raw if raw is not None else json.dumps(body).encode()
    return httpx2.post(url, content=content, headers={**HEADERS, **(headers or {})}, timeout=30)


def call(name: str, arguments: dict[str, Any] | None = None, **params: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments, **params},
    }


def answer(response: httpx2.Response) -> dict[str, Any]:
    """The JSON-RPC message of a JSON body or of an SSE stream's message event, with the
    default ``isError: false`` spelled out (the SDK's serializer writes it, JSON bodies omit it)."""
    message: dict[str, Any] | None = None
    if response.headers["content-type"].startswith("application/json"):
        message = response.json()
    else:
        for line in response.text.splitlines():
            if line.startswith("data: ") and "id" in json.loads(line[6:] or "{}"):
                message = json.loads(line[6:])
    assert message is not None, f"no answer in {response.text!r}"
    result = message.get("result")
    if isinstance(result, dict) and "content" in result:
        result.setdefault("isError", False)
    return message


def test_a_plain_call_is_answered_as_json_with_the_same_result_as_the_sdk_path(url: str) -> None:
    fast = post(url, call("flaky_echo", {"text": "héllo"}))
    assert fast.status_code == 200
    assert fast.headers["content-type"] == "application/json"
    # asking for progress takes the SDK's path (an SSE stream that can carry progress)
    slow = post(url, call("flaky_echo", {"text": "héllo"}, _meta={"progressToken": "p1"}))
    assert slow.headers["content-type"].startswith("text/event-stream")
    assert (
        answer(fast)
        == answer(slow)
        == {
            "jsonrpc": "2.0",
            "id": 7,
            "result": {"content": [{"type": "text", "text": "héllo"}], "isError": False},
        }
    )


def test_errors_of_a_call_are_the_same_on_both_paths(url: str) -> None:
    for name in ("no_such_tool", "flaky_badresult"):
        fast = answer(post(url, call(name)))
        slow = answer(post(url, call(name, _meta={"progressToken": 1})))
        assert fast == slow
        assert fast["result"]["isError"] is True
        assert "\n" not in fast["result"]["content"][0]["text"]


def test_sloppy_arguments_are_coerced_on_the_hot_path_too(url: str) -> None:
    got = answer(post(url, call("flaky_sleep", {"seconds": "0.01"})))
    assert got["result"]["content"][0]["text"] == "slept 0.01"


def test_ping(url: str) -> None:
    got = post(url, {"jsonrpc": "2.0", "id": "p", "method": "ping"})
    assert got.headers["content-type"] == "application/json"
    assert got.json() == {"jsonrpc": "2.0", "id": "p", "result": {}}


@pytest.mark.parametrize(
    ("raw", "status", "code"),
    [
        (b"{not json", 400, -32700),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": "x"}', 400, -32602),
    ],
)
def test_malformed_requests_get_the_sdks_answers(url: str, raw: bytes, status: int, code: int) -> None:
    got = post(url, None, raw=raw)
    assert got.status_code == status
    assert got.json()["error"]["code"] == code


def test_other_methods_reach_the_sdk(url: str) -> None:
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    assert answer(post(url, init))["result"]["serverInfo"]["name"] == "gateway"
    tools = answer(post(url, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))["result"]["tools"]
    assert "flaky_echo" in {t["name"] for t in tools}
    unknown = answer(post(url, {"jsonrpc": "2.0", "id": 3, "method": "no/such"}))
    assert unknown["error"]["code"] == -32601


def test_a_foreign_host_is_refused_as_the_sdk_refuses_it(url: str) -> None:
    """DNS rebinding: the hot path must not answer what the SDK's Host check refuses."""
    got = post(url, call("flaky_echo", {"text": "x"}), headers={"host": "evil.example:80"})
    assert got.status_code in (400, 421)
    assert "flaky" not in got.text


def test_an_unknown_protocol_version_is_left_to_the_sdk(url: str) -> None:
    got = post(url, call("flaky_echo", {"text": "x"}), headers={"mcp-protocol-version": "1999-01-01"})
    assert got.status_code == 400


def test_a_body_over_the_limit_is_refused_unread(url: str) -> None:
    big = call("flaky_echo", {"text": "x" * (5 * 1024 * 1024)})
    got = post(url, big)
    assert got.status_code == 413


async def _stats(url: str) -> dict[str, Any]:
    async with httpx2.AsyncClient(timeout=60) as http:
        got = await http.post(url, content=json.dumps(call("flaky_stats")), headers=HEADERS)
    stats: dict[str, Any] = json.loads(answer(got)["result"]["content"][0]["text"])
    return stats


@pytest.mark.anyio
async def test_a_client_that_goes_away_cancels_the_downstream_call(url: str) -> None:
    """The client leaves once the server is running its call (an event, not a time window:
    a loaded machine may take seconds to get the call there); the server hears of it."""
    before = int((await _stats(url))["cancelled"])

    async def doomed() -> None:
        async with httpx2.AsyncClient(timeout=600) as http:
            await http.post(url, content=json.dumps(call("flaky_sleep", {"seconds": 600})), headers=HEADERS)

    with anyio.fail_after(60):  # guards against a hang only
        async with anyio.create_task_group() as tg:
            tg.start_soon(doomed)
            while (await _stats(url))["active"] < 1:
                await anyio.sleep(0.05)
            tg.cancel_scope.cancel()  # the client goes away mid-call
        while (await _stats(url))["cancelled"] <= before:
            await anyio.sleep(0.05)


@pytest.fixture(scope="module")
def many_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A gateway over HTTP with 60 tools: over Cursor's limit of 40, under everyone else's."""
    config = write_config(tmp_path_factory.mktemp("many") / "gw.json", {"bulk": flaky("--many", "45")})
    yield from _http_gateway(config)


def _listed(url: str) -> list[str]:
    got = answer(post(url, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))
    return [t["name"] for t in got["result"]["tools"]]


def test_an_unknown_client_gets_every_tool_adapted_not_the_meta_tools(many_url: str) -> None:
    """No ``?client=`` (the MCP Inspector over HTTP): the whole list, adapted for every known
    client's schema rules, with no tool-count limit (no client said it has one)."""
    names = _listed(many_url)
    assert len(names) > 40 and {"bulk_echo", "bulk_many44"} <= set(names) and "search_tools" not in names
    assert "bulk_tree" not in names  # a cyclic $ref: still quarantined under the strictest rules
    got = answer(post(many_url, call("bulk_echo", {"text": "hi"})))
    assert got["result"]["content"][0]["text"] == "hi"


def test_a_client_with_a_tool_limit_still_gets_the_meta_tools(many_url: str) -> None:
    for query in ("?client=cursor-vscode", "?profile=cursor"):
        assert _listed(many_url + query) == ["search_tools", "describe_tool", "call_tool"]


@settings(max_examples=300, deadline=None)
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=5),
        max_leaves=20,
    )
    | st.fixed_dictionaries(
        {
            "jsonrpc": st.just("2.0"),
            "id": st.integers() | st.text() | st.none(),
            "method": st.sampled_from(sorted(FAST_METHODS)),
        },
        optional={
            "params": st.none()
            | st.dictionaries(
                st.sampled_from(["name", "arguments", "_meta", "task"]),
                st.none() | st.text() | st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
            )
        },
    )
)
def test_the_hot_path_takes_only_requests_it_fully_understands(value: Any) -> None:
    got = plain_request(json.dumps(value).encode())
    if got is None:
        return
    assert got["method"] in FAST_METHODS
    assert isinstance(got["id"], str | int) and not isinstance(got["id"], bool)
    params = got.get("params") or {}
    assert "progressToken" not in (params.get("_meta") or {})
    if got["method"] == "tools/call":
        assert isinstance(params["name"], str)
        assert isinstance(params.get("arguments") or {}, dict)
        assert set(params) <= {"name", "arguments", "_meta"}
    else:
        assert set(params) <= {"_meta"}


@given(st.binary(max_size=200))
def test_arbitrary_bytes_never_break_the_hot_path(raw: bytes) -> None:
    plain_request(raw)


def test_json_nested_too_deep_is_left_to_the_sdk() -> None:
    assert plain_request(b"[" * 100_000 + b"]" * 100_000) is None


def test_a_client_that_does_not_accept_event_streams_gets_the_sdks_406(url: str) -> None:
    got = post(url, call("flaky_echo", {"text": "x"}), headers={"accept": "application/json"})
    assert got.status_code == 406
