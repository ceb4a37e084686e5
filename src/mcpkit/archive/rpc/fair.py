"""A server-wide limit on requests running at once, shared out fairly between connections.

Every request counts, including each item of a batch, so one client cannot occupy the server
with a 1,000-item batch. The limit defaults to the number of cores the process may use: the
archive's work is CPU (SQLite, numpy), so with 32 requests running on 2 cores every one of them,
another client's single search included, ran 16 times slower than alone (a 20 ms search took
5 s beside ten batching clients).

When every slot is taken, waiting requests queue per connection, and a freed slot goes to:

1. a *fresh* request first: a lone request (not a batch item) to a connection that had nothing
   running and nothing waiting when it arrived (a client asking one question at a time,
   upstream's clients, a person at the shell). It waits for the next freed slot or the one
   after, not behind other clients' backlogs, so batches delay it by about one search's time.
   Batch items never take this lane: ten batches arriving together would otherwise each put
   their first item ahead of it;
2. otherwise the backlogged connections in turn (round robin), one request each.

When both kinds wait, grants alternate between them, so a crowd of one-at-a-time clients cannot
starve a batch either: it still gets every other slot.
"""

from __future__ import annotations

import asyncio
import os
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Callable, Hashable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

__all__ = ["FairLimiter", "default_slots"]


def default_slots() -> int:
    """The cores this process may run on (its affinity, not the machine's count), at least 2."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # platforms without affinity
        cores = os.cpu_count() or 2
    return max(2, cores)


@dataclass(eq=False)
class _Waiter:
    """One request waiting for a slot; ``arrived`` is the grant count when it began to wait."""

    key: Hashable
    future: asyncio.Future[None]
    arrived: int


@dataclass(eq=False)
class _Connection:
    running: int = 0
    fresh: bool = False  # its one waiting request is in the fresh lane
    queue: deque[_Waiter] = field(default_factory=deque)

    @property
    def done(self) -> bool:
        return self.running == 0 and not self.fresh and not self.queue


Observer = Callable[[Hashable, int], None]
"""Called at each grant with the connection key and how many grants went to others while it
waited (0 when a slot was free): the measure of fairness the tests and ``--trace`` read."""


class FairLimiter:
    """``async with limiter.slot(connection_key):`` runs the block holding one of ``slots``."""

    def __init__(self, slots: int, observer: Observer | None = None) -> None:
        if slots < 1:
            raise ValueError("a limiter needs at least one slot")
        self.slots = slots
        self.observer = observer
        self._free = slots
        self._conns: dict[Hashable, _Connection] = {}
        self._fresh: deque[_Waiter] = deque()
        self._ring: OrderedDict[Hashable, None] = OrderedDict()  # backlogged connections, in turn
        self._fresh_last = False  # the last grant made while both lanes waited was a fresh one
        self._waiting = 0
        self._grants = 0

    @property
    def in_use(self) -> int:
        return self.slots - self._free

    def waiting(self) -> int:
        return self._waiting

    @asynccontextmanager
    async def slot(self, key: Hashable, *, burst: bool = False) -> AsyncIterator[None]:
        """Hold a slot for connection ``key``; ``burst``: one of many requests sent together
        (a batch item), never served in the fresh lane."""
        await self._acquire(key, burst)
        try:
            yield
        finally:
            self._release(key)

    async def _acquire(self, key: Hashable, burst: bool) -> None:
        conn = self._conns.get(key)
        if conn is None:
            conn = self._conns[key] = _Connection()
        if self._free and not self._waiting:
            self._free -= 1
            self._grant(key, conn, self._grants)
            return
        waiter = _Waiter(key, asyncio.get_running_loop().create_future(), self._grants)
        if conn.done and not burst:
            conn.fresh = True
            self._fresh.append(waiter)
        else:
            conn.queue.append(waiter)
            self._ring.setdefault(key, None)
        self._waiting += 1
        try:
            await waiter.future
        except asyncio.CancelledError:
            if waiter.future.done() and not waiter.future.cancelled():
                self._release(key)  # the slot was handed over just as we were cancelled
            else:
                self._forget(waiter, conn)
            raise

    def _grant(self, key: Hashable, conn: _Connection, arrived: int) -> None:
        conn.running += 1
        if self.observer is not None:
            self.observer(key, self._grants - arrived)
        self._grants += 1

    def _forget(self, waiter: _Waiter, conn: _Connection) -> None:
        """A cancelled waiter leaves its lane (unless a release already took it out)."""
        if conn.fresh and waiter in self._fresh:
            self._fresh.remove(waiter)
            conn.fresh = False
            self._waiting -= 1
        elif waiter in conn.queue:
            conn.queue.remove(waiter)
            self._waiting -= 1
            if not conn.queue:
                self._ring.pop(waiter.key, None)
        if conn.done:
            self._conns.pop(waiter.key, None)

    def _next(self) -> _Waiter | None:
        """The next waiter: fresh first, alternating with the round robin when both wait."""
        if self._fresh and not (self._ring and self._fresh_last):
            self._fresh_last = True
            waiter = self._fresh.popleft()
            self._conns[waiter.key].fresh = False
            return waiter
        if not self._ring:
            return None
        self._fresh_last = False
        key = next(iter(self._ring))
        queue = self._conns[key].queue
        waiter = queue.popleft()
        if queue:
            self._ring.move_to_end(key)
        else:
            del self._ring[key]
        return waiter

    def _release(self, key: Hashable) -> None:
        """Hand the slot to the next waiter in turn, else free it."""
        conn = self._conns.get(key)
        if conn is not None:
            conn.running -= 1
            if conn.done:
                del self._conns[key]
        while (waiter := self._next()) is not None:
            self._waiting -= 1
            target = self._conns.setdefault(waiter.key, _Connection())
            if waiter.future.done():  # cancelled, its task not yet resumed to forget it
                if target.done:
                    del self._conns[waiter.key]
                continue
            waiter.future.set_result(None)
            self._grant(waiter.key, target, waiter.arrived)
            return
        self._free += 1
