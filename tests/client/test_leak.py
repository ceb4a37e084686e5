"""The leak test: 10,000 calls including 1,000 timeouts on one session.

It guards against a client that leaked timed-out requests: a waiter kept for each, and the
server still working on calls nobody would read.

Afterwards nothing is pending on either side, this process's memory is flat (within 10%
of what it was after a warm-up), and closing leaves no child process.
"""

from __future__ import annotations

import gc
import os
from pathlib import Path

import anyio
import pytest

from mcpkit.client import CallTimeoutError, SessionOptions, connect
from tests.client.procs import children_of, raw, wait_gone

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

TOTAL, TIMEOUTS, BATCH = 10_000, 1_000, 50


def rss_kb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


async def test_ten_thousand_calls_with_a_thousand_timeouts_leak_nothing() -> None:
    timeouts = 0

    async def echo(s: object, i: int) -> None:
        out = await s.call("echo", {"text": str(i)})  # type: ignore[attr-defined]
        assert out.text == str(i)

    async def slow(s: object) -> None:
        nonlocal timeouts
        try:
            await s.call("sleep", {"seconds": 30}, timeout=0.05)  # type: ignore[attr-defined]
        except CallTimeoutError:
            timeouts += 1

    async with connect(raw(), SessionOptions(timeout=60)) as s:
        pid = s.pid or 0
        # Every 10th batch is timeouts; the rest echo.
        batches = TOTAL // BATCH
        baseline = 0
        for b in range(batches):
            async with anyio.create_task_group() as tg:
                for i in range(BATCH):
                    if b % 10 == 0:
                        tg.start_soon(slow, s)
                    else:
                        tg.start_soon(echo, s, b * BATCH + i)
            if b == batches // 10:
                gc.collect()
                baseline = rss_kb()
        assert timeouts == TIMEOUTS
        assert s.pending == 0
        polls = 0
        with anyio.fail_after(120):  # a guard: cancellations are notifications, applied a bit later
            while True:
                polls += 1
                stats = (await s.call("stats")).structured
                if stats["active"] == 1:
                    break
                await anyio.sleep(0.05)
        assert stats["active"] == 1  # only the stats call itself
        # No timed-out call ran to its end on the server: every one it received was cancelled
        # there. On a loaded machine a call whose deadline passed before it was written is
        # never sent (the server counts one call less), and is not cancelled either.
        assert stats["completed"] == TOTAL - TIMEOUTS + polls - 1  # the echoes and earlier polls
        never_sent = TOTAL + polls - stats["calls"]
        assert 0 <= never_sent <= TIMEOUTS // 10
        assert stats["cancelled"] == TIMEOUTS - never_sent
        gc.collect()
        grown = rss_kb() / baseline
        assert grown < 1.10, f"RSS grew by {100 * (grown - 1):.1f}%"
    assert wait_gone([pid]) == []
    assert children_of(os.getpid()) == []
