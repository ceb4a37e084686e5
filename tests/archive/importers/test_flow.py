"""The import flow: detection by content, one transaction per export, counts, the exports table,
the command line, and an interrupted import that resumes with nothing lost or duplicated.

The format readers have their own tests; here the flow runs with the Twilog CSV reader and
with a reader written in this file (:class:`ListReader`), which yields exactly the posts a
test gives it, so every count and merged field is known in advance.
"""

from __future__ import annotations

import gzip
import json
import os
import pty
import signal
import sqlite3
import subprocess
import sys
import tempfile
import zipfile
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpkit.archive.errors import ImportFormatError
from mcpkit.archive.importers.base import (
    DIRECT_MESSAGE,
    EARLIER_VERSION,
    ReadLimits,
    ReadSummary,
    TwilogCsvReader,
    kind_counts_text,
    skipped_text,
)
from mcpkit.archive.importers.detect import EXPECTED, detect
from mcpkit.archive.importers.flow import ExportResult, import_export
from mcpkit.archive.posts import Media, Post, post_key
from mcpkit.archive.query import parse_terms
from mcpkit.archive.store import Store, merge_posts, normalized, read_posts
from tests.archive.helpers import csv_text, row, write_csv
from tests.archive_faces.conftest import cli, sample_csv


class ListReader:
    """An export reader over a list of posts; fails with ``fail`` after ``fail_after`` records."""

    def __init__(
        self,
        posts: Sequence[Post],
        *,
        account: str = "@alice@example.social",
        fail_after: int | None = None,
        fail: BaseException | None = None,
    ) -> None:
        self.format = "mastodon"
        self.account = account
        self._posts = posts
        self._fail_after = fail_after
        self._fail = fail or ImportFormatError("outbox.json: truncated")
        self._summary = ReadSummary()

    def records(self) -> Iterator[Post]:
        for index, post in enumerate(self._posts):
            if self._fail_after is not None and index >= self._fail_after:
                raise self._fail
            self._summary.kinds[post.kind or "post"] += 1
            yield post
        self._summary.skipped["Question"] += 2

    def summary(self) -> ReadSummary:
        return self._summary


def toot(n: int, text: str = "", **fields: Any) -> Post:
    source = f"https://example.social/users/alice/statuses/{n}"
    return Post(
        post_key("mastodon", source),
        "alice",
        f"2024-01-{1 + n % 28:02d} 10:00:00",
        source,
        text or f"toot number {n}",
        1,
        platform="mastodon",
        kind=fields.pop("kind", "post"),
        source_id=source,
        **fields,
    )


