"""Requests in flight, and the drain at the end of stdin: written once for every server.

A client that writes its requests and closes stdin (``server < requests.jsonl``) must still
get every answer. So a server counts the requests it is answering, and at the end of input
waits, within ``DRAIN_SECONDS``, until none is left before it stops. The toolkit's servers
(:mod:`mcpkit.server._build`) and the gateway (``mcpkit.gateway``) each used to keep their own
counter, event and wait loop.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol, TypeVar

import anyio

__all__ = ["DRAIN_SECONDS", "SETTLE_SECONDS", "Idle", "InFlight", "drain"]

DRAIN_SECONDS = 10.0
"""At the end of stdin, how long the requests already read may take to be answered; a hung
handler cannot keep an abandoned server alive past it."""
SETTLE_SECONDS = 0.05
"""A moment for requests just read to reach their handlers, and for the last answers to reach
the writer (neither is a request in flight yet, or still)."""

H = TypeVar("H", bound=Callable[..., Awaitable[Any]])


class Idle(Protocol):
    """Something that answers requests and can say when it answers none."""

    @property
    def busy(self) -> bool: ...

    async def wait_idle(self) -> None: ...


class InFlight:
    """How many requests are being answered, and a way to wait until none is."""

    def __init__(self) -> None:
        self._count = 0
        self._idle = anyio.Event()
        self._idle.set()

    @contextmanager
    def one(self) -> Iterator[None]:
        """Count one request while the block runs."""
        self._count += 1
        if self._count == 1:
            self._idle = anyio.Event()
        try:
            yield
        finally:
            self._count -= 1
            if not self._count:
                self._idle.set()

    def counted(self, handler: H) -> H:
        """``handler`` counted while it runs."""

        async def run(*args: Any, **kwargs: Any) -> Any:
            with self.one():
                return await handler(*args, **kwargs)

        return run  # type: ignore[return-value]

    @property
    def count(self) -> int:
        return self._count

    @property
    def busy(self) -> bool:
        return self._count > 0

    async def wait_idle(self) -> None:
        """Until no request is being answered."""
        while self._count:
            await self._idle.wait()


async def drain(*answering: Idle, within: float = DRAIN_SECONDS) -> None:
    """At the end of input: wait until none of ``answering`` is busy (each may start a request
    while another finishes), then for the last answers to be written; at most ``within`` seconds."""
    with anyio.move_on_after(within):
        await anyio.sleep(SETTLE_SECONDS)  # requests just read reach their handlers
        while any(each.busy for each in answering):
            for each in answering:
                await each.wait_idle()
        await anyio.sleep(SETTLE_SECONDS)  # the last answers reach the writer
