"""Engine unit tests on hand-made vectors: every mode, filter, dedup rule and query form."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from mcpkit.archive import scan_index
from mcpkit.archive.engine import Engine
from mcpkit.archive.errors import ModelMismatchError, SpaceMissingError
from mcpkit.archive.posts import Post
from mcpkit.archive.settings import parse_settings
from mcpkit.archive.store import Store
from mcpkit.archive.vectors import SpaceWriter, vectors_root
from mcpkit.errors import ValidationError

from .helpers import TableEmbedder, ids_of

E0 = [1.0, 0.0, 0.0, 0.0]

# post_id: (user, timestamp, content)
POSTS = {
    1: ("alice", "2024-01-01 10:00:00", "apple pie recipe"),
    2: ("alice", "2024-01-02 10:00:00", "apple tart"),
    3: ("bob", "2024-01-03 10:00:00", "banana bread"),
    5: ("alice", "2024-01-05 10:00:00", "apple pie   recipe @carol https://t.co/x"),  # dup of 1 for alice
    6: ("carol", "2024-02-01 10:00:00", "cherry pie"),
    7: ("", "", "apple juice"),  # unknown user, unparsable time
    8: ("bob", "2024-01-04 10:00:00", "apple pie recipe"),  # same text as 1, other user: not a dup
}
CONTENT = {
    1: [1.0, 0.0, 0.0, 0.0],
    2: [0.9, 0.3, 0.0, 0.0],
    3: [0.0, 1.0, 0.0, 0.0],
    5: [0.95, 0.05, 0.0, 0.0],
    6: [0.2, 0.0, 1.0, 0.0],
    7: [0.8, 0.0, 0.3, 0.0],
    8: [0.7, 0.7, 0.0, 0.0],
}
REASONING = {
    1: [0.1, 1, 0, 0],
    2: [1, 0, 0, 0],
    3: [0.6, 0.4, 0, 0],
    6: [0.3, 0, 0, 1],
    8: [0.5, 0.5, 0.5, 0],
}
SUMMARY = {1: [1, 0.2, 0, 0], 2: [0.2, 1, 0, 0], 3: [0.4, 0, 1, 0], 6: [1, 0, 0, 0.1], 7: [1, 0, 0, 0]}


def _unit(v: list[float]) -> np.ndarray:
    a = np.asarray(v, dtype=np.float32)
    return a / np.linalg.norm(a)


def _fill(
    store: Store, root: Path, spaces: dict[str, dict[int, list[float]]], model: str = "test-table"
) -> None:
    posts = []
    for post_id, (user, timestamp, content) in POSTS.items():
        url = f"https://x.com/{user or 'someone'}/status/{post_id if user else 999}"
        posts.append(Post(post_id, user, timestamp, url, content, 1))
    with store.transaction() as conn:
        store.upsert_posts(conn, posts)
    for name, table in spaces.items():
        writer = SpaceWriter(root, name, model, 4)
        ids = list(table)
        writer.append(ids, np.vstack([_unit(table[i]) for i in ids]))


@pytest.fixture(params=["exact", "quantised"])
def engine(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Engine]:
    """Every engine test runs twice: exact scan, and the quantised first pass forced on."""
    db = tmp_path / "a.db"
    store = Store(db)
    _fill(store, vectors_root(db), {"content": CONTENT, "reasoning": REASONING, "summary": SUMMARY})
    quantised = request.param == "quantised"
    if quantised and not scan_index.available():
        pytest.skip("faiss-cpu is part of the archive extra")
    eng = Engine(
        store,
        vectors_root(db),
        embedder=TableEmbedder({"Q0": E0, "Q1": [0, 1, 0, 0]}),
        index_min_rows=1 if quantised else None,
    )
    if quantised:
        for name in ("content", "reasoning", "summary"):
            assert eng.scans.build_now(name, eng.require_space(name)) is not None
    yield eng
    eng.close()


def search(engine: Engine, query: str = "Q0", mode: str = "content", weights=None, **settings) -> list[int]:
    return ids_of(engine.search_similar(query, parse_settings(settings or None), mode=mode, weights=weights))


def expected(spaces: list[dict[int, list[float]]], combine, query=E0) -> list[int]:
    q = _unit(query)
    common = set.intersection(*(set(s) for s in spaces))
    scores = {pid: combine([float(_unit(s[pid]) @ q) for s in spaces]) for pid in common}
    return sorted(scores, key=lambda pid: -scores[pid])


def test_content_mode_ranks_by_cosine_and_dedups_keeping_the_best(engine: Engine) -> None:
    # 5 strips to the same text as 1 for alice and scores lower: dropped; 8 is bob's: kept.
    assert search(engine, top_k=10) == [1, 2, 7, 8, 6, 3]


def test_dedup_keeps_the_higher_scoring_duplicate(engine: Engine) -> None:
    # against [0.95, 0.05] post 5 beats post 1, so 5 is shown and 1 dropped
    engine._explicit = TableEmbedder({"Q5": [0.95, 0.05, 0, 0]})
    result = search(engine, "Q5", top_k=10)
    assert result.index(5) < len(result) and 1 not in result


def test_scores_are_cosines_and_ranks_consecutive(engine: Engine) -> None:
    results = engine.search_similar("Q0", parse_settings({"top_k": 3}))
    assert [r["rank"] for r in results] == [1, 2, 3]
    assert results[0]["score"] == pytest.approx(1.0)
    assert results[1]["score"] == pytest.approx(float(_unit(CONTENT[2]) @ _unit(E0)))
    assert set(results[0]["post"]) >= {"post_id", "content", "timestamp", "url", "user"}


def test_top_k_is_honoured(engine: Engine) -> None:
    assert search(engine, top_k=2) == [1, 2]


def test_user_includes_excludes_and_includes_win(engine: Engine) -> None:
    assert search(engine, user_filter={"includes": ["bob"]}) == [8, 3]
    assert search(engine, user_filter={"excludes": ["alice"]}) == [7, 8, 6, 3]
    assert search(engine, user_filter={"includes": ["bob"], "excludes": ["bob"]}) == [8, 3]


def test_user_thresholds_are_inclusive_post_counts(engine: Engine) -> None:
    # alice has 3 posts, bob 2, carol 1; the unknown user counts 0
    assert search(engine, user_filter={"threshold_min": 2}) == [1, 2, 8, 3]
    assert search(engine, user_filter={"threshold_min": 2, "threshold_max": 2}) == [8, 3]
    assert search(engine, user_filter={"threshold_max": 1}) == [7, 6]


def test_filtered_search_fills_top_k_from_deep_in_the_ranking(engine: Engine) -> None:
    assert search(engine, top_k=1, user_filter={"includes": ["carol"]}) == [6]


def test_date_filter_bounds_inclusive_and_bare_to_date_covers_the_day(engine: Engine) -> None:
    # 7 has no parsable timestamp and passes every date filter
    assert search(engine, date_filter={"from": "2024-01-02 10:00:00", "to": "2024-01-03 10:00:00"}) == [
        2,
        7,
        3,
    ]
    assert search(engine, date_filter={"to": "2024-01-02"}) == [1, 2, 7]
    assert search(engine, date_filter={"to": "2024-01-01 09:59:59"}) == [7]
    assert search(engine, date_filter={"from": "2024-02-01"}) == [7, 6]


def test_bad_date_is_a_validation_error() -> None:
    with pytest.raises(ValidationError, match=r"date_filter\.from"):
        parse_settings({"date_filter": {"from": "yesterday"}})


@pytest.mark.parametrize(
    ("mode", "spaces", "combine"),
    [
        ("reasoning", ["reasoning"], lambda s: s[0]),
        ("summary", ["summary"], lambda s: s[0]),
        ("average", ["content", "reasoning", "summary"], lambda s: sum(s) / 3),
        ("maximum", ["content", "reasoning", "summary"], max),
        ("minimum", ["content", "reasoning", "summary"], min),
    ],
)
def test_every_mode_matches_a_direct_computation(engine: Engine, mode, spaces, combine) -> None:
    tables = {"content": CONTENT, "reasoning": REASONING, "summary": SUMMARY}
    want = expected([tables[s] for s in spaces], combine)
    got = search(engine, mode=mode, top_k=10)
    assert got == [pid for pid in want if pid != 5 or mode in ("reasoning", "summary")]


def test_hybrid_modes_use_only_posts_present_in_all_three_spaces(engine: Engine) -> None:
    # 5 and 7 lack reasoning vectors, 8 lacks a summary vector
    assert set(search(engine, mode="maximum", top_k=10)) == {1, 2, 3, 6}


def test_average_weights_are_applied(engine: Engine) -> None:
    tables = [CONTENT, REASONING, SUMMARY]
    w = (0.7, 0.2, 0.1)
    want = expected(tables, lambda s: sum(a * b for a, b in zip(w, s, strict=True)))
    assert search(engine, mode="average", weights=w, top_k=10) == want
    only_reasoning = expected(tables, lambda s: s[1])
    assert search(engine, mode="average", weights=(0, 1, 0), top_k=10) == only_reasoning


def test_hybrid_mode_without_a_space_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "b.db"
    store = Store(db)
    _fill(store, vectors_root(db), {"content": CONTENT})
    eng = Engine(store, vectors_root(db), embedder=TableEmbedder({"Q0": E0}))
    with pytest.raises(SpaceMissingError, match="reasoning"):
        eng.search_similar("Q0", mode="average")
    eng.close()


def test_query_text_filter_and_exclusion(engine: Engine) -> None:
    assert search(engine, "Q0|pie") == [1, 8, 6]
    assert search(engine, "Q0|apple -pie") == [2, 7]
    assert search(engine, 'Q0|"PIE RECIPE"') == [1, 8]
    assert search(engine, "Q0|pie -recipe") == [6]


def test_text_only_query_scores_one_newest_first(engine: Engine) -> None:
    results = engine.search_similar("| apple", parse_settings({"top_k": 10}))
    # 1 is alice's duplicate of the newer 5; 7 has no timestamp and sorts last
    assert [r["post"]["post_id"] for r in results] == [5, 8, 2, 7]
    assert {r["score"] for r in results} == {1.0}
    filtered = engine.search_similar("| apple", parse_settings({"user_filter": {"includes": ["alice"]}}))
    assert ids_of(filtered) == [5, 2]


def test_escaped_bar_is_part_of_the_vector_text(engine: Engine) -> None:
    table = engine._explicit
    assert isinstance(table, TableEmbedder)
    search(engine, r"a\|b")
    assert table.queries[-1] == "a|b"


def test_query_from_another_model_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    store = Store(db)
    _fill(store, vectors_root(db), {"content": CONTENT}, model="model-a")
    eng = Engine(store, vectors_root(db), embedder=TableEmbedder({"Q0": E0}, name="model-b"))
    with pytest.raises(ModelMismatchError, match="model-a"):
        eng.search_similar("Q0")
    eng.close()


def test_vector_search_returns_raw_ranking_without_dedup(engine: Engine) -> None:
    pairs = engine.vector_search("Q0")
    assert [p for p, _ in pairs] == [1, 5, 2, 7, 8, 6, 3]
    assert engine.vector_search("Q0", 2) == pairs[:2]


def test_stats_and_user_list(engine: Engine) -> None:
    assert engine.user_stats(2) == [{"user": "alice", "post_count": 3}, {"user": "bob", "post_count": 2}]
    assert engine.user_list() == ["alice", "bob", "carol"]
    stats = engine.database_stats()
    assert stats == {
        "total_posts": 7,
        "total_users": 3,
        "date_range": {"earliest": "2024-01-01 10:00:00", "latest": "2024-02-01 10:00:00"},
        "enrichment": {"total_posts": 7, "enriched": 0, "failed": 0},
    }
    status = engine.status()
    assert status["status"] == "running" and status["server_type"] == "TwilogServer"
    assert status["model"] == "test-table" and status["embeddings_loaded"] == 7


def test_new_posts_and_vectors_are_seen_without_reopening(engine: Engine) -> None:
    assert search(engine, user_filter={"includes": ["dave"]}) == []
    with engine.store.transaction() as conn:
        engine.store.upsert_posts(
            conn, [Post(9, "dave", "2024-03-01 00:00:00", "https://x.com/dave/status/9", "d", 1)]
        )
    SpaceWriter(engine.root, "content", "test-table", 4).append([9], _unit([1, 0, 0, 0.1]).reshape(1, -1))
    assert search(engine, user_filter={"includes": ["dave"]}) == [9]
