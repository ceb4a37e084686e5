"""The machinery both import paths share: a reader thread feeding the writing thread, and the
counts of new, updated and unchanged posts across batches.

Why two threads: about half of an import is Python (parsing, building rows, folding text) and
half is SQLite (the posts table and FTS5 indexing), and Python's sqlite3 releases the GIL while
a statement runs. So a reader thread prepares batches while the calling thread writes the
previous ones. The calling thread keeps the transaction and calls ``progress``: an exception
there (Ctrl-C included) stops the reader and the caller rolls back; an exception in the reader
is handed over and raised by the caller.

Why the tally: a post repeated by an export in two batches is written twice (the second time
merged with the first), and must still be counted once, as what the export as a whole made of
what the archive held before it.
"""

from __future__ import annotations

import contextlib
import gc
import queue
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

from mcpkit.archive.store import PostBatch, Store, UpsertCounts

__all__ = ["PostTally", "no_cyclic_gc", "produced"]

T = TypeVar("T")

_DONE = object()


@contextlib.contextmanager
def no_cyclic_gc() -> Iterator[None]:
    """Pause the cycle collector while an import builds many small acyclic objects.

    Each generation-0 collection walks every young Post and row tuple; on a million-row export
    that was a quarter of the import time, for cycles that do not exist.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@contextlib.contextmanager
def produced(make: Callable[[], Iterator[T]], *, name: str, ahead: int) -> Iterator[Iterator[T]]:
    """The items of ``make()``, produced on a thread named ``name`` at most ``ahead`` items in
    advance, as an iterator for the calling thread; an exception of the producer is raised
    there. Leaving the block stops the producer (closing its iterator) and waits for it."""
    out: queue.Queue[object] = queue.Queue(maxsize=ahead)
    stop = threading.Event()
    thread = threading.Thread(target=_produce, args=(make, out, stop), name=name, daemon=True)
    thread.start()
    try:
        yield _taken(out)
    finally:
        stop.set()
        thread.join()


def _produce(make: Callable[[], Iterator[object]], out: queue.Queue[object], stop: threading.Event) -> None:
    """The producer thread: items, then the end mark; or the exception that stopped it."""
    items = make()
    try:
        for item in items:
            if not _put(out, item, stop):
                return
        _put(out, _DONE, stop)
    except BaseException as exc:  # handed to the consumer, which raises it
        _put(out, exc, stop)
    finally:
        close = getattr(items, "close", None)
        if close is not None:
            close()  # a generator's files are closed on this thread


def _put(out: queue.Queue[object], item: object, stop: threading.Event) -> bool:
    """Queue ``item`` unless the consumer gave up (then nobody would ever take it)."""
    while not stop.is_set():
        try:
            out.put(item, timeout=0.05)
        except queue.Full:
            continue
        return True
    return False


def _taken(out: queue.Queue[object]) -> Iterator[T]:
    while True:
        item = out.get()
        if item is _DONE:
            return
        if isinstance(item, BaseException):
            raise item
        yield item  # type: ignore[misc]


class PostTally:
    """``new``, ``updated`` and ``unchanged`` posts of one export, each post counted once.

    :meth:`add` takes what writing one batch did and the ids of that batch that an earlier
    batch of the export already wrote (``repeats``); a repeat is counted as what the export as a
    whole made of the post stored before it: new or updated stays so, unchanged then changed
    is an update, unchanged twice is one unchanged post.
    """

    def __init__(self) -> None:
        self.new = 0
        self.updated = 0
        self.unchanged = 0
        self._unchanged_ids: set[int] = set()

    def write(
        self,
        store: Store,
        conn: sqlite3.Connection,
        batch: PostBatch,
        repeats: list[int],
        write: Callable[[PostBatch], tuple[UpsertCounts, list[int]]],
    ) -> None:
        """Write ``batch`` with ``write`` (a :class:`PostWriter` method) and count it; its
        repeats are looked up with it, the users it names first are stored first."""
        if repeats:
            batch.check = sorted({*batch.check, *repeats})
        if batch.users:
            store.add_users(conn, batch.users)
        self.add(*write(batch), repeats)

    def add(self, counts: UpsertCounts, unchanged: Iterable[int], repeats: Iterable[int] = ()) -> None:
        """Count one written batch: its counts, the ids it left unchanged, its repeats."""
        new, updated, same = counts.new, counts.updated, counts.unchanged
        unchanged = list(unchanged)
        repeated = set(repeats)
        if repeated:
            same_now = set(unchanged)
            for post_id in repeated:
                if post_id in same_now:
                    same -= 1  # counted already by the earlier batch
                elif post_id in self._unchanged_ids:
                    self.unchanged -= 1  # unchanged before, updated now: an update
                    self._unchanged_ids.discard(post_id)
                else:
                    updated -= 1  # new or updated before: it stays that
        self._unchanged_ids.update(i for i in unchanged if i not in repeated)
        self.new += new
        self.updated += updated
        self.unchanged += same
