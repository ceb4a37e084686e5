"""The vector index of large spaces (inverted file, exact re-score) and the hub scores beside it.

On small clustered data, built the way the archive builds it: recall@10 against brute force,
filtered answers equal to the exact filtered answers, a post appended after the build found at
once, queries answered (exactly) while the index is still being built, and vectors with no
structure for an inverted file falling back to the flat scan. Hybrid's hub scores: never measured
whole in a query's path, stored beside the vectors by the background fill, read back by the next
process.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import numpy as np
import pytest

from mcpkit.archive import hubs, ranking, scan_index, vector_index
from mcpkit.archive.embedders import normalize_rows
from mcpkit.archive.engine import Engine
from mcpkit.archive.posts import Post
from mcpkit.archive.scan_index import QuantisedScan, ScanIndexes
from mcpkit.archive.settings import parse_settings
from mcpkit.archive.store import Store
from mcpkit.archive.vector_index import IvfIndex
from mcpkit.archive.vectors import SpaceWriter, VectorSpace, top_k, vectors_root

from .helpers import TableEmbedder

pytestmark = pytest.mark.skipif(not vector_index.available(), reason="faiss-cpu is part of the archive extra")

DIM = 48


def _clustered(rng: np.random.Generator, n: int, centres: np.ndarray) -> np.ndarray:
    """Posts around topics, as real embeddings are (a random matrix has no lists to find)."""
    picked = centres[rng.integers(0, len(centres), n)]
    return normalize_rows(picked + rng.standard_normal((n, DIM), dtype=np.float32) * 0.08)


def _space(root: Path, matrix: np.ndarray, first_id: int = 1) -> VectorSpace:
    SpaceWriter(root, "content", "m", matrix.shape[1]).append(
        np.arange(first_id, first_id + len(matrix)), matrix
    )
    space = VectorSpace.open(root, "content")
    assert space is not None
    return space


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> tuple[VectorSpace, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(21)
    centres = normalize_rows(rng.standard_normal((300, DIM), dtype=np.float32))
    space = _space(tmp_path_factory.mktemp("ivf"), _clustered(rng, 40_000, centres))
    queries = _clustered(rng, 40, centres)
    return space, queries, centres


@pytest.fixture(scope="module")
def ivf(data: tuple[VectorSpace, np.ndarray, np.ndarray]) -> IvfIndex:
    index = scan_index.build_index(data[0])
    assert isinstance(index, IvfIndex), "clustered vectors get the inverted file"
    return index


def _exact(space: VectorSpace, q: np.ndarray, k: int, mask: np.ndarray | None) -> list[int]:
    return top_k(space.scores(q), k, mask).tolist()


def test_recall_at_10_against_brute_force_and_scores_are_exact(
    data: tuple[VectorSpace, np.ndarray, np.ndarray], ivf: IvfIndex
) -> None:
    space, queries, _ = data
    assert ivf.nprobe < ivf.nlist and ivf.recall is not None and ivf.recall >= vector_index.TARGET_RECALL
    hits = 0
    for q in queries:
        rows, scores = ivf.search(space, q, 10, None)
        hits += len(set(rows.tolist()) & set(_exact(space, q, 10, None)))
        np.testing.assert_allclose(scores, space.scores(q)[rows], atol=1e-6)
        assert scores.tolist() == sorted(scores.tolist(), reverse=True)
    assert hits / (10 * len(queries)) >= 0.99


@pytest.mark.parametrize("share", [0.002, 0.05, 0.5])
def test_filtered_answers_equal_the_exact_filtered_answers(
    data: tuple[VectorSpace, np.ndarray, np.ndarray], ivf: IvfIndex, share: float
) -> None:
    """Applied inside the index (never a cut of an unfiltered top-k), with more lists probed the
    fewer rows the mask keeps, or, for a mask small enough, by the 8-bit codes of every row it
    keeps: no row outside the mask, and the exact answer. (The engine
    answers masks of at most EXACT_ROWS rows from their float32 rows instead.)"""
    space, queries, _ = data
    rng = np.random.default_rng(int(share * 1000))
    for q in queries[:20]:
        mask = rng.random(len(space)) < share
        # a mask this small sends its rows' 8-bit codes straight to the second pass
        assert ivf.codes_first(ivf.nprobe, int(mask.sum())) == (share == 0.002)
        rows, _ = ivf.search(space, q, 10, mask)
        assert mask[rows].all()
        assert rows.tolist() == _exact(space, q, 10, mask)
    few = np.zeros(len(space), dtype=bool)
    few[: vector_index.EXACT_ROWS] = True
    assert not scan_index.worth_scanning(space, 10, few, ivf)
    few[vector_index.EXACT_ROWS] = True
    assert scan_index.worth_scanning(space, 10, few, ivf)


def test_a_post_appended_after_the_build_is_found_at_once(tmp_path: Path) -> None:
    rng = np.random.default_rng(22)
    centres = normalize_rows(rng.standard_normal((50, DIM), dtype=np.float32))
    space = _space(tmp_path, _clustered(rng, 6_000, centres))
    indexes = ScanIndexes(min_rows=1_000)
    built = indexes.build_now("content", space)
    assert isinstance(built, IvfIndex)
    newcomer = normalize_rows(rng.standard_normal((1, DIM), dtype=np.float32))
    SpaceWriter(tmp_path, "content", "m", DIM).append([99_999], newcomer)
    grown = VectorSpace.open(tmp_path, "content")
    assert grown is not None
    assert indexes.usable("content", grown) is built  # a small tail: no rebuild
    rows, scores = built.search(grown, newcomer[0], 3, None)
    assert int(grown.ids[rows[0]]) == 99_999 and scores[0] == pytest.approx(1.0, abs=1e-5)
    mask = np.ones(len(grown), dtype=bool)
    mask[-1] = False  # filtered out, the newcomer is not answered
    rows, _ = built.search(grown, newcomer[0], 3, mask)
    assert 99_999 not in grown.ids[rows].tolist()


def _archive(tmp_path: Path, rng: np.random.Generator, n: int) -> tuple[Path, Store, VectorSpace, np.ndarray]:
    """An archive of ``n`` posts with clustered vectors around 40 topics: its path, store,
    vector space and topic centres."""
    centres = normalize_rows(rng.standard_normal((40, DIM), dtype=np.float32))
    db = tmp_path / "a.db"
    store = Store(db)
    _posts(store, range(1, n + 1))
    return db, store, _space(vectors_root(db), _clustered(rng, n, centres)), centres


def _posts(store: Store, ids: range, text: str = "post {i}") -> None:
    with store.transaction() as conn:
        store.upsert_posts(
            conn,
            [
                Post(
                    i, f"u{i % 5}", "2024-01-02 10:00:00", f"https://x.com/u/status/{i}", text.format(i=i), 1
                )
                for i in ids
            ],
        )


@pytest.mark.parametrize(
    ("module", "stage"),
    [(scan_index, "build_index"), (vector_index, "calibrate")],
    ids=["before-the-build", "inverted-file-built-calibrating"],
)
def test_queries_are_answered_exactly_while_the_index_builds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, module: object, stage: str
) -> None:
    """The build is held at a stage (before it starts, or with its inverted file built and its
    probes being calibrated): vector, filtered and hybrid searches are answered meanwhile,
    exactly, so the build holds no lock a query waits on."""
    rng = np.random.default_rng(23)
    n = 3_000
    db, store, space, centres = _archive(tmp_path, rng, n)
    queries = {f"q{i}": _clustered(rng, 1, centres)[0] for i in range(5)}
    release, started = threading.Event(), threading.Event()
    real_stage = getattr(module, stage)

    def held(*args: object) -> object:
        started.set()
        release.wait()
        return real_stage(*args)

    monkeypatch.setattr(module, stage, held)
    engine = Engine(store, vectors_root(db), embedder=TableEmbedder(queries, name="m"), index_min_rows=1_000)
    engine.warm()  # starts the build in its own thread; returns while it is held
    assert started.wait(30)
    assert engine.status()["vector_index"]["building"] == ["content"]
    by_u1 = np.asarray([int(i) % 5 == 1 for i in space.ids])
    for name, q in queries.items():
        found = engine.search_similar(name, parse_settings({"top_k": 10}))
        assert [r["post"]["post_id"] for r in found] == [
            int(space.ids[r]) for r in _exact(space, q, 10, None)
        ]
        found = engine.search_similar(
            name, parse_settings({"top_k": 10, "user_filter": {"includes": ["u1"]}})
        )
        assert [r["post"]["post_id"] for r in found] == [
            int(space.ids[r]) for r in _exact(space, q, 10, by_u1)
        ]
        assert len(engine.search_similar(name, parse_settings({"top_k": 10}), mode=ranking.HYBRID)) == 10
    assert not release.is_set() and engine.status()["vector_index"]["building"] == ["content"]
    release.set()
    for _ in range(3000):
        if engine.status()["vector_index"]["ready"]:
            break
        threading.Event().wait(0.01)
    assert engine.status()["vector_index"]["ready"] == {"content": n}
    assert engine.status()["vector_index"]["kinds"]["content"].startswith("inverted file")
    engine.close()


def test_vectors_without_structure_get_the_flat_scan(tmp_path: Path) -> None:
    """Random high-dimensional vectors: no inverted file reaches the recall, the flat scan
    (which compares every row) is built instead."""
    rng = np.random.default_rng(24)
    space = _space(tmp_path, normalize_rows(rng.standard_normal((20_000, 128), dtype=np.float32)))
    assert isinstance(scan_index.build_index(space), QuantisedScan)


# -- hub scores ----------------------------------------------------------------------------------


def _hybrid_archive(tmp_path: Path, n: int = 2_500) -> tuple[Path, dict[str, np.ndarray], np.ndarray]:
    rng = np.random.default_rng(25)
    centres = normalize_rows(rng.standard_normal((30, DIM), dtype=np.float32))
    db = tmp_path / "h.db"
    store = Store(db)
    with store.transaction() as conn:
        store.upsert_posts(
            conn,
            [
                Post(
                    i, f"u{i % 3}", "2024-03-01 10:00:00", f"https://x.com/u/status/{i}", f"walk {i} park", 1
                )
                for i in range(1, n + 1)
            ],
        )
    store.close()
    matrix = _clustered(rng, n, centres)
    _space(vectors_root(db), matrix)
    return db, {"walk in the park": _clustered(rng, 1, centres)[0]}, matrix


def test_a_first_hybrid_search_measures_only_the_rows_it_ranks(tmp_path: Path) -> None:
    db, queries, matrix = _hybrid_archive(tmp_path)
    engine = Engine(
        Store(db), vectors_root(db), embedder=TableEmbedder(queries, name="m"), index_min_rows=None
    )
    found = engine.search_similar("walk in the park", parse_settings({"top_k": 5}), mode="hybrid")
    assert len(found) == 5
    space = engine.require_space("content")
    scores = engine.hub_scores(space)
    assert scores.complete_rows == 0 and scores.measured_in_fill == 0  # no pass over every post
    # the rows the vector side ranks, and the hits the verdict judges (a text hit may lie
    # outside the vector pool): never a pass over every post
    ranked_and_judged = ranking.POOL * ranking.OVERFETCH + len(found)
    assert 0 < scores.measured_on_demand <= ranked_and_judged < len(space)
    expected = ranking.hubness(tmp_path / "reference", matrix)
    rows = np.arange(0, len(space), 7)
    np.testing.assert_allclose(scores.for_rows(space, rows), expected[rows], atol=1e-5)
    engine.close()


def test_the_background_fill_stores_the_scores_for_the_next_process(tmp_path: Path) -> None:
    db, queries, matrix = _hybrid_archive(tmp_path)
    engine = Engine(
        Store(db), vectors_root(db), embedder=TableEmbedder(queries, name="m"), index_min_rows=None
    )
    engine.warm()
    space = engine.require_space("content")
    assert engine.hub_scores(space).complete_rows == len(space)
    engine.close()
    assert (space.directory / hubs.VALUES).stat().st_size == 4 * len(space)

    again = Engine(
        Store(db), vectors_root(db), embedder=TableEmbedder(queries, name="m"), index_min_rows=None
    )
    again.search_similar("walk in the park", parse_settings({"top_k": 5}), mode="hybrid")
    stored = again.hub_scores(again.require_space("content"))
    assert stored.measured_on_demand == 0 and stored.measured_in_fill == 0  # read, not measured
    np.testing.assert_allclose(
        stored.for_rows(space, np.arange(len(space))), ranking.hubness(tmp_path / "r", matrix), atol=1e-5
    )
    again.close()


def test_stored_scores_of_other_vectors_are_measured_again(tmp_path: Path) -> None:
    db, _, matrix = _hybrid_archive(tmp_path, n=1_500)
    space = VectorSpace.open(vectors_root(db), "content")
    assert space is not None
    hubs.HubScores(space.directory).fill(space)
    rebuilt_ids = np.arange(10_001, 10_001 + len(matrix))  # the same directory, other posts
    (space.directory / "meta.json").unlink()
    (space.directory / "ids.i64").unlink()
    (space.directory / "vectors.f32").unlink()
    SpaceWriter(vectors_root(db), "content", "m", DIM).append(rebuilt_ids, matrix[::-1])
    rebuilt = VectorSpace.open(vectors_root(db), "content")
    assert rebuilt is not None
    fresh = hubs.HubScores(rebuilt.directory)
    fresh.for_rows(rebuilt, np.arange(10))
    assert fresh.measured_on_demand == 10  # not read from the stale file
    fresh.fill(rebuilt)
    np.testing.assert_allclose(
        fresh.for_rows(rebuilt, np.arange(len(rebuilt))),
        ranking.hubness(tmp_path / "r", matrix[::-1]),
        atol=1e-5,
    )


def test_posts_appended_after_the_build_are_found_at_once_by_every_mode(tmp_path: Path) -> None:
    """Through the engine, as ``import`` then ``embed`` add them: a post appended after the
    index was built is the best hit of its own vector at once (scored exactly beside the
    index), under a filter that keeps it, and hybrid finds it by a word no older post has,
    although hybrid asked the index about that word before the post existed (the text side
    keeps document counts per store generation)."""
    rng = np.random.default_rng(24)
    centres = normalize_rows(rng.standard_normal((40, DIM), dtype=np.float32))
    db = tmp_path / "a.db"
    store = Store(db)
    n = 3_000
    _posts(store, range(1, n + 1))
    _space(vectors_root(db), _clustered(rng, n, centres))
    newcomer = normalize_rows(rng.standard_normal((1, DIM), dtype=np.float32))[0]
    far = -newcomer
    table = {"newcomer": newcomer, "quokkafest": far}
    engine = Engine(store, vectors_root(db), embedder=TableEmbedder(table, name="m"), index_min_rows=1_000)
    built = engine.scans.build_now("content", engine.require_space("content"))
    assert isinstance(built, IvfIndex)
    before = engine.search_similar("quokkafest", parse_settings({"top_k": 5}), mode=ranking.HYBRID)
    assert all(r["text_match"] == 0.0 for r in before)  # no post has the word yet
    new_id = n + 1
    _posts(store, range(new_id, new_id + 1), "the quokkafest is on")
    SpaceWriter(vectors_root(db), "content", "m", DIM).append([new_id], newcomer[None, :])
    assert engine.scans.usable("content", engine.require_space("content")) is built  # no rebuild
    for settings in ({"top_k": 5}, {"top_k": 5, "user_filter": {"includes": [f"u{new_id % 5}"]}}):
        found = engine.search_similar("newcomer", parse_settings(settings))
        assert found[0]["post"]["post_id"] == new_id and found[0]["score"] == pytest.approx(1.0, abs=1e-5)
    found = engine.search_similar("quokkafest", parse_settings({"top_k": 5}), mode=ranking.HYBRID)
    coverage = {r["post"]["post_id"]: r["text_match"] for r in found}
    assert coverage[new_id] == pytest.approx(1.0)  # its vector is the query's opposite: text found it
    engine.close()


def test_a_search_runs_on_one_thread_until_it_scans_enough_rows_for_more(
    data: tuple[VectorSpace, np.ndarray, np.ndarray], ivf: IvfIndex
) -> None:
    """On busy cores the answer waits for its slowest slice, so a search takes more threads
    only per :data:`vector_index.ROWS_PER_THREAD` rows it scans; on idle cores per
    :data:`vector_index.ROWS_PER_IDLE_THREAD`; never more than the cores this process may use."""
    per = vector_index.ROWS_PER_THREAD
    assert vector_index.search_threads(0, cores=16, idle=0) == 1
    assert vector_index.search_threads(per - 1, cores=16, idle=0) == 1
    assert vector_index.search_threads(3 * per, cores=16, idle=0) == 3
    assert vector_index.search_threads(100 * per, cores=16, idle=0) == 16
    assert vector_index.search_threads(100 * per, cores=2, idle=0) == 2
    counts = [vector_index.search_threads(rows, cores=8, idle=0) for rows in range(0, 10 * per, per // 3)]
    assert counts == sorted(counts)
    # Idle cores: a thread per ROWS_PER_IDLE_THREAD rows, never more than are idle.
    idle_per = vector_index.ROWS_PER_IDLE_THREAD
    assert vector_index.search_threads(4 * idle_per, cores=16, idle=16) == 4
    assert vector_index.search_threads(4 * idle_per, cores=16, idle=2) == 2
    assert vector_index.search_threads(4 * idle_per, cores=16, idle=1) == 1
    assert vector_index.search_threads(idle_per - 1, cores=16, idle=16) == 1
    assert vector_index.search_threads(100 * per, cores=4, idle=16) == 4
    assert 0 <= vector_index.idle_cores(4) <= 4
    assert ivf.threads(ivf.nprobe) >= 1
    space, queries, _ = data
    rows, _ = ivf.search(space, queries[0], 10, None)  # searched on the thread count it chose
    assert len(rows) == 10


def test_a_built_index_is_saved_and_the_next_process_reloads_it_while_it_fits(tmp_path: Path) -> None:
    """At ten million rows a build took 10-14 minutes on 2 cores: a restart must not pay it
    again. The saved index is used only for the rows it was built on (a space compacted or
    rebuilt, or grown past the exact tail, builds anew)."""
    rng = np.random.default_rng(23)
    centres = normalize_rows(rng.standard_normal((50, DIM), dtype=np.float32))
    matrix = _clustered(rng, 6_000, centres)
    space = _space(tmp_path / "a", matrix)
    built = scan_index.build_index(space)
    assert isinstance(built, IvfIndex)
    assert (space.directory / vector_index.SAVED).is_file()

    reopened = VectorSpace.open(tmp_path / "a", "content")
    assert reopened is not None
    loaded = IvfIndex.load(reopened)
    assert loaded is not None
    assert (loaded.rows, loaded.nprobe, loaded.recall) == (built.rows, built.nprobe, built.recall)
    for q in _clustered(rng, 5, centres):
        assert (
            loaded.search(reopened, q, 10, None)[0].tolist() == built.search(space, q, 10, None)[0].tolist()
        )
    meta = (space.directory / vector_index.SAVED_META).stat().st_mtime_ns
    assert isinstance(scan_index.build_index(reopened), IvfIndex)
    assert (space.directory / vector_index.SAVED_META).stat().st_mtime_ns == meta, "reloaded, not rebuilt"

    # The same vectors under other ids (a space rebuilt from scratch): not the saved index's rows.
    (space.directory / vector_index.SAVED).rename(tmp_path / "saved.ivf")
    (space.directory / vector_index.SAVED_META).rename(tmp_path / "saved.json")
    other = _space(tmp_path / "b", matrix, first_id=500_000)
    (tmp_path / "saved.ivf").rename(other.directory / vector_index.SAVED)
    (tmp_path / "saved.json").rename(other.directory / vector_index.SAVED_META)
    assert IvfIndex.load(other) is None

    # Grown past the exact tail: the saved index is too far behind.
    extra = _clustered(rng, vector_index.MAX_TAIL_ROWS + 1, centres)
    SpaceWriter(tmp_path / "a", "content", "m", DIM).append(np.arange(10_000, 10_000 + len(extra)), extra)
    grown = VectorSpace.open(tmp_path / "a", "content")
    assert grown is not None
    assert IvfIndex.load(grown) is None


def test_a_damaged_saved_index_is_rebuilt_not_trusted(tmp_path: Path) -> None:
    rng = np.random.default_rng(24)
    centres = normalize_rows(rng.standard_normal((50, DIM), dtype=np.float32))
    space = _space(tmp_path, _clustered(rng, 6_000, centres))
    assert isinstance(scan_index.build_index(space), IvfIndex)
    (space.directory / vector_index.SAVED).write_bytes(b"not an index")
    assert IvfIndex.load(space) is None
    (space.directory / vector_index.SAVED_META).write_text("{", encoding="utf-8")
    assert IvfIndex.load(space) is None
    assert isinstance(scan_index.build_index(space), IvfIndex)
    assert IvfIndex.load(space) is not None, "the rebuild saved a whole index again"


def test_an_index_that_cannot_be_saved_still_serves_and_leaves_no_scratch_files(tmp_path: Path) -> None:
    rng = np.random.default_rng(25)
    centres = normalize_rows(rng.standard_normal((50, DIM), dtype=np.float32))
    space = _space(tmp_path, _clustered(rng, 6_000, centres))
    (space.directory / vector_index.SAVED).mkdir()  # the rename onto it fails, as on a full disk
    built = scan_index.build_index(space)
    assert isinstance(built, IvfIndex)
    assert len(built.search(space, centres[0], 10, None)[0]) == 10
    assert not [p.name for p in space.directory.iterdir() if p.name.startswith(".")]
    assert IvfIndex.load(space) is None


def test_every_row_is_coded_once_in_the_list_of_its_nearest_centroid(
    data: tuple[VectorSpace, np.ndarray, np.ndarray], ivf: IvfIndex
) -> None:
    """The build assigns every row itself (numpy's product, not faiss's) and hands faiss the
    assignment. Each row must be in exactly one list, one of its nearest centroid (faiss's own
    assignment, or one scoring it the same up to rounding), and the second pass's 8-bit scores
    must be the exact ones less a term all rows share, within one 8-bit step."""
    faiss = vector_index._faiss()
    space = data[0]
    built = ivf._index
    rows = np.asarray(space.matrix[: ivf.rows])
    lists, size_of = built.invlists, built.invlists.list_size
    assigned = np.full(ivf.rows, -1, dtype=np.int64)
    seen = 0
    for number in range(built.nlist):
        size = size_of(number)
        if size:
            assigned[faiss.rev_swig_ptr(lists.get_ids(number), size)] = number
            seen += size
    assert seen == ivf.rows and (assigned >= 0).all()
    centroids = built.quantizer.reconstruct_n(0, built.nlist)
    theirs = built.quantizer.assign(rows, 1)[:, 0]
    scores = rows @ centroids.T
    at = np.arange(ivf.rows)
    assert np.all(scores[at, assigned] >= scores[at, theirs] - 1e-5)
    for q in data[1][:5]:
        approx = ivf._codes[: ivf.rows].astype(np.float64) @ (q * ivf._widths) / 255
        shared = rows @ q - approx
        step = float(np.abs(q) @ ivf._widths) / 255
        assert float(np.ptp(shared)) <= step + 1e-5
    everything = ivf.shortlist(data[1][0], np.arange(ivf.rows), ivf.rows)
    assert sorted(everything.tolist()) == list(range(ivf.rows))


@pytest.mark.parametrize("share", [None, 0.5])
def test_a_search_split_into_slices_answers_as_one_scan_does(
    data: tuple[VectorSpace, np.ndarray, np.ndarray],
    ivf: IvfIndex,
    share: float | None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Many probed lists are scanned in slices side by side and their nominees merged: the
    answer is the exact one (filtered or not), as from one scan, with no row outside the mask."""
    space, queries, _ = data
    rng = np.random.default_rng(26)
    monkeypatch.setattr(vector_index, "search_threads", lambda rows, cores=None, idle=None: 3)
    assert ivf.threads(ivf.nprobe) == 3
    for q in queries[:20]:
        mask = None if share is None else rng.random(len(space)) < share
        rows, scores = ivf.search(space, q, 10, mask)
        assert rows.tolist() == _exact(space, q, 10, mask)
        np.testing.assert_allclose(scores, space.scores(q)[rows], atol=1e-6)
        if mask is not None:
            assert mask[rows].all()


