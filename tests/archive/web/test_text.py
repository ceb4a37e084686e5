"""The web app's text search (mcpkit.archive.pages.text_index) against a plain scan of the texts.

Real SQLite archives written through the store, as an import writes them (FTS5 trigram index
included). The thresholds that choose between the index and the walk-and-sample path are made
small here, so archives of a few dozen posts take every path: the shown posts must be exactly
those a scan finds, in the same order, whatever the path; counts are exact whenever the page
does not say "about".
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpkit.archive.facets import Filters
from mcpkit.archive.pages import text_index
from mcpkit.archive.pages.columns import Columns, FacetIndex
from mcpkit.archive.pages.text_index import TextSearch
from mcpkit.archive.posts import AUTHORED_KINDS, Post
from mcpkit.archive.query import TextFilter, parse_terms
from mcpkit.archive.store import Store
from mcpkit.archive.web.views import Views

# letters whose folding is not one character for one (İ), depends on context (Σ), or is CJK
ALPHABET = "abAB猫東京ねこ İΣσς-"


@contextmanager
def archive(
    texts: list[str], kinds: list[str] | None = None
) -> Iterator[tuple[Store, FacetIndex, TextSearch]]:
    with tempfile.TemporaryDirectory() as root:
        store = Store(Path(root) / "a.db")
        try:
            posts = [
                Post(
                    post_id=100 + i,
                    user="alice",
                    timestamp=f"2023-{1 + i % 12:02d}-{1 + i % 28:02d} 10:{i % 60:02d}:00",
                    url=f"https://x.com/alice/status/{100 + i}",
                    content=text,
                    log_type=1,
                    platform="x",
                    kind=(kinds or ["post"] * len(texts))[i],
                    source_id=str(100 + i),
                    account="@alice",
                )
                for i, text in enumerate(texts)
            ]
            with store.transaction() as conn:
                store.upsert_posts(conn, posts, account="@alice")
            index = FacetIndex(store)
            search = TextSearch(store, index)
            search.tails(index.columns(), wait=True)
            yield store, index, search
        finally:
            store.close()


def scan(cols: Columns, texts: list[str], text_filter: TextFilter, filters: Filters) -> list[int]:
    """Rows a plain scan finds, newest first."""
    kinds = set(filters.kinds)
    by_id = {100 + i: text for i, text in enumerate(texts)}
    return [
        int(row) for row in cols.order if text_filter.matches(by_id[int(cols.ids[row])]) and ("post" in kinds)
    ]


def every_page(
    search: TextSearch, cols: Columns, filters: Filters, text_filter: TextFilter, size: int
) -> tuple[list[int], text_index.TextPage]:
    rows: list[int] = []
    offset = 0
    first = search.page(cols, filters, text_filter, 0, size)
    while True:
        page = search.page(cols, filters, text_filter, offset, size)
        rows.extend(int(r) for r in page.rows)
        if not page.more:
            return rows, first
        offset += size


@pytest.fixture
def small_thresholds(monkeypatch: pytest.MonkeyPatch) -> None:
    """Index lookups of more than 4 ids count as common; samples of 5 posts; 3 re-checked."""
    monkeypatch.setattr(text_index, "CHEAP", 4)
    monkeypatch.setattr(text_index, "SAMPLE", 5)
    monkeypatch.setattr(text_index, "VERIFY_LIMIT", 3)


texts_strategy = st.lists(st.text(alphabet=ALPHABET, max_size=8), min_size=1, max_size=30)
query_strategy = st.lists(
    st.tuples(st.booleans(), st.text(alphabet=ALPHABET.replace(" ", ""), min_size=1, max_size=4)),
    min_size=1,
    max_size=3,
)


@pytest.mark.parametrize("thresholds", ["default", "small"])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=texts_strategy, terms=query_strategy)
def test_pages_are_exactly_the_scans_matches(
    monkeypatch: pytest.MonkeyPatch, thresholds: str, texts: list[str], terms: list[tuple[bool, str]]
) -> None:
    if thresholds == "small":
        monkeypatch.setattr(text_index, "CHEAP", 4)
        monkeypatch.setattr(text_index, "SAMPLE", 5)
        monkeypatch.setattr(text_index, "VERIFY_LIMIT", 3)
    text_filter = TextFilter(
        tuple(t for excluded, t in terms if not excluded), tuple(t for excluded, t in terms if excluded)
    )
    with archive(texts) as (_, index, search):
        cols = index.columns()
        filters = Filters()
        expected = scan(cols, texts, text_filter, filters)
        shown, first = every_page(search, cols, filters, text_filter, size=4)
        assert shown == expected
        if not first.approximate:
            assert first.total == len(expected)
            assert sum(v["count"] for v in first.facets["kind"] if v["value"] == "post") == len(expected)


def test_short_terms_found_at_the_end_and_in_short_posts() -> None:
    """A term of one or two characters has no trigram of its own: the index finds it inside
    longer trigrams, and the last two characters of each post cover the rest (exact counts)."""
    texts = ["猫", "東京", "京", "ab東京", "東京ab", "x東京y", "猫ねこ", "İ", "nothing here"]
    with archive(texts) as (_, index, search):
        cols = index.columns()
        for query, wanted in (("東京", 4), ("猫", 2), ("京", 5), ("i", 2), ("ab", 2)):
            page = search.page(cols, Filters(), parse_terms(query), 0, 30)
            assert not page.approximate, query
            assert page.total == len(page.rows) == wanted, query


def test_common_queries_are_walked_and_their_counts_estimated(small_thresholds: None) -> None:
    """Past the index's budget the page is found by checking posts newest first, and the
    counts come from a sample: said to be approximate, the posts shown still exact."""
    texts = [f"coffee {i}" if i % 2 else f"tea {i}" for i in range(40)]
    kinds = ["like" if i % 10 == 0 else "post" for i in range(40)]
    with archive(texts, kinds) as (_, index, search):
        cols = index.columns()
        page = search.page(cols, Filters(), parse_terms("coffee"), 0, 5)
        assert page.approximate and page.more and len(page.rows) == 5
        contents = index.posts([int(cols.ids[r]) for r in page.rows])
        assert all("coffee" in post["content"] for post in contents.values())
        assert page.total > 0 and {v["value"] for v in page.facets["kind"]} <= set(AUTHORED_KINDS) | {"like"}


def test_a_set_no_larger_than_the_sample_is_counted_exactly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(text_index, "CHEAP", 4)  # "coffee" is common for the index...
    texts = [f"coffee {i}" if i % 2 else f"tea {i}" for i in range(40)]
    with archive(texts) as (_, index, search):
        cols = index.columns()
        page = search.page(cols, Filters(), parse_terms("coffee"), 0, 5)
        assert not page.approximate and page.total == 20  # ...but 40 posts fit the sample


@contextmanager
def embedded_views(tmp_path: Path) -> Iterator[Views]:
    """The web app's views over the web tests' sample archive, every post embedded."""
    from mcpkit.archive.api import ArchiveAPI
    from mcpkit.archive.embedding import embed_missing
    from tests.archive.helpers import HashEmbedder
    from tests.archive.web.test_app import build_archive

    db, _ = build_archive(tmp_path)
    embedder = HashEmbedder()
    api = ArchiveAPI.open(db, embedder=embedder)
    try:
        embed_missing(api.engine.store, "content", embedder)
        yield Views(api)
    finally:
        api.close()


def test_semantic_search_ranks_under_the_pages_filters(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The API ranks the closest posts under the page's kind, platform, account and media
    filters, so the page shows as many as it asked for and its counts say what they count."""
    import anyio

    from mcpkit.archive.web import views as views_module
    from mcpkit.archive.web.views import parse_state

    with embedded_views(tmp_path) as views:
        monkeypatch.setattr(views_module, "SEMANTIC_TOP", 3)  # 51 posts, 6 of them on Mastodon
        state = parse_state(
            {"q": ["cats in tokyo"], "mode": ["semantic"], "platform": ["mastodon"], "weak": ["1"]}
        )
        data = anyio.run(views.search, state)
        assert [p["platform"] for p in data["results"]] == ["mastodon"] * 3
        assert data["total"] == 3 and {v["value"]: v["count"] for v in data["facets"]["platform"]} == {
            "mastodon": 3
        }
        assert "closest in meaning" in data["facet_note"]


