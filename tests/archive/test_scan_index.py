"""The quantised first pass: nominated-then-re-scored results equal exact search.

Recall is measured against brute force here as in the benchmark; small spaces (where every
eligible row is nominated) must give exactly the exact answer, which checks the shard offsets,
the mask bitmaps and the merge of rows appended after the index was built.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpkit.archive import scan_index
from mcpkit.archive.embedders import normalize_rows
from mcpkit.archive.engine import Engine
from mcpkit.archive.posts import Post
from mcpkit.archive.scan_index import QuantisedScan, ScanIndexes
from mcpkit.archive.settings import parse_settings
from mcpkit.archive.store import Store
from mcpkit.archive.vectors import SpaceWriter, VectorSpace, top_k, vectors_root

from .helpers import TableEmbedder

pytestmark = pytest.mark.skipif(not scan_index.available(), reason="faiss-cpu is part of the archive extra")


def _space(root: Path, matrix: np.ndarray, name: str = "content", first_id: int = 0) -> VectorSpace:
    writer = SpaceWriter(root, name, "m", matrix.shape[1])
    writer.append(np.arange(first_id, first_id + len(matrix)), matrix)
    space = VectorSpace.open(root, name)
    assert space is not None
    return space


def _random_unit(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    return normalize_rows(rng.standard_normal((n, dim), dtype=np.float32))


def _exact(space: VectorSpace, q: np.ndarray, k: int, mask: np.ndarray | None) -> list[int]:
    scores = space.scores(q)
    return top_k(scores, k, mask).tolist()


@pytest.mark.parametrize("masked", [False, True])
def test_recall_at_10_against_brute_force_and_scores_are_exact(tmp_path: Path, masked: bool) -> None:
    rng = np.random.default_rng(1)
    space = _space(tmp_path, _random_unit(rng, 30_000, 96))
    scan = QuantisedScan.build(space, shards=3)
    matrix = np.asarray(space.matrix)
    hits = 0
    for _ in range(40):
        q = _random_unit(rng, 1, 96)[0]
        mask = rng.random(len(space)) < 0.4 if masked else None
        rows, scores = scan_index.search(space, scan, q, 10, mask)
        assert len(rows) == 10
        np.testing.assert_allclose(scores, matrix[rows] @ q, rtol=0, atol=1e-6)
        assert np.all(np.diff(scores) <= 0)
        if mask is not None:
            assert mask[rows].all()
        hits += len(set(rows.tolist()) & set(_exact(space, q, 10, mask)))
    assert hits / (40 * 10) >= 0.98


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    n=st.integers(1, 120),
    extra=st.integers(0, 30),
    k=st.integers(1, 40),
    shards=st.integers(1, 4),
    density=st.sampled_from([None, 0.0, 0.1, 0.5, 1.0]),
    seed=st.integers(0, 2**32 - 1),
)
def test_small_spaces_give_exactly_the_exact_answer(
    tmp_path_factory: pytest.TempPathFactory,
    n: int,
    extra: int,
    k: int,
    shards: int,
    density: float | None,
    seed: int,
) -> None:
    """Every eligible row is nominated here, so any difference is a bookkeeping bug."""
    rng = np.random.default_rng(seed)
    root = tmp_path_factory.mktemp("space")
    space = _space(root, _random_unit(rng, n, 8))
    scan = QuantisedScan.build(space, shards=shards)
    if extra:  # rows appended after the index was built are merged exactly
        SpaceWriter(root, "content", "m", 8).append(np.arange(n, n + extra), _random_unit(rng, extra, 8))
        space = VectorSpace.open(root, "content")
        assert space is not None
    mask = None if density is None else rng.random(len(space)) < density
    q = _random_unit(rng, 1, 8)[0]
    rows, scores = scan_index.search(space, scan, q, k, mask)
    assert rows.tolist() == _exact(space, q, k, mask)
    np.testing.assert_allclose(scores, space.scores(q)[rows], atol=1e-6)


def test_a_row_appended_after_the_build_is_found(tmp_path: Path) -> None:
    rng = np.random.default_rng(2)
    space = _space(tmp_path, _random_unit(rng, 5_000, 32))
    indexes = ScanIndexes(min_rows=1000)
    built = indexes.build_now("content", space)
    assert built is not None and built.rows == 5_000
    q = _random_unit(rng, 1, 32)[0]
    SpaceWriter(tmp_path, "content", "m", 32).append([99_999], q[None, :])
    grown = VectorSpace.open(tmp_path, "content")
    assert grown is not None
    scan = indexes.usable("content", grown)
    assert scan is built  # a small tail is scored exactly, no rebuild
    rows, scores = scan_index.search(grown, scan, q, 3, None)
    assert int(grown.ids[rows[0]]) == 99_999
    assert scores[0] == pytest.approx(1.0, abs=1e-5)


def _wait_ready(indexes: ScanIndexes, name: str, space: VectorSpace) -> QuantisedScan:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        scan = indexes.usable(name, space)
        if scan is not None:
            return scan
        assert not indexes.status()["failed"], indexes.status()
        time.sleep(0.02)
    raise AssertionError(f"index never became ready: {indexes.status()}")


def test_builds_in_the_background_and_searches_stay_exact_meanwhile(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    space = _space(tmp_path, _random_unit(rng, 3_000, 16))
    assert ScanIndexes(min_rows=3_001).usable("content", space) is None  # below the threshold
    assert ScanIndexes(min_rows=None).usable("content", space) is None  # turned off
    assert ScanIndexes(min_rows=3_000).usable("content", space) is None  # no auto_build: no build
    indexes = ScanIndexes(min_rows=3_000, auto_build=True)
    first = indexes.usable("content", space)  # starts the build, answers now
    scan = _wait_ready(indexes, "content", space)
    assert first is None or first is scan
    assert indexes.status()["ready"] == {"content": 3_000}
    assert indexes.status()["building"] == []


def test_a_space_started_afresh_drops_its_old_index(tmp_path: Path) -> None:
    rng = np.random.default_rng(4)
    space = _space(tmp_path, _random_unit(rng, 2_000, 16))
    indexes = ScanIndexes(min_rows=100, auto_build=True)
    assert indexes.build_now("content", space) is not None
    for child in (tmp_path / "content").iterdir():
        os.remove(child)
    (tmp_path / "content").rmdir()
    fresh = _space(tmp_path, _random_unit(rng, 2_500, 16))
    assert indexes.usable("content", fresh) is None or indexes.status()["ready"]["content"] == 2_500
    scan = _wait_ready(indexes, "content", fresh)
    assert scan.rows == 2_500


def test_a_large_tail_is_not_served_from_the_old_index(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    space = _space(tmp_path, _random_unit(rng, 1_000, 4))
    indexes = ScanIndexes(min_rows=100, auto_build=True)
    indexes.build_now("content", space)
    SpaceWriter(tmp_path, "content", "m", 4).append(
        np.arange(10_000, 10_000 + scan_index.MAX_TAIL_ROWS + 1),
        _random_unit(rng, scan_index.MAX_TAIL_ROWS + 1, 4),
    )
    grown = VectorSpace.open(tmp_path, "content")
    assert grown is not None
    assert indexes.usable("content", grown) is None  # exact until the rebuild is ready
    assert _wait_ready(indexes, "content", grown).rows == len(grown)


def test_selective_masks_and_large_k_go_exact(tmp_path: Path) -> None:
    rng = np.random.default_rng(6)
    space = _space(tmp_path, _random_unit(rng, 10_000, 4))
    few = np.zeros(len(space), dtype=bool)
    few[:50] = True
    assert scan_index.worth_scanning(space, 10, None)
    assert scan_index.worth_scanning(space, 10, rng.random(len(space)) < 0.5)
    assert not scan_index.worth_scanning(space, 10, few)
    assert not scan_index.worth_scanning(space, 100_000, None)


def test_engine_uses_the_index_and_agrees_with_exact_search(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = []
    real_search = scan_index.search

    def counting_search(*args: object, **kwargs: object) -> object:
        calls.append(1)
        return real_search(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(scan_index, "search", counting_search)
    rng = np.random.default_rng(7)
    n, dim = 4_000, 24
    db = tmp_path / "a.db"
    store = Store(db)
    with store.transaction() as conn:
        store.upsert_posts(
            conn,
            [
                Post(
                    i,
                    f"u{i % 7}",
                    f"2024-01-{1 + i % 28:02d} 10:00:00",
                    f"https://x.com/u{i % 7}/status/{i}",
                    f"post number {i}",
                    1,
                )
                for i in range(n)
            ],
        )
    _space(vectors_root(db), _random_unit(rng, n, dim), first_id=0)
    queries = {f"q{i}": _random_unit(rng, 1, dim)[0] for i in range(15)}
    quantised = Engine(
        store, vectors_root(db), embedder=TableEmbedder(queries, name="m"), index_min_rows=1_000
    )
    exact = Engine(
        Store(db), vectors_root(db), embedder=TableEmbedder(queries, name="m"), index_min_rows=None
    )
    space = quantised.require_space("content")
    assert quantised.scans.build_now("content", space) is not None
    hits = total = 0
    for name in queries:
        for excluded in ([], ["u1", "u2"]):
            settings_ = {"top_k": 10, "user_filter": {"excludes": excluded}}
            got = quantised.search_similar(name, parse_settings(settings_))
            want = exact.search_similar(name, parse_settings(settings_))
            assert [r["score"] for r in got] == sorted((r["score"] for r in got), reverse=True)
            hits += len({r["post"]["post_id"] for r in got} & {r["post"]["post_id"] for r in want})
            total += len(want)
            assert not {r["post"]["user"] for r in got} & set(excluded)
    assert hits / total >= 0.98
    assert len(calls) >= 2 * len(queries)  # every search went through the quantised pass
    quantised.close()
    exact.close()


def test_exact_switch_turns_the_first_pass_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCPKIT_ARCHIVE_EXACT", "1")  # the library ignores it: the CLI reads it
    engine = Engine.open(tmp_path / "a.db", exact=True)
    assert engine.status()["vector_index"]["enabled"] is False
    engine.close()
    engine = Engine.open(tmp_path / "a.db")
    assert engine.scans.status() == {
        "enabled": True,
        "min_rows": scan_index.MIN_ROWS,
        "auto_build": False,
        "ready": {},
        "kinds": {},
        "building": [],
        "failed": {},
    }
    engine.close()


def test_warming_an_engine_builds_its_indexes_in_the_background(tmp_path: Path) -> None:
    rng = np.random.default_rng(8)
    db = tmp_path / "a.db"
    space = _space(vectors_root(db), _random_unit(rng, 2_000, 16))
    engine = Engine(
        Store(db),
        vectors_root(db),
        embedder=TableEmbedder({"q": space.matrix[0]}, name="m"),
        index_min_rows=1_000,
    )
    engine.search_similar("q")
    assert engine.status()["vector_index"]["ready"] == {}  # a one-shot use builds nothing
    engine.warm()
    _wait_ready(engine.scans, "content", engine.require_space("content"))
    assert engine.status()["vector_index"]["ready"] == {"content": 2_000}
    engine.close()