def test_an_index_saved_in_an_earlier_format_is_built_again(tmp_path: Path) -> None:
    """The 8-bit inverted file of earlier versions left ``index.ivf`` and an ``index.json``
    without a format: a start must not take it for this version's index."""
    rng = np.random.default_rng(27)
    centres = normalize_rows(rng.standard_normal((50, DIM), dtype=np.float32))
    space = _space(tmp_path, _clustered(rng, 6_000, centres))
    assert isinstance(scan_index.build_index(space), IvfIndex)
    meta_path = space.directory / vector_index.SAVED_META
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    del meta["format"]
    meta_path.write_text(json.dumps(meta), encoding="utf-8")
    assert IvfIndex.load(space) is None
    rebuilt = scan_index.build_index(space)
    assert isinstance(rebuilt, IvfIndex)
    assert IvfIndex.load(space) is not None
    (space.directory / vector_index.SAVED_CODES).write_bytes(b"\0" * 10)  # cut short
    assert IvfIndex.load(space) is None


def test_a_new_process_answers_its_first_searches_from_the_saved_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At ten million rows an exact first answer took 9-11 s: a process that finds an index
    saved beside the vectors loads it in the path of its first search (once, however many
    searches arrive together) and answers from it, even a one-shot command that never builds;
    a space without a saved index is not looked at again on every search."""
    rng = np.random.default_rng(27)
    n = 6_000
    db, store, space, centres = _archive(tmp_path, rng, n)
    built = scan_index.build_index(space)
    assert isinstance(built, IvfIndex)
    queries = {f"q{i}": _clustered(rng, 1, centres)[0] for i in range(8)}
    want = {
        name: [int(space.ids[r]) for r in built.search(space, q, 10, None)[0]] for name, q in queries.items()
    }

    loads: list[int] = []
    real_load = IvfIndex.load

    def counted(space: VectorSpace) -> IvfIndex | None:
        loads.append(1)
        return real_load(space)

    monkeypatch.setattr(IvfIndex, "load", staticmethod(counted))
    engine = Engine(
        Store(db), vectors_root(db), embedder=TableEmbedder(queries, name="m"), index_min_rows=1_000
    )
    assert engine.status()["vector_index"]["ready"] == {}
    answers: dict[str, list[int]] = {}

    def ask(name: str) -> None:
        answers[name] = [
            r["post"]["post_id"] for r in engine.search_similar(name, parse_settings({"top_k": 10}))
        ]

    threads = [threading.Thread(target=ask, args=(name,)) for name in queries]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert answers == want
    assert len(loads) == 1
    status = engine.status()["vector_index"]
    assert status["ready"] == {"content": n} and status["kinds"]["content"].startswith("inverted file")
    assert status["building"] == [], "a one-shot process loads, it never builds"
    engine.close()

    # no saved index: one look, then exact searches without looking again
    for saved in (vector_index.SAVED, vector_index.SAVED_CODES, vector_index.SAVED_META):
        (space.directory / saved).unlink()
    loads.clear()
    engine = Engine(
        Store(db), vectors_root(db), embedder=TableEmbedder(queries, name="m"), index_min_rows=1_000
    )
    for name, q in queries.items():
        found = [r["post"]["post_id"] for r in engine.search_similar(name, parse_settings({"top_k": 10}))]
        assert found == [int(space.ids[r]) for r in _exact(space, q, 10, None)]
    assert len(loads) == 1 and engine.status()["vector_index"]["ready"] == {}
    engine.close()
    store.close()


def test_an_index_keeps_answering_while_another_process_saves_a_new_one(tmp_path: Path) -> None:
    """The 8-bit codes are served from the saved file (mapped): a rebuild elsewhere replaces
    the file, and the index in service must go on answering as before (the old file stays
    whole under it), while the next process loads the new one."""
    rng = np.random.default_rng(28)
    centres = normalize_rows(rng.standard_normal((50, DIM), dtype=np.float32))
    space = _space(tmp_path, _clustered(rng, 6_000, centres))
    serving = scan_index.build_index(space)
    loaded = IvfIndex.load(space)
    assert isinstance(serving, IvfIndex) and loaded is not None
    queries = _clustered(rng, 6, centres)
    before = [serving.search(space, q, 10, None) for q in queries]
    assert [loaded.search(space, q, 10, None)[0].tolist() for q in queries] == [b[0].tolist() for b in before]
    codes = space.directory / vector_index.SAVED_CODES
    inode = codes.stat().st_ino
    assert isinstance(scan_index.build_index(space, reuse=False), IvfIndex)
    assert codes.stat().st_ino != inode, "the rebuild saved a new file"
    for index in (serving, loaded):
        for q, (rows, scores) in zip(queries, before, strict=True):
            found_rows, found_scores = index.search(space, q, 10, None)
            assert found_rows.tolist() == rows.tolist()
            np.testing.assert_allclose(found_scores, scores)