def test_media_found_in_the_export_that_holds_it(tmp_path: Path) -> None:
    """A later import of the same account without the pictures (a re-download, a CSV) does not
    hide them: each attachment comes from the newest export of its account that holds it."""
    from tests.archive.web.test_app import build_archive

    db, export = build_archive(tmp_path)
    newer = tmp_path / "x-export-2024"
    (newer / "data").mkdir(parents=True)
    store = Store(db)
    try:
        with store.transaction() as conn:
            store.record_export(conn, format="x-archive", account="@alice", path=newer, summary={})
        (picture,) = FacetIndex(store).media(2001)
        assert picture.export_path == str(export) and picture.alt == "Red torii gates in the rain"
        (newer / "data" / "tweets_media").mkdir()
        (newer / "data" / "tweets_media" / "2001-kyoto.png").write_bytes(b"png")
        (picture,) = FacetIndex(store).media(2001)
        assert picture.export_path == str(newer)  # newest first when both hold it
    finally:
        store.close()


def test_hybrid_mode_and_the_apis_match_verdict(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The page offers the API's hybrid mode; "no good match" is the API's verdict when its
    model is calibrated (here: thresholds no hit reaches), the page's cosine floor otherwise."""
    import anyio

    from mcpkit.archive import ranking
    from mcpkit.archive.web.views import parse_state, text_modes
    from tests.archive.helpers import HashEmbedder

    assert "hybrid" in text_modes()
    with embedded_views(tmp_path) as views:
        shown = anyio.run(
            views.search, parse_state({"q": ["coffee note"], "mode": ["hybrid"], "weak": ["1"]})
        )
        assert shown["results"] and all(p["match"] is None for p in shown["results"])  # uncalibrated
        assert "coffee" in shown["results"][0]["content"]  # the text side of the fusion
        strict = ranking.Calibration(model=HashEmbedder().name, similarity=2.0, coverage=2.0)
        monkeypatch.setattr(ranking, "calibration_for", lambda model: strict)
        data = anyio.run(views.search, parse_state({"q": ["coffee note"], "mode": ["hybrid"]}))
        assert data["no_good_match"] and data["results"] == [] and "threshold" in data["message"]
