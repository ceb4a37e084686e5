"""The text index of a first import, built beside the archive on its own thread and core.

Why: indexing the folded texts in FTS5 (trigrams) is about 60% of the SQLite work of an import
(7 s of CPU of 12 at a million posts, measured with ``bench/archive.py``), and one database
file has one writer: while the import's connection indexes, nothing else can write the posts.
When the archive's index is empty, as on the first import of an export (the only import where
millions of rows arrive at once), the entries go instead to a scratch database
(``<archive>-fts-build``) that a second connection fills on its own thread, concurrently with
the posts table (Python's sqlite3 releases the GIL while a statement runs). When the posts are
written, the scratch index's shadow tables (its segments, term index and document sizes) are
copied into the archive's, still inside the import's transaction: the archive gets the same
index, segment for segment, that FTS5 would have built there, and an interrupted import leaves
nothing of it (the scratch file is removed by the next import or :func:`remove_database`).

The copy writes the shadow tables directly; the FTS5 table of the connection that did it may
hold a cached view of the index from before (it re-reads only after other connections write),
so :class:`~mcpkit.archive.store.Store` replaces its write connection after such a transaction.
"""

from __future__ import annotations

import functools
import itertools
import queue
import sqlite3
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

__all__ = ["SHADOW_TABLES", "SideIndex", "insert_many", "scratch_path"]

SHADOW_TABLES = ("data", "idx", "docsize")
"""The shadow tables of a contentless FTS5 table that hold its index (``config`` is the
table's own settings, the same on both sides; ``docsize`` exists only in an index made before
``columnsize=0``, see the schema's migration 5)."""
_NO_AUTOMERGE = 0
"""The scratch index's ``automerge``: FTS5 merges nothing while a first import builds it.

Why: FTS5 writes a segment each time its pending terms fill ``hashsize`` and, by default,
merges segments level by level as they come, so at ten million posts each entry was rewritten
two or three times (92 s of the index's CPU against 68 s without). The segments are not merged
at the end either: merging the 18 segments of ten million posts took 18 s, alone after the last
batch (218 s of import against 170 s without), and the text matches of ``bench/archive.py``
answered in 1-3 ms with one segment or 18 (``count(DISTINCT segid)`` of ``fts_content_idx``).
Later writes to the archive's table merge at its own ``automerge``, in steps as small as they."""
_AHEAD = 4  # chunks of entries queued for the index thread
_COPY_ROWS = 4096  # shadow rows read at a time by the copy


def scratch_path(db: Path) -> Path:
    return Path(f"{db}-fts-build")


class SideIndex:
    """A scratch FTS5 table ``table`` (the archive's own definition) filled on a thread.

    :meth:`insert` and :meth:`delete` queue chunks of ``(rowid, folded text)`` in the order
    they are to be applied; :meth:`copy_into` waits for them and copies the result into the
    archive; :meth:`close` stops the thread and removes the scratch file. An error of the
    thread is raised by the next call.
    """

    def __init__(self, path: Path, table: str, create_sql: str, variables: int, hashsize: int) -> None:
        self.path = path
        self.table = table
        self._variables = variables
        path.unlink(missing_ok=True)  # a killed import's
        self._conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        try:
            self._conn.execute("PRAGMA journal_mode=OFF")  # scratch: a crash discards it anyway
            self._conn.execute("PRAGMA synchronous=OFF")
            self._conn.execute(create_sql)
            self._conn.execute(f"INSERT INTO {table}({table}, rank) VALUES ('hashsize', ?)", (hashsize,))
            self._conn.execute(
                f"INSERT INTO {table}({table}, rank) VALUES ('automerge', ?)", (_NO_AUTOMERGE,)
            )
            self._conn.execute("BEGIN")
        except sqlite3.Error:
            self._conn.close()
            path.unlink(missing_ok=True)
            raise
        self._queue: queue.Queue[Callable[[], None] | None] = queue.Queue(maxsize=_AHEAD)
        self._error: BaseException | None = None
        self._stopped = False
        self._thread = threading.Thread(target=self._run, name="fts-side-index", daemon=True)
        self._thread.start()

    def insert(self, entries: Sequence[tuple[int, str]]) -> None:
        """Index ``entries`` (``rowid``, folded text), best in ascending rowid order."""
        self._put(lambda: self._many(f"INSERT INTO {self.table}(rowid, body) VALUES ", 2, entries))

    def delete(self, entries: Sequence[tuple[int, str]]) -> None:
        """Remove entries indexed earlier (a contentless table needs the indexed text)."""
        self._put(lambda: self._delete(entries))

    def copy_into(self, conn: sqlite3.Connection) -> None:
        """Wait for the queued work, then replace the (empty) index of ``conn``'s table by
        this one; call inside the import's transaction."""
        self._put(None)
        self._thread.join()
        self._raise()
        self._conn.execute("COMMIT")
        present = {str(row[0]) for row in self._conn.execute("SELECT name FROM sqlite_master")}
        for suffix in SHADOW_TABLES:
            name = f"{self.table}_{suffix}"
            if name not in present:
                continue
            conn.execute(f"DELETE FROM {name}")  # data holds the empty index's structure
            cursor = self._conn.execute(f"SELECT * FROM {name}")
            width = len(cursor.description)
            while rows := cursor.fetchmany(_COPY_ROWS):
                insert_many(conn, f"INSERT INTO {name} VALUES ", width, rows, self._variables)

    def close(self) -> None:
        """Stop the thread (dropping queued work) and remove the scratch file."""
        if self._thread.is_alive():
            self._stopped = True
            self._conn.interrupt()  # a statement running now
            self._queue.put(None)  # the thread drains the queue until it
            self._thread.join()
        self._conn.close()
        self.path.unlink(missing_ok=True)

    def _put(self, work: Callable[[], None] | None) -> None:
        self._raise()
        self._queue.put(work)  # the thread takes from the queue until the end mark

    def _raise(self) -> None:
        if self._error is not None:
            raise self._error

    def _run(self) -> None:
        while True:
            work = self._queue.get()
            if work is None:
                return
            if self._stopped or self._error is not None:
                continue  # drain until the end mark
            try:
                work()
            except BaseException as exc:  # raised on the importing thread by its next call
                self._error = exc

    def _delete(self, entries: Sequence[tuple[int, str]]) -> None:
        table = self.table
        self._conn.executemany(f"INSERT INTO {table}({table}, rowid, body) VALUES ('delete', ?, ?)", entries)

    def _many(self, head: str, width: int, rows: Sequence[Sequence[Any]]) -> None:
        insert_many(self._conn, head, width, rows, self._variables)


def insert_many(
    conn: sqlite3.Connection, head: str, width: int, rows: Sequence[Sequence[Any]], variables: int
) -> None:
    """``rows`` in multi-row statements as large as SQLite's variable limit allows."""
    per = max(1, variables // width)
    for start in range(0, len(rows), per):
        part = rows[start : start + per]
        conn.execute(_values_sql(head, width, len(part)), list(itertools.chain.from_iterable(part)))


@functools.lru_cache(maxsize=16)
def _values_sql(head: str, columns: int, rows: int) -> str:
    """``head`` followed by ``rows`` groups of ``columns`` placeholders."""
    group = "(" + ",".join("?" * columns) + ")"
    return head + ",".join([group] * rows)
