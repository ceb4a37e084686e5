"""Archives written before the one post model (schema 3) migrate in place with nothing lost.

The old archive is written here as the previous mcpkit wrote it: the first three migrations,
rows inserted by position into the seven columns that existed, FTS rows of the folded texts,
enrichments with their index rows and ``enrich`` states, vectors keyed by post id. Opening it
with today's store must keep every post, user, enrichment, index entry and vector key, and
give each post the kind its log_type and text say.
"""

from __future__ import annotations

import sqlite3
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpkit.archive.posts import Post, fold, kind_of, timestamp_epoch
from mcpkit.archive.query import parse_terms
from mcpkit.archive.store import SCHEMA_VERSION, Store
from mcpkit.archive.store import _schema as schema
from mcpkit.archive.vectors import SpaceWriter, VectorSpace, vectors_root

PREVIOUS = 3

OLD_POSTS = [
    Post(101, "alice", "2023-01-01 10:00:00", "https://x.com/alice/status/101", "a post about trains", 1),
    Post(
        102, "alice", "2023-01-02 10:00:00", "https://x.com/alice/status/102", "RT @bob: retweeted words…", 1
    ),
    Post(103, "", "2023-01-03 10:00:00", "https://x.com/carol/status/999", "a liked post & more", 2),
    Post(104, "", "2023-01-04 10:00:00", "https://x.com/dave/status/998", "a bookmarked post", 3),
    Post(2**62, "alice", "", "https://x.com/alice/status/4611686018427387904", "no timestamp 日本語", 1),
    Post(106, "alice", "2023-01-06 10:00:00", "https://x.com/alice/status/106", "RT @ but a like", 2),
]


