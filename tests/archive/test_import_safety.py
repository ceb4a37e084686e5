"""Imports of files that are not what they should be: refused in one line, nothing written."""

from __future__ import annotations

import gzip
import sqlite3
import zipfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpkit.archive.errors import ImportFormatError
from mcpkit.archive.importers import import_csv
from mcpkit.archive.importers.export_file import ReadLimits, detect_encoding, open_export
from mcpkit.archive.store import DatabaseError, Store, describe_db_error

from .helpers import csv_text, row

POSTS = [row(1, "alice", "猫が日向で寝ている &amp; 犬も"), row(2, "bob", "コーヒーを飲む")]


def _count(store: Store) -> int:
    return int(store.reader.execute("SELECT count(*) FROM posts").fetchone()[0])


def _contents(store: Store) -> list[str]:
    return [r[0] for r in store.reader.execute("SELECT content FROM posts ORDER BY post_id")]


@pytest.mark.parametrize(
    ("encoding", "prefix"), [("utf-8", b""), ("utf-8", b"\xef\xbb\xbf"), ("cp932", b""), ("shift_jis", b"")]
)
def test_encodings_are_detected(tmp_path: Path, encoding: str, prefix: bytes) -> None:
    path = tmp_path / "export.csv"
    path.write_bytes(prefix + csv_text(POSTS).encode(encoding))
    store = Store(tmp_path / "a.db")
    summary = import_csv(path, store)
    assert summary.new == 2 and not summary.malformed
    assert _contents(store) == ["猫が日向で寝ている & 犬も", "コーヒーを飲む"]
    store.close()


@given(st.text(alphabet=st.characters(blacklist_categories=["Cs", "Cc"]), max_size=200), st.integers(1, 60))
def test_utf8_cut_anywhere_in_the_sample_is_still_utf8(text: str, cut: int) -> None:
    data = text.encode("utf-8")
    assert detect_encoding(data[: max(0, len(data) - cut % 4)], truncated=True) == "utf-8"


NOT_TWILOG = {
    "other.csv": (b"name,age,city\nalice,30,Tokyo\nbob,25,Osaka\n", "expected 5 fields, got 3"),
    "tweets.csv": (
        b'"tweet_id","in_reply_to_status_id","in_reply_to_user_id","timestamp","source","text"\n'
        b'"1","","","2020-01-01 00:00:00 +0000","web","hello"\n',
        "expected 5 fields, got 6",
    ),
    "five.csv": (b"id,url,time,text,type\n" * 3, "post_id is not a number"),
    "image.png": (b"\x89PNG\r\n\x1a\n" + bytes(200), "found a PNG image"),
    "blob.bin": (bytes(range(256)) * 4, "found binary data"),
}


@pytest.mark.parametrize("name", sorted(NOT_TWILOG))
def test_not_a_twilog_export_is_refused_before_writing(tmp_path: Path, name: str) -> None:
    data, says = NOT_TWILOG[name]
    path = tmp_path / name
    path.write_bytes(data)
    store = Store(tmp_path / "a.db")
    generation = store.generation()
    with pytest.raises(ImportFormatError) as info:
        import_csv(path, store)
    message = str(info.value)
    assert "\n" not in message and "expected a Twilog CSV export" in message and says in message
    assert _count(store) == 0 and store.generation() == generation
    store.close()


def test_bad_rows_among_good_ones_are_reported_not_refused(tmp_path: Path) -> None:
    path = tmp_path / "export.csv"
    path.write_text("garbage line\n" + csv_text(POSTS), encoding="utf-8")
    store = Store(tmp_path / "a.db")
    summary = import_csv(path, store)
    assert summary.new == 2 and [m.line for m in summary.malformed] == [1]
    store.close()


