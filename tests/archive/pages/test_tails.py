"""The web text search's tails (the last two folded characters of every post) stay right
without reading every post again.

What a user meets: a term of one or two characters (猫, 東京, the first letter typed) finds
the posts that end with it only through these tails. They must say what the posts say after
any write (new posts, edited texts, a merge), must not be read whole after a small write, and
must come back from disk when the web app starts again. Every check compares with a read of
every post, the definition of right.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpkit.archive.pages.columns import FacetIndex
from mcpkit.archive.pages.tails import Tails, TailsKeeper, read_whole, tails_path
from mcpkit.archive.pages.text_index import TextSearch
from mcpkit.archive.posts import Post
from mcpkit.archive.store import Store

# letters whose folding is not one character for one (İ), depends on context (Σ), or is CJK
ALPHABET = "abAB猫東京ねこ İΣσς-"


def _post(post_id: int, text: str) -> Post:
    return Post(post_id, "alice", "2024-02-03 10:00:00", f"https://x.com/alice/status/{post_id}", text, 1)


def _write(store: Store, posts: Sequence[Post], edits: dict[int, str] | None = None) -> None:
    """Add ``posts`` and change the text of the stored posts ``edits`` names (as an edit
    merged from a later export does: the writer notes the posts it changed)."""
    with store.transaction() as conn:
        store.upsert_posts(conn, list(posts))
        for post_id, text in (edits or {}).items():
            if conn.execute("UPDATE posts SET content = ? WHERE post_id = ?", (text, post_id)).rowcount:
                store.note_post_changes([post_id])


def _same(a: Tails, b: Tails) -> None:
    np.testing.assert_array_equal(a.ids, b.ids)
    np.testing.assert_array_equal(a.before, b.before)
    np.testing.assert_array_equal(a.last, b.last)


def _tails(search: TextSearch, index: FacetIndex) -> Tails:
    tails = search.tails(index.columns(), wait=True)
    assert tails is not None
    return tails


def _truth(store: Store, index: FacetIndex) -> Tails:
    tails = read_whole(store.reader, index.columns())
    assert tails is not None
    return tails


texts = st.text(ALPHABET, max_size=8)
batches = st.lists(
    st.tuples(
        st.lists(st.builds(_post, st.integers(1, 30), texts), max_size=10),
        st.dictionaries(st.integers(1, 30), texts, max_size=4),
    ),
    min_size=1,
    max_size=5,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(writes=batches)
def test_tails_follow_each_write_and_come_back_from_disk(
    tmp_path_factory: pytest.TempPathFactory, writes: list[tuple[list[Post], dict[int, str]]]
) -> None:
    store = Store(tmp_path_factory.mktemp("tails") / "a.db")
    try:
        index = FacetIndex(store)
        search = TextSearch(store, index)
        _tails(search, index)  # the empty archive's: the one read of every post
        for posts, edits in writes:
            _write(store, posts, edits)
            _same(_tails(search, index), _truth(store, index))
        assert search.keeper.whole_reads == 1
        restarted = TextSearch(store, FacetIndex(store))  # the web app started again
        _same(_tails(restarted, restarted.index), _truth(store, index))
        assert restarted.keeper.whole_reads == 0
        _write(store, [_post(31, "猫")])  # and written to while it was away
        again = TextSearch(store, FacetIndex(store))
        _same(_tails(again, again.index), _truth(store, index))
        assert again.keeper.whole_reads == 0
    finally:
        store.close()


def test_short_terms_find_the_posts_that_end_with_them_after_a_restart(tmp_path: Path) -> None:
    store = Store(tmp_path / "a.db")
    try:
        _write(store, [_post(i, f"note {i} ends with 猫") for i in range(1, 40)])
        TextSearch(store, FacetIndex(store)).tails(FacetIndex(store).columns(), wait=True)
        _write(store, [_post(50, "a new 東京")], {7: "now it ends with 東京"})
        index = FacetIndex(store)
        search = TextSearch(store, index)
        tails = _tails(search, index)
        cols = index.columns()
        ending = {int(cols.ids[r]) for r in tails.rows_ending("東京")}
        assert ending == {7, 50}
        assert {int(cols.ids[r]) for r in tails.rows_ending("猫")} == set(range(1, 40)) - {7}
        assert search.keeper.whole_reads == 0
    finally:
        store.close()


def test_tails_saved_for_another_archive_or_damaged_are_read_again(tmp_path: Path) -> None:
    other = Store(tmp_path / "other.db")
    _write(other, [_post(1, "xyz"), _post(2, "abc")])
    TailsKeeper(other).current(FacetIndex(other).columns(), None)
    other.close()
    store = Store(tmp_path / "a.db")
    try:
        _write(store, [_post(1, "猫"), _post(2, "ねこ")])
        shutil.copy(tails_path(tmp_path / "other.db"), tails_path(store.path))  # same ids, other texts
        index = FacetIndex(store)
        keeper = TailsKeeper(store)
        tails = keeper.current(index.columns(), None)
        assert tails is not None
        _same(tails, _truth(store, index))
        assert keeper.whole_reads == 1
        tails_path(store.path).write_bytes(b"PK\x03\x04 not a zip")
        keeper = TailsKeeper(store)
        tails = keeper.current(index.columns(), None)
        assert tails is not None
        _same(tails, _truth(store, index))
        assert keeper.whole_reads == 1
    finally:
        store.close()


def test_columns_older_than_the_saved_tails_get_none_rather_than_wrong_tails(tmp_path: Path) -> None:
    """A page whose columns were made before a write that another process's tails already
    hold gets no tails (the next columns get them), never tails of other posts."""
    store = Store(tmp_path / "a.db")
    try:
        _write(store, [_post(1, "ab")])
        stale = FacetIndex(store).columns()
        _write(store, [_post(2, "猫")], {1: "東京"})
        TailsKeeper(store).current(FacetIndex(store).columns(), None)  # another process, newer
        keeper = TailsKeeper(store)
        assert keeper.current(stale, None) is None
        assert keeper.whole_reads == 0
        fresh = FacetIndex(store).columns()
        tails = keeper.current(fresh, None)
        assert tails is not None
        _same(tails, _truth(store, FacetIndex(store)))
    finally:
        store.close()
