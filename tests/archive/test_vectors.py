"""Vector spaces: exact top-k equals a full sort, masks, atomic appends, model records."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from mcpkit.archive.errors import ModelMismatchError
from mcpkit.archive.query import parse_terms
from mcpkit.archive.vectors import SpaceWriter, VectorSpace, describe, eligible_scores, top_k

SCORES = hnp.arrays(
    np.float32, st.integers(0, 60), elements=st.sampled_from([-1.0, -0.5, 0.0, 0.25, 0.5, 1.0, float("-inf")])
)


@settings(max_examples=200, deadline=None)
@given(SCORES, st.integers(1, 70), st.data())
def test_top_k_equals_stable_full_sort_under_a_mask(scores, k, data) -> None:
    mask = data.draw(hnp.arrays(np.bool_, len(scores)))
    got = top_k(scores, k, mask)
    eligible = [i for i in range(len(scores)) if mask[i] and np.isfinite(scores[i])]
    want = sorted(eligible, key=lambda i: (-scores[i], i))[:k]
    assert got.tolist() == want
    assert top_k(scores, None, mask).tolist() == sorted(eligible, key=lambda i: (-scores[i], i))


@settings(max_examples=80, deadline=None)
@given(
    n=st.integers(16_384, 60_000),
    k=st.sampled_from([1, 10, 64, 256, 1000]),
    levels=st.sampled_from([0, 3, 50]),
    masked=st.sampled_from([None, 0.01, 0.5, 0.99]),
    seed=st.integers(0, 2**32 - 1),
)
def test_top_k_on_large_arrays_equals_stable_full_sort(
    n: int, k: int, levels: int, masked: float | None, seed: int
) -> None:
    """Large enough for the sampled-threshold path; few distinct levels force ties at the k-th."""
    rng = np.random.default_rng(seed)
    scores = (
        rng.standard_normal(n).astype(np.float32)
        if levels == 0
        else rng.integers(0, levels, n).astype(np.float32)
    )
    mask = None if masked is None else rng.random(n) < masked
    got = top_k(scores, k, mask)
    keyed = scores if mask is None else np.where(mask, scores, -np.inf)
    order = np.lexsort((np.arange(n), -keyed))
    want = [int(i) for i in order[:k] if np.isfinite(keyed[i])]
    assert got.tolist() == want


def test_append_is_atomic_and_a_killed_tail_is_ignored_then_truncated(tmp_path: Path) -> None:
    writer = SpaceWriter(tmp_path, "content", "m", 3)
    writer.append([10, 11], np.eye(3, dtype=np.float32)[:2])
    # simulate a writer killed after writing rows but before committing meta.json
    with open(tmp_path / "content" / "vectors.f32", "ab") as handle:
        handle.write(b"\x01" * 7)
    with open(tmp_path / "content" / "ids.i64", "ab") as handle:
        handle.write(b"\x02" * 5)
    space = VectorSpace.open(tmp_path, "content")
    assert space is not None and len(space) == 2 and space.ids.tolist() == [10, 11]
    writer.append([12], np.eye(3, dtype=np.float32)[2:])
    space = VectorSpace.open(tmp_path, "content")
    assert space is not None and space.ids.tolist() == [10, 11, 12]
    assert np.allclose(space.matrix, np.eye(3))
    assert (tmp_path / "content" / "vectors.f32").stat().st_size == 3 * 3 * 4
    assert describe(tmp_path) == {"content": {"model": "m", "dim": 3, "count": 3}}


def test_space_refuses_another_model(tmp_path: Path) -> None:
    SpaceWriter(tmp_path, "content", "model-a", 3).append([1], np.eye(3, dtype=np.float32)[:1])
    with pytest.raises(ModelMismatchError, match="model-a"):
        SpaceWriter(tmp_path, "content", "model-b", 3).append([2], np.eye(3, dtype=np.float32)[:1])
    space = VectorSpace.open(tmp_path, "content")
    assert space is not None
    with pytest.raises(ModelMismatchError, match="dimensions"):
        space.scores(np.ones(4, dtype=np.float32))


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 300), st.floats(0.0, 1.0), st.booleans(), st.integers(0, 2**32 - 1))
def test_eligible_scores_are_the_masked_full_scores(n: int, density: float, masked: bool, seed: int) -> None:
    import tempfile

    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((n, 8)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    with tempfile.TemporaryDirectory() as tmp:
        SpaceWriter(Path(tmp), "content", "m", 8).append(np.arange(n), vectors)
        space = VectorSpace.open(Path(tmp), "content")
        assert space is not None
        q = vectors[0]
        mask = rng.random(n) < density if masked else None
        rows, scores = eligible_scores(space, q, mask)
        full = vectors @ q
        if mask is None:
            assert rows is None
            np.testing.assert_allclose(scores, full, atol=1e-6)
        else:
            assert rows is not None
            assert rows.tolist() == np.flatnonzero(mask).tolist()
            np.testing.assert_allclose(scores, full[mask], atol=1e-6)


def test_scores_with_a_sparse_mask_read_only_selected_rows(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    vectors = rng.standard_normal((200, 8)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    SpaceWriter(tmp_path, "content", "m", 8).append(np.arange(200), vectors)
    space = VectorSpace.open(tmp_path, "content")
    assert space is not None
    q = vectors[5]
    mask = np.zeros(200, dtype=bool)
    mask[[3, 5, 150]] = True
    rows, scores = eligible_scores(space, q, mask)
    assert rows is not None and rows.tolist() == [3, 5, 150]
    assert np.allclose(scores, vectors[[3, 5, 150]] @ q)
    assert space.rows_of([150, 999, 3]).tolist() == [150, -1, 3]


def test_store_schema_is_versioned_and_newer_schemas_are_refused(tmp_path: Path) -> None:
    import sqlite3

    from mcpkit.archive.errors import ArchiveError
    from mcpkit.archive.store import SCHEMA_VERSION, Store

    store = Store(tmp_path / "a.db")
    assert store.reader.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert store.reader.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    store.close()
    Store(tmp_path / "a.db").close()  # reopening migrates nothing
    conn = sqlite3.connect(tmp_path / "a.db")
    conn.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    conn.close()
    with pytest.raises(ArchiveError, match="newer than this mcpkit"):
        Store(tmp_path / "a.db")


def test_readers_are_not_blocked_by_a_writer(tmp_path: Path) -> None:
    from mcpkit.archive.posts import Post
    from mcpkit.archive.store import Store

    writer = Store(tmp_path / "a.db")
    reader = Store(tmp_path / "a.db")
    post = Post(1, "u", "2024-01-01 00:00:00", "https://x.com/u/status/1", "hello there", 1)
    with writer.transaction() as conn:
        writer.upsert_posts(conn, [post])
    with writer.transaction() as conn:  # a write transaction is open while we read
        writer.upsert_posts(conn, [Post(2, "u", "", "https://x.com/u/status/2", "second", 1)])
        reader.reader.execute("PRAGMA busy_timeout=0")
        assert [p["post_id"] for p in reader.text_search(parse_terms("hello"), 10)] == [1]
        assert reader.counts()["total_posts"] == 1  # sees the last committed state
    assert reader.counts()["total_posts"] == 2


def test_read_rows_copies_exactly_the_rows_asked_for(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    vectors = rng.standard_normal((50, 6)).astype(np.float32)
    SpaceWriter(tmp_path, "content", "m", 6).append(np.arange(50), vectors)
    space = VectorSpace.open(tmp_path, "content")
    assert space is not None
    rows = np.array([49, 0, 7, 7, 31], dtype=np.int64)
    assert np.array_equal(space.read_rows(rows), vectors[rows])
    assert space.read_rows(np.zeros(0, dtype=np.int64)).shape == (0, 6)
    with pytest.raises(IndexError):
        space.read_rows(np.array([50], dtype=np.int64))
