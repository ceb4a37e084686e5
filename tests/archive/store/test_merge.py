"""Several exports of one person merged into one archive: each post once, the richer record
wins field by field, whatever the order of the imports, and re-imports count what they add.

The exports are written by the format fixtures (tests/export_fixtures) the way X, Mastodon and
Twilog write them; the imports go through the command a person runs.
"""

from __future__ import annotations

import itertools
import json
import sqlite3
import zipfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpkit.archive.posts import Media, Post
from mcpkit.archive.store import is_cut, merge_posts, normalized
from tests.archive.helpers import write_csv
from tests.archive_faces.conftest import cli
from tests.export_fixtures import mastodon
from tests.export_fixtures.x_archive import (
    XLike,
    XMedia,
    XTweet,
    archive_files,
    expected_text,
    write_x_archive,
)

LONG = (
    "A long zebra post that X cuts in tweets.js and keeps whole in note-tweet.js, so an archive "
    "without that file has only its first part, and the richer archive must win: "
    + " ".join(f"stripe{n}" for n in range(60))
)
TWEETS = [
    XTweet("1623552437155561473", "first words about zebras & stripes", "2023-02-09 03:14:16"),
    XTweet("1623552437155561474", LONG, "2023-02-09 03:15:00", note=True),
    XTweet(
        "1623552437155561475", "@alice a zebra reply", "2023-02-09 03:16:00", reply_to="1623552437155561473"
    ),
    XTweet(
        "1623552437155561476",
        "zebra picture",
        "2023-02-09 03:17:00",
        media=(XMedia("photo", "KEY1", "a zebra"),),
    ),
]
LATER = XTweet("1623552437155561480", "a later zebra", "2023-03-01 00:00:00")
LIKE = XLike("1500000000000000001", "a liked zebra post")
BOOKMARK_ID = 1500000000000000002


def older_x_archive(path: Path) -> Path:
    """An older download: the same tweets, no like, and no note-tweet.js (long posts cut)."""
    files = archive_files(TWEETS, account="alice")
    del files["data/note-tweet.js"]
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return path


def newer_x_archive(path: Path) -> Path:
    return write_x_archive(path, [LATER, *TWEETS], [LIKE], account="alice")


def twilog_csv(path: Path) -> Path:
    """Twilog's CSV of the same account: the tweets as Twilog has them (no reply target, no
    media, the long one cut, entities escaped), the like with its author, and a bookmark an X
    archive never holds."""
    rows = [
        (t.id, f"https://twitter.com/alice/status/{t.id}", t.created, _twilog_text(t), "1") for t in TWEETS
    ]
    rows.append(
        (LIKE.id, f"https://twitter.com/carol/status/{LIKE.id}", "2023-01-05 00:00:00", LIKE.text or "", "2")
    )
    rows.append(
        (
            str(BOOKMARK_ID),
            f"https://twitter.com/dave/status/{BOOKMARK_ID}",
            "2023-01-06 00:00:00",
            "a bookmarked zebra",
            "3",
        )
    )
    return write_csv(path, rows)


def _twilog_text(tweet: XTweet) -> str:
    text = tweet.text if len(tweet.text) < 200 else tweet.text[:140] + "…"
    return text.replace("&", "&amp;")


def mastodon_archive(path: Path) -> Path:
    items = [
        mastodon.note(1, mastodon.mastodon_html("a zebra on Mastodon"), published="2023-05-01T10:00:00Z"),
        mastodon.note(2, mastodon.mastodon_html("another zebra toot"), published="2023-05-02T10:00:00Z"),
        mastodon.announce(3, "https://other.example/users/bob/statuses/777"),
    ]
    archive = mastodon.Archive(items, likes=["https://other.example/users/bob/statuses/900"])
    return mastodon.write_archive(path, archive)


def _import(db: Path, *paths: Path) -> dict[str, Any]:
    done = cli("import", *map(str, paths), "--db", str(db), "--json")
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def _counts(export: dict[str, Any]) -> tuple[int, int, int]:
    return export["new"], export["updated"], export["unchanged"]


