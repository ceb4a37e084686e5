"""What a call returns and raises, against a server in the test's own process.

Each case guards against a bug of a client that made every server look fine until it was
not: it ignored ``isError`` (error text passed on as data), kept only the first content
item, and leaked timed-out requests (the server kept working, the client kept a waiter).
None of these needs a process, so the server runs in memory (``connect(server_object)``);
the process-lifecycle cases are in test_misbehaving_server.py and test_lifecycle.py.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from mcpkit.client import (
    CallTimeoutError,
    ConnectError,
    ServerConfig,
    Session,
    SessionOptions,
    ToolError,
    connect,
)
from tests.fixtures.servers.in_process import Stats, make_server

pytestmark = pytest.mark.anyio

GUARD = 60.0
"""Seconds a test may take before it counts as a hang (a bound, not a measure)."""


async def test_an_sdk_server_object_is_served_in_process() -> None:
    async with connect(make_server(), SessionOptions(timeout=30)) as s:
        assert s.server_info["name"] == "in-process"
        assert s.pid is None and s.server.kind == "memory"
        assert [t["name"] for t in await s.list_tools()][:2] == ["echo", "sleep"]
        assert (await s.call("echo", {"text": "in memory"})).text == "in memory"


async def test_an_mcpkit_server_is_served_in_process() -> None:
    from mcpkit.results import text_result
    from mcpkit.server import build_server
    from mcpkit.tools import ToolSpec
    from mcpkit.tools.params import object_schema, string

    async def shout(args: dict[str, Any]) -> Any:
        return text_result(args["text"].upper())

    schema = object_schema({"text": string("Text to shout.")}, required=["text"])
    server = build_server("shouter", "1.0", [ToolSpec("shout", "Shout the text.", schema, shout)])
    async with Session(ServerConfig.in_process(server), SessionOptions(timeout=30)) as s:
        assert (await s.call("shout", {"text": "hi"})).text == "HI"
        assert s.server_info["name"] == "shouter"


async def test_the_sdk_memory_streams_are_what_the_in_memory_transport_assumes() -> None:
    """mcpkit.client._memory relies on this shape of the SDK's helper (and on a low-level
    server's ``run(read, write, create_initialization_options())``, used above)."""
    from mcp.shared.memory import create_client_server_memory_streams

    async with create_client_server_memory_streams() as (client_streams, server_streams):
        (client_read, client_write), (server_read, server_write) = client_streams, server_streams
        assert callable(client_write.send) and callable(server_read.receive)
        assert callable(server_write.send) and callable(client_read.receive)
    server = make_server()
    assert callable(server.run) and server.create_initialization_options().server_name == "in-process"


async def test_something_that_is_not_a_server_is_a_connect_error() -> None:
    with pytest.raises(ConnectError, match="cannot serve"):
        async with connect(object(), SessionOptions(timeout=30)):
            pass


async def test_unknown_tool_raises_tool_error_with_server_text() -> None:
    async with connect(make_server(), SessionOptions(timeout=30)) as s:
        with pytest.raises(ToolError) as err:
            await s.call("no_such_tool", {})
        assert "Unknown tool: no_such_tool" in str(err.value)
        assert err.value.outcome.is_error
        out = await s.call("no_such_tool", {}, raise_on_error=False)
        assert out.is_error and out.text == "Unknown tool: no_such_tool"


async def test_is_error_result_is_never_taken_as_success() -> None:
    async with connect(make_server(), SessionOptions(timeout=30, raise_on_error=False)) as s:
        out = await s.call("fail")
        assert out.is_error and out.text == "it broke: disk on fire"
        with pytest.raises(ToolError, match="disk on fire"):
            await s.call("fail", raise_on_error=True)


async def test_empty_content_falls_back_to_structured_or_empty_text() -> None:
    async with connect(make_server(), SessionOptions(timeout=30)) as s:
        out = await s.call("empty")
        assert out.text == "" and out.contents == [] and not out.is_error
        out = await s.call("empty", {"structured": True})
        assert json.loads(out.text) == {"answer": 42} and out.structured == {"answer": 42}


async def test_multiple_contents_are_all_kept_in_order() -> None:
    async with connect(make_server(), SessionOptions(timeout=30)) as s:
        out = await s.call("mixed")
        assert len(out.contents) == 7
        assert out.text.split("\n") == [
            "first",
            "[image: image/png, 12,345 bytes]",
            "[audio: audio/wav, 40 bytes]",
            "[resource: file:///notes.txt]",
            "note body",
            "[resource: file:///blob.bin, application/octet-stream, 5 bytes]",
            "[resource link: file:///linked.txt]",
            "last",
        ]


async def test_many_concurrent_calls_each_get_their_own_answer() -> None:
    async with connect(make_server(), SessionOptions(timeout=30)) as s:
        results: dict[int, str] = {}

        async def one(i: int) -> None:
            results[i] = (await s.call("echo", {"text": f"n{i}"})).text

        async with anyio.create_task_group() as tg:
            for i in range(200):
                tg.start_soon(one, i)
        assert results == {i: f"n{i}" for i in range(200)}
        assert s.pending == 0


async def test_timeout_cancels_on_server_then_session_recovers() -> None:
    stats = Stats()
    with anyio.fail_after(GUARD):
        async with connect(make_server(stats), SessionOptions(timeout=30)) as s:
            with pytest.raises(CallTimeoutError) as err:
                await s.call("hang", timeout=0.1)
            assert isinstance(err.value, TimeoutError)
            assert s.pending == 0
            assert (await s.call("echo", {"text": "still here"})).text == "still here"
            while stats.cancelled < 1:  # the cancellation may land just after our next request
                await anyio.sleep(0.01)
            assert stats.active == 0


async def test_session_timeout_is_the_default_and_a_call_can_override_it() -> None:
    # initialize has its own bound (connect_timeout), so only the calls meet the short one.
    async with connect(make_server(), SessionOptions(timeout=0.1, connect_timeout=GUARD)) as s:
        with pytest.raises(CallTimeoutError):
            await s.call("hang")
        assert (await s.call("sleep", {"seconds": 0.2}, timeout=None)).text == "slept"


async def test_long_running_tool_within_its_timeout_succeeds() -> None:
    async with connect(make_server(), SessionOptions(timeout=GUARD)) as s:
        assert (await s.call("sleep", {"seconds": 1})).text == "slept"


async def test_request_results_are_the_wire_dicts() -> None:
    async with connect(make_server(), SessionOptions(timeout=30)) as s:
        raw = await s.request("tools/call", {"name": "echo", "arguments": {"text": "x"}})
        assert raw["content"] == [{"type": "text", "text": "x"}]
        page = await s.request("tools/list")
        assert {t["name"] for t in page["tools"]} >= {"echo", "stats"}
        assert s.initialize_result["protocolVersion"] == s.protocol_version


def test_options_are_one_frozen_value() -> None:
    """Options used to be keywords restated at each layer, and drifted; now one value is
    built once and passed down, and a variant is made with ``replace``."""
    import dataclasses

    options = SessionOptions(timeout=5)
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.timeout = 1  # type: ignore[misc]
    assert dataclasses.replace(options, restart="on-failure").timeout == 5
    with pytest.raises(ValueError, match="restart must be"):
        SessionOptions(restart="always")  # type: ignore[arg-type]
    session = Session(ServerConfig.in_process(make_server()))
    assert session.timeout == 60 and session.connect_timeout == 60 and session.restart == "never"
    config_says = ServerConfig(name="x", command=["x"], timeout=7, restart="on-failure")
    assert (
        Session(config_says, options).timeout == 7 and Session(config_says, options).restart == "on-failure"
    )
