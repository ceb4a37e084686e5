"""The per-post filter columns stay current without reading every post again.

What a user meets: a search at millions of posts filters by user, date, kind and account
over columns of every post. They must say what the posts say after any write (an import, a
merge, an account set late), must not be read again for an enrichment, must re-read only what
changed, and must come back from disk when a server starts. Every check compares with the
columns read whole from the database, the definition of right.
"""

from __future__ import annotations

import gc
import shutil
import threading
import weakref
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpkit.archive.engine import Engine
from mcpkit.archive.pages.columns import FacetIndex
from mcpkit.archive.posts import Media, Post
from mcpkit.archive.settings import parse_settings
from mcpkit.archive.store import PostArrays, Store, columns_path
from mcpkit.archive.store import _columns as columns_module
from mcpkit.archive.store import _writer as writer_module
from mcpkit.archive.store._columns import read_all
from mcpkit.archive.vectors import SpaceWriter, vectors_root
from tests.archive.helpers import HashEmbedder, row, write_csv

USERS = ("alice", "bob", "carol", "")
KINDS = ("post", "reply", "quote", "repost", "like", "odd-kind")
PLATFORMS = ("x", "mastodon", "bluesky", "elsewhere")


def _post(
    post_id: int, user: str, day: int, kind: str, platform: str, account: str, text: str, lang: str = ""
) -> Post:
    timestamp = f"2024-01-{day:02d} 10:00:00" if day else "not a date"
    return Post(
        post_id, user, timestamp, f"https://x.com/{user or 'x'}/status/{post_id}", text, 1,
        platform=platform, kind=kind, account=account, lang=lang,
    )  # fmt: skip


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = Store(tmp_path / "a.db")
    yield opened
    opened.close()


def _write(store: Store, ids: range | list[int], user: str = "bob") -> None:
    with store.transaction() as conn:
        store.upsert_posts(conn, [_post(i, user, 3, "post", "x", "", "t") for i in ids])


def _whole(store: Store) -> PostArrays:
    return read_all(store.reader)


def _same(a: PostArrays, b: PostArrays) -> None:
    """Equal as columns: same posts with the same values (accounts and languages compared by
    name, each spelling coded once)."""
    np.testing.assert_array_equal(a.post_ids, b.post_ids)
    np.testing.assert_array_equal(a.user_ids, b.user_ids)
    np.testing.assert_array_equal(a.ts, b.ts)
    np.testing.assert_array_equal(a.relations, b.relations)
    np.testing.assert_array_equal(a.visibilities, b.visibilities)
    np.testing.assert_array_equal(a.platforms, b.platforms)
    np.testing.assert_array_equal(a.has_media, b.has_media)
    names_a = [a.account_names[c] if c >= 0 else None for c in a.accounts]
    names_b = [b.account_names[c] if c >= 0 else None for c in b.accounts]
    assert names_a == names_b
    assert [a.lang_names[c] for c in a.langs] == [b.lang_names[c] for c in b.langs]
    for arrays in (a, b):
        assert len(set(arrays.lang_names)) == len(arrays.lang_names)
        assert len(set(arrays.account_names)) == len(arrays.account_names)


def _current(store: Store) -> PostArrays:
    return store.post_arrays()[1]


posts_strategy = st.lists(
    st.builds(
        _post,
        st.integers(1, 40),
        st.sampled_from(USERS),
        st.integers(0, 28),
        st.sampled_from(KINDS),
        st.sampled_from(PLATFORMS),
        st.sampled_from(("", "@me", "@other", "@Me")),
        st.text(max_size=12),
        st.sampled_from(("", "ja", "en", "und", "zh-Hant")),
    ),
    max_size=12,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batches=st.lists(posts_strategy, min_size=1, max_size=5))
def test_columns_patched_after_each_write_equal_the_columns_read_whole(
    tmp_path_factory: pytest.TempPathFactory, batches: Sequence[Sequence[Post]]
) -> None:
    store = Store(tmp_path_factory.mktemp("cols") / "a.db")
    try:
        _current(store)
        for batch in batches:
            with store.transaction() as conn:
                store.upsert_posts(conn, list(batch))
            _same(_current(store), _whole(store))
        assert store.columns.reads == 1  # only the first, on the empty archive
        reopened = Store(store.path)  # a server starting: the saved columns, patched
        try:
            _same(_current(reopened), _whole(reopened))
            assert reopened.columns.reads == 0
        finally:
            reopened.close()
    finally:
        store.close()


