"""The archive database object: connections, transactions, and the writes.

Why this shape:

* WAL journal: one writer at a time (``BEGIN IMMEDIATE``), readers never blocked. Each thread
  gets its own read connection, so searches from worker threads run concurrently; read
  connections map the file (:data:`READ_MMAP_BYTES`).
* A ``generation`` counter bumps on every write so caches know when they are stale without
  rescanning; ``posts_generation`` bumps only on writes that change posts, with the ids they
  changed logged, so the per-post filter columns (:mod:`._columns`) follow posts alone and
  re-read only what changed.
* Reads are :class:`~mcpkit.archive.store._queries.StoreQueries`; bulk post writes are
  :class:`~mcpkit.archive.store._writer.PostWriter`; schema and faults are ``_schema``.
"""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from mcpkit.archive.posts import Post, fold
from mcpkit.archive.store._columns import (
    NewColumns,
    PostArrays,
    PostColumns,
    changes_since,
    log_changes,
    stamp,
)
from mcpkit.archive.store._merge import merge_posts, normalized
from mcpkit.archive.store._queries import StoreQueries
from mcpkit.archive.store._schema import DatabaseError, describe_db_error, migrate, rollback
from mcpkit.archive.store._side_index import SideIndex, scratch_path
from mcpkit.archive.store._writer import (
    BULK_HASHSIZE,
    FTS_HASHSIZE,
    BatchBuilder,
    PostChanges,
    PostWriter,
    UpsertCounts,
    WriteBase,
    fts_config,
)

__all__ = ["READ_MMAP_BYTES", "Store"]

READ_MMAP_BYTES = 1 << 30
"""How much of the database file each read connection maps into memory (``PRAGMA mmap_size``).

A read then takes its pages from the OS page cache in place, without a ``pread`` and a copy
into SQLite's own 2 MB cache per page: rows read in random order, as a page of search hits or
the text index's re-checks read them, cost about a third less (1M posts, 338 MB: 3.1-3.7 µs
a row down to 2.3-2.5 µs for rows fetched 200 at a time by id; point reads one statement at a
time, where Python's call dominates, 8.8-10.8 µs down to 8.4-8.7 µs; full scans unchanged).
SQLite supports it beside WAL (the WAL itself is read as before) and falls back to plain reads
where the file cannot be mapped. The writer keeps plain reads: only readers gain, and a write
transaction's pages are in SQLite's cache anyway. The mapped pages count in the process's RSS
while they are in the page cache (they are the page cache, shared and reclaimable)."""


