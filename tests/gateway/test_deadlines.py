"""One deadline per call through a real gateway child: waiting for a call slot, writing to a
server that stopped reading its stdin, and waiting for its answer all end at ``call_timeout``.

Each test is guarded by a generous ``fail_after``: without the one deadline the calls queue
behind each other's timeouts (the 40th of these would answer after 80 s) or never return at
all (a server that stops reading stalls the write before any timeout starts), and the guard
turns that into a failure instead of a hang. No test measures how fast anything is.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpkit.client import Session
from tests.gateway.support import flaky, gateway_session, write_config

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

GUARD = 60.0
"""Seconds within which every call of a test must have returned (a hang detector only)."""


def text(raw: dict[str, Any]) -> str:
    return "\n".join(str(c.get("text")) for c in raw.get("content", []))


async def call(session: Session, name: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
    return await session.request("tools/call", {"name": name, "arguments": args or {}})


async def storm(session: Session, count: int, name: str, args: dict[str, Any]) -> list[dict[str, Any]]:
    """``count`` calls at once; their results in order."""
    results: list[dict[str, Any]] = [{} for _ in range(count)]

    async def one(i: int) -> None:
        results[i] = await call(session, name, args)

    async with anyio.create_task_group() as tg:
        for i in range(count):
            tg.start_soon(one, i)
    return results


def timed_out(result: dict[str, Any]) -> bool:
    """An isError result saying the server did not answer in time (or was being restarted
    as a hung server when the deadline came)."""
    said = text(result)
    return result.get("isError") is True and ("in time" in said or "restarting" in said)


async def test_a_call_waiting_for_a_slot_ends_at_its_deadline(tmp_path: Path) -> None:
    """40 calls for one slot of a server that never answers them: each ends at its own
    deadline, not after the timeouts of every call queued before it."""
    config = write_config(tmp_path / "gw.json", {"flaky": flaky()}, {"call_timeout": 2, "max_concurrent": 1})
    async with gateway_session(config) as session:
        with anyio.fail_after(GUARD):
            results = await storm(session, 40, "flaky_sleep", {"seconds": 600})
    assert all(timed_out(r) for r in results), [text(r) for r in results if not timed_out(r)][:3]


async def test_a_server_that_stops_reading_fails_calls_at_their_deadline_and_is_restarted(
    tmp_path: Path,
) -> None:
    """The server stops reading its stdin for good: 1,000 calls with a 0.05 s deadline all
    return a timed-out result (the writes to its full pipe do not stall them), and the
    supervisor restarts it as hung, after which calls are answered again."""
    config = write_config(tmp_path / "gw.json", {"flaky": flaky("--hang")}, {"call_timeout": 0.05})
    async with gateway_session(config) as session:
        with anyio.fail_after(GUARD):
            assert timed_out(await call(session, "flaky_hang"))
            results = await storm(session, 1000, "flaky_echo", {"text": "x" * 200})
        # Calls that met the restarted server are answered; every other one timed out.
        wrong = [r for r in results if not timed_out(r) and text(r) != "x" * 200]
        assert not wrong, [text(r) for r in wrong][:3]
        with anyio.fail_after(GUARD):  # a new process answers: the hung one was replaced
            while True:
                again = await call(session, "flaky_echo", {"text": "back"})
                if again.get("isError") is not True:
                    break
                await anyio.sleep(0.1)
        assert text(again) == "back"