def test_an_enrichment_leaves_the_columns_and_an_import_patches_them(tmp_path: Path) -> None:
    store = Store(tmp_path / "a.db")
    with store.transaction() as conn:
        store.upsert_posts(
            conn, [_post(i, "alice", 1 + i % 20, "post", "x", "@me", f"t{i}") for i in range(1, 50)]
        )
    generation, first = store.post_arrays()
    with store.transaction() as conn:
        store.upsert_enrichments(conn, [(3, "why", "what", '["tag"]')])
    assert store.posts_generation() == generation
    assert store.post_arrays() == (generation, first)  # the very same columns, not re-read

    from mcpkit.archive.importers.twilog_csv import import_csv

    # a Twilog row upgrading post 5 to a like, a new post, and a new user
    csv = write_csv(tmp_path / "t.csv", [row(5, "alice", "t5", log_type=2), row(900, "dave", "new one")])
    import_csv(csv, store)
    assert store.posts_generation() == generation + 1
    _same(_current(store), _whole(store))
    assert store.columns.reads == 1
    store.close()


def test_a_late_account_is_seen_by_the_columns(tmp_path: Path) -> None:
    """An X archive names its account only in account.js, after the posts are written: the
    posts then get it in one UPDATE, which the columns must see too."""
    from mcpkit.archive.importers.flow import _set_account

    store = Store(tmp_path / "a.db")
    with store.transaction() as conn:
        store.upsert_posts(conn, [_post(i, "alice", 2, "post", "x", "", "t") for i in range(1, 6)])
    _current(store)
    with store.transaction() as conn:
        _set_account(conn, "@late", {2, 4})
        store.note_post_changes({2, 4})
    arrays = _current(store)
    _same(arrays, _whole(store))
    assert [arrays.account_names[c] for c in arrays.accounts] == ["", "@late", "", "@late", ""]
    store.close()


def test_a_transaction_too_large_to_log_reads_the_columns_whole(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(writer_module, "LOGGED_CHANGES", 5)
    _write(store, [100])  # not a first write: its rows alone are not every post
    _current(store)
    _write(store, range(1, 9))
    logged = store.reader.execute("SELECT generation, post_id FROM post_changes").fetchall()
    assert logged == [(1, 100), (2, None)]
    _same(_current(store), _whole(store))
    assert store.columns.reads == 2
    _write(store, [20])
    _same(_current(store), _whole(store))
    assert store.columns.reads == 2  # a small one is patched again


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    first=posts_strategy,
    late=st.lists(st.integers(1, 40), max_size=6),
    account=st.sampled_from(("@late", "")),
)
def test_a_first_write_too_large_to_log_hands_over_the_columns_of_its_rows(
    tmp_path_factory: pytest.TempPathFactory, first: Sequence[Post], late: list[int], account: str
) -> None:
    """A transaction that fills an empty archive with more posts than the log lists (a first
    import) keeps the columns of the rows it writes, so nothing reads every post after it:
    they equal the columns read whole, posts changed again in the same transaction included,
    and a process that opens the archive next loads them from disk."""
    store = Store(tmp_path_factory.mktemp("cols") / "a.db")
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(writer_module, "LOGGED_CHANGES", 0)
            with store.transaction() as conn:
                store.upsert_posts(conn, first)
                if late:  # an account learnt at the end of the export, as an X archive's
                    conn.execute(
                        f"UPDATE posts SET account = ? WHERE post_id IN ({','.join('?' * len(late))})",
                        [account, *late],
                    )
                    store.note_post_changes(late)
        if not first:
            return  # nothing written: nothing to hand over
        _same(_current(store), _whole(store))
        assert store.columns.reads == 0
        store.close()
        store = Store(store.path)
        _same(_current(store), _whole(store))
        assert store.columns.reads == 0
    finally:
        store.close()