class Store(StoreQueries):
    """The archive database. Thread-safe: writes serialise, reads use per-thread connections."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._local = threading.local()
        self._write_lock = threading.Lock()
        self._connections: list[sqlite3.Connection] = []
        self._conn_lock = threading.Lock()
        self._side_copied = False  # the write connection's FTS5 tables may be stale
        self._changes = PostChanges()  # the posts the open write transaction changed
        self.columns = PostColumns(self.path, self._snapshot_connection)
        if self.path.is_dir():
            raise DatabaseError(describe_db_error(self.path, OSError("is a directory")))
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._writer = self._write_connection()
            self._migrate()
        except (sqlite3.Error, OSError) as exc:
            self.close()
            raise DatabaseError(describe_db_error(self.path, exc)) from exc
        self._variables = self._writer.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER)

    # -- connections and schema ---------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=30.0)
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA busy_timeout=30000")
        with self._conn_lock:
            self._connections.append(conn)
        return conn

    def _write_connection(self) -> sqlite3.Connection:
        conn = self._connect()
        conn.create_function("mcpkit_fold", 1, fold, deterministic=True)
        conn.execute("PRAGMA journal_mode=WAL")
        # statement journals (every multi-row INSERT keeps one) in memory, not in a temp
        # file: they only serve to undo one statement, a crash is recovered from the WAL
        conn.execute("PRAGMA temp_store=MEMORY")
        return conn

    def _renew_writer(self) -> None:
        """Replace the write connection (its FTS5 tables may cache an index that a side
        index's copy replaced under them; see :mod:`._side_index`)."""
        old = self._writer
        self._writer = self._write_connection()
        with self._conn_lock:
            self._connections.remove(old)
        old.close()

    def _snapshot_connection(self) -> sqlite3.Connection:
        """A connection of its own (closed by its user), for a read transaction that must not
        meet this thread's open statements on :attr:`reader`."""
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=30.0)
        conn.execute("PRAGMA busy_timeout=30000")
        conn.execute(f"PRAGMA mmap_size={READ_MMAP_BYTES}")
        return conn

    @property
    def reader(self) -> sqlite3.Connection:
        """This thread's read connection (WAL: sees the last committed state, never blocks)."""
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._connect()
            conn.execute(f"PRAGMA mmap_size={READ_MMAP_BYTES}")
            self._local.conn = conn
        return conn

    def close(self) -> None:
        """Close every connection and let the filter columns go (350 MB at ten million posts:
        the store and its columns' connection factory are a reference cycle, so a closed
        store would otherwise keep them until the cyclic collector runs, or for as long as a
        caller keeps it)."""
        with self._conn_lock:
            for conn in self._connections:
                conn.close()
            self._connections.clear()
        self._local = threading.local()
        self.columns.release()

    def _migrate(self) -> None:
        with self._write_lock:
            migrate(self._writer, self.path)

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction; bumps the generation counter on commit, and the posts
        generation with the log of changed posts when its :class:`PostWriter` changed any."""
        with self._write_lock:
            conn = self._writer
            conn.execute("BEGIN IMMEDIATE")
            empty = conn.execute("SELECT 1 FROM posts LIMIT 1").fetchone() is None
            self._changes = PostChanges(NewColumns() if empty else None)
            handed: tuple[tuple[str, int], PostArrays] | None = None
            try:
                yield conn
                conn.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'")
                made = None
                if self._changes:
                    log_changes(conn, None if self._changes.many else self._changes.ids)
                    made = self._new_columns(conn)
                conn.execute("COMMIT")
                handed = made  # only once committed: they are the columns of that state
            except BaseException:
                rollback(conn)
                raise
            finally:
                self._changes = PostChanges()
                if handed is not None:
                    self.columns.adopt(*handed[0], handed[1])
                if self._side_copied:
                    self._side_copied = False
                    self._renew_writer()

    def _new_columns(self, conn: sqlite3.Connection) -> tuple[tuple[str, int], PostArrays] | None:
        """The columns a transaction that filled an empty archive made of its rows, with the
        state they are of, when the log could not list its posts; else None (a few posts are
        re-read from the log as after any write)."""
        fresh = self._changes.fresh
        if fresh is None or not self._changes.many:
            return None
        try:
            arrays = fresh.arrays(conn)
        except (MemoryError, ValueError, sqlite3.Error):
            return None  # only a head start: the columns are then read whole when first needed
        return None if arrays is None else (stamp(conn), arrays)

    def generation(self) -> int:
        return int(self.reader.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()[0])

    def posts_generation(self) -> int:
        """Bumped by each write that changed posts (not by enrichments)."""
        return int(self.reader.execute("SELECT value FROM meta WHERE key = 'posts_generation'").fetchone()[0])

    def archive_id(self) -> str:
        """The archive's id (a file replaced by another archive at the same path has another)."""
        return stamp(self.reader)[0]

    def posts_changed_since(self, generation: int) -> list[int] | None:
        """The posts changed after posts generation ``generation`` (sorted ids, some perhaps
        deleted since), or None when the log cannot tell: for what keeps a per-post value of
        its own up to date, as the filter columns do."""
        with self.columns.snapshot() as conn:
            return changes_since(conn, generation)

    def post_arrays(self) -> tuple[int, PostArrays]:
        """``(posts_generation, filter columns of every post)`` (:mod:`._columns`): current,
        re-reading only the posts changed since they were last read."""
        return self.columns.current(self.reader)

    def note_post_changes(self, ids: Iterable[int]) -> None:
        """Inside :meth:`transaction`: these posts were changed by a statement of the caller's
        own (the writers note theirs)."""
        self._changes.add(ids)

    # -- writes ------------------------------------------------------------------------------

    def upsert_posts(
        self, conn: sqlite3.Connection, posts: Sequence[Post], account: str = ""
    ) -> UpsertCounts:
        """Store posts of any export, merging each with the stored post of the same id by the
        rules of :mod:`._merge` (a Twilog row replaces a stored Twilog row only when its
        log_type is larger); ``account`` is the export's, for records that name none.

        Call inside :meth:`transaction`. Re-importing the same posts changes nothing.
        """
        distinct: dict[int, Post] = {}
        for post in posts:
            post = normalized(post, account)
            previous = distinct.get(post.post_id)
            distinct[post.post_id] = post if previous is None else merge_posts(previous, post)
        batch = BatchBuilder(self.write_base(conn)).batch(distinct.values())
        batch.check = [p.post_id for p in batch.posts]
        if batch.users:
            self.add_users(conn, batch.users)
        writer = self.post_writer(conn)
        counts, _ = writer.write_posts(batch)
        writer.flush()
        return counts

    def post_writer(self, conn: sqlite3.Connection, side: SideIndex | None = None) -> PostWriter:
        """A :class:`PostWriter` on ``conn``; call inside :meth:`transaction`."""
        return PostWriter(conn, self._variables, self._changes, side)

    @contextmanager
    def bulk_writer(self, conn: sqlite3.Connection) -> Iterator[PostWriter]:
        """A :class:`PostWriter` for a large import, flushed when the block ends without error.

        When the text index is empty (a first import), the index is built beside the archive
        on another thread and copied in at the end (:mod:`._side_index`); else FTS5 may hold
        up to :data:`BULK_HASHSIZE` bytes of new terms in memory for the duration (its default
        is 1 MB, a segment every couple of thousand posts), the table's own value put back
        afterwards. ``hashsize`` is an FTS5 configuration key the SQLite docs do not list;
        where a build refuses it the import runs with the default.
        """
        side = self._side_index(conn)
        if side is not None:
            try:
                writer = self.post_writer(conn, side)
                yield writer
                writer.flush()
                self._side_copied = True  # from the first shadow row written, even if it fails
                side.copy_into(conn)
            finally:
                side.close()
            return
        previous = conn.execute("SELECT v FROM fts_content_config WHERE k = 'hashsize'").fetchone()
        tuned = fts_config(conn, "hashsize", BULK_HASHSIZE)
        writer = self.post_writer(conn)
        yield writer
        writer.flush()
        if tuned:
            fts_config(conn, "hashsize", FTS_HASHSIZE if previous is None else previous[0])

    def _side_index(self, conn: sqlite3.Connection) -> SideIndex | None:
        """A side index for ``fts_content`` when it is empty and holds its index in the
        shadow tables the copy knows; else None."""
        tables = {
            str(name): str(sql)
            for name, sql in conn.execute(
                "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name LIKE 'fts_content%'"
            )
        }
        if not all(f"fts_content_{suffix}" in tables for suffix in ("data", "idx")):
            return None
        if conn.execute("SELECT 1 FROM fts_content_idx LIMIT 1").fetchone() is not None:
            return None  # the index holds segments: it is not empty
        try:
            return SideIndex(
                scratch_path(self.path), "fts_content", tables["fts_content"], self._variables, BULK_HASHSIZE
            )
        except (sqlite3.Error, OSError):  # no room for the scratch file: index in place
            return None

    def write_base(self, conn: sqlite3.Connection) -> WriteBase:
        """The users and the post id range as of now; call inside :meth:`transaction`."""
        users = {str(name): int(uid) for uid, name in conn.execute("SELECT user_id, name FROM users")}
        low, high = conn.execute("SELECT min(post_id), max(post_id) FROM posts").fetchone()
        return WriteBase(
            users=users,
            next_user_id=max(users.values(), default=0) + 1,
            id_range=None if low is None else (int(low), int(high)),
        )

    def add_users(self, conn: sqlite3.Connection, users: Sequence[tuple[int, str]]) -> None:
        """Insert ``(user_id, name)`` pairs whose ids the caller allotted from :meth:`write_base`."""
        conn.executemany("INSERT INTO users(user_id, name) VALUES (?, ?)", users)

    def record_export(
        self, conn: sqlite3.Connection, *, format: str, account: str, path: Path, summary: dict[str, Any]
    ) -> int:
        """Note an import in the ``exports`` table (the web app finds media files through the
        export's path); returns its ``export_id``. Call inside the import's transaction."""
        cursor = conn.execute(
            "INSERT INTO exports(format, account, path, imported_at, summary) VALUES (?, ?, ?, ?, ?)",
            (
                format,
                account,
                str(Path(path).resolve()),
                dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                json.dumps(summary, ensure_ascii=False, sort_keys=True),
            ),
        )
        return int(cursor.lastrowid or 0)

    def upsert_enrichments(
        self, conn: sqlite3.Connection, items: Iterable[tuple[int, str | None, str | None, str | None]]
    ) -> int:
        """Store ``(post_id, reasoning, summary, tags_json)``; keeps the FTS tables in step."""
        count = 0
        for post_id, reasoning, summary, tags in items:
            old = conn.execute(
                "SELECT reasoning, summary FROM enrichments WHERE post_id = ?", (post_id,)
            ).fetchone()
            for index, (table, value) in enumerate((("fts_reasoning", reasoning), ("fts_summary", summary))):
                previous = old[index] if old is not None else None
                if previous == value:
                    continue
                if previous:
                    conn.execute(
                        f"INSERT INTO {table}({table}, rowid, body) VALUES ('delete', ?, ?)",
                        (post_id, fold(previous)),
                    )
                if value:
                    conn.execute(f"INSERT INTO {table}(rowid, body) VALUES (?, ?)", (post_id, fold(value)))
            conn.execute(
                "INSERT OR REPLACE INTO enrichments VALUES (?, ?, ?, ?)", (post_id, reasoning, summary, tags)
            )
            count += 1
        return count

    def record_enrichment_states(
        self, conn: sqlite3.Connection, states: Iterable[tuple[int, str, str, str, bool, str | None, int]]
    ) -> None:
        """``(post_id, content_hash, prompt_version, model, ok, error, tokens)`` per post."""
        conn.executemany("INSERT OR REPLACE INTO enrich_state VALUES (?, ?, ?, ?, ?, ?, ?)", states)