def write_previous_archive(path: Path, posts: list[Post]) -> None:
    """An archive exactly as schema 3 left it (the store of the previous mcpkit)."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.create_function("mcpkit_fold", 1, fold, deterministic=True)
    conn.execute("PRAGMA journal_mode=WAL")
    for version, migration in enumerate(schema._MIGRATIONS[:PREVIOUS]):
        conn.execute("BEGIN")
        assert isinstance(migration, str)
        for statement in migration.split(";"):
            if statement.strip():
                conn.execute(statement)
        conn.execute(f"PRAGMA user_version={version + 1}")
        conn.execute("COMMIT")
    users: dict[str, int] = {}
    conn.execute("BEGIN")
    for post in posts:
        user_id = None
        if post.user:
            if post.user not in users:
                users[post.user] = len(users) + 1
                conn.execute("INSERT INTO users VALUES (?, ?)", (users[post.user], post.user))
            user_id = users[post.user]
        conn.execute(
            "INSERT INTO posts VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                post.post_id,
                user_id,
                post.url,
                post.timestamp,
                timestamp_epoch(post.timestamp),
                post.content,
                post.log_type,
            ),
        )
        conn.execute("INSERT INTO fts_content(rowid, body) VALUES (?, ?)", (post.post_id, fold(post.content)))
    if posts:
        first = posts[0].post_id
        conn.execute(
            "INSERT INTO enrichments VALUES (?, ?, ?, ?)", (first, "why: Trains", "summary: rail", '["rail"]')
        )
        conn.execute("INSERT INTO fts_reasoning(rowid, body) VALUES (?, ?)", (first, fold("why: Trains")))
        conn.execute("INSERT INTO fts_summary(rowid, body) VALUES (?, ?)", (first, fold("summary: rail")))
        conn.execute("INSERT INTO enrich_state VALUES (?, 'hash', 'v1', 'model', 1, NULL, 42)", (first,))
    conn.execute("COMMIT")
    conn.close()


def _table(path: Path, sql: str) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def test_a_previous_archive_migrates_with_every_post_enrichment_and_vector_key(tmp_path: Path) -> None:
    db = tmp_path / "archive.db"
    write_previous_archive(db, OLD_POSTS)
    ids = np.array(sorted(p.post_id for p in OLD_POSTS), dtype=np.int64)
    vectors = np.eye(len(ids), 8, dtype=np.float32)
    SpaceWriter(vectors_root(db), "content", "m", 8).append(ids, vectors)
    old_rows = _table(db, "SELECT * FROM posts ORDER BY post_id")
    old_side = [_table(db, f"SELECT * FROM {t} ORDER BY 1") for t in ("users", "enrichments", "enrich_state")]

    store = Store(db)
    try:
        assert _table(db, "PRAGMA user_version") == [(SCHEMA_VERSION,)]
        # the seven old columns of every row, untouched
        assert (
            _table(
                db,
                "SELECT post_id, user_id, url, timestamp, ts, content, log_type FROM posts ORDER BY post_id",
            )
            == old_rows
        )
        assert [
            _table(db, f"SELECT * FROM {t} ORDER BY 1") for t in ("users", "enrichments", "enrich_state")
        ] == old_side
        kinds = dict(_table(db, "SELECT post_id, kind FROM posts"))
        assert kinds == {p.post_id: kind_of(p) for p in OLD_POSTS}
        assert (
            kinds[102] == "repost"
            and kinds[103] == "like"
            and kinds[104] == "bookmark"
            and kinds[106] == "like"
        )
        assert set(_table(db, "SELECT DISTINCT platform, source_id, has_media FROM posts")) == {("x", "", 0)}
        assert _table(db, "SELECT count(*) FROM media") == [(0,)]
        # the indexes still find every post, the enrichment is still searchable
        for post in OLD_POSTS:
            found = store.text_search(parse_terms(post.content[:12]), 10)
            assert post.post_id in [f["post_id"] for f in found]
        assert [p["post_id"] for p in store.text_search(parse_terms("trains"), 10, source="reasoning")] == [
            101
        ]
        assert store.posts_by_ids([101])[101]["tags"] == ["rail"]
        # the vectors still name existing posts, so `embed` has nothing to redo
        space = VectorSpace.open(vectors_root(db), "content")
        assert space is not None and len(space) == len(ids)
        assert set(store.posts_by_ids(ids.tolist())) == set(ids.tolist())
        assert np.array_equal(space.read_rows(space.rows_of(ids)), vectors)
    finally:
        store.close()
    # opening again migrates nothing twice
    Store(db).close()
    assert _table(db, "SELECT count(*) FROM posts") == [(len(OLD_POSTS),)]


def test_a_migrated_archive_takes_new_exports_and_keeps_its_old_posts(tmp_path: Path) -> None:
    db = tmp_path / "archive.db"
    write_previous_archive(db, OLD_POSTS)
    store = Store(db)
    try:
        with store.transaction() as conn:
            counts = store.upsert_posts(
                conn,
                [
                    Post(
                        101,
                        "alice",
                        "2023-01-01 10:00:00",
                        "https://x.com/alice/status/101",
                        "a post about trains",
                        1,
                    ),
                    Post(107, "alice", "2023-01-07 10:00:00", "https://x.com/alice/status/107", "new one", 1),
                ],
            )
        assert (counts.new, counts.updated, counts.unchanged) == (1, 0, 1)
        assert store.counts()["total_posts"] == len(OLD_POSTS) + 1
    finally:
        store.close()


CONTENT = st.one_of(st.text(max_size=12), st.text(max_size=8).map(lambda t: "RT @" + t))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    rows=st.lists(
        st.tuples(st.integers(1, 2**63 - 1), CONTENT, st.integers(1, 3)),
        max_size=12,
        unique_by=lambda r: r[0],
    )
)
def test_the_migrated_kind_is_the_kind_the_model_derives(rows: list[tuple[int, str, int]]) -> None:
    """The migration's SQL and posts.kind_of agree on every row (likes, bookmarks, 'RT @' reposts)."""
    posts = [Post(i, "", "", "", content, log_type) for i, content, log_type in rows]
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "a.db"
        write_previous_archive(db, posts)
        Store(db).close()
        assert dict(_table(db, "SELECT post_id, kind FROM posts")) == {p.post_id: kind_of(p) for p in posts}


def _tables(path: Path) -> set[str]:
    return {str(r[0]) for r in _table(path, "SELECT name FROM sqlite_master WHERE type = 'table'")}


def test_an_indexed_archive_keeps_its_text_index_and_an_empty_one_drops_the_sizes(tmp_path: Path) -> None:
    """Migration 5: the sizes table FTS5 keeps per post (read by nothing mcpkit asks) goes where
    the index is empty, and an index that holds posts is not rebuilt at the first open."""
    indexed, empty, fresh = tmp_path / "indexed.db", tmp_path / "empty.db", tmp_path / "fresh.db"
    write_previous_archive(indexed, OLD_POSTS)
    write_previous_archive(empty, [])
    for path in (indexed, empty, fresh):
        Store(path).close()
    assert "fts_content_docsize" in _tables(indexed)
    assert not {f"{t}_docsize" for t in schema.TEXT_INDEXES} & (_tables(empty) | _tables(fresh))
    store = Store(indexed)
    try:
        assert [str(h["post_id"]) for h in store.text_search(parse_terms("trains"), 10)] == ["101"]
    finally:
        store.close()
