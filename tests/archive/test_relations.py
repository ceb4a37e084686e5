"""One post, one row, with every relation the archive's owner has to it (issue 40, point 2).

A person can write a post, repost it, like it and bookmark it; an X archive, a Twilog CSV and a
Mastodon archive may each bring one of these for the same post. The archive keeps the set:
``--kind like`` finds every like (a bookmarked one, a like of one's own post), ``--kind
bookmark`` every bookmark, stats count relations, and the import line's counts are what
``stats`` then shows. Archives written before (schema 7) migrate in place.

``tests/data/archive-schema7.db`` was written by mcpkit at schema 7 (commit 8c65608) from the
fixtures below (:func:`x_export`, :func:`mastodon_export`), with ``archive import``.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from mcpkit.archive.posts import KINDS, Post
from mcpkit.archive.store import SCHEMA_VERSION, Store
from tests.archive.helpers import write_csv
from tests.archive_faces.conftest import cli
from tests.export_fixtures import mastodon
from tests.export_fixtures.x_archive import XLike, XTweet, write_x_archive

OWN = "1623552437155561473"
OTHER = "1500000000000000001"
SCHEMA7 = Path(__file__).resolve().parents[1] / "data" / "archive-schema7.db"


def x_export(path: Path) -> Path:
    """An X archive: one tweet of the account, which the account also liked, and one other like."""
    return write_x_archive(
        path,
        [XTweet(OWN, "my own zebra post", "2023-02-09 03:14:16")],
        [XLike(OWN, "my own zebra post"), XLike(OTHER, "a liked zebra post")],
        account="alice",
    )


def mastodon_export(path: Path) -> Path:
    """A Mastodon archive: a public toot the account liked and bookmarked, and a direct note."""
    items = [
        mastodon.note(1, mastodon.mastodon_html("a public zebra toot")),
        mastodon.note(2, mastodon.mastodon_html("a secret zebra note"), to=[], cc=[]),
    ]
    archive = mastodon.Archive(items, likes=[mastodon.status_uri(1)], bookmarks=[mastodon.status_uri(1)])
    return mastodon.write_archive(path, archive)


def twilog_export(path: Path) -> Path:
    """Twilog's CSV: the other post liked and bookmarked (two rows of one id)."""
    url = f"https://twitter.com/carol/status/{OTHER}"
    return write_csv(
        path,
        [
            (OTHER, url, "2023-01-05 00:00:00", "a liked zebra post", "2"),
            (OTHER, url, "2023-01-05 00:00:00", "a liked zebra post", "3"),
        ],
    )


