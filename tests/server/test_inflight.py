"""Requests in flight and the drain at the end of stdin, written once (``mcpkit.server.relay``'s
``InFlight`` and ``drain``) for the toolkit's servers and the gateway, which each kept a copy."""

from __future__ import annotations

import anyio
import pytest

from mcpkit.server.relay import InFlight, drain

pytestmark = pytest.mark.anyio


async def test_drain_waits_for_every_counted_request_then_returns() -> None:
    counter = InFlight()
    release = anyio.Event()
    started = anyio.Event()
    finished: list[str] = []

    @counter.counted
    async def handler(name: str) -> str:
        started.set()
        await release.wait()
        finished.append(name)
        return name

    drained = anyio.Event()

    async def drain_then_mark() -> None:
        await drain(counter)
        drained.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(handler, "a")
        await started.wait()
        assert counter.busy and counter.count == 1
        tg.start_soon(drain_then_mark)
        await anyio.wait_all_tasks_blocked()
        assert not drained.is_set()  # the request is still being answered
        release.set()
        await drained.wait()
    assert finished == ["a"] and not counter.busy


async def test_drain_waits_for_all_that_answer_and_gives_up_on_a_hung_one() -> None:
    """The gateway drains its SDK path and its stdio lane together; a hung request does not
    keep the process alive past ``within``."""
    quick, hung = InFlight(), InFlight()
    never = anyio.Event()
    async with anyio.create_task_group() as tg:

        async def stuck() -> None:
            with hung.one():
                await never.wait()

        tg.start_soon(stuck)
        await anyio.wait_all_tasks_blocked()
        assert hung.busy and not quick.busy
        with anyio.fail_after(30):
            await drain(quick, hung, within=0.2)  # returns: the bound, not the hung request, ends it
        assert hung.busy
        tg.cancel_scope.cancel()
    assert not hung.busy  # the count falls when the request ends, however it ends


async def test_a_failing_request_is_uncounted() -> None:
    counter = InFlight()

    @counter.counted
    async def broken() -> None:
        raise ValueError("no")

    with pytest.raises(ValueError):
        await broken()
    assert counter.count == 0
    with anyio.fail_after(30):
        await counter.wait_idle()