def test_decompressed_size_limit_gzip_and_zip(tmp_path: Path) -> None:
    body = csv_text([row(i, "alice", "x" * 200) for i in range(1, 2000)]).encode()
    limits = ReadLimits(max_bytes=100_000)
    gz = tmp_path / "big.csv.gz"
    gz.write_bytes(gzip.compress(body))
    store = Store(tmp_path / "a.db")
    with pytest.raises(ImportFormatError, match="more than 100,000 bytes once decompressed"):
        import_csv(gz, store, limits=limits)
    assert _count(store) == 0
    zipped = tmp_path / "big.zip"
    with zipfile.ZipFile(zipped, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("twilog.csv", body)
    with pytest.raises(ImportFormatError, match=r"expands to [\d,]+ bytes, more than the 100,000-byte limit"):
        import_csv(zipped, store, limits=limits)
    assert import_csv(gz, store).new == 1999  # the default limit takes it
    store.close()


@pytest.mark.parametrize("where", ["first", "middle", "last"])
def test_line_length_limit(tmp_path: Path, where: str) -> None:
    long_line = b"A" * 300_000
    good = csv_text(POSTS).encode()
    data = {
        "first": long_line + b"\n" + good,
        "middle": good + long_line + b"\n" + good,
        "last": good + long_line,
    }[where]
    path = tmp_path / "long.csv"
    path.write_bytes(data)
    export = open_export(path, ReadLimits(max_line_bytes=100_000))
    with pytest.raises(ImportFormatError, match="a line longer than 100,000 bytes"):
        export.text.read()
    export.close()
    export = open_export(path, ReadLimits(max_line_bytes=400_000))
    assert export.text.read() == data.decode()
    export.close()


def test_zip_bomb_does_not_take_the_memory(tmp_path: Path) -> None:
    """A small zip of one endless line: refused after the line limit, not after reading it all."""
    bomb = tmp_path / "bomb.zip"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as archive, archive.open("t.csv", "w") as member:
        block = b"0" * (1 << 20)
        for _ in range(64):
            member.write(block)
    assert bomb.stat().st_size < 200_000
    store = Store(tmp_path / "a.db")
    with pytest.raises(ImportFormatError, match="a line longer than"):
        import_csv(bomb, store)
    store.close()


# -- the database itself -----------------------------------------------------------------------


def test_directory_as_database(tmp_path: Path) -> None:
    with pytest.raises(DatabaseError, match="is a directory, not an archive database"):
        Store(tmp_path)


def test_not_a_database(tmp_path: Path) -> None:
    path = tmp_path / "x.db"
    path.write_bytes(b"hello, this is not SQLite" * 100)
    with pytest.raises(DatabaseError) as info:
        Store(path)
    assert "is not an archive database" in str(info.value) and "\n" not in str(info.value)


def test_full_disk_reports_the_real_cause(tmp_path: Path) -> None:
    """SQLite's "database or disk is full" (here: a page limit) must not turn into "cannot
    rollback" when the transaction unwinds."""
    store = Store(tmp_path / "a.db")
    used = int(store._writer.execute("PRAGMA page_count").fetchone()[0])
    store._writer.execute(f"PRAGMA max_page_count={used + 2}")
    path = tmp_path / "e.csv"
    path.write_text(csv_text([row(i, "alice", f"post {i} " + "y" * 300) for i in range(1, 500)]))
    with pytest.raises(sqlite3.OperationalError) as info:
        import_csv(path, store)
    assert "full" in str(info.value)
    line = describe_db_error(store.path, info.value)
    assert line.startswith("no space left writing") and "\n" not in line
    assert _count(store) == 0
    store.close()


def test_read_only_database_is_named(tmp_path: Path) -> None:
    """As root a chmod'ed file stays writable, so the read-only case is made by SQLite itself."""
    path = tmp_path / "a.db"
    Store(path).close()
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    with pytest.raises(sqlite3.OperationalError) as info:
        conn.execute("CREATE TABLE x (y)")
    conn.close()
    line = describe_db_error(path, info.value)
    assert line.startswith(f"{path} is read-only") and "\n" not in line