def _rows(db: Path, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def _import(store: Store, posts: Sequence[Post], **kwargs: Any) -> Any:
    return import_export(ListReader(posts), Path("archive.tar.gz"), store, **kwargs)


# -- detection ---------------------------------------------------------------------------------


def test_a_twilog_csv_is_recognised_plain_gzipped_zipped_and_renamed(tmp_path: Path) -> None:
    text = csv_text([row(1, "alice", "hello"), row(2, "alice", "again")]).encode()
    (tmp_path / "plain.csv").write_bytes(text)
    (tmp_path / "packed.csv.gz").write_bytes(gzip.compress(text))
    with zipfile.ZipFile(tmp_path / "zipped.zip", "w") as archive:
        archive.writestr("twilog.csv", text)
    (tmp_path / "renamed.dat").write_bytes(gzip.compress(text))
    for name in ("plain.csv", "packed.csv.gz", "zipped.zip", "renamed.dat"):
        assert detect(tmp_path / name).name == "twilog-csv", name


def test_every_export_is_recognised_by_its_content_whatever_its_name(tmp_path: Path) -> None:
    """The format fixtures' exports, zipped, packed or unpacked, and renamed to mislead."""
    from tests.export_fixtures import bluesky, mastodon
    from tests.export_fixtures.x_archive import trap_records, write_x_archive

    tweets, likes = trap_records()
    made = {
        "x-archive": [
            write_x_archive(tmp_path / "twitter.zip", tweets, likes),
            write_x_archive(tmp_path / "twitter-folder", tweets, likes, zipped=False),
            write_x_archive(tmp_path / "renamed.tar.gz", tweets, likes),
        ],
        "mastodon": [
            mastodon.write_archive(tmp_path / "archive.tar.gz", mastodon.sample_archive()[0]),
            mastodon.write_archive(tmp_path / "mastodon-folder", mastodon.sample_archive()[0], "dir"),
            mastodon.write_archive(tmp_path / "renamed.csv", mastodon.sample_archive()[0]),
        ],
        "bluesky-car": [
            bluesky.write_car(tmp_path / "repo.car", bluesky.sample_repository()[0]),
            bluesky.write_car(tmp_path / "renamed.zip", bluesky.sample_repository()[0]),
        ],
    }
    for name, paths in made.items():
        for path in paths:
            assert detect(path).name == name, path


@pytest.mark.parametrize(
    ("name", "data", "found"),
    [
        ("photo.jpg", b"\xff\xd8\xff\xe0" + bytes(100), "found a JPEG image"),
        ("notes.zip", None, "found a zip file holding notes.txt"),
        ("cut.zip", b"PK\x03\x04" + bytes(40), "found a damaged or truncated zip file"),
        ("blob.bin", b"\x00\x01\x02" * 50, "found binary data"),
        ("tweets.js", b'window.YTD.tweets.part0 = [{"tweet": {}}]', "found one file of an X archive"),
        ("outbox.json", b'{"orderedItems": []}', "found a JSON file"),
    ],
)
def test_what_is_no_export_is_refused_in_one_line(
    tmp_path: Path, name: str, data: bytes | None, found: str
) -> None:
    path = tmp_path / name
    if data is None:
        with zipfile.ZipFile(path, "w") as archive:
            archive.writestr("notes.txt", "just notes")
    else:
        path.write_bytes(data)
    with pytest.raises(ImportFormatError) as refused:
        detect(path)
    message = str(refused.value)
    assert "\n" not in message and message.startswith(f"{path}: {EXPECTED}; ") and found in message


def test_a_folder_that_is_no_export_and_a_missing_path_are_refused(tmp_path: Path) -> None:
    (tmp_path / "holiday.jpg").write_bytes(b"\xff\xd8\xff")
    with pytest.raises(ImportFormatError, match=r"found a folder holding holiday\.jpg"):
        detect(tmp_path)
    with pytest.raises(ImportFormatError, match="no such file or folder"):
        detect(tmp_path / "gone.zip")


def test_a_text_file_that_is_no_twilog_csv_gets_the_csv_readers_reason(tmp_path: Path) -> None:
    path = tmp_path / "people.csv"
    path.write_text("name,age\nalice,30\n")
    with pytest.raises(
        ImportFormatError,
        match=r"expected a Twilog CSV export .* found a row that is not one \(expected 5 fields, got 2\)",
    ):
        detect(path).open(path, ReadLimits())


# -- the flow ----------------------------------------------------------------------------------


def test_posts_of_an_export_are_stored_whole_with_media_and_the_export_recorded(tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    picture = Media("image", "media_attachments/1.png", "https://example.social/1.png", "a red bicycle")
    posts = [
        toot(1, "first toot", media=(picture,), lang="en"),
        toot(
            2,
            "a reply",
            kind="reply",
            reply_to="https://example.social/users/alice/statuses/1",
            thread_root="https://example.social/users/alice/statuses/1",
            content_warning="spoilers",
        ),
        Post(
            post_key("mastodon", "https://other.example/notes/9"),
            "",
            "2024-02-01 00:00:00",
            "https://other.example/notes/9",
            "",
            2,
            platform="mastodon",
            kind="like",
            source_id="https://other.example/notes/9",
            account="@alice@example.social",
        ),
    ]
    store = Store(db)
    try:
        result = _import(store, posts)
        assert (result.new, result.updated, result.unchanged) == (3, 0, 0)
        assert result.line() == (
            "Mastodon archive of @alice@example.social: 1 post, 1 reply, 1 like; 3 new, 0 updated, 0 unchanged; "
            "skipped: 2 Question records"
        )
    finally:
        store.close()
    stored = _rows(
        db,
        "SELECT post_id, platform, kind, source_id, account, reply_to, thread_root, "
        "content_warning, lang, has_media, log_type FROM posts ORDER BY post_id",
    )
    assert {r[0]: r[1:] for r in stored} == {
        posts[0].post_id: (
            "mastodon",
            "post",
            posts[0].source_id,
            "@alice@example.social",
            "",
            "",
            "",
            "en",
            1,
            1,
        ),
        posts[1].post_id: (
            "mastodon",
            "reply",
            posts[1].source_id,
            "@alice@example.social",
            posts[1].reply_to,
            posts[1].thread_root,
            "spoilers",
            "",
            0,
            1,
        ),
        posts[2].post_id: (
            "mastodon",
            "like",
            posts[2].source_id,
            "@alice@example.social",
            "",
            "",
            "",
            "",
            0,
            2,
        ),
    }
    assert _rows(db, "SELECT post_id, position, type, path, url, alt FROM media") == [
        (posts[0].post_id, 0, "image", picture.path, picture.url, picture.alt)
    ]
    [(fmt, account, path, summary)] = _rows(db, "SELECT format, account, path, summary FROM exports")
    assert (fmt, account, path) == (
        "mastodon",
        "@alice@example.social",
        str(Path("archive.tar.gz").resolve()),
    )
    assert json.loads(summary)["new"] == 3


def test_reimporting_counts_unchanged_and_a_richer_export_counts_updated(tmp_path: Path) -> None:
    store = Store(tmp_path / "a.db")
    try:
        first = [toot(1, "a long text cut sho…"), toot(2), toot(3)]
        _import(store, first)
        again = _import(store, first)
        assert (again.new, again.updated, again.unchanged) == (0, 0, 3)
        richer = [
            toot(1, "a long text cut short by the first export"),
            toot(2, media=(Media("image", "p.png"),)),
            toot(3),
            toot(4),
        ]
        later = _import(store, richer)
        assert (later.new, later.updated, later.unchanged) == (1, 2, 1)
        kept = store.posts_by_ids([toot(1).post_id])[toot(1).post_id]
        assert kept["content"] == "a long text cut short by the first export"
        older = _import(store, first)  # the older export again takes nothing back
        assert (older.new, older.updated, older.unchanged) == (0, 0, 3)
    finally:
        store.close()


@pytest.mark.parametrize("fail", [ImportFormatError("outbox.json: truncated"), KeyboardInterrupt()])
def test_an_export_that_fails_halfway_leaves_the_archive_as_it_was(
    tmp_path: Path, fail: BaseException
) -> None:
    db = tmp_path / "a.db"
    store = Store(db)
    try:
        _import(store, [toot(1)])
        before = _rows(db, "SELECT * FROM posts"), _rows(db, "SELECT * FROM exports")
        with pytest.raises(type(fail)):
            import_export(
                ListReader([toot(n) for n in range(2, 40)], fail_after=30, fail=fail),
                Path("b.tar.gz"),
                store,
                batch_size=4,
            )
        assert (_rows(db, "SELECT * FROM posts"), _rows(db, "SELECT * FROM exports")) == before
        assert [p["post_id"] for p in store.text_search(parse_terms("number"), 50)] == [toot(1).post_id]
    finally:
        store.close()


def test_finishing_is_said_once_after_the_last_record_and_before_the_commit(tmp_path: Path) -> None:
    """The tail of a large import (the text index, the commit) moves no record: the flow says
    when it starts, once, after the last progress and while nothing is committed yet; an
    export that fails on the way never says it."""
    db = tmp_path / "a.db"
    store = Store(db)
    try:
        seen: list[tuple[str, int]] = []

        def finishing() -> None:
            seen.append(("finishing", _rows(db, "SELECT count(*) FROM posts")[0][0]))

        def progress(records: int, done: int, total: int) -> None:
            seen.append(("progress", records))

        import_export(
            ListReader([toot(n) for n in range(1, 40)]), Path("a.tar.gz"), store,
            progress=progress, finishing=finishing, batch_size=4,
        )  # fmt: skip
        assert [kind for kind, _ in seen].count("finishing") == 1
        assert seen[-1] == ("finishing", 0), "said last, before the commit made the posts visible"
        assert seen[-2] == ("progress", 39)
        assert _rows(db, "SELECT count(*) FROM posts")[0][0] == 39

        seen.clear()
        with pytest.raises(ImportFormatError):
            import_export(
                ListReader([toot(n) for n in range(40, 80)], fail_after=30, fail=ImportFormatError("cut")),
                Path("b.tar.gz"), store, progress=progress, finishing=finishing, batch_size=4,
            )  # fmt: skip
        assert seen and all(kind == "progress" for kind, _ in seen)
    finally:
        store.close()


def test_a_decompressors_complaint_becomes_one_line(tmp_path: Path) -> None:
    store = Store(tmp_path / "a.db")
    try:
        with pytest.raises(
            ImportFormatError, match=r"x.tar.gz: the file is truncated or damaged \(end of stream\)"
        ):
            import_export(
                ListReader([toot(1), toot(2)], fail_after=1, fail=EOFError("end of stream")),
                Path("x.tar.gz"),
                store,
            )
        assert store.counts()["total_posts"] == 0
    finally:
        store.close()


def test_an_account_named_only_at_the_end_is_given_to_the_records(tmp_path: Path) -> None:
    class LateAccount(ListReader):
        def records(self) -> Iterator[Post]:
            yield from super().records()
            self.account = "@alice"

    db = tmp_path / "a.db"
    store = Store(db)
    try:
        result = import_export(
            LateAccount([toot(1), toot(2, account="@other")], account=""), Path("x.zip"), store
        )
        assert result.account == "@alice"
    finally:
        store.close()
    assert sorted(r[0] for r in _rows(db, "SELECT account FROM posts")) == ["@alice", "@other"]


VARIANT = st.sampled_from(
    [
        {},
        {"text": "short…"},
        {"text": "short and then the whole of it"},
        {"kind": "reply", "reply_to": "https://example.social/users/alice/statuses/0"},
        {"media": (Media("image", "a.png"),)},
        {"media": (Media("image", "a.png", alt="alt text"), Media("video", "b.mp4"))},
        {"lang": "ja"},
        {"kind": "like", "text": ""},
        {"content_warning": "cw"},
    ]
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    stored=st.lists(st.tuples(st.integers(0, 6), VARIANT), max_size=6),
    incoming=st.lists(st.tuples(st.integers(0, 6), VARIANT), min_size=1, max_size=25),  # none: refused
    batch_size=st.integers(1, 5),
)
def test_counts_and_merged_posts_are_those_of_merging_one_record_after_another(
    stored: list[tuple[int, dict[str, Any]]], incoming: list[tuple[int, dict[str, Any]]], batch_size: int
) -> None:
    """However the export repeats a post and however it falls into batches, each post is
    counted once, and the archive holds what merging every record in turn gives."""

    def make(n: int, variant: dict[str, Any]) -> Post:
        fields = dict(variant)
        return toot(n, fields.pop("text", ""), **fields)

    model: dict[int, Post] = {}
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "a.db")
        try:
            for n, variant in stored:
                _import(store, [make(n, variant)])
                post = normalized(make(n, variant), "@alice@example.social")
                model[post.post_id] = (
                    merge_posts(model[post.post_id], post) if post.post_id in model else post
                )
            before = dict(model)
            result = _import(store, [make(n, v) for n, v in incoming], batch_size=batch_size)
            for n, variant in incoming:
                post = normalized(make(n, variant), "@alice@example.social")
                model[post.post_id] = (
                    merge_posts(model[post.post_id], post) if post.post_id in model else post
                )
            ids = {make(n, v).post_id for n, v in incoming}
            assert result.new == len(ids - before.keys())
            assert result.updated == sum(1 for i in ids & before.keys() if model[i] != before[i])
            assert result.unchanged == sum(1 for i in ids & before.keys() if model[i] == before[i])
            with store.transaction() as conn:
                assert read_posts(conn, sorted(model), 999) == model
        finally:
            store.close()


def test_the_twilog_reader_names_its_account_and_counts_kinds_and_malformed_rows(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text(
        csv_text(
            [row(1, "bob", "mine"), row(2, "bob", "RT @x: theirs"), row(3, "carol", "liked", log_type=2)]
        )
        + "not,a,row\n"
    )
    db = tmp_path / "a.db"
    store = Store(db)
    try:
        result = import_export(TwilogCsvReader(path), path, store)
    finally:
        store.close()
    assert result.account == "@bob"
    assert result.read.kinds == Counter({"post": 1, "repost": 1, "like": 1})
    assert result.read.malformed == 1 and result.read.samples[0].startswith("line 4: expected 5 fields")
    assert "malformed: 1 (line 4: expected 5 fields, got 3)" in result.line()
    assert {r[0] for r in _rows(db, "SELECT account FROM posts")} == {"@bob"}


@pytest.mark.parametrize(
    ("authors", "account"),
    [
        (["bob", "bob"], "@bob"),  # one account's export: every row is that account's
        (["bob", "carol"], ""),  # posts of two authors: no one account's export
    ],
)
def test_both_twilog_paths_give_a_csv_the_same_account(
    tmp_path: Path, authors: list[str], account: str
) -> None:
    """import_csv (import-twilog-search, the tests) and the import command's Twilog reader
    store the same account: the author of the CSV's own posts when they all name one."""
    from mcpkit.archive.importers import import_csv

    rows = [row(i, author, f"post {i}") for i, author in enumerate(authors, 1)]
    rows.append(row(9, "dave", "a post of dave's I liked", log_type=2))
    path = write_csv(tmp_path / "t.csv", rows)
    loads: list[Callable[[Store], object]] = [
        lambda store: import_csv(path, store),
        lambda store: import_export(TwilogCsvReader(path), path, store),
    ]
    stored = []
    for number, load in enumerate(loads):
        db = tmp_path / f"{number}.db"
        store = Store(db)
        try:
            load(store)
        finally:
            store.close()
        stored.append(_rows(db, "SELECT post_id, account, kind FROM posts ORDER BY post_id"))
    assert stored[0] == stored[1]
    assert {r[1] for r in stored[0]} == {account} and len(stored[0]) == 3


def test_the_summary_words_what_was_skipped_as_the_reader_named_it(tmp_path: Path) -> None:
    """Leaving out on purpose (edited posts' earlier versions, direct messages) is said in
    words, counted each; record types the export names are records of that type."""
    skipped = Counter({EARLIER_VERSION: 3, DIRECT_MESSAGE: 2, "dmConversation": 1})
    result = ExportResult(tmp_path / "x.zip", "x-archive", "@a", ReadSummary(Counter({"post": 1}), skipped))
    assert result.line().endswith(
        "; skipped: 3 earlier versions of edited posts, 2 direct messages, 1 dmConversation record"
    )
    one = Counter({EARLIER_VERSION: 1, "Question": 2})
    assert skipped_text(one) == "2 Question records, 1 earlier version of an edited post"
    many = Counter({f"type{i}": 1 for i in range(7)})
    assert skipped_text(many).endswith("1 type4 record, ...")


def test_kind_counts_text_lists_kinds_in_order() -> None:
    assert (
        kind_counts_text(Counter({"like": 3120, "post": 12408, "reply": 1}))
        == "12,408 posts, 1 reply, 3,120 likes"
    )
    assert kind_counts_text(Counter()) == "no records"


# -- the command line --------------------------------------------------------------------------


def test_the_command_imports_several_exports_with_a_line_each_and_json_totals(tmp_path: Path) -> None:
    other = write_csv(tmp_path / "other.csv", [row(1, "bob", "first"), row(2, "bob", "second")])
    db = str(tmp_path / "a.db")
    done = cli("import", str(sample_csv()), str(other), "--db", db)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines == [
        f"{sample_csv()}: Twilog CSV: 330 posts, 37 likes, 39 bookmarks; 330 new, 0 updated, "
        "0 unchanged; 76 records repeating a post",
        f"{other}: Twilog CSV of @bob: 2 posts; 2 new, 0 updated, 0 unchanged",
    ]
    again = json.loads(cli("import", str(other), str(sample_csv()), "--db", db, "--json").stdout)
    assert (again["new"], again["unchanged"], again["rows"]) == (0, 332, 408)
    assert [e["format"] for e in again["exports"]] == ["twilog-csv", "twilog-csv"]
    assert len(_rows(Path(db), "SELECT * FROM exports")) == 4


def test_a_bad_export_stops_the_command_after_the_ones_before_it(tmp_path: Path) -> None:
    good = write_csv(tmp_path / "good.csv", [row(1, "bob", "kept")])
    data = gzip.compress(csv_text([row(n, "bob", f"post {n}") for n in range(2, 3000)]).encode())
    cut = tmp_path / "cut.csv.gz"
    cut.write_bytes(data[: len(data) // 2])
    db = tmp_path / "a.db"
    done = cli("import", str(good), str(cut), "--db", str(db))
    assert done.returncode == 1
    assert done.stdout.startswith(f"{good}: Twilog CSV of @bob: 1 post;")
    [line] = [x for x in done.stderr.splitlines() if x.strip()]
    assert "cut.csv.gz: the file is truncated or damaged" in line and "Traceback" not in done.stderr
    assert _rows(db, "SELECT post_id FROM posts") == [(1,)]


def test_a_wrong_path_among_several_writes_nothing(tmp_path: Path) -> None:
    good = write_csv(tmp_path / "good.csv", [row(1, "bob", "kept")])
    picture = tmp_path / "p.png"
    picture.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(40))
    done = cli("import", str(good), str(picture), "--db", str(tmp_path / "new.db"))
    assert done.returncode == 1 and "found a PNG image" in done.stderr
    assert not list(tmp_path.glob("new.db*"))


def test_on_a_terminal_a_progress_bar_counts_records(tmp_path: Path) -> None:
    """Run under a pseudo-terminal, as a person runs it: the bar shows, the summary follows."""
    db = tmp_path / "a.db"
    command = [sys.executable, "-m", "mcpkit", "archive", "import", str(sample_csv()), "--db", str(db)]
    pid, fd = pty.fork()
    if pid == 0:  # the child: stdin, stdout and stderr are the terminal
        os.environ.update({"TERM": "xterm", "COLUMNS": "120"})
        os.execv(sys.executable, command)
    shown = b""
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        shown += chunk
    _, status = os.waitpid(pid, 0)
    text = shown.decode(errors="replace")
    assert os.waitstatus_to_exitcode(status) == 0, text
    assert "406 records" in text and "330 new" in text
    assert "writing the text index and committing" in text, "the tail of the import is named"


# -- interrupted and resumed -------------------------------------------------------------------


def _small_then_big(tmp_path: Path, posts: int, db: Path) -> tuple[Path, Path, list[str]]:
    """A Twilog CSV of ``posts`` posts, one of 60,000, and the real command importing both."""
    small = write_csv(tmp_path / "small.csv", [row(n, "bob", f"small {n}") for n in range(1, posts + 1)])
    big = tmp_path / "big.csv"
    big.write_text(
        csv_text([row(n, "bob", f"big post number {n} " + "words " * 20) for n in range(1000, 61000)])
    )
    return (
        small,
        big,
        [sys.executable, "-m", "mcpkit", "archive", "import", str(small), str(big), "--db", str(db)],
    )


def _paused_in(export: Path, command: list[str]) -> tuple[subprocess.Popen[str], str]:
    """The command running and paused inside the transaction of ``export`` (a batch of it
    written: :mod:`tests.support.paused_import`), and the first line it printed. A signal sent
    now certainly interrupts that export: sent on the first line alone, it once arrived after
    the second export had been committed."""
    from tests.support.paused_import import MARKER

    paused = [sys.executable, "-m", "tests.support.paused_import", export.name, *command[3:]]
    child = subprocess.Popen(
        paused,
        stdin=subprocess.PIPE,  # held open and never written: the pause lasts until the signal
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[3],
    )
    assert child.stdout is not None and child.stderr is not None
    first = child.stdout.readline()
    before = []
    for line in iter(child.stderr.readline, ""):  # until the marker; EOF if the command ended
        if line.startswith(MARKER):
            break
        before.append(line)
    else:
        raise AssertionError(f"the import never reached {export.name}: {first}{''.join(before)}")
    return child, first


def _finished(child: subprocess.Popen[str]) -> tuple[str, str]:
    """What the interrupted command printed after the pause, once it has exited (its stdin
    stays open until then, so only the signal can have ended the pause)."""
    assert child.stdout is not None and child.stderr is not None and child.stdin is not None
    rest, errors = child.stdout.read(), child.stderr.read()
    child.wait()
    child.stdin.close()
    return rest, errors


def test_a_killed_import_resumes_with_nothing_lost_or_duplicated(tmp_path: Path) -> None:
    """Kill a real `mcpkit archive import` while it writes its second export, then run it again:
    the first export was kept, nothing of the second was, and the rerun completes the archive to
    exactly what one uninterrupted run gives."""
    db = tmp_path / "a.db"
    small, big, command = _small_then_big(tmp_path, 50, db)
    child, first = _paused_in(big, command)
    child.send_signal(signal.SIGKILL)
    rest, errors = _finished(child)
    assert first.startswith(f"{small}: Twilog CSV of @bob: 50 posts;"), first + errors
    assert str(big) not in rest  # killed before the second export committed
    assert _rows(db, "SELECT count(*) FROM posts") == [(50,)]  # all of the first, none of the second

    done = subprocess.run(command, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        f"{small}: Twilog CSV of @bob: 50 posts; 0 new, 0 updated, 50 unchanged",
        f"{big}: Twilog CSV of @bob: 60,000 posts; 60,000 new, 0 updated, 0 unchanged",
    ]
    reference = tmp_path / "reference.db"
    subprocess.run([*command[:-1], str(reference)], capture_output=True, check=True)
    columns = "post_id, user_id, url, timestamp, ts, content, log_type, kind, account"
    assert _rows(db, f"SELECT {columns} FROM posts ORDER BY post_id") == _rows(
        reference, f"SELECT {columns} FROM posts ORDER BY post_id"
    )
    assert _rows(db, "SELECT count(*) FROM fts_content WHERE fts_content MATCH 'big'") == [(60_000,)]


def test_the_command_names_a_few_malformed_records(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text(
        csv_text([row(1, "bob", "fine")]) + "one,field\n" + csv_text([row(2, "bob", "fine too")]) + "x\ny,z\n"
    )
    done = cli("import", str(path), "--db", str(tmp_path / "a.db"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.rstrip().endswith("malformed: 3 (line 2: expected 5 fields, got 2)")
    assert done.stderr.splitlines() == [
        "  malformed: line 4: expected 5 fields, got 1",
        "  malformed: line 5: expected 5 fields, got 2",
    ]


def test_ctrl_c_during_a_later_export_keeps_the_ones_before_it_in_a_new_archive(tmp_path: Path) -> None:
    """Ctrl-C (SIGINT) while the second export is written: one line, exit 1, the new archive
    kept with the first export, nothing of the second."""
    db = tmp_path / "new.db"
    small, big, command = _small_then_big(tmp_path, 20, db)
    child, first = _paused_in(big, command)
    child.send_signal(signal.SIGINT)
    rest, errors = _finished(child)
    assert first.startswith(f"{small}: Twilog CSV of @bob: 20 posts;"), first + errors
    assert child.returncode == 1 and str(big) not in rest
    assert [line for line in errors.splitlines() if line.strip()] == [
        "error: import failed: interrupted after 1 of 2 exports; run it again for the rest"
    ]
    assert _rows(db, "SELECT count(*) FROM posts") == [(20,)]


# -- probes: import through the command, count through the command, against the fixture's records


def _probe(
    tmp_path: Path, export: Path, phrase: str, *options: str
) -> tuple[str, list[str], list[str], dict[str, Any]]:
    """Import ``export`` with the command, then what ``text "PHRASE" --json`` finds by default
    and with ``--kind all`` (as ids, each once), and ``stats --kind all --json``."""
    db = str(tmp_path / "a.db")
    done = cli("import", str(export), *options, "--db", db)
    assert done.returncode == 0, done.stderr
    found: dict[str, list[str]] = {}
    for kinds in ([], ["--kind", "all"]):
        answer = cli("text", f'"{phrase}"', *kinds, "--limit", "1000", "--db", db, "--json")
        assert answer.returncode == 0, answer.stderr
        ids = [post["id"] for post in json.loads(answer.stdout)]
        assert len(ids) == len(set(ids))
        found["all" if kinds else "authored"] = ids
    stats = json.loads(cli("stats", "--kind", "all", "--db", db, "--json").stdout)
    return done.stdout, found["authored"], found["all"], stats


def test_a_mastodon_archive_probed_through_the_command_matches_its_own_records(tmp_path: Path) -> None:
    from tests.export_fixtures.mastodon import large_archive, write_archive

    archive = large_archive(400)
    path = write_archive(tmp_path / "archive.tar.gz", archive, "tar.gz")
    line, authored, every, stats = _probe(tmp_path, path, "Post 12")
    # independently, from the fixture's own activities: the notes whose HTML holds the phrase
    notes = [i for i in archive.items if i["type"] == "Create"]
    boosts = [i for i in archive.items if i["type"] == "Announce"]
    replies = [n for n in notes if n["object"]["inReplyTo"]]
    holding = [n for n in notes if "Post 12" in n["object"]["content"]]
    assert len(authored) == len(holding) == 7  # 120-129 but the likes (120, 121) and the boost (122)
    assert sorted(authored) == sorted(n["object"]["id"] for n in holding)  # ids: the source ids
    assert sorted(every) == sorted(authored)  # boosts and likes carry no text in the archive
    assert stats["by_kind"] == {
        "post": len(notes) - len(replies),
        "reply": len(replies),
        "repost": len(boosts),
        "like": len(archive.likes),
    }
    assert line.startswith(
        f"{path}: Mastodon archive of @alice@example.social: {len(notes) - len(replies)} posts"
    )


def test_a_bluesky_car_probed_through_the_command_matches_its_own_records(tmp_path: Path) -> None:
    from tests.export_fixtures.bluesky import DID, large_repository, write_car

    repo = large_repository(400)
    path = write_car(tmp_path / "repo.car", repo)
    line, authored, every, stats = _probe(tmp_path, path, "post 1", "--handle", "alice.example.com")
    kinds = Counter(collection.rsplit(".", 1)[1] for collection, _ in repo.records)
    posts = {key: record for key, record in repo.records.items() if key[0] == "app.bsky.feed.post"}
    holding = [key for key, record in posts.items() if "post 1" in record["text"]]
    replies = [key for key, record in posts.items() if "reply" in record]
    assert len(authored) == len(holding) > 0
    assert sorted(authored) == sorted(f"at://{DID}/{c}/{rkey}" for c, rkey in holding)
    assert sorted(every) == sorted(authored)  # likes and reposts are URIs, without text
    assert stats["by_kind"] == {
        "post": kinds["post"] - len(replies),
        "reply": len(replies),
        "repost": kinds["repost"],
        "like": kinds["like"],
    }
    assert line.startswith(f"{path}: Bluesky repository of @alice.example.com: ")
    assert stats["by_account"] == {"@alice.example.com": len(repo.records)}


def test_handle_is_refused_in_one_line_without_a_car_or_when_it_is_no_handle(tmp_path: Path) -> None:
    from tests.export_fixtures.bluesky import large_repository, write_car

    csv = write_csv(tmp_path / "t.csv", [row(1, "bob", "one")])
    car = write_car(tmp_path / "repo.car", large_repository(3))
    db = str(tmp_path / "a.db")
    done = cli("import", str(csv), "--handle", "alice.example.com", "--db", db)
    assert done.returncode == 2 and done.stderr.strip().splitlines() == [
        "error: import failed: --handle names the account of a Bluesky CAR, and none of the paths is one"
    ]
    done = cli("import", str(car), "--handle", "not a handle", "--db", db)
    assert done.returncode == 1 and "expected a Bluesky handle such as alice.bsky.social" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and not Path(db).exists()


def test_a_mapped_reader_sees_every_import_as_the_file_grows(tmp_path: Path) -> None:
    """Read connections map the database file (PRAGMA mmap_size): a reader opened on a small
    archive still reads every row and text of later imports, checkpointed into the file or not."""
    from mcpkit.archive.importers import import_csv
    from mcpkit.archive.store._store import READ_MMAP_BYTES

    store = Store(tmp_path / "a.db")
    try:
        reader = store.reader
        assert reader.execute("PRAGMA mmap_size").fetchone()[0] == READ_MMAP_BYTES
        total = 0
        for part in range(4):
            rows = [
                row(part * 5000 + i, "bob", f"part {part} post {i} " + "text " * 40) for i in range(1, 5001)
            ]
            import_csv(write_csv(tmp_path / f"{part}.csv", rows), store)
            total += len(rows)
            if part % 2:
                store._writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            assert reader.execute("SELECT count(*) FROM posts").fetchone()[0] == total
            last = reader.execute("SELECT content FROM posts WHERE post_id = ?", (part * 5000 + 5000,))
            assert last.fetchone()[0].startswith(f"part {part} post 5000 ")
    finally:
        store.close()
