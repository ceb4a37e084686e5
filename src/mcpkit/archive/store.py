"""SQLite store: posts, users, enrichments and FTS5 trigram indexes, with schema migrations.

Why this shape:

* WAL journal: one writer at a time (``BEGIN IMMEDIATE``), readers never blocked. Each thread
  gets its own read connection, so searches from worker threads run concurrently.
* Text search runs on *contentless* FTS5 tables holding the case-folded text with a
  case-sensitive trigram tokenizer. Because the folding is Python's (:func:`posts.fold`) on
  both sides, a trigram phrase match is exactly "folded term is a substring of folded text";
  results are re-checked anyway, so FTS is only ever an accelerator, never a different answer.
* A ``generation`` counter bumps on every write so caches (user counts, filter arrays) know
  when they are stale without rescanning.
* Posts are written through :class:`PostWriter`: multi-row statements (the GIL is released for
  each whole statement, so an importer parses the next rows meanwhile) and FTS5 entries held
  back and written in large sorted chunks (each statement start makes FTS5 write what it holds
  as a new segment, and segments cost merges).
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from mcpkit.archive.errors import ArchiveError
from mcpkit.archive.posts import Post, fold, timestamp_epoch
from mcpkit.archive.query import TextFilter

SOURCES = ("content", "reasoning", "summary")

_MIGRATIONS: tuple[str, ...] = (
    # 1: the initial schema
    """
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE users (user_id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
    CREATE TABLE posts (
        post_id INTEGER PRIMARY KEY,
        user_id INTEGER REFERENCES users(user_id),
        url TEXT NOT NULL,
        timestamp TEXT NOT NULL,
        ts INTEGER,
        content TEXT NOT NULL,
        log_type INTEGER NOT NULL
    );
    CREATE INDEX posts_time ON posts(timestamp, post_id);
    CREATE INDEX posts_user ON posts(user_id);
    CREATE TABLE enrichments (
        post_id INTEGER PRIMARY KEY,
        reasoning TEXT,
        summary TEXT,
        tags TEXT
    );
    CREATE VIRTUAL TABLE fts_content USING fts5(body, content='', tokenize='trigram case_sensitive 1');
    CREATE VIRTUAL TABLE fts_reasoning USING fts5(body, content='', tokenize='trigram case_sensitive 1');
    CREATE VIRTUAL TABLE fts_summary USING fts5(body, content='', tokenize='trigram case_sensitive 1');
    INSERT INTO meta VALUES ('generation', '0');
    """,
    # 2: trigram indexes without positions (detail=none): a third faster to build and half the
    # size. A term is matched as the AND of its trigrams, a superset that every reader already
    # re-checks against the text itself. mcpkit_fold is fold() registered on the connection.
    """
    DROP TABLE fts_content;
    DROP TABLE fts_reasoning;
    DROP TABLE fts_summary;
    CREATE VIRTUAL TABLE fts_content USING fts5(body, content='', tokenize='trigram case_sensitive 1', detail=none);
    CREATE VIRTUAL TABLE fts_reasoning USING fts5(body, content='', tokenize='trigram case_sensitive 1', detail=none);
    CREATE VIRTUAL TABLE fts_summary USING fts5(body, content='', tokenize='trigram case_sensitive 1', detail=none);
    INSERT INTO fts_content(rowid, body) SELECT post_id, mcpkit_fold(content) FROM posts;
    INSERT INTO fts_reasoning(rowid, body)
        SELECT post_id, mcpkit_fold(reasoning) FROM enrichments WHERE coalesce(reasoning, '') != '';
    INSERT INTO fts_summary(rowid, body)
        SELECT post_id, mcpkit_fold(summary) FROM enrichments WHERE coalesce(summary, '') != ''
    """,
    # 3: what ``archive enrich`` did to each post: the text and prompt it enriched (a post is
    # due again when either changes), and failures with their reason (retried next run)
    """
    CREATE TABLE enrich_state (
        post_id INTEGER PRIMARY KEY,
        content_hash TEXT NOT NULL,
        prompt_version TEXT NOT NULL,
        model TEXT NOT NULL,
        ok INTEGER NOT NULL,
        error TEXT,
        tokens INTEGER NOT NULL DEFAULT 0
    )
    """,
)

SCHEMA_VERSION = len(_MIGRATIONS)

FTS_CHUNK = 65536
"""Index entries :class:`PostWriter` holds back before writing them in one go."""
BULK_HASHSIZE = 128 << 20
"""FTS5's in-memory term limit during :meth:`Store.bulk_writer` (more than FTS_CHUNK posts need)."""
_FTS_HASHSIZE = 1 << 20  # FTS5's default

_POST_COLUMNS = "p.post_id, coalesce(u.name, ''), p.timestamp, p.url, p.content"
_FTS_PROBE = 5000


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


@dataclass(frozen=True, slots=True)
class PostArrays:
    """Per-post columns for vectorised filters, sorted by post id."""

    post_ids: npt.NDArray[np.int64]
    user_ids: npt.NDArray[np.int64]  # 0 = unknown user
    ts: npt.NDArray[np.float64]  # NaN = unparsable timestamp (passes date filters)


def post_dict(row: Sequence[Any]) -> dict[str, Any]:
    """Upstream's post shape from a ``_POST_COLUMNS`` row."""
    return {"post_id": int(row[0]), "content": row[4], "timestamp": row[2], "url": row[3], "user": row[1]}


class DatabaseError(ArchiveError):
    """The archive database cannot be opened, read or written; the message names the cause."""


def describe_db_error(path: Path, exc: BaseException) -> str:
    """One line saying what is wrong with the database at ``path``, in the user's terms."""
    text = str(exc)
    lowered = text.lower()
    if path.is_dir():
        return f"{path} is a directory, not an archive database"
    if "readonly" in lowered or "read-only" in lowered:
        return f"{path} is read-only: the archive cannot be written ({text})"
    if "disk is full" in lowered or "no space" in lowered:
        return f"no space left writing {path}: {text}"
    if "not a database" in lowered:
        return f"{path} is not an archive database: {text}"
    if "unable to open" in lowered:
        return f"cannot open {path}: {text} (does its directory exist and is it writable?)"
    if "locked" in lowered or "busy" in lowered:
        return f"{path} is locked by another process: {text}"
    return f"database error on {path}: {text}"


def remove_database(path: Path) -> None:
    """Delete an archive database with its WAL files (used to undo a failed creation)."""
    for suffix in ("", "-wal", "-shm", "-journal"):
        with contextlib.suppress(FileNotFoundError):
            Path(f"{path}{suffix}").unlink()


class Store:
    """The archive database. Thread-safe: writes serialise, reads use per-thread connections."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._local = threading.local()
        self._write_lock = threading.Lock()
        self._connections: list[sqlite3.Connection] = []
        self._conn_lock = threading.Lock()
        if self.path.is_dir():
            raise DatabaseError(describe_db_error(self.path, OSError("is a directory")))
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._writer = self._connect()
            self._writer.create_function("mcpkit_fold", 1, fold, deterministic=True)
            self._writer.execute("PRAGMA journal_mode=WAL")
            # statement journals (every multi-row INSERT keeps one) in memory, not in a temp
            # file: they only serve to undo one statement, a crash is recovered from the WAL
            self._writer.execute("PRAGMA temp_store=MEMORY")
            self._migrate()
        except (sqlite3.Error, OSError) as exc:
            self.close()
            raise DatabaseError(describe_db_error(self.path, exc)) from exc
        self._user_ids: dict[str, int] = {}
        self._variables = self._writer.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER)

    # -- connections and schema ---------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=30.0)
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA busy_timeout=30000")
        with self._conn_lock:
            self._connections.append(conn)
        return conn

    @property
    def reader(self) -> sqlite3.Connection:
        """This thread's read connection (WAL: sees the last committed state, never blocks)."""
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._connect()
            self._local.conn = conn
        return conn

    def close(self) -> None:
        with self._conn_lock:
            for conn in self._connections:
                conn.close()
            self._connections.clear()
        self._local = threading.local()

    def _migrate(self) -> None:
        """Apply pending migrations, each in its own write transaction.

        The version is re-read inside the transaction, so two processes opening a fresh
        database at once do not both run the same migration.
        """
        with self._write_lock:
            while True:
                self._writer.execute("BEGIN IMMEDIATE")
                try:
                    version = int(self._writer.execute("PRAGMA user_version").fetchone()[0])
                    if version > SCHEMA_VERSION:
                        raise ArchiveError(
                            f"{self.path} has schema version {version}, newer than this mcpkit "
                            f"({SCHEMA_VERSION}); upgrade mcpkit"
                        )
                    if version == SCHEMA_VERSION:
                        self._writer.execute("COMMIT")
                        return
                    for statement in _MIGRATIONS[version].split(";"):
                        if statement.strip():
                            self._writer.execute(statement)
                    self._writer.execute(f"PRAGMA user_version={version + 1}")
                    self._writer.execute("COMMIT")
                except BaseException:
                    _rollback(self._writer)
                    raise

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction; bumps the generation counter on commit."""
        with self._write_lock:
            conn = self._writer
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
                conn.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'")
                conn.execute("COMMIT")
            except BaseException:
                _rollback(conn)
                self._user_ids.clear()
                raise

    def generation(self) -> int:
        return int(self.reader.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()[0])

    # -- writes ------------------------------------------------------------------------------

    def _user_id(self, conn: sqlite3.Connection, name: str) -> int | None:
        if not name:
            return None
        cached = self._user_ids.get(name)
        if cached is not None:
            return cached
        row = conn.execute("SELECT user_id FROM users WHERE name = ?", (name,)).fetchone()
        if row is None:
            user_id = int(conn.execute("INSERT INTO users(name) VALUES (?)", (name,)).lastrowid or 0)
        else:
            user_id = int(row[0])
        self._user_ids[name] = user_id
        return user_id

    def upsert_posts(self, conn: sqlite3.Connection, posts: Sequence[Post]) -> UpsertCounts:
        """Insert new posts; replace a stored post only when the new log_type is larger.

        Call inside :meth:`transaction`. Re-importing the same rows changes nothing.
        """
        ordered = sorted(posts, key=lambda p: p.post_id)
        rows: list[PostRow] = [
            (
                p.post_id,
                self._user_id(conn, p.user),
                p.url,
                p.timestamp,
                timestamp_epoch(p.timestamp),
                p.content,
                p.log_type,
            )
            for p in ordered
        ]
        writer = self.post_writer(conn)
        counts, _ = writer.write(rows, [fold(p.content) for p in ordered], [p.post_id for p in ordered])
        writer.flush()
        return counts

    def post_writer(self, conn: sqlite3.Connection) -> PostWriter:
        """A :class:`PostWriter` on ``conn``; call inside :meth:`transaction`."""
        return PostWriter(conn, self._variables)

    @contextmanager
    def bulk_writer(self, conn: sqlite3.Connection) -> Iterator[PostWriter]:
        """A :class:`PostWriter` for a large import, flushed when the block ends without error.

        For the duration FTS5 may hold up to :data:`BULK_HASHSIZE` bytes of new terms in memory
        (its default is 1 MB, a segment every couple of thousand posts); the table's own value
        is put back afterwards. ``hashsize`` is an FTS5 configuration key the SQLite docs do not
        list; where a build refuses it the import runs with the default.
        """
        previous = conn.execute("SELECT v FROM fts_content_config WHERE k = 'hashsize'").fetchone()
        tuned = _fts_config(conn, "hashsize", BULK_HASHSIZE)
        writer = self.post_writer(conn)
        yield writer
        writer.flush()
        if tuned:
            _fts_config(conn, "hashsize", _FTS_HASHSIZE if previous is None else previous[0])

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

    # -- reads -------------------------------------------------------------------------------

    def enrichment_states(self) -> dict[int, tuple[str, str, bool]]:
        """``post_id -> (content_hash, prompt_version, ok)`` of every post ``enrich`` has seen."""
        rows = self.reader.execute("SELECT post_id, content_hash, prompt_version, ok FROM enrich_state")
        return {int(pid): (h, v, bool(ok)) for pid, h, v, ok in rows}

    def enriched_ids(self) -> set[int]:
        """Posts with an enrichment, however it came (``enrich`` or an upstream migration)."""
        return {int(r[0]) for r in self.reader.execute("SELECT post_id FROM enrichments")}

    def enrichment_coverage(self) -> dict[str, int]:
        """How much of the archive is enriched: for ``stats`` and ``get_status``."""
        one: Callable[[str], int] = lambda sql: int(self.reader.execute(sql).fetchone()[0])  # noqa: E731
        return {
            "total_posts": one("SELECT count(*) FROM posts"),
            "enriched": one(
                "SELECT count(*) FROM enrichments e JOIN posts p ON p.post_id = e.post_id "
                "WHERE coalesce(e.summary, '') != '' OR coalesce(e.reasoning, '') != ''"
            ),
            "failed": one("SELECT count(*) FROM enrich_state WHERE ok = 0"),
        }

    def posts_by_ids(self, ids: Sequence[int], *, enrich: bool = True) -> dict[int, dict[str, Any]]:
        """Post dicts for ``ids`` (missing ids are absent), with enrichments when present."""
        out: dict[int, dict[str, Any]] = {}
        conn = self.reader
        id_list = [int(i) for i in ids]
        for start in range(0, len(id_list), 500):
            part = id_list[start : start + 500]
            marks = ",".join("?" * len(part))
            extra = ", e.reasoning, e.summary, e.tags" if enrich else ""
            join = " LEFT JOIN enrichments e ON e.post_id = p.post_id" if enrich else ""
            sql = (
                f"SELECT {_POST_COLUMNS}{extra} FROM posts p LEFT JOIN users u ON u.user_id = p.user_id"
                f"{join} WHERE p.post_id IN ({marks})"
            )
            for row in conn.execute(sql, part):
                post = post_dict(row)
                if enrich:
                    add_enrichment(post, row[5], row[6], row[7])
                out[post["post_id"]] = post
        return out

    def text_search(
        self, text_filter: TextFilter, limit: int, source: str = "content", offset: int = 0
    ) -> list[dict[str, Any]]:
        """Posts whose ``source`` text passes ``text_filter``, newest first, with enrichments,
        ``limit`` of them after the first ``offset``.

        A post without that text (not enriched) is matched as an empty text, as upstream.
        """
        found = itertools.islice(self.matching_posts(text_filter, source), offset, offset + limit)
        return [post for post, _ in found]

    def matching_posts(
        self, text_filter: TextFilter, source: str = "content"
    ) -> Iterator[tuple[dict[str, Any], int | None]]:
        """``(post, ts)`` newest first for every post whose ``source`` text passes the filter.

        The answer is by definition that of a scan testing every post (tests/archive/naive.py);
        FTS5 trigram only finds candidates faster (include terms of three or more characters),
        and terms that match very many posts are served by walking the time index instead,
        which is then the faster path.
        """
        conn = self.reader
        text_col = _source_column(source)
        base = (
            f"SELECT {_POST_COLUMNS}, e.reasoning, e.summary, e.tags, p.ts, {text_col} FROM posts p "
            "LEFT JOIN users u ON u.user_id = p.user_id LEFT JOIN enrichments e ON e.post_id = p.post_id"
        )
        order = " ORDER BY p.timestamp DESC, p.post_id DESC"
        long_terms = [t for t in text_filter.folded_includes if len(t) >= 3]
        rows: Iterable[Sequence[Any]] | None = None
        if long_terms:
            table = f"fts_{source}"
            query = trigram_query(long_terms)
            probe = conn.execute(
                f"SELECT count(*) FROM (SELECT rowid FROM {table} WHERE {table} MATCH ? LIMIT ?)",
                (query, _FTS_PROBE),
            ).fetchone()[0]
            if probe < _FTS_PROBE:
                rows = conn.execute(
                    f"{base} WHERE p.post_id IN (SELECT rowid FROM {table} WHERE {table} MATCH ?){order}",
                    (query,),
                )
        if rows is None:
            rows = conn.execute(base + order)
        for row in rows:
            if text_filter.matches(row[9]):
                post = post_dict(row)
                add_enrichment(post, row[5], row[6], row[7])
                yield post, row[8]

    def post_arrays(self) -> PostArrays:
        """Filter columns for every post, built with numpy (about a second per million posts)."""
        missing = -(2**62)
        rows = self.reader.execute(
            f"SELECT post_id, coalesce(user_id, 0), coalesce(ts, {missing}) FROM posts ORDER BY post_id"
        ).fetchall()
        table = np.array(rows, dtype=np.int64).reshape(-1, 3)
        ts = table[:, 2].astype(np.float64)
        ts[table[:, 2] == missing] = np.nan
        return PostArrays(np.ascontiguousarray(table[:, 0]), np.ascontiguousarray(table[:, 1]), ts)

    def user_counts(self) -> dict[int, tuple[str, int]]:
        """``user_id -> (name, post_count)`` for named users."""
        rows = self.reader.execute(
            "SELECT u.user_id, u.name, count(p.post_id) FROM users u JOIN posts p ON p.user_id = u.user_id "
            "GROUP BY u.user_id"
        )
        return {int(uid): (name, int(count)) for uid, name, count in rows}

    def user_ids_by_name(self, names: Iterable[str]) -> list[int]:
        names = list(names)
        if not names:
            return []
        marks = ",".join("?" * len(names))
        rows = self.reader.execute(f"SELECT user_id FROM users WHERE name IN ({marks})", names)
        return [int(r[0]) for r in rows]

    def counts(self) -> dict[str, int]:
        conn = self.reader
        one: Callable[[str], int] = lambda sql: int(conn.execute(sql).fetchone()[0])  # noqa: E731
        return {
            "total_posts": one("SELECT count(*) FROM posts"),
            "total_users": one("SELECT count(DISTINCT user_id) FROM posts WHERE user_id IS NOT NULL"),
            "total_summaries": one(
                "SELECT count(*) FROM enrichments WHERE summary IS NOT NULL AND summary != ''"
            ),
            "total_tags": one(
                "SELECT count(DISTINCT t.value) FROM enrichments e, json_each(e.tags) t "
                "WHERE e.tags IS NOT NULL AND json_valid(e.tags)"
            ),
        }

    def date_range(self) -> tuple[str, str]:
        row = self.reader.execute(
            "SELECT min(timestamp), max(timestamp) FROM posts WHERE timestamp != ''"
        ).fetchone()
        return (row[0] or "", row[1] or "")

    def iter_texts(self, source: str) -> Iterator[tuple[int, str]]:
        """``(post_id, text)`` of every post with a non-empty ``source`` text, by post id."""
        if source == "content":
            sql = "SELECT post_id, content FROM posts ORDER BY post_id"
        else:
            _source_column(source)
            sql = f"SELECT post_id, {source} FROM enrichments WHERE {source} IS NOT NULL ORDER BY post_id"
        for post_id, text in self.reader.execute(sql):
            if text:
                yield int(post_id), str(text)


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


def add_enrichment(
    post: dict[str, Any], reasoning: str | None, summary: str | None, tags: str | None
) -> None:
    """Add upstream's optional post keys when the post has been enriched."""
    import json

    if reasoning is not None:
        post["reasoning"] = reasoning
    if summary is not None:
        post["summary"] = summary
    if tags is not None:
        try:
            post["tags"] = json.loads(tags)
        except ValueError:
            post["tags"] = []


def _rollback(conn: sqlite3.Connection) -> None:
    """Undo the open transaction, if SQLite has not already: after "database or disk is full"
    it rolls back by itself, and a second ROLLBACK would replace the real cause with
    "cannot rollback - no transaction is active"."""
    if conn.in_transaction:
        with contextlib.suppress(sqlite3.Error):
            conn.execute("ROLLBACK")


def _source_column(source: str) -> str:
    """The SQL column of a text source in :meth:`Store.matching_posts`'s join."""
    if source == "content":
        return "p.content"
    if source in ("reasoning", "summary"):
        return f"e.{source}"
    raise ArchiveError(f"unknown text source {source!r}")


def trigram_query(terms: Sequence[str]) -> str:
    """An FTS5 query for rows containing every trigram of every (folded, 3+ character) term.

    The indexes keep no positions, so this finds a superset of the rows containing the terms
    as substrings; callers re-check the text.
    """
    grams = dict.fromkeys(t[i : i + 3] for t in terms for i in range(len(t) - 2))
    return " AND ".join('"' + g.replace('"', '""') + '"' for g in grams)


def _fts_config(conn: sqlite3.Connection, key: str, value: object) -> bool:
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
