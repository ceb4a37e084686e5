"""search_posts_by_text: FTS5 trigram answers are exactly those of a naive substring scan."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpkit.archive.posts import Post
from mcpkit.archive.query import parse_terms, quote_term
from mcpkit.archive.store import Store
from mcpkit.archive.store import _queries as store_module

from .helpers import ids_of
from .naive import naive_text_search

ALPHABET = [*list("abAB ä日本語İıßẞ\"'*-%_\n"), "OR", "NEAR"]
TEXT = st.lists(st.sampled_from(ALPHABET), max_size=12).map("".join)
TERM = st.lists(st.sampled_from(ALPHABET), min_size=1, max_size=5).map("".join)
POSTS = st.lists(
    st.tuples(
        TEXT, st.sampled_from(["2024-01-01 00:00:00", "2024-01-02 00:00:00", "", "2023-12-31 23:59:59"]), TEXT
    ),
    max_size=30,
)


def _store(tmp: str, posts: list[tuple[str, str, str]]) -> Store:
    store = Store(Path(tmp) / "t.db")
    with store.transaction() as conn:
        store.upsert_posts(
            conn,
            [
                Post(i + 1, "u", ts, f"https://x.com/u/status/{i + 1}", text, 1)
                for i, (text, ts, _) in enumerate(posts)
            ],
        )
        store.upsert_enrichments(
            conn, [(i + 1, extra, extra.upper(), None) for i, (_, _, extra) in enumerate(posts)]
        )
    return store


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(POSTS, TERM, st.integers(1, 40), st.sampled_from(["content", "reasoning", "summary"]))
def test_fts_equals_naive_scan(posts, term, limit, source) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        store = _store(tmp, posts)
        want = naive_text_search(store, quote_term(term), limit, source)
        assert store.text_search(parse_terms(quote_term(term)), limit, source) == want
        store.close()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(POSTS, TERM, st.integers(1, 40))
def test_common_term_path_equals_naive_scan(posts, term, limit) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(store_module, "_FTS_PROBE", 1)  # force the "very common term" walk
        with tempfile.TemporaryDirectory() as tmp:
            store = _store(tmp, posts)
            want = naive_text_search(store, quote_term(term), limit)
            assert store.text_search(parse_terms(quote_term(term)), limit) == want
            store.close()


def test_fts_is_used_and_updates_follow_content(tmp_path: Path) -> None:
    store = Store(tmp_path / "t.db")
    with store.transaction() as conn:
        store.upsert_posts(
            conn, [Post(1, "u", "2024-01-01 00:00:00", "https://x.com/u/status/1", "Hello World", 1)]
        )
    assert [p["post_id"] for p in store.text_search(parse_terms("WORLD"), 10)] == [1]
    with store.transaction() as conn:
        store.upsert_posts(
            conn, [Post(1, "u", "2024-01-01 00:00:00", "https://x.com/u/status/1", "bye there", 3)]
        )
    assert store.text_search(parse_terms("world"), 10) == []
    assert [p["post_id"] for p in store.text_search(parse_terms("THERE"), 10)] == [1]
    plan = store.reader.execute(
        "EXPLAIN QUERY PLAN SELECT rowid FROM fts_content WHERE fts_content MATCH '\"the\"'"
    ).fetchall()
    assert any("VIRTUAL TABLE INDEX" in str(step) for step in plan)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(POSTS, st.lists(TERM, min_size=1, max_size=3), st.booleans(), st.integers(1, 40))
def test_text_only_query_equals_naive_filter(posts, terms, negate_last, top_k) -> None:
    from mcpkit.archive.engine import Engine
    from mcpkit.archive.posts import dedup_key
    from mcpkit.archive.query import TextFilter, parse_query
    from mcpkit.archive.settings import parse_settings

    quoted = ['"' + t.replace("\\", "\\\\").replace('"', '\\"') + '"' for t in terms]
    if negate_last and len(quoted) > 1:
        quoted[-1] = "-" + quoted[-1]
    query = "| " + " ".join(quoted)
    parsed = parse_query(query)
    assert parsed.text_filter == TextFilter(
        tuple(terms[:-1] if negate_last and len(terms) > 1 else terms),
        (terms[-1],) if negate_last and len(terms) > 1 else (),
    )
    with tempfile.TemporaryDirectory() as tmp:
        store = _store(tmp, posts)
        engine = Engine(store, Path(tmp) / "vectors")
        got = ids_of(engine.search_similar(query, parse_settings({"top_k": top_k})))
        ordered = sorted(
            ((ts, i + 1, text) for i, (text, ts, _) in enumerate(posts)),
            key=lambda r: (r[0], r[1]),
            reverse=True,
        )
        want: list[int] = []
        seen: set[tuple[str, str]] = set()
        for _, post_id, text in ordered:
            key = dedup_key("u", text)
            if parsed.text_filter.matches(text) and key not in seen:
                seen.add(key)
                want.append(post_id)
        assert got == want[:top_k]
        engine.close()
