"""Writing posts in bulk: as few SQLite statements as possible, FTS5 entries in sorted chunks."""

from __future__ import annotations

import functools
import itertools
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from mcpkit.archive.posts import fold

__all__ = ["BULK_HASHSIZE", "FTS_CHUNK", "PostRow", "PostWriter", "UpsertCounts", "WriteBase", "fts_config"]

FTS_CHUNK = 65536
"""Index entries :class:`PostWriter` holds back before writing them in one go."""
BULK_HASHSIZE = 128 << 20
"""FTS5's in-memory term limit during :meth:`Store.bulk_writer` (more than FTS_CHUNK posts need)."""
FTS_HASHSIZE = 1 << 20  # FTS5's default

PostRow = tuple[int, int | None, str, str, int | None, str, int]
"""A ``posts`` table row: post_id, user_id, url, timestamp, ts, content, log_type."""


@dataclass(frozen=True, slots=True)
class UpsertCounts:
    new: int = 0
    updated: int = 0
    unchanged: int = 0


@dataclass(frozen=True, slots=True)
class WriteBase:
    """What a bulk writer needs to know of the store when its write transaction starts."""

    users: dict[str, int]
    next_user_id: int
    id_range: tuple[int, int] | None  # smallest and largest stored post id; None: no posts


class PostWriter:
    """Writes post rows inside one write transaction, in as few SQLite statements as it can.

    Why it batches the way it does:

    * New rows go in as multi-row ``INSERT`` statements: one ``sqlite3_step`` each, during which
      Python's sqlite3 releases the GIL, so a thread preparing the next rows runs meanwhile
      (one step per row would hand the GIL back and forth for every row).
    * FTS5 keeps new terms in memory and writes them out as a new segment (later merged) when
      a statement that may roll back on its own starts (its ``xSavepoint``), when a rowid is
      not larger than the last, or when the memory exceeds its ``hashsize``. So the index
      entries are held back and written :data:`FTS_CHUNK` at a time, sorted by rowid, in
      statements as large as the variable limit allows (with a large ``hashsize``, see
      :meth:`Store.bulk_writer`): on a million posts FTS5 then spends about 8.5 s instead of
      11.5 s, writing each leaf about once instead of twice. Its final segments (8 at 1M) answer
      as fast as after an ``optimize``, which would cost 1.5 s more. :meth:`flush` writes what
      is held; call it before the transaction commits.
    """

    def __init__(self, conn: sqlite3.Connection, variables: int) -> None:
        self._conn = conn
        self._variables = variables
        self._fts: list[tuple[int, str]] = []

    def write(
        self, rows: Sequence[PostRow], folded: Sequence[str], check: Sequence[int]
    ) -> tuple[UpsertCounts, list[int]]:
        """Write rows by the rule of :meth:`Store.upsert_posts`; ``folded`` is each row's folded content.

        Only the ids in ``check`` are looked up; every other row must be new. The rows must be
        distinct, best in ascending post_id order. Returns the counts and the ids of the rows
        left unchanged.
        """
        conn = self._conn
        existing: dict[int, int] = {}  # post_id -> stored log_type
        for start in range(0, len(check), self._variables):
            part = check[start : start + self._variables]
            marks = ",".join("?" * len(part))
            existing.update(
                conn.execute(f"SELECT post_id, log_type FROM posts WHERE post_id IN ({marks})", part)
            )
        if not existing:
            self._insert(rows, folded)
            return UpsertCounts(new=len(rows)), []
        inserts: list[PostRow] = []
        fts_inserts: list[str] = []
        updates: list[tuple[PostRow, str]] = []
        unchanged: list[int] = []
        for row, body in zip(rows, folded, strict=True):
            stored = existing.get(row[0])
            if stored is None:
                inserts.append(row)
                fts_inserts.append(body)
            elif row[6] > stored:
                updates.append((row, body))
            else:
                unchanged.append(row[0])
        self._insert(inserts, fts_inserts)
        if updates:
            self._update(updates)
        return UpsertCounts(new=len(inserts), updated=len(updates), unchanged=len(unchanged)), unchanged

    def _update(self, updates: Sequence[tuple[PostRow, str]]) -> None:
        """Replace stored rows (rare in bulk: only their old text is read back, for the index)."""
        conn = self._conn
        old: dict[int, str] = {}
        ids = [row[0] for row, _ in updates]
        for start in range(0, len(ids), self._variables):
            part = ids[start : start + self._variables]
            marks = ",".join("?" * len(part))
            old.update(conn.execute(f"SELECT post_id, content FROM posts WHERE post_id IN ({marks})", part))
        changed = [(row, body) for row, body in updates if old[row[0]] != row[5]]
        conn.executemany(
            "UPDATE posts SET user_id=?, url=?, timestamp=?, ts=?, content=?, log_type=? WHERE post_id=?",
            [(*row[1:], row[0]) for row, _ in updates],
        )
        if changed:
            self.flush()  # the entry to delete may be one still held back
            conn.executemany(
                "INSERT INTO fts_content(fts_content, rowid, body) VALUES ('delete', ?, ?)",
                [(row[0], fold(old[row[0]])) for row, _ in changed],
            )
            conn.executemany(
                "INSERT INTO fts_content(rowid, body) VALUES (?, ?)",
                [(row[0], body) for row, body in changed],
            )

    def flush(self) -> None:
        """Write the held-back index entries."""
        entries, self._fts = self._fts, []
        entries.sort()  # by rowid; ids are distinct, so the texts are never compared
        self._insert_many("INSERT INTO fts_content(rowid, body) VALUES ", 2, entries)

    def _insert_many(self, head: str, width: int, rows: Sequence[Sequence[Any]]) -> None:
        """``rows`` in multi-row statements as large as SQLite's variable limit allows."""
        per = max(1, self._variables // width)
        for start in range(0, len(rows), per):
            part = rows[start : start + per]
            self._conn.execute(_values_sql(head, width, len(part)), list(itertools.chain.from_iterable(part)))

    def _insert(self, rows: Sequence[PostRow], folded: Sequence[str]) -> None:
        self._insert_many("INSERT INTO posts VALUES ", 7, rows)
        self._fts.extend(zip([row[0] for row in rows], folded, strict=True))
        if len(self._fts) >= FTS_CHUNK:
            self.flush()


def fts_config(conn: sqlite3.Connection, key: str, value: object) -> bool:
    """Set an FTS5 configuration value of ``fts_content``; False if this SQLite refuses it."""
    try:
        conn.execute("INSERT INTO fts_content(fts_content, rank) VALUES (?, ?)", (key, value))
    except sqlite3.OperationalError:
        return False
    return True


@functools.lru_cache(maxsize=16)
def _values_sql(head: str, columns: int, rows: int) -> str:
    """``head`` followed by ``rows`` groups of ``columns`` placeholders."""
    group = "(" + ",".join("?" * columns) + ")"
    return head + ",".join([group] * rows)
