"""A real server process that misbehaves: the client reports each fault and survives it.

Invalid arguments, a crash (mid-call and on the Nth call), a 50 MB answer, a content type no
spec defines, garbage on stdout, a stderr flood, a server that dies before the handshake or
never answers it. The cases that need only *a* server (isError, every content item kept,
timeouts, concurrency) run in process, in test_calls.py.
"""

from __future__ import annotations

import anyio
import pytest

from mcpkit.client import (
    ConnectError,
    ServerExitedError,
    SessionOptions,
    ToolError,
    connect,
)
from tests.client.procs import raw

pytestmark = pytest.mark.anyio


async def test_invalid_arguments_raise_tool_error() -> None:
    async with connect(raw(), SessionOptions(timeout=10)) as s:
        with pytest.raises(ToolError, match="Invalid arguments"):
            await s.call("echo", {"wrong": 1})


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
                while s.pending < 5:  # the five calls are on their way
                    await anyio.sleep(0.01)
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


async def test_fifty_megabyte_answer_arrives_whole() -> None:
    async with connect(raw(), SessionOptions(timeout=120)) as s:
        out = await s.call("big", {"megabytes": 50})
        assert len(out.text) == 50 * 1024 * 1024 and set(out.text) == {"x"}
        assert (await s.call("echo", {"text": "after"})).text == "after"


async def test_unknown_content_type_is_described_not_fatal() -> None:
    async with connect(raw("--odd"), SessionOptions(timeout=10)) as s:
        out = await s.call("odd")
        first, second = out.text.split("\n")
        assert first.startswith("[unknown content 'widget'") and '"knobs": 3' in first
        assert second == "ok"


async def test_garbage_on_stdout_is_counted_and_ignored() -> None:
    async with connect(raw("--garbage-on-start"), SessionOptions(timeout=10)) as s:
        assert (await s.call("echo", {"text": "ok"})).text == "ok"
        assert s.garbage_lines == 1


async def test_stderr_flood_never_blocks_and_keeps_the_tail() -> None:
    async with connect(raw(), SessionOptions(timeout=60)) as s:
        assert (await s.call("spam", {"lines": 20000})).text == "spammed"
        with anyio.fail_after(60):  # a guard only: stderr is read beside stdout, maybe a bit later
            while not (s.stderr_tail() and s.stderr_tail()[-1].startswith("spam line 19999")):
                await anyio.sleep(0.02)
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
        async with connect(["sleep", "3600"], SessionOptions(connect_timeout=0.5)):  # never answers
            pass


@pytest.mark.parametrize(
    ("protocol", "sent"),
    [("2026-07-28", "server/discover"), ("auto", "server/discover"), ("2025-11-25", "initialize")],
)
async def test_a_connect_timeout_names_the_request_sent(protocol: str, sent: str) -> None:
    """The 2026 wire opens with server/discover (auto too, before any fallback): its timeout
    says so, not "initialize", which was never sent."""
    options = SessionOptions(connect_timeout=0.5, protocol=protocol)  # type: ignore[arg-type]
    with pytest.raises(ConnectError) as err:
        async with connect(["sleep", "3600"], options):  # never answers
            pass
    assert f"no answer to {sent} within 0.5 s" in str(err.value)
