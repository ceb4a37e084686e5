"""A first import builds its text index beside the archive (the store's side index): the index
it leaves must be the one FTS5 builds in place, whatever the import did on the way, and a
failed import must leave neither rows, index entries nor the scratch file."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from mcpkit.archive.importers import import_csv
from mcpkit.archive.posts import fold
from mcpkit.archive.query import parse_terms
from mcpkit.archive.store import Store, remove_database
from mcpkit.archive.store._side_index import scratch_path
from tests.archive.helpers import row, write_csv
from tests.archive.naive import naive_text_search

WORDS = ["猫が寝る", "コーヒー", "python", "Release", "東京タワー", "らーめん", "bug fix", "ÉCOLE"]
TERMS = ["猫が寝", "コーヒ", "pyt", "rel", "京タワ", "らーめ", "g f", "éco", "zzq"]


def _rows(count: int, start: int = 1, salt: int = 0) -> list[tuple[str, str, str, str, str]]:
    return [
        row(
            start + i,
            f"user{i % 7}",
            f"{WORDS[i % len(WORDS)]} {WORDS[(i * 3 + salt) % len(WORDS)]} #{i}",
            f"2024-01-{1 + i % 28:02d} 00:00:00",
        )
        for i in range(count)
    ]


def _indexed(store: Store, term: str) -> set[int]:
    """The posts the FTS index names for a term of three characters (exact with trigrams)."""
    return {
        r[0]
        for r in store.reader.execute(
            "SELECT rowid FROM fts_content WHERE fts_content MATCH ?", (f'"{fold(term)}"',)
        )
    }


def _containing(store: Store, term: str) -> set[int]:
    return {
        r[0] for r in store.reader.execute("SELECT post_id, content FROM posts") if fold(term) in fold(r[1])
    }


def _check_index(store: Store) -> None:
    store.reader.execute("INSERT INTO fts_content(fts_content) VALUES ('integrity-check')")
    for term in TERMS:
        assert _indexed(store, term) == _containing(store, term), term
        assert store.text_search(parse_terms(term), 50) == naive_text_search(store, term, 50)


def _shadow(db: Path) -> tuple[list[tuple[object, ...]], ...]:
    conn = sqlite3.connect(db)
    try:
        return tuple(
            conn.execute(f"SELECT * FROM fts_content_{name} ORDER BY 1, 2").fetchall()
            for name in ("data", "idx")
        )
    finally:
        conn.close()


def test_a_first_import_leaves_the_index_fts5_builds_in_place(tmp_path: Path) -> None:
    rows = _rows(3000)
    # repeats with a larger log_type and another text: the first import replaces them, so the
    # side index deletes the entries it was given before
    rows += [row(i, "user1", f"いいね {WORDS[i % 5]} {i}", log_type=2) for i in range(1, 3000, 97)]
    export = write_csv(tmp_path / "export.csv", rows)
    first = Store(tmp_path / "first.db")  # empty index: built beside the archive
    summary = import_csv(export, first)
    assert summary.new == 3000 and summary.duplicates_in_file == 31
    _check_index(first)
    assert not scratch_path(first.path).exists()

    # the same rows through FTS5 in place: an archive whose index already holds a post
    in_place = Store(tmp_path / "in_place.db")
    import_csv(write_csv(tmp_path / "one.csv", [row(10**9, "zed", "zzz")]), in_place)
    import_csv(export, in_place)
    with in_place.transaction() as conn:
        conn.execute("DELETE FROM posts WHERE post_id = ?", (10**9,))
        conn.execute(
            "INSERT INTO fts_content(fts_content, rowid, body) VALUES ('delete', ?, 'zzz')", (10**9,)
        )
    _check_index(in_place)
    assert {t: _indexed(first, t) for t in TERMS} == {t: _indexed(in_place, t) for t in TERMS}
    first.close()
    in_place.close()
    data, idx = _shadow(tmp_path / "first.db")
    assert len(data) > 2 and idx


def test_the_same_store_writes_the_index_in_place_after_a_first_import(tmp_path: Path) -> None:
    """The write connection is renewed after the copy: its FTS5 table must not write over the
    copied index from a view of the empty one."""
    store = Store(tmp_path / "a.db")
    import_csv(write_csv(tmp_path / "a.csv", _rows(2000)), store)
    changed = _rows(500, start=1, salt=5)  # other texts for ids 1..500, a larger log_type
    changed = [(*r[:4], "2") for r in changed] + _rows(300, start=5000)
    summary = import_csv(write_csv(tmp_path / "b.csv", changed), store)
    assert summary.new == 300 and summary.updated == 500
    _check_index(store)
    store.close()
    reopened = Store(tmp_path / "a.db")
    _check_index(reopened)
    reopened.close()


def test_an_interrupted_first_import_leaves_nothing_and_the_next_one_everything(tmp_path: Path) -> None:
    export = write_csv(tmp_path / "export.csv", _rows(40_000))
    store = Store(tmp_path / "a.db")

    def stop(stage: str, done: int, total: int) -> None:
        if stage == "write" and done > 5000:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        import_csv(export, store, progress=stop)
    assert store.reader.execute("SELECT count(*) FROM posts").fetchone()[0] == 0
    assert store.reader.execute("SELECT count(*) FROM fts_content_idx").fetchone()[0] == 0
    assert not scratch_path(store.path).exists()
    assert import_csv(export, store).new == 40_000
    _check_index(store)
    store.close()


def test_a_scratch_index_left_by_a_killed_import_is_replaced_and_removed_with_the_archive(
    tmp_path: Path,
) -> None:
    db = tmp_path / "a.db"
    scratch_path(db).write_bytes(b"left by a killed import")
    store = Store(db)
    import_csv(write_csv(tmp_path / "a.csv", _rows(100)), store)
    _check_index(store)
    assert not scratch_path(db).exists()
    store.close()
    scratch_path(db).write_bytes(b"again")
    remove_database(db)
    assert not db.exists() and not scratch_path(db).exists()


def test_without_room_for_the_scratch_index_the_import_indexes_in_place(tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    scratch_path(db).mkdir()  # where the scratch file would go, something it cannot replace
    store = Store(db)
    assert import_csv(write_csv(tmp_path / "a.csv", _rows(500)), store).new == 500
    _check_index(store)
    store.close()


def _post_indexes(store: Store) -> list[tuple[str, str]]:
    return sorted(
        (str(name), str(sql))
        for name, sql in store.reader.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'posts'"
        )
    )


def _check_post_indexes(store: Store, schema: list[tuple[str, str]]) -> None:
    """The posts table has the schema's indexes, whole and consistent with its rows, and the
    queries that need them use them."""
    assert _post_indexes(store) == schema
    assert store.reader.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    plan = " ".join(
        str(r[-1])
        for r in store.reader.execute(
            "EXPLAIN QUERY PLAN SELECT post_id FROM posts WHERE timestamp > '2024-01-05'"
        )
    )
    assert "posts_time" in plan, plan
    in_time_order = store.reader.execute(
        "SELECT count(*) FROM posts INDEXED BY posts_time WHERE timestamp > ''"
    ).fetchone()[0]
    assert (
        in_time_order
        == store.reader.execute("SELECT count(*) FROM posts NOT INDEXED WHERE timestamp > ''").fetchone()[0]
    )


@pytest.mark.parametrize("side_index", [True, False], ids=["side-index", "in-place"])
def test_a_first_import_leaves_the_posts_indexes_whole(tmp_path: Path, side_index: bool) -> None:
    """Whatever a first import does to write fast (a side text index, or the text index in
    place), the archive must end with the schema's post indexes, complete; an interrupted
    one must leave them as they were; a later import into the filled archive must keep them
    current."""
    schema = _post_indexes(Store(tmp_path / "fresh.db"))
    assert {name for name, _ in schema} >= {"posts_time", "posts_reply_to", "posts_thread_root"}
    db = tmp_path / "a.db"
    if not side_index:
        scratch_path(db).mkdir()  # no room for the side index: the text index is written in place
    store = Store(db)
    export = write_csv(tmp_path / "export.csv", _rows(20_000))

    def stop(stage: str, done: int, total: int) -> None:
        if stage == "write" and done > 5000:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        import_csv(export, store, progress=stop)
    assert _post_indexes(store) == schema
    assert import_csv(export, store).new == 20_000
    _check_post_indexes(store, schema)
    more = _rows(3000, start=50_000, salt=3)
    assert import_csv(write_csv(tmp_path / "more.csv", more), store).new == 3000
    _check_post_indexes(store, schema)
    users = dict(store.reader.execute("SELECT name, user_id FROM users"))
    ids = [
        r[0]
        for r in store.reader.execute(
            "SELECT post_id FROM posts WHERE user_id = ? ORDER BY post_id", (users["user3"],)
        )
    ]
    assert ids == sorted(
        i
        for i in [*range(1, 20_001), *range(50_000, 53_000)]
        if f"user{(i - 1 if i < 50_000 else i - 50_000) % 7}" == "user3"
    )
    store.close()
