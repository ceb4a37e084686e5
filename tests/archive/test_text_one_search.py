"""One text search (issue 36): the API's search by text, hybrid's text half and the pages'
keystroke search all find their candidates through the store's one component
(:mod:`mcpkit.archive.store._text`), so a term matches the same posts in each of them."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpkit.archive import ranking
from mcpkit.archive.pages.columns import FacetIndex
from mcpkit.archive.pages.text_index import TextSearch
from mcpkit.archive.posts import Post
from mcpkit.archive.query import TextFilter
from mcpkit.archive.store import Store, _text, long_term_ids, short_term_ids

# CJK terms of one or two characters have no trigram of their own; İ and Σ fold unevenly
ALPHABET = "abAB猫東京ねこİΣσ"
TEXT = st.lists(st.sampled_from(ALPHABET + " "), max_size=10).map("".join)
TERM = st.lists(st.sampled_from(ALPHABET), min_size=1, max_size=4).map("".join)
POSTS = st.lists(TEXT, min_size=1, max_size=25)
ANY = 1_000_000


@contextmanager
def _archive(texts: list[str]) -> Iterator[Store]:
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "t.db")
        try:
            with store.transaction() as conn:
                store.upsert_posts(
                    conn,
                    [
                        Post(
                            i + 1,
                            "u",
                            f"2024-01-{1 + i % 28:02d} 00:00:00",
                            f"https://x.com/u/status/{i + 1}",
                            t,
                            1,
                        )
                        for i, t in enumerate(texts)
                    ],
                )
            yield store
        finally:
            store.close()


def _component(store: Store, term: str) -> set[int]:
    """The one component's candidates for a folded term (the tails add what ends with a short one)."""
    conn = store.reader
    found = long_term_ids(conn, [term], ANY) if len(term) >= 3 else short_term_ids(conn, term, ANY)
    assert found is not None
    return {int(i) for i in found}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(POSTS, TERM)
def test_the_api_and_the_keystroke_search_find_the_same_posts_through_one_component(
    texts: list[str], term: str
) -> None:
    text_filter = TextFilter((term,))
    folded = text_filter.folded_includes[0]
    with _archive(texts) as store:
        truth = {i + 1 for i, t in enumerate(texts) if text_filter.matches(t)}
        api = {post["post_id"] for post in store.text_search(text_filter, ANY)}
        index = FacetIndex(store)
        search = TextSearch(store, index)
        cols = index.columns()
        tails = search.tails(cols, wait=True)
        assert tails is not None
        found = search.matches(cols, text_filter)
        assert found.candidates is not None and found.exact
        candidates = {int(cols.ids[r]) for r in found.candidates}
        keystrokes = {int(cols.ids[r]) for r in found.matched(found.candidates)}
        component = _component(store, folded)
        if len(folded) < 3:
            component |= {int(cols.ids[r]) for r in tails.rows_ending(folded)}
        assert api == keystrokes == truth
        assert truth <= candidates <= component


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(POSTS, st.lists(TERM, min_size=1, max_size=3).map(" ".join))
def test_hybrid_text_half_reads_the_candidates_the_component_finds(texts: list[str], query: str) -> None:
    with _archive(texts) as store:
        conn = store.reader
        hits = ranking.text_hits(conn, "fts_content", query, len(texts))
        grams = ranking.query_trigrams(query)
        some = set().union(*(_component(store, gram) for gram in grams)) if grams else set()
        assert {int(i) for i in hits.post_ids} == some
        if grams:  # a post holding every trigram of the query covers it whole
            every = long_term_ids(conn, grams, ANY)
            assert every is not None
            whole = {int(i) for i, c in zip(hits.post_ids, hits.coverage, strict=True) if c > 1 - 1e-4}
            assert whole == {int(i) for i in every}


def test_the_api_and_the_keystroke_search_go_through_the_component(monkeypatch: pytest.MonkeyPatch) -> None:
    quoted: list[str] = []
    real = _text.phrase

    def counted(gram: str) -> str:
        quoted.append(gram)
        return real(gram)

    monkeypatch.setattr(_text, "phrase", counted)
    with _archive(["a cat on 東京 roofs", "the 猫 sleeps", "no match"]) as store:
        assert [post["post_id"] for post in store.text_search(TextFilter(("roof",)), 10)] == [1]
        assert quoted == ["roo", "oof"]
        quoted.clear()
        index = FacetIndex(store)
        search = TextSearch(store, index)
        cols = index.columns()
        search.tails(cols, wait=True)
        search.matches(cols, TextFilter(("猫", "sleeps")))
        assert set(quoted) >= {"sle", "lee", "eep", "eps"} and any(gram.startswith("猫") for gram in quoted)