def _json(*args: str) -> Any:
    done = cli(*args, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _stats(db: Path, *kind: str) -> dict[str, Any]:
    args = [a for k in kind for a in ("--kind", k)]
    found: dict[str, Any] = _json("stats", *args, "--db", str(db))
    return found


def _text_ids(db: Path, kind: str) -> set[str]:
    return {p["id"] for p in _json("text", "zebra", "--kind", kind, "--db", str(db))}


def test_a_like_of_ones_own_post_is_a_like_and_the_import_line_equals_stats(tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    report = _json("import", str(x_export(tmp_path / "x.zip")), "--db", str(db))
    assert report["exports"][0]["kinds"] == {"post": 1, "like": 2}
    assert _stats(db, "all")["by_kind"] == {"post": 1, "like": 2}
    assert _stats(db, "like")["total_posts"] == 2
    assert _text_ids(db, "like") == {OWN, OTHER}
    assert _text_ids(db, "post") == {OWN}
    assert _stats(db)["total_posts"] == 1  # authored, the default: the own post once


def test_a_post_liked_and_bookmarked_keeps_both_in_every_export(tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    _json(
        "import",
        str(mastodon_export(tmp_path / "m.tar.gz")),
        str(twilog_export(tmp_path / "t.csv")),
        "--db",
        str(db),
    )
    toot = str(mastodon.status_uri(1))
    assert _text_ids(db, "like") == {toot, OTHER}
    assert _text_ids(db, "bookmark") == {toot, OTHER}
    by_kind = _stats(db, "all")["by_kind"]
    assert (by_kind["like"], by_kind["bookmark"]) == (2, 2)
    found = {p["id"]: p for p in _json("text", "zebra", "--kind", "all", "--db", str(db))}
    assert len(found) == 2  # one row per post (the direct note is not shown)
    assert found[toot]["relations"] == ["post", "like", "bookmark"]
    assert found[OTHER]["relations"] == ["like", "bookmark"]


def _row(store: Store, post_id: int) -> tuple[Any, ...]:
    row = store.reader.execute(
        "SELECT p.post_id, coalesce(u.name, ''), p.url, p.timestamp, p.content, p.log_type, p.platform, "
        "p.kind, p.relations, p.source_id, p.account, p.visibility FROM posts p "
        "LEFT JOIN users u ON u.user_id = p.user_id WHERE p.post_id = ?",
        (post_id,),
    ).fetchone()
    assert row is not None
    return tuple(row)


_ID = 1623552437155561999
_URL = f"https://x.com/alice/status/{_ID}"


def _record(kind: str, twilog: bool, content: str) -> Post:
    """The one post as one export brings it with one relation (a Twilog row or an X record)."""
    log_type = {"like": 2, "bookmark": 3}.get(kind, 1)
    if twilog:
        return Post(_ID, "", "2023-01-01 00:00:00", _URL, content, log_type)
    return Post(
        _ID,
        "alice",
        "2023-01-01 00:00:00",
        _URL,
        content,
        log_type,
        kind=kind,
        source_id=str(_ID),
        account="@alice",
    )


@st.composite
def _relation_records(draw: st.DrawFn) -> tuple[str, list[tuple[str, bool]], list[tuple[str, bool]]]:
    """What one person's exports say of one post: written or reposted (or neither), liked,
    bookmarked; each relation from a Twilog row or an X record, some more than once; and an
    order to import them in."""
    base = draw(st.sampled_from(["post", "repost", ""]))
    kinds = draw(st.sets(st.sampled_from(["like", "bookmark"]), min_size=0 if base else 1))
    wanted = [base, *sorted(kinds)] if base else sorted(kinds)
    records = [(kind, draw(st.booleans())) for kind in wanted for _ in range(draw(st.integers(1, 2)))]
    return base, records, draw(st.permutations(records))


@settings(max_examples=40, deadline=None)
@given(_relation_records(), st.booleans())
def test_any_relations_in_any_import_order_give_the_same_row(
    case: tuple[str, list[tuple[str, bool]], list[tuple[str, bool]]], csv: bool
) -> None:
    """``csv``: each Twilog row comes as a Twilog CSV import (the rows' own write path),
    else as a post of any export."""
    from mcpkit.archive.importers.twilog_csv import import_csv

    base, records, order = case
    content = "RT @bob: zebra words" if base == "repost" else "zebra words"
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for number, sequence in enumerate((records, order, [*order, *records])):
            store = Store(Path(tmp) / f"{number}.db")
            try:
                for step, (kind, twilog) in enumerate(sequence):  # each record an import of its own
                    record = _record(kind, twilog, content)
                    if twilog and csv:
                        row = (str(_ID), _URL, record.timestamp, content, str(record.log_type))
                        import_csv(write_csv(Path(tmp) / f"{number}-{step}.csv", [row]), store)
                        continue
                    with store.transaction() as conn:
                        store.upsert_posts(conn, [record])
                rows.append(_row(store, _ID))
                _, arrays = store.post_arrays()
                relations = int(arrays.relations[0])
            finally:
                store.close()
            held = {KINDS[bit] for bit in range(len(KINDS)) if relations >> bit & 1}
            assert held == {kind for kind, _ in records}
    assert rows[0] == rows[1] == rows[2]


def test_an_archive_of_schema_7_migrates_in_place_and_a_reimport_restores_what_it_lost(
    tmp_path: Path,
) -> None:
    db = tmp_path / "old.db"
    shutil.copy(SCHEMA7, db)
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 7
    before = conn.execute("SELECT post_id, kind, content FROM posts ORDER BY post_id").fetchall()
    conn.close()
    assert SCHEMA_VERSION > 7
    # opening migrates: every post kept, its stored kind its relation
    assert _stats(db, "all")["total_posts"] == len(before)
    assert _stats(db, "like")["total_posts"] == 1
    migrated = sqlite3.connect(db)
    assert migrated.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert migrated.execute("SELECT post_id, kind, content FROM posts ORDER BY post_id").fetchall() == before
    migrated.close()
    # importing the same exports again adds the relations schema 7 could not hold
    _json(
        "import",
        str(x_export(tmp_path / "x.zip")),
        str(mastodon_export(tmp_path / "m.tar.gz")),
        "--db",
        str(db),
    )
    by_kind = _stats(db, "all")["by_kind"]
    assert (by_kind["like"], by_kind["bookmark"]) == (3, 1)
    assert "a secret zebra note" not in json.dumps(_json("text", "zebra", "--kind", "all", "--db", str(db)))


def test_import_line_counts_equal_stats_for_every_kind_of_a_merged_archive(tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    exports = [x_export(tmp_path / "x.zip"), twilog_export(tmp_path / "t.csv")]
    report = _json("import", *map(str, exports), "--db", str(db))
    assert [e["kinds"] for e in report["exports"]] == [{"post": 1, "like": 2}, {"like": 1, "bookmark": 1}]
    # the Twilog like is the X archive's other like: one like more is none; its bookmark is new
    assert _stats(db, "all")["by_kind"] == {"post": 1, "like": 2, "bookmark": 1}
    assert _text_ids(db, "bookmark") == {OTHER}