def _dump(db: Path) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    conn = sqlite3.connect(db)
    try:
        posts = conn.execute(
            "SELECT p.post_id, coalesce(u.name, ''), p.url, p.timestamp, p.ts, p.content, p.log_type, p.platform, "
            "p.kind, p.source_id, p.account, p.reply_to, p.thread_root, p.quote_of, p.repost_of, "
            "p.content_warning, p.lang, p.has_media FROM posts p LEFT JOIN users u ON u.user_id = p.user_id "
            "ORDER BY p.post_id"
        ).fetchall()
        media = conn.execute("SELECT * FROM media ORDER BY post_id, position").fetchall()
    finally:
        conn.close()
    return posts, media


@pytest.fixture
def exports(tmp_path: Path) -> dict[str, Path]:
    return {
        "older": older_x_archive(tmp_path / "twitter-2023-02.zip"),
        "newer": newer_x_archive(tmp_path / "twitter-2024-06.zip"),
        "twilog": twilog_csv(tmp_path / "twilog.csv"),
    }


def test_two_x_archives_and_a_twilog_csv_of_one_account_store_each_post_once_the_richest(
    tmp_path: Path, exports: dict[str, Path]
) -> None:
    db = tmp_path / "a.db"
    older = _import(db, exports["older"])["exports"][0]
    assert _counts(older) == (4, 0, 0)
    newer = _import(db, exports["newer"])["exports"][0]
    # the later tweet and the like are new; the long post now has its whole text
    assert _counts(newer) == (2, 1, 3)
    twilog = _import(db, exports["twilog"])["exports"][0]
    # the bookmark is new; the like gains its author and time; the tweets have nothing richer
    assert _counts(twilog) == (1, 1, 4)
    again = _import(db, exports["older"], exports["newer"], exports["twilog"])
    assert [_counts(e) for e in again["exports"]] == [(0, 0, 4), (0, 0, 6), (0, 0, 6)]

    posts = {row[0]: row for row in _dump(db)[0]}
    assert len(posts) == 7  # 5 tweets, 1 like, 1 bookmark: each once
    long = posts[int(TWEETS[1].id)]
    assert long[5] == expected_text(TWEETS[1]) and not long[5].endswith("…")
    reply = posts[int(TWEETS[2].id)]
    assert (reply[8], reply[11]) == ("reply", TWEETS[0].id)  # X knows the target, Twilog does not
    assert posts[int(TWEETS[0].id)][5] == "first words about zebras & stripes"  # unescaped once
    like = posts[int(LIKE.id)]
    # the author comes from Twilog (like.js does not name it); the time stays the X archive's
    # (the liked tweet's own time, from its id), which a Twilog row cannot override
    assert (like[1], like[3], like[8]) == ("carol", "2022-03-05 06:47:23", "like")
    assert posts[BOOKMARK_ID][8] == "bookmark"
    assert {row[10] for row in posts.values()} == {"@alice"}
    media = _dump(db)[1]
    assert [(m[0], m[2], m[5]) for m in media] == [(int(TWEETS[3].id), "image", "a zebra")]

    found = json.loads(cli("text", "zebra", "--kind", "all", "--db", str(db), "--json").stdout)
    ids = [p["id"] for p in found]
    assert len(ids) == len(set(ids)) == 7
    authored = json.loads(cli("text", "zebra", "--db", str(db), "--json").stdout)
    assert sorted(p["id"] for p in authored) == sorted([LATER.id, *(t.id for t in TWEETS)])


def test_the_merged_archive_is_the_same_whatever_the_order_of_the_imports(
    tmp_path: Path, exports: dict[str, Path]
) -> None:
    dumps = []
    for number, order in enumerate(itertools.permutations(["older", "newer", "twilog"])):
        db = tmp_path / f"order{number}.db"
        for name in order:
            _import(db, exports[name])
        dumps.append(_dump(db))
    assert all(dump == dumps[0] for dump in dumps[1:])


def test_an_x_archive_a_twilog_csv_and_a_mastodon_archive_give_one_search_with_no_post_twice(
    tmp_path: Path, exports: dict[str, Path]
) -> None:
    db = tmp_path / "a.db"
    toots = mastodon_archive(tmp_path / "archive-20240601.tar.gz")
    report = _import(db, exports["newer"], exports["twilog"], toots)
    assert [e["format"] for e in report["exports"]] == ["x-archive", "twilog-csv", "mastodon"]
    mastodon_posts = report["exports"][2]["new"]
    assert mastodon_posts == 4  # two toots, a boost, a like
    stats = json.loads(cli("stats", "--kind", "all", "--db", str(db), "--json").stdout)
    assert stats["total_posts"] == 7 + mastodon_posts
    assert stats["by_platform"] == {"x": 7, "mastodon": mastodon_posts}
    found = json.loads(cli("text", "zebra", "--db", str(db), "--json").stdout)
    ids = [p["id"] for p in found]
    assert len(ids) == len(set(ids)) == 5 + 2  # five tweets, two toots; likes and bookmarks only when asked
    assert {p["platform"] for p in found} == {"x", "mastodon"}
    assert {p["account"] for p in found} == {"@alice", mastodon.ACCOUNT}