def test_a_first_import_hands_over_its_columns_with_its_repeats(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Twilog export, newest first, whose last rows repeat earlier ones with a larger
    log_type (a like of a post already written, several batches back): the handed-over
    columns say what the rows say after the import, without a read of every post."""
    from mcpkit.archive.importers.twilog_csv import import_csv

    monkeypatch.setattr(writer_module, "LOGGED_CHANGES", 100)
    rows = [
        row(
            i,
            ("alice", "bob", "")[i % 3],
            f"post {i}",
            f"2024-01-{1 + i % 28:02d} 10:00:00" if i % 7 else "?",
        )
        for i in range(1, 5001)
    ]
    rows.reverse()  # newest first, as Twilog writes them: batches come in descending order
    rows += [row(i, "carol", f"liked {i}", log_type=2) for i in (3, 40, 4999)]
    store = Store(tmp_path / "a.db")
    summary = import_csv(write_csv(tmp_path / "t.csv", rows), store)
    assert (summary.new, summary.duplicates_in_file) == (5000, 3)
    # each keeps both relations: the account's post, and its like (the like's row, the larger log_type)
    liked = store.reader.execute("SELECT kind, relations, content FROM posts WHERE log_type = 2").fetchall()
    assert sorted(liked) == [("post", 17, f"liked {i}") for i in (3, 40, 4999)]
    arrays = _current(store)
    assert store.columns.reads == 0
    _same(arrays, _whole(store))
    assert columns_path(store.path).exists()
    store.close()


def test_no_columns_are_handed_over_when_too_many_posts_changed_again_or_nothing_committed(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(writer_module, "LOGGED_CHANGES", 0)
    monkeypatch.setattr(columns_module, "REWRITTEN_LIMIT", 3)
    with pytest.raises(RuntimeError), store.transaction() as conn:
        store.upsert_posts(conn, [_post(i, "bob", 3, "post", "x", "", "t") for i in range(1, 9)])
        raise RuntimeError("the import fails after writing")
    assert not columns_path(store.path).exists()
    with store.transaction() as conn:
        store.upsert_posts(conn, [_post(i, "bob", 3, "post", "x", "", "t") for i in range(1, 9)])
        store.note_post_changes(range(1, 5))  # more than REWRITTEN_LIMIT to re-read
    _same(_current(store), _whole(store))
    assert store.columns.reads == 1


def test_the_log_stays_bounded_and_columns_older_than_it_are_read_whole(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(columns_module, "KEPT_CHANGES", 10)
    _write(store, [1])
    _current(store)  # saved at posts generation 1
    saved = tmp_path / "saved.npz"
    shutil.copy(columns_path(store.path), saved)
    for start in range(2, 60, 4):
        with store.transaction() as conn:
            store.upsert_posts(
                conn, [_post(i, "bob", 3, "post", "x", "", "t") for i in range(start, start + 4)]
            )
    assert store.reader.execute("SELECT count(*) FROM post_changes").fetchone()[0] <= 10 + 4
    store.close()
    shutil.copy(saved, columns_path(store.path))  # columns saved long ago
    reopened = Store(store.path)
    _same(_current(reopened), _whole(reopened))
    assert reopened.columns.reads == 1
    reopened.close()


def test_saved_columns_of_another_archive_or_damaged_ones_are_never_used(tmp_path: Path) -> None:
    one, two = Store(tmp_path / "one.db"), Store(tmp_path / "two.db")
    for store, user in ((one, "alice"), (two, "bob")):
        _write(store, range(1, 4), user)
        _current(store)
    one.close()
    two.close()
    shutil.copy(columns_path(two.path), columns_path(one.path))  # same generation, other archive
    reopened = Store(one.path)
    _same(_current(reopened), _whole(reopened))
    assert reopened.columns.reads == 1
    reopened.close()
    saved = columns_path(one.path)
    saved.write_bytes(saved.read_bytes()[:100])  # cut short
    reopened = Store(one.path)
    _same(_current(reopened), _whole(reopened))
    assert reopened.columns.reads == 1
    reopened.close()


def test_a_search_that_filters_nothing_does_not_wait_for_the_columns(tmp_path: Path) -> None:
    """While the columns are being read (seconds at millions of posts), a search with no
    filter answers from the index alone; a filtered one gets the current columns."""
    db = tmp_path / "a.db"
    store = Store(db)
    embedder = HashEmbedder(dim=8)
    texts = {i: f"post number {i} about {'cats' if i % 2 else 'dogs'}" for i in range(1, 30)}
    with store.transaction() as conn:
        store.upsert_posts(
            conn, [_post(i, "alice" if i < 20 else "bob", 5, "post", "x", "", t) for i, t in texts.items()]
        )
    SpaceWriter(vectors_root(db), "content", embedder.name, 8).append(
        list(texts), embedder.embed_documents(list(texts.values()))
    )
    engine = Engine(store, vectors_root(db), embedder=embedder)
    store.columns._lock.acquire()  # another thread's refresh, as far as the engine can tell
    try:
        found = engine.search_similar("cats")
    finally:
        store.columns._lock.release()
    assert len(found) == 10
    for thread in threading.enumerate():
        if thread.name.startswith("columns-"):
            thread.join()
    bob = engine.search_similar("cats", parse_settings({"user_filter": {"includes": ["bob"]}}))
    assert {r["post"]["user"] for r in bob} == {"bob"}
    assert len(bob) == 10
    engine.close()


def _web_post(
    post_id: int, stamp: tuple[int, int, int, int] | None, kind: str, platform: str, lang: str
) -> Post:
    timestamp = "not a date" if stamp is None else "{:04d}-{:02d}-{:02d} {:02d}:00:00".format(*stamp)
    return Post(
        post_id, "alice", timestamp, f"https://x.com/alice/status/{post_id}", "t", 1,
        platform=platform, kind=kind, account=("@a", "@b")[post_id % 2], lang=lang,
        media=(Media("image", f"m/{post_id}.png", "", ""),) if post_id % 3 == 0 else (),
    )  # fmt: skip


web_posts = st.lists(
    st.builds(
        _web_post,
        st.integers(1, 40),
        st.none()
        | st.tuples(st.integers(1965, 2030), st.integers(1, 12), st.integers(1, 28), st.integers(0, 23)),
        st.sampled_from(KINDS),
        st.sampled_from(PLATFORMS),
        st.sampled_from(("", "ja", "en")),
    ),
    max_size=12,
)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batches=st.lists(web_posts, min_size=1, max_size=4))
def test_the_web_pages_facet_columns_say_what_the_posts_say_after_each_write(
    tmp_path_factory: pytest.TempPathFactory, batches: Sequence[Sequence[Post]]
) -> None:
    """The web app's facet columns (month, day, kind, platform, account, language, media and
    the newest-first order) come from the store's columns: after each write they equal a
    plain read of every post, kinds and platforms no release names included, and no write
    makes anything read every post again."""
    store = Store(tmp_path_factory.mktemp("web") / "a.db")
    index = FacetIndex(store)
    try:
        for batch in batches:
            with store.transaction() as conn:
                store.upsert_posts(conn, list(batch))
            cols = index.columns()
            rows = store.reader.execute(
                "SELECT post_id, ts, kind, platform, account, lang, has_media FROM posts ORDER BY post_id"
            ).fetchall()
            assert cols.ids.tolist() == [r[0] for r in rows]
            for facet, position in (("kind", 2), ("platform", 3), ("account", 4), ("lang", 5)):
                assert [cols.labels[facet][c] for c in cols.codes[facet]] == [r[position] for r in rows]
            assert cols.media.tolist() == [bool(r[6]) for r in rows]
            when = [None if r[1] is None else datetime.fromtimestamp(r[1], UTC) for r in rows]
            assert cols.month.tolist() == [
                -1 if d is None else (d.year - 1970) * 12 + d.month - 1 for d in when
            ]
            assert cols.mday.tolist() == [-1 if d is None else d.month * 100 + d.day for d in when]
            newest = sorted(rows, key=lambda r: (r[1] is not None, r[1] or 0, r[0]), reverse=True)
            assert [int(cols.ids[i]) for i in cols.order] == [r[0] for r in newest]
            assert [int(cols.ids[i]) for i in np.argsort(cols.rank)] == [r[0] for r in newest]
        assert store.columns.reads <= 1  # the empty archive's, at most
    finally:
        store.close()


def test_a_closed_store_holds_no_columns(tmp_path: Path) -> None:
    """At ten million posts the columns are 350 MB: closing the store lets them go, without
    waiting for the cyclic garbage collector (a store is reachable from its own columns'
    connection factory)."""
    store = Store(tmp_path / "a.db")
    _write(store, range(1, 50))
    held = weakref.ref(store.post_arrays()[1].post_ids)
    gc.disable()
    try:
        store.close()
        assert held() is None
        assert len(store.post_arrays()[1].post_ids) == 49  # loaded again from the saved file
        assert store.columns.reads == 1  # the empty archive's only
    finally:
        gc.enable()
        store.close()
