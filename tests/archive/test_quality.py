"""Search quality behaviours on a corpus that reproduces them (tests/search_quality/).

The corpus is the evaluation set's topic posts, hub-like short posts and 200 everyday posts,
embedded with the default model. With plain cosine (upstream's ``content`` mode) a short or
boilerplate post is the best hit of unrelated queries; the ``hybrid`` mode must not rank one
first there, and must say that no hit is a good match. Rankings are asserted, never timings.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpkit.archive import ranking
from mcpkit.archive.engine import Engine
from mcpkit.archive.posts import fold
from mcpkit.archive.settings import SearchSettings
from tests.search_quality.corpus import Corpus, build_archive, build_corpus

HUB_QUERIES = ("wedding speech ideas", "フラメンコを習う", "量子コンピュータの仕組み")
"""Unanswerable queries whose best cosine hit is a hub ("ツイートのテスト", "草", "(自動投稿)")."""


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Engine, Corpus]]:
    db, corpus = build_archive(tmp_path_factory.mktemp("quality"), build_corpus(filler=200))
    engine = Engine.open(db, exact=True)
    yield engine, corpus
    engine.close()


def best(engine: Engine, query: str, mode: str) -> dict:  # type: ignore[type-arg]
    return engine.search_similar(query, SearchSettings(top_k=10), mode=mode)[0]


def test_plain_cosine_reproduces_hubs_and_hybrid_does_not_rank_them_first(
    archive: tuple[Engine, Corpus],
) -> None:
    engine, corpus = archive
    for query in HUB_QUERIES:
        assert best(engine, query, "content")["post"]["post_id"] in corpus.hub_ids, query
        assert best(engine, query, ranking.HYBRID)["post"]["post_id"] not in corpus.hub_ids, query


def test_hubs_take_fewer_first_places_over_every_judged_query(archive: tuple[Engine, Corpus]) -> None:
    engine, corpus = archive
    first = {
        mode: sum(best(engine, j.query, mode)["post"]["post_id"] in corpus.hub_ids for j in corpus.queries)
        for mode in ("content", ranking.HYBRID)
    }
    assert first[ranking.HYBRID] * 3 <= first["content"]


def test_unanswerable_queries_say_no_good_match(archive: tuple[Engine, Corpus]) -> None:
    engine, corpus = archive
    for judged in corpus.queries:
        if judged.query_class == "none" and judged.query != "盆栽の剪定のコツ":  # judged near gardening
            assert best(engine, judged.query, ranking.HYBRID)["match"] is False, judged.query


@pytest.mark.parametrize(
    ("query", "topic"),
    [
        ("自家製パンを焼く", "sourdough"),
        ("ルヴァン種", "sourdough"),
        ("CrashLoopBackOff", "k8s_outage"),
        ("growing tomatoes on my balcony", "balcony_garden"),
        ("夜眠れない", "insomnia"),
        ("基本情報技術者", "it_exam"),
    ],
)
def test_answered_queries_find_their_topic_first_and_call_it_a_match(
    archive: tuple[Engine, Corpus], query: str, topic: str
) -> None:
    engine, corpus = archive
    relevant = next(j.relevant for j in corpus.queries if j.topic == topic)
    hit = best(engine, query, ranking.HYBRID)
    assert hit["post"]["post_id"] in relevant
    assert hit["match"] is True


def test_keyword_queries_are_found_by_text_where_cosine_missed(archive: tuple[Engine, Corpus]) -> None:
    engine, corpus = archive
    relevant = next(j.relevant for j in corpus.queries if j.topic == "sourdough")
    assert best(engine, "ルヴァン種", "content")["post"]["post_id"] not in relevant
    hit = best(engine, "ルヴァン種", ranking.HYBRID)
    assert hit["post"]["post_id"] in relevant and hit["text_match"] == 1.0


def test_calibration_is_stored_by_model_name() -> None:
    calibration = ranking.calibration_for("use-multilingual-v3")
    assert calibration is not None and 0 < calibration.similarity < 1 and calibration.accuracy
    assert ranking.calibration_for("some-model-nobody-measured") is None
    rows: list[dict] = [{"post": {"post_id": 1}}]  # type: ignore[type-arg]
    ranking.annotate(rows, [0.9], [0.0], None)
    assert rows[0]["match"] is None  # nothing measured, nothing claimed


# -- the text side and the fusion, on their own ----------------------------------------------


def fts(texts: list[str]) -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute(
        "CREATE VIRTUAL TABLE fts_content USING fts5(body, content='', "
        "tokenize='trigram case_sensitive 1', detail=none)"
    )
    conn.executemany(
        "INSERT INTO fts_content(rowid, body) VALUES (?, ?)", [(i + 1, fold(t)) for i, t in enumerate(texts)]
    )
    return conn


@given(st.text(max_size=40))
def test_query_trigrams_are_substrings_of_one_word(query: str) -> None:
    folded = fold(query)
    for gram in ranking.query_trigrams(query):
        assert len(gram) == 3 and gram in folded
        assert not any(ch.isspace() for ch in gram)


@given(
    st.text(alphabet="あいうえおかきくabcde xyz", min_size=3, max_size=12),
    st.lists(st.text(alphabet="あいうえおかきくabcde xyz", max_size=20), max_size=8),
)
def test_a_post_holding_the_whole_query_covers_all_of_it(query: str, others: list[str]) -> None:
    conn = fts([*others, f"前 {query} 後"])
    hits = ranking.text_hits(conn, "fts_content", query, len(others) + 1)
    assert all(0.0 <= c <= 1.0 + 1e-6 for c in hits.coverage.tolist())
    if ranking.query_trigrams(query):
        whole = hits.coverage_for([len(others) + 1])[0]
        assert whole == pytest.approx(1.0) and hits.coverage[0] == pytest.approx(1.0)


def test_coverage_weighs_rare_trigrams_above_common_ones() -> None:
    texts = ["the cat sat"] * 20 + ["a rare wombat", "the thing"]
    hits = ranking.text_hits(fts(texts), "fts_content", "wombat thing", len(texts))
    share = dict(zip(hits.post_ids.tolist(), hits.coverage.tolist(), strict=True))
    assert share[21] > share[22] > 0  # "wombat" is rarer than "thing"


_WORDS = st.sampled_from(["cat", "wombat", "らーめん", "coffee", "東京タワー", "thing", "sat", "xyz"])


@given(
    query=st.lists(_WORDS, min_size=1, max_size=4).map(" ".join),
    posts=st.lists(st.lists(_WORDS, max_size=5).map(" ".join), min_size=1, max_size=30),
    gate=st.sampled_from([0.0, 0.3, ranking.TEXT_GATE, 0.8]),
    limit=st.integers(1, 6),
    budget=st.sampled_from([0, 10**6]),
    odd_only=st.booleans(),
    span=st.one_of(st.none(), st.tuples(st.integers(0, 31), st.integers(0, 31))),
)
def test_the_gated_best_posts_are_the_full_rankings_head(
    query: str,
    posts: list[str],
    gate: float,
    limit: int,
    budget: int,
    odd_only: bool,
    span: tuple[int, int] | None,
) -> None:
    """However the text side reads the index (every doclist, the rarest trigrams first and
    the others looked up for their posts, or the newest posts holding every trigram when the
    rare side is over the read budget), within the span of ids a filter keeps, its answer is
    the head of the full ranking."""
    low, high = span if span is not None else (0, 10**9)
    conn = fts(posts)
    full = ranking.text_hits(conn, "fts_content", query, len(posts))
    wanted = [
        (int(i), float(c))
        for i, c in zip(full.post_ids, full.coverage, strict=True)
        if c >= gate and (not odd_only or i % 2) and low <= i <= high
    ][:limit]

    def accept(ids: np.ndarray) -> np.ndarray:
        inside = (ids >= low) & (ids <= high)
        return inside & (ids % 2 == 1) if odd_only else inside

    with mock.patch.object(ranking, "READ_BUDGET", budget):
        got = ranking.text_hits(
            conn,
            "fts_content",
            query,
            len(posts),
            gate=gate,
            limit=limit,
            accept=accept,
            doc_freqs=ranking.DocFreqs(),
            generation=1,
            id_range=span,
        )
    assert got.post_ids.tolist() == [i for i, _ in wanted]
    assert got.coverage.tolist() == pytest.approx([c for _, c in wanted], abs=1e-6)
    texts = {i + 1: text for i, text in enumerate(posts)}
    assert got.coverage_of(texts[i] for i, _ in wanted) == pytest.approx([c for _, c in wanted], abs=1e-6)
    assert full.coverage_of(texts.values()) == pytest.approx(full.coverage_for(list(texts)), abs=1e-6)


def test_fusion_puts_rows_first_in_both_rankings_first() -> None:
    fused = ranking.fuse(6, np.array([3, 1, 0]), np.array([3, 0, 5]))
    assert fused[3] == pytest.approx(1.0)
    assert fused[0] > fused[1] and fused[0] > fused[5]
    assert np.isneginf(fused[[2, 4]]).all()


def test_hubness_is_the_mean_cosine_of_the_nearest_posts(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    matrix = rng.normal(size=(60, 8)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    values = ranking.hubness(tmp_path, matrix)
    sims = matrix @ matrix.T
    np.fill_diagonal(sims, -np.inf)  # a post is not its own neighbour
    expected = np.sort(sims, axis=1)[:, -ranking.HUB_NEIGHBOURS :].mean(axis=1)
    assert np.allclose(values, expected, atol=1e-5)
    grown = np.vstack([matrix, matrix[:1]])
    assert np.allclose(
        ranking.hubness(tmp_path, grown)[:60], ranking.hubness(tmp_path / "x", grown)[:60], atol=0.05
    )
