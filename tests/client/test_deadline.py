"""One deadline per call, covering waiting for the pipe, writing, waiting and reading.

The bug these guard against: the write of a request to a stdio server's stdin blocked
before the call's timeout started, so once a server stopped reading its input (its pipe
full), call #646 with ``timeout=0.01`` never returned. Every test here is bounded as a
whole by a generous ``fail_after``, so a regression fails instead of hanging the run.
"""

from __future__ import annotations

from collections.abc import Callable

import anyio
import pytest

from mcpkit.client import CallTimeoutError, Session, SessionOptions, connect
from tests.client.procs import raw

pytestmark = pytest.mark.anyio

GUARD = 120.0
"""Seconds the whole test may take before it counts as a hang (a bound, not a measure)."""
PAD = "x" * 2000
"""Arguments big enough that a few dozen requests fill the pipe and the write buffer."""


async def _make_deaf(session: Session) -> None:
    """The server answers this one call, then never reads its stdin again."""
    assert (await session.call("echo", {"text": "last one read"})).text == "last one read"


async def test_a_thousand_calls_to_a_server_that_stopped_reading_all_time_out() -> None:
    hung: list[Session] = []
    with anyio.fail_after(GUARD):
        async with connect(raw("--deaf-after", "1"), SessionOptions(timeout=30, on_hung=hung.append)) as s:
            await _make_deaf(s)
            outcomes: list[BaseException | None] = []

            async def one() -> None:
                try:
                    await s.call("echo", {"text": PAD}, timeout=0.05)
                except CallTimeoutError as exc:
                    outcomes.append(exc)
                else:
                    outcomes.append(None)

            async with anyio.create_task_group() as tg:
                for _ in range(1000):
                    tg.start_soon(one)
            assert len(outcomes) == 1000
            assert all(isinstance(o, CallTimeoutError) for o in outcomes)
            assert s.pending == 0
            # The pipe stayed full for a whole call's timeout: the session says the server hangs.
            assert s.hung
            assert hung == [s]


async def test_sequential_calls_with_a_tiny_timeout_keep_returning_after_the_pipe_fills() -> None:
    """The library case: one small call after another, each with ``timeout=0.01``; once the
    pipe and the write buffer were full (the 646th), a call used to block for ever."""
    with anyio.fail_after(GUARD):
        async with connect(raw("--deaf-after", "1"), SessionOptions(timeout=30)) as s:
            await _make_deaf(s)
            for _ in range(1000):
                with pytest.raises(CallTimeoutError):
                    await s.call("echo", {"text": "x"}, timeout=0.01)
            assert s.pending == 0
            assert s.hung


async def test_the_raw_path_times_out_and_refuses_once_the_pipe_is_full() -> None:
    """``send_raw`` never waits: what it wrote times out at its deadline; once stdin is
    backed up it sends nothing (None) and the caller's fallback, ``request``, times out."""
    answers: list[object] = []
    done = anyio.Event()
    with anyio.fail_after(GUARD):
        async with connect(raw("--deaf-after", "1"), SessionOptions(timeout=30)) as s:
            await _make_deaf(s)
            sent = refused = 0

            def answer(result: object) -> None:
                answers.append(result)
                if len(answers) == sent:
                    done.set()

            params = {"name": "echo", "arguments": {"text": PAD}}
            for _ in range(1000):
                if s.send_raw("tools/call", params, answer, timeout=0.05) is None:
                    refused += 1
                    if refused <= 3:  # the fallback a relay takes
                        with pytest.raises(CallTimeoutError):
                            await s.request("tools/call", params, timeout=0.05)
                else:
                    sent += 1
            assert sent > 0 and refused > 0
            await done.wait()
            assert all(isinstance(a, CallTimeoutError) for a in answers)


async def test_a_live_server_is_not_called_hung() -> None:
    events: list[Callable[[], None]] = []
    with anyio.fail_after(GUARD):
        async with connect(raw(), SessionOptions(timeout=30, on_hung=events.append)) as s:
            with pytest.raises(CallTimeoutError):
                await s.call("hang", timeout=0.05)
            assert (await s.call("echo", {"text": "hi"})).text == "hi"
            assert not s.hung
    assert events == []


async def test_a_hung_server_is_restarted_when_the_session_restarts_on_failure() -> None:
    with anyio.fail_after(GUARD):
        options = SessionOptions(timeout=30, restart="on-failure", backoff=0.01)
        async with connect(raw("--deaf-after", "1"), options) as s:
            first = s.pid
            await _make_deaf(s)
            while not s.hung:
                with pytest.raises(CallTimeoutError):
                    await s.call("echo", {"text": PAD}, timeout=0.05)
            # The next call waits for the new process (bounded by its own deadline).
            assert (await s.call("echo", {"text": "back"})).text == "back"
            assert s.pid != first and s.restarts == 1 and not s.hung
