"""Seed 004's test list, each case against a real misbehaving server process.

unknown tool, invalid arguments, crash, empty response, very large response, multiple
contents, concurrent calls, timeout then recovery, long-running tool; plus garbage on stdout,
stderr floods and a server that dies before the handshake.
"""

from __future__ import annotations

import json

import anyio
import pytest

from mcpkit.client import (
    CallTimeoutError,
    ConnectError,
    ServerExitedError,
    SessionOptions,
    ToolError,
    connect,
)
from tests.client.procs import raw

pytestmark = pytest.mark.anyio


async def test_unknown_tool_raises_tool_error_with_server_text() -> None:
    async with connect(raw(), SessionOptions(timeout=10)) as s:
        with pytest.raises(ToolError) as err:
            await s.call("no_such_tool", {})
        assert "Unknown tool: no_such_tool" in str(err.value)
        assert err.value.outcome.is_error
        out = await s.call("no_such_tool", {}, raise_on_error=False)
        assert out.is_error and out.text == "Unknown tool: no_such_tool"


async def test_invalid_arguments_raise_tool_error() -> None:
    async with connect(raw(), SessionOptions(timeout=10)) as s:
        with pytest.raises(ToolError, match="Invalid arguments"):
            await s.call("echo", {"wrong": 1})


async def test_is_error_result_is_never_taken_as_success() -> None:
    async with connect(raw(), SessionOptions(timeout=10, raise_on_error=False)) as s:
        out = await s.call("fail")
        assert out.is_error and out.text == "it broke: disk on fire"
        with pytest.raises(ToolError, match="disk on fire"):
            await s.call("fail", raise_on_error=True)


async def test_crash_mid_call_fails_every_inflight_call_with_exit_code_and_stderr() -> None:
    # The sleeping calls have no timeout at all: only crash detection can end them.
    async with connect(raw(), SessionOptions(timeout=None)) as s:
        errors: list[BaseException] = []

        async def sleeper() -> None:
            try:
                await s.call("sleep", {"seconds": 3600})
            except ServerExitedError as exc:
                errors.append(exc)

        with anyio.fail_after(60):  # safety net only; the assertion is on the error kind
            async with anyio.create_task_group() as tg:
                for _ in range(5):
                    tg.start_soon(sleeper)
                await anyio.sleep(0.2)
                with pytest.raises(ServerExitedError) as crash:
                    await s.call("crash", {"code": 7})
        assert crash.value.exit_code == 7
        assert any("fatal: crash tool called" in line for line in crash.value.stderr)
        assert len(errors) == 5 and all(e.exit_code == 7 for e in errors)  # type: ignore[attr-defined]
        assert s.pending == 0
        with pytest.raises(ServerExitedError):  # the session stays dead without restart
            await s.call("echo", {"text": "x"})


async def test_crash_on_nth_call_is_reported_as_server_exited() -> None:
    async with connect(raw("--crash-after", "3"), SessionOptions(timeout=None)) as s:
        await s.call("echo", {"text": "1"})
        await s.call("echo", {"text": "2"})
        with pytest.raises(ServerExitedError, match="code 3") as err:
            await s.call("echo", {"text": "3"})
        assert "fatal: crashing on call 3" in err.value.stderr[-1]


async def test_empty_content_falls_back_to_structured_or_empty_text() -> None:
    async with connect(raw(), SessionOptions(timeout=10)) as s:
        out = await s.call("empty")
        assert out.text == "" and out.contents == [] and not out.is_error
        out = await s.call("empty", {"structured": True})
        assert json.loads(out.text) == {"answer": 42} and out.structured == {"answer": 42}


async def test_fifty_megabyte_answer_arrives_whole() -> None:
    async with connect(raw(), SessionOptions(timeout=120)) as s:
        out = await s.call("big", {"megabytes": 50})
        assert len(out.text) == 50 * 1024 * 1024 and set(out.text) == {"x"}
        assert (await s.call("echo", {"text": "after"})).text == "after"


