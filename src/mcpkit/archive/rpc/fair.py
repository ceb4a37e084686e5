"""A server-wide limit on requests in flight, shared out fairly between connections.

Every request counts, including each item of a batch, so one client cannot occupy the server
with a 1,000-item batch. When all slots are taken, waiting requests queue per connection and a
freed slot goes to the connections in turn (round robin), so a client with one request waits for
at most one slot per other busy connection, however much the others have queued.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Hashable
from contextlib import asynccontextmanager

__all__ = ["FairLimiter"]


class FairLimiter:
    """``async with limiter.slot(connection_key):`` runs the block holding one of ``slots``."""

    def __init__(self, slots: int) -> None:
        if slots < 1:
            raise ValueError("a limiter needs at least one slot")
        self.slots = slots
        self._free = slots
        self._waiting: OrderedDict[Hashable, deque[asyncio.Future[None]]] = OrderedDict()

    @property
    def in_use(self) -> int:
        return self.slots - self._free

    def waiting(self) -> int:
        return sum(len(q) for q in self._waiting.values())

    @asynccontextmanager
    async def slot(self, key: Hashable) -> AsyncIterator[None]:
        await self._acquire(key)
        try:
            yield
        finally:
            self._release()

    async def _acquire(self, key: Hashable) -> None:
        if self._free and not self._waiting:
            self._free -= 1
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.setdefault(key, deque()).append(future)
        try:
            await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self._release()  # the slot was handed over just as we were cancelled
            else:
                self._forget(key, future)
            raise

    def _forget(self, key: Hashable, future: asyncio.Future[None]) -> None:
        queue = self._waiting.get(key)
        if queue is None:
            return
        try:
            queue.remove(future)
        except ValueError:
            return
        if not queue:
            del self._waiting[key]

    def _release(self) -> None:
        """Hand the slot to the first waiter of the next connection in turn, else free it."""
        while self._waiting:
            key, queue = next(iter(self._waiting.items()))
            future = queue.popleft()
            if queue:
                self._waiting.move_to_end(key)
            else:
                del self._waiting[key]
            if not future.done():
                future.set_result(None)
                return
        self._free += 1
