"""The archive database's schema: migrations, and what a database fault means to a user.

The schema is versioned with ``PRAGMA user_version``; each migration runs in its own write
transaction, and a database written by a newer mcpkit is refused rather than damaged.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable
from pathlib import Path

from mcpkit.archive.errors import ArchiveError

__all__ = ["SCHEMA_VERSION", "DatabaseError", "describe_db_error", "migrate", "remove_database", "rollback"]

TEXT_INDEXES = ("fts_content", "fts_reasoning", "fts_summary")
_UNSIZED = "CREATE VIRTUAL TABLE {} USING fts5(body, content='', tokenize='trigram case_sensitive 1', detail=none, columnsize=0)"


def _unsized_text_indexes(conn: sqlite3.Connection) -> None:
    """Recreate the text indexes that hold nothing yet with ``columnsize=0``.

    Why: FTS5 keeps one row per document in a ``_docsize`` table, the token count that only its
    ``bm25()`` reads, and bm25 says nothing without positions (``detail=none``): no mcpkit query
    reads it. Writing it was a sixth of indexing ten million posts (113 s against 92 on 2 cores)
    and most of copying a first import's index into the archive (``_side_index``). An index
    that already holds posts keeps its layout: rebuilding it would cost about a minute per
    five million posts at the first open after an upgrade, for a table that is only written.
    """
    for table in TEXT_INDEXES:
        if conn.execute(f"SELECT 1 FROM {table}_idx LIMIT 1").fetchone() is None:
            conn.execute(f"DROP TABLE {table}")
            conn.execute(_UNSIZED.format(table))


_MIGRATIONS: tuple[str | Callable[[sqlite3.Connection], None], ...] = (
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
    # 4: one post model for every export (X archive, Mastodon, Bluesky, Twilog): where a post
    # comes from, its kind, thread and targets, content warning, language, media; and the
    # exports imported. Columns are added in place (nothing is copied, so vectors, FTS rows and
    # enrichments keyed by post_id stay valid); a Twilog row's kind comes from its log_type
    # and text as posts.kind_of says. posts_facets serves kind filters (authored kinds are the
    # default) and the counts by kind, platform and account; the thread indexes are partial:
    # most posts are in no thread, and an import would pay for every empty entry. A reply's
    # target needs no index: its post_id is post_key(platform, reply_to).
    """
    ALTER TABLE posts ADD COLUMN platform TEXT NOT NULL DEFAULT 'x';
    ALTER TABLE posts ADD COLUMN kind TEXT NOT NULL DEFAULT 'post';
    ALTER TABLE posts ADD COLUMN source_id TEXT NOT NULL DEFAULT '';
    ALTER TABLE posts ADD COLUMN account TEXT NOT NULL DEFAULT '';
    ALTER TABLE posts ADD COLUMN reply_to TEXT NOT NULL DEFAULT '';
    ALTER TABLE posts ADD COLUMN thread_root TEXT NOT NULL DEFAULT '';
    ALTER TABLE posts ADD COLUMN quote_of TEXT NOT NULL DEFAULT '';
    ALTER TABLE posts ADD COLUMN repost_of TEXT NOT NULL DEFAULT '';
    ALTER TABLE posts ADD COLUMN content_warning TEXT NOT NULL DEFAULT '';
    ALTER TABLE posts ADD COLUMN lang TEXT NOT NULL DEFAULT '';
    ALTER TABLE posts ADD COLUMN has_media INTEGER NOT NULL DEFAULT 0;
    UPDATE posts SET kind = CASE
            WHEN log_type = 2 THEN 'like'
            WHEN log_type = 3 THEN 'bookmark'
            ELSE 'repost'
        END
        WHERE log_type IN (2, 3) OR substr(content, 1, 4) = 'RT @';
    CREATE INDEX posts_facets ON posts(kind, platform, account);
    CREATE INDEX posts_reply_to ON posts(reply_to) WHERE reply_to != '';
    CREATE INDEX posts_thread_root ON posts(thread_root) WHERE thread_root != '';
    CREATE TABLE media (
        post_id INTEGER NOT NULL,
        position INTEGER NOT NULL,
        type TEXT NOT NULL,
        path TEXT NOT NULL DEFAULT '',
        url TEXT NOT NULL DEFAULT '',
        alt TEXT NOT NULL DEFAULT '',
        PRIMARY KEY (post_id, position)
    ) WITHOUT ROWID;
    CREATE TABLE exports (
        export_id INTEGER PRIMARY KEY,
        format TEXT NOT NULL,
        account TEXT NOT NULL DEFAULT '',
        path TEXT NOT NULL,
        imported_at TEXT NOT NULL,
        summary TEXT NOT NULL DEFAULT '{}'
    )
    """,
    # 5: text indexes without per-document sizes (see _unsized_text_indexes)
    _unsized_text_indexes,
    # 6: what the per-post filter columns (``_columns``) need to stay current without reading
    # every post again: a counter of the transactions that changed posts (enrichments and
    # other writes leave it), the posts each changed (a NULL post_id: too many to list), and
    # an id of this archive, so columns saved beside it are never taken for another's
    """
    INSERT INTO meta VALUES ('posts_generation', '0');
    INSERT INTO meta VALUES ('archive_id', lower(hex(randomblob(16))));
    CREATE TABLE post_changes (generation INTEGER NOT NULL, post_id INTEGER);
    CREATE INDEX post_changes_generation ON post_changes(generation)
    """,
    # 7: no index of posts by user, nor by kind, platform and account: the counts they served
    # come from the per-post columns (``_columns``), and keeping them cost a third of writing
    # the posts of an import
    """
    DROP INDEX IF EXISTS posts_user;
    DROP INDEX IF EXISTS posts_facets
    """,
    # 8: every relation the owner has to a post, as a set of bits (posts.KIND_BITS: post 1,
    # reply 2, quote 4, repost 8, like 16, bookmark 32), where one kind per post lost a like
    # that was also a bookmark or the account's own post; and who the post was addressed to
    # (posts.VISIBILITIES), from the export's addressing. Added in place: a row's relations
    # are its kind's (what an earlier import dropped comes back by importing that export
    # again), its visibility public (every archive before held public posts only, save the
    # Mastodon posts addressed to nobody, which the next import of that archive closes). Columns
    # saved before lack these two and are read again from the posts.
    """
    ALTER TABLE posts ADD COLUMN relations INTEGER NOT NULL DEFAULT 1;
    ALTER TABLE posts ADD COLUMN visibility TEXT NOT NULL DEFAULT 'public';
    UPDATE posts SET relations = CASE kind
            WHEN 'reply' THEN 2
            WHEN 'quote' THEN 4
            WHEN 'repost' THEN 8
            WHEN 'like' THEN 16
            WHEN 'bookmark' THEN 32
            ELSE 1
        END
        WHERE kind != 'post'
    """,
)

SCHEMA_VERSION = len(_MIGRATIONS)


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
    for suffix in ("", "-wal", "-shm", "-journal", "-fts-build", "-columns.npz", "-web-tails.npz"):
        with contextlib.suppress(FileNotFoundError):
            Path(f"{path}{suffix}").unlink()


def migrate(conn: sqlite3.Connection, path: Path) -> None:
    """Apply pending migrations, each in its own write transaction.

    The version is re-read inside the transaction, so two processes opening a fresh
    database at once do not both run the same migration.
    """
    while True:
        conn.execute("BEGIN IMMEDIATE")
        try:
            version = int(conn.execute("PRAGMA user_version").fetchone()[0])
            if version > SCHEMA_VERSION:
                raise ArchiveError(
                    f"{path} has schema version {version}, newer than this mcpkit "
                    f"({SCHEMA_VERSION}); upgrade mcpkit"
                )
            if version == SCHEMA_VERSION:
                conn.execute("COMMIT")
                return
            migration = _MIGRATIONS[version]
            if callable(migration):
                migration(conn)
            else:
                for statement in migration.split(";"):
                    if statement.strip():
                        conn.execute(statement)
            conn.execute(f"PRAGMA user_version={version + 1}")
            conn.execute("COMMIT")
        except BaseException:
            rollback(conn)
            raise


def rollback(conn: sqlite3.Connection) -> None:
    """Undo the open transaction, if SQLite has not already: after "database or disk is full"
    it rolls back by itself, and a second ROLLBACK would replace the real cause with
    "cannot rollback - no transaction is active"."""
    if conn.in_transaction:
        with contextlib.suppress(sqlite3.Error):
            conn.execute("ROLLBACK")