async def test_multiple_contents_are_all_kept_in_order() -> None:
    async with connect(raw(), SessionOptions(timeout=10)) as s:
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


async def test_unknown_content_type_is_described_not_fatal() -> None:
    async with connect(raw("--odd"), SessionOptions(timeout=10)) as s:
        out = await s.call("odd")
        first, second = out.text.split("\n")
        assert first.startswith("[unknown content 'widget'") and '"knobs": 3' in first
        assert second == "ok"


async def test_many_concurrent_calls_each_get_their_own_answer() -> None:
    async with connect(raw(), SessionOptions(timeout=30)) as s:
        results: dict[int, str] = {}

        async def one(i: int) -> None:
            results[i] = (await s.call("echo", {"text": f"n{i}"})).text

        async with anyio.create_task_group() as tg:
            for i in range(200):
                tg.start_soon(one, i)
        assert results == {i: f"n{i}" for i in range(200)}
        assert s.pending == 0


async def test_timeout_cancels_on_server_then_session_recovers() -> None:
    async with connect(raw(), SessionOptions(timeout=10)) as s:
        with pytest.raises(CallTimeoutError) as err:
            await s.call("sleep", {"seconds": 3600}, timeout=0.2)
        assert isinstance(err.value, TimeoutError)
        assert s.pending == 0
        assert (await s.call("echo", {"text": "still here"})).text == "still here"
        for _ in range(100):  # the cancel notification may land just after our next request
            stats = (await s.call("stats")).structured
            if stats["cancelled"] == 1:
                break
            await anyio.sleep(0.02)
        assert stats["cancelled"] == 1 and stats["active"] == 1  # only the stats call itself


async def test_session_timeout_is_the_default_and_a_call_can_override_it() -> None:
    async with connect(raw(), SessionOptions(timeout=0.2)) as s:
        with pytest.raises(CallTimeoutError):
            await s.call("sleep", {"seconds": 3600})
        assert (await s.call("sleep", {"seconds": 0.5}, timeout=None)).text == "slept"


async def test_long_running_tool_within_its_timeout_succeeds() -> None:
    async with connect(raw(), SessionOptions(timeout=30)) as s:
        assert (await s.call("sleep", {"seconds": 1.5})).text == "slept"


async def test_garbage_on_stdout_is_counted_and_ignored() -> None:
    async with connect(raw("--garbage-on-start"), SessionOptions(timeout=10)) as s:
        assert (await s.call("echo", {"text": "ok"})).text == "ok"
        assert s.garbage_lines == 1


async def test_stderr_flood_never_blocks_and_keeps_the_tail() -> None:
    async with connect(raw(), SessionOptions(timeout=60)) as s:
        assert (await s.call("spam", {"lines": 20000})).text == "spammed"
        for _ in range(100):
            if s.stderr_tail() and s.stderr_tail()[-1].startswith("spam line 19999"):
                break
            await anyio.sleep(0.02)
        assert s.stderr_tail()[-1].startswith("spam line 19999")
        assert len(s.stderr_tail()) <= 50


async def test_server_dying_before_handshake_is_a_connect_error_with_reason() -> None:
    with pytest.raises(ConnectError) as err:
        async with connect(raw("--exit-on-start", "4"), SessionOptions(timeout=10)):
            pass
    assert "code 4" in str(err.value) and "refusing to start" in str(err.value)


async def test_missing_executable_is_a_connect_error() -> None:
    with pytest.raises(ConnectError, match="cannot start"):
        async with connect(["/nonexistent/mcp-server"], SessionOptions(timeout=10)):
            pass


async def test_hanging_initialize_is_a_connect_error() -> None:
    with pytest.raises(ConnectError, match="no answer to initialize"):
        async with connect(["sleep", "3600"], SessionOptions(connect_timeout=0.5)):
            pass