# -- the merge rule itself ----------------------------------------------------------------------

TEXTS = st.sampled_from(["", "short", "short…", "short text in full", "another text", "another…"])
FIELD = st.sampled_from(["", "a", "b"])
MEDIA = st.lists(
    st.builds(
        Media,
        st.sampled_from(["image", "video"]),
        st.sampled_from(["", "p1", "p2"]),
        st.sampled_from(["", "u1", "u2"]),
        st.sampled_from(["", "alt"]),
    ),
    max_size=2,
).map(tuple)


@st.composite
def versions(draw: st.DrawFn, twilog: bool) -> Post:
    """One post (id 7) as a Twilog row or as an export's record gives it."""
    content = draw(TEXTS)
    if twilog:
        return normalized(Post(7, draw(FIELD), draw(FIELD), draw(FIELD), content, draw(st.integers(1, 3))))
    kind = draw(st.sampled_from(["post", "reply", "repost", "like", "bookmark"]))
    return normalized(
        Post(
            7,
            draw(FIELD),
            draw(FIELD),
            draw(FIELD),
            content,
            1,
            kind=kind,
            source_id="7",
            account=draw(FIELD),
            reply_to=draw(FIELD),
            lang=draw(FIELD),
            media=draw(MEDIA),
        )
    )


@settings(max_examples=300)
@given(a=st.booleans().flatmap(versions), b=st.booleans().flatmap(versions))
def test_importing_either_version_again_changes_nothing(a: Post, b: Post) -> None:
    """A re-import is 'unchanged': the merged post already holds everything either version had."""
    merged = merge_posts(a, b)
    assert merge_posts(merged, a) == merged
    assert merge_posts(merged, b) == merged


@settings(max_examples=300)
@given(twilog=versions(True), export=versions(False))
def test_a_twilog_row_and_an_export_merge_alike_in_either_order(twilog: Post, export: Post) -> None:
    assert merge_posts(twilog, export) == merge_posts(export, twilog)


@settings(max_examples=200)
@given(a=versions(False), b=versions(False))
def test_the_merged_post_keeps_every_value_either_had(a: Post, b: Post) -> None:
    merged = merge_posts(a, b)
    for name in ("user", "timestamp", "url", "account", "reply_to", "lang"):
        assert getattr(merged, name) in {getattr(a, name), getattr(b, name)}
        assert getattr(merged, name) or not (getattr(a, name) or getattr(b, name))
    assert len(merged.content) >= max(len(a.content), len(b.content)) or not is_cut(
        min(a.content, b.content, key=len), max(a.content, b.content, key=len)
    )
    for item in (*a.media, *b.media):  # every picture of either is there, by its URL or its path
        assert any(
            m == item or (item.url and m.url == item.url) or (item.path and m.path == item.path)
            for m in merged.media
        ), item


def test_the_twilog_importer_on_its_own_merges_as_the_command_does(
    tmp_path: Path, exports: dict[str, Path]
) -> None:
    """import_csv (the Twilog CSV alone, as import-twilog-search uses it) meets the X archive's
    posts by the same rules as the command, and counts them the same."""
    from mcpkit.archive.importers import import_csv
    from mcpkit.archive.store import Store

    by_command, alone = tmp_path / "command.db", tmp_path / "alone.db"
    _import(by_command, exports["newer"])
    counted = _import(by_command, exports["twilog"])["exports"][0]
    _import(alone, exports["newer"])
    store = Store(alone)
    try:
        summary = import_csv(exports["twilog"], store)
    finally:
        store.close()
    assert (summary.new, summary.updated, summary.unchanged) == _counts(counted)

    def without_account(dump: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
        return [row[:10] + row[11:] for row in dump]  # a CSV alone does not name its account

    assert without_account(_dump(alone)[0]) == without_account(_dump(by_command)[0])
    assert _dump(alone)[1] == _dump(by_command)[1]
