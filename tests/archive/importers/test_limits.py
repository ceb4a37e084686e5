"""Import limits on hostile and empty exports, through the real command in a child process.

* Zip bombs: a member of a few KB that expands to hundreds of MB, compressed with each codec a
  zip may use (bzip2 and lzma decompress a whole read of compressed bytes at once inside
  ``zipfile``), in a Twilog zip, an X archive and a Mastodon zip. The child's peak memory is
  measured (its own ``VmHWM``, tests/support/peak.py) against a bound; a bomb whose headers lie about its size is refused too.
* Tar bombs: a Mastodon archive as tar.gz, tar.bz2 and tar.xz whose media member expands
  beyond ``--max-bytes``.
* Lines of any characters: 3.5 GiB of blank lines in a .csv.gz (written as one repeated gzip
  member: a few MB), and a property over every character for the Twilog CSV and the X archive.
  The child runs under a CPU-time limit (a resource bound, not a clock): reading the whole
  3.5 GiB would take minutes of CPU.
* Empty and zero-record exports are errors naming what was expected; binary is called binary.
"""

from __future__ import annotations

import json
import os
import random
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpkit.archive.errors import ImportFormatError
from mcpkit.archive.importers.detect import EXPECTED, describe, detect
from mcpkit.archive.importers.export_file import ReadLimits
from tests.export_fixtures import mastodon as m
from tests.export_fixtures.bombs import compressed_member, gzip_repeated, repeated, tar_with, write_raw_zip
from tests.support.peak import ENV_CPU_SECONDS, ENV_PEAK_FILE, module_command, read_peak_kb

BOMB = 384 << 20
"""What a bomb expands to: far beyond the memory bound, a few KB compressed."""
MEMORY_BOUND_KB = 300 << 10
"""Peak RSS the importing child may reach (an import of a small file takes about 65 MB)."""
CPU_SECONDS = 120
"""CPU time the child may use: refusing an export takes a second; streaming 3.5 GiB of blank
lines took minutes."""


def run_import(tmp_path: Path, export: Path, *options: str) -> tuple[int, str, str, int]:
    """``mcpkit archive import EXPORT`` in a child under the CPU-time limit: exit code, stdout,
    stderr, and the child's own peak RSS in KB (tests/support/peak.py: not its parent's)."""
    db = tmp_path / "a.db"
    peak = tmp_path / "peak-kb"
    peak.unlink(missing_ok=True)
    command = module_command("mcpkit", "archive", "import", str(export), "--db", str(db), *options)
    env = {**os.environ, ENV_PEAK_FILE: str(peak), ENV_CPU_SECONDS: str(CPU_SECONDS)}
    done = subprocess.run(command, capture_output=True, env=env, timeout=3600)
    return done.returncode, done.stdout.decode(), done.stderr.decode(), read_peak_kb(peak)


def _refused(tmp_path: Path, export: Path, *options: str) -> tuple[str, int]:
    """The one error line of an import that must fail, and the child's peak RSS; nothing kept."""
    code, out, err, peak = run_import(tmp_path, export, *options)
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 1, f"exit {code}: {out}{err}"
    assert len(lines) == 1 and lines[0].startswith("error: import failed: "), err
    assert not (tmp_path / "a.db").exists(), "a refused first import leaves no archive behind"
    return lines[0], peak


# -- zip bombs --------------------------------------------------------------------------------


@pytest.mark.parametrize("codec", ["bzip2", "lzma", "deflate", "stored"])
def test_a_twilog_zip_bomb_stops_at_the_line_limit_in_bounded_memory(tmp_path: Path, codec: str) -> None:
    """Its headers tell the truth (384 MB, under --max-bytes), so the declared-size check lets it
    through; one line of 384 MB must stop at --max-line-bytes without being decompressed whole."""
    size = BOMB if codec != "stored" else 4 << 20
    bomb = write_raw_zip(
        tmp_path / "twilog.zip", [compressed_member("t.csv", codec, repeated(b"", b"a", size))]
    )
    line, peak = _refused(tmp_path, bomb)
    assert "a line longer than 1,048,576 bytes" in line and "--max-line-bytes" in line, line
    assert peak < MEMORY_BOUND_KB, f"peak RSS {peak:,} KB"


@pytest.mark.parametrize("codec", ["bzip2", "lzma"])
def test_a_zip_member_that_lies_about_its_size_is_refused_in_bounded_memory(
    tmp_path: Path, codec: str
) -> None:
    """Headers declaring 3,000 bytes for a member of 384 MB: refused once the member passes the
    size it declares (before any other limit could be met), never decompressed whole."""
    content = repeated(b"", b"a", BOMB)
    bomb = write_raw_zip(tmp_path / "twilog.zip", [compressed_member("t.csv", codec, content, declare=3000)])
    line, peak = _refused(tmp_path, bomb)
    assert "more than the 3,000 bytes" in line and "t.csv" in line, line
    assert peak < MEMORY_BOUND_KB, f"peak RSS {peak:,} KB"


@pytest.mark.parametrize("codec", ["bzip2", "lzma"])
def test_an_x_archive_zip_bomb_of_whitespace_stops_in_bounded_memory(tmp_path: Path, codec: str) -> None:
    tweets = repeated(b"window.YTD.tweets.part0 = [", b" ", BOMB, b"]")
    bomb = write_raw_zip(tmp_path / "x.zip", [compressed_member("data/tweets.js", codec, tweets)])
    line, peak = _refused(tmp_path, bomb)
    assert "data/tweets.js" in line and "whitespace" in line and "--max-line-bytes" in line, line
    assert peak < MEMORY_BOUND_KB, f"peak RSS {peak:,} KB"


@pytest.mark.parametrize("codec", ["bzip2", "lzma"])
def test_a_mastodon_zip_bomb_of_whitespace_stops_in_bounded_memory(tmp_path: Path, codec: str) -> None:
    outbox = repeated(b'{"orderedItems": [', b" ", BOMB, b"]}")
    bomb = write_raw_zip(tmp_path / "mastodon.zip", [compressed_member("outbox.json", codec, outbox)])
    line, peak = _refused(tmp_path, bomb)
    assert "outbox.json" in line and "whitespace" in line, line
    assert peak < MEMORY_BOUND_KB, f"peak RSS {peak:,} KB"


# -- tar bombs ----------------------------------------------------------------------------------


def _mastodon_files() -> list[tuple[str, int, list[bytes]]]:
    archive = m.Archive(items=[m.note(1, "hello from a packed archive")])
    files = [
        ("outbox.json", json.dumps(m.outbox(archive.items)).encode()),
        ("actor.json", json.dumps(m.actor()).encode()),
    ]
    return [(name, len(data), [data]) for name, data in files]


@pytest.mark.parametrize("packing", ["tar.gz", "tar.bz2", "tar.xz"])
def test_a_mastodon_tar_is_read_whatever_its_compression(tmp_path: Path, packing: str) -> None:
    export = tar_with(tmp_path / f"archive.{packing}", packing, _mastodon_files())
    code, out, err, _ = run_import(tmp_path, export)
    assert code == 0, err
    assert "Mastodon archive of @alice@example.social: 1 post;" in out, out


@pytest.mark.parametrize("packing", ["tar.gz", "tar.bz2", "tar.xz"])
def test_a_mastodon_tar_bomb_stops_at_max_bytes(tmp_path: Path, packing: str) -> None:
    """A media member of 256 MB of zeros (a few hundred KB packed) in an archive read with
    --max-bytes 50,000,000: refused once the tar expands past the limit, nothing imported."""
    files = [
        *_mastodon_files(),
        ("media_attachments/files/big.bin", 256 << 20, list(repeated(b"", b"\0", 256 << 20))),
    ]
    bomb = tar_with(tmp_path / f"archive.{packing}", packing, files)
    line, peak = _refused(tmp_path, bomb, "--max-bytes", "50000000")
    assert "more than 50,000,000 bytes" in line and "--max-bytes" in line, line
    assert peak < MEMORY_BOUND_KB, f"peak RSS {peak:,} KB"


# -- lines of any characters ---------------------------------------------------------------------


@pytest.mark.parametrize("unit", [b"\n", b"\r\n", b"\r", b" "], ids=["lf", "crlf", "cr", "spaces"])
def test_three_and_a_half_gib_of_whitespace_stop_at_the_line_limit(tmp_path: Path, unit: bytes) -> None:
    """3.5 GiB of whitespace (a few MB of gzip): refused at --max-line-bytes, blank lines
    counting as one line, instead of streamed to the end and imported as an empty export."""
    export = gzip_repeated(tmp_path / "blank.csv.gz", unit, 7 << 29)
    line, _ = _refused(tmp_path, export)
    assert "blank.csv.gz" in line and "1,048,576 bytes" in line and "--max-line-bytes" in line, line


SMALL = ReadLimits(max_bytes=1 << 20, max_line_bytes=1000)


def _read_all(path: Path, limits: ReadLimits) -> int:
    reader = detect(path).open(path, limits)
    return sum(1 for _ in reader.records())


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(char=st.characters(), extra=st.integers(min_value=1, max_value=3000))
def test_a_line_of_any_character_in_a_twilog_csv_is_refused_in_one_line(char: str, extra: int) -> None:
    """A Twilog CSV that is one character repeated past the line limit (or a run of blank lines
    that long): one line naming the file, whatever the character."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "t.csv"
        data = char.encode("utf-8", "surrogatepass") * (SMALL.max_line_bytes + extra)
        path.write_bytes(data)
        with pytest.raises(ImportFormatError) as caught:
            _read_all(path, SMALL)
        assert "\n" not in str(caught.value)


@settings(max_examples=120, deadline=None)
@given(char=st.characters(), extra=st.integers(min_value=1, max_value=3000))
def test_a_line_of_any_character_in_an_x_archive_is_refused_in_one_line(char: str, extra: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        data = Path(folder) / "data"
        data.mkdir()
        body = char.encode("utf-8", "surrogatepass") * (SMALL.max_line_bytes + extra)
        (data / "tweets.js").write_bytes(b"window.YTD.tweets.part0 = [" + body + b"]")
        with pytest.raises(ImportFormatError) as caught:
            _read_all(Path(folder), SMALL)
        assert "\n" not in str(caught.value) and "tweets.js" in str(caught.value)


ROW = b'"%d","https://twitter.com/bob/status/%d","2024-01-01 00:00:00","post %d","1"\n'


def _zipped_rows(path: Path, codec: str) -> Path:
    rows = [ROW % (n, n, n) for n in range(1, 200)]
    return write_raw_zip(path, [compressed_member("t.csv", codec, rows)])


@pytest.mark.parametrize("codec", ["stored", "deflate", "bzip2", "lzma"])
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_a_damaged_zip_member_is_read_or_refused_in_one_line(codec: str, data: st.DataObject) -> None:
    """Any bytes of a zipped Twilog CSV changed: the import reads it or refuses it in one line."""
    with tempfile.TemporaryDirectory() as folder:
        path = _zipped_rows(Path(folder) / "t.zip", codec)
        raw = bytearray(path.read_bytes())
        for _ in range(data.draw(st.integers(1, 4))):
            raw[data.draw(st.integers(0, len(raw) - 1))] = data.draw(st.integers(0, 255))
        path.write_bytes(bytes(raw))
        try:
            _read_all(path, ReadLimits())
        except ImportFormatError as exc:
            assert "\n" not in str(exc)


@pytest.mark.parametrize("codec", ["stored", "deflate", "bzip2", "lzma"])
def test_a_zip_member_said_to_run_past_the_end_of_the_file_is_refused(tmp_path: Path, codec: str) -> None:
    path = _zipped_rows(tmp_path / "t.zip", codec)
    raw = bytearray(path.read_bytes())
    central = raw.rindex(b"PK\x01\x02")
    raw[central + 20 : central + 24] = (len(raw) * 2).to_bytes(4, "little")  # its compressed size
    path.write_bytes(bytes(raw))
    with pytest.raises(
        ImportFormatError, match=r"t\.csv: expected a complete file, found a truncated or damaged"
    ):
        _read_all(path, ReadLimits())


def test_a_zip_of_a_version_python_cannot_read_is_refused_in_one_line(tmp_path: Path) -> None:
    """zipfile raises NotImplementedError, not BadZipFile, for a version above 6.3 (found by the
    property test above): every reader and the description turn it into one line."""
    path = _zipped_rows(tmp_path / "t.zip", "deflate")
    raw = bytearray(path.read_bytes())
    central = raw.rindex(b"PK\x01\x02")
    raw[central + 6 : central + 8] = (64).to_bytes(2, "little")  # version needed to extract: 6.4
    path.write_bytes(bytes(raw))
    with pytest.raises(ImportFormatError) as caught:
        _read_all(path, ReadLimits())
    assert str(caught.value) == f"{path}: {EXPECTED}; found a damaged or truncated zip file"


# -- empty and zero-record exports ---------------------------------------------------------------


def _x_folder(root: Path, tweets: bytes) -> Path:
    (root / "data").mkdir(parents=True)
    (root / "data" / "tweets.js").write_bytes(tweets)
    (root / "data" / "account.js").write_bytes(
        b'window.YTD.account.part0 = [ { "account" : { "username" : "alice" } } ]'
    )
    return root


def test_an_empty_file_is_an_error_naming_what_was_expected(tmp_path: Path) -> None:
    empty = tmp_path / "twilog.csv"
    empty.write_bytes(b"")
    line, _ = _refused(tmp_path, empty)
    assert line == f"error: import failed: {empty}: {EXPECTED}; found an empty file"


@pytest.mark.parametrize(
    ("name", "content", "found"),
    [
        ("blank.csv", b"\n\r\n\n", "no records"),
        ("empty.csv.gz", None, "an empty gzip file"),
    ],
)
def test_a_twilog_file_without_records_is_an_error(
    tmp_path: Path, name: str, content: bytes | None, found: str
) -> None:
    import gzip

    path = tmp_path / name
    path.write_bytes(content if content is not None else gzip.compress(b""))
    line, _ = _refused(tmp_path, path)
    assert str(path) in line and found in line, line


def test_an_x_archive_with_no_records_is_an_error(tmp_path: Path) -> None:
    export = _x_folder(tmp_path / "x", b"window.YTD.tweets.part0 = [ ]")
    line, _ = _refused(tmp_path, export)
    assert (
        line
        == f"error: import failed: {export}: an X archive with no records; expected posts, likes or bookmarks"
    )


def test_a_mastodon_archive_with_no_records_is_an_error(tmp_path: Path) -> None:
    export = m.write_archive(tmp_path / "archive.tar.gz", m.Archive(items=[]))
    line, _ = _refused(tmp_path, export)
    assert line == (
        f"error: import failed: {export}: a Mastodon archive with no records; expected posts, likes or bookmarks"
    )


def test_a_zero_record_export_after_a_good_one_keeps_the_good_one(tmp_path: Path) -> None:
    good = m.write_archive(tmp_path / "good.tar.gz", m.Archive(items=[m.note(1, "kept")]))
    empty = m.write_archive(tmp_path / "empty.tar.gz", m.Archive(items=[]))
    db = tmp_path / "a.db"
    done = subprocess.run(
        [sys.executable, "-m", "mcpkit", "archive", "import", str(good), str(empty), "--db", str(db)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1
    assert done.stderr.strip().endswith(
        "a Mastodon archive with no records; expected posts, likes or bookmarks"
    )
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM posts").fetchone() == (1,)


# -- binary is binary -----------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["archive.tar.gz", "twilog.csv", "export.zip", "download"])
def test_random_bytes_are_described_as_binary_whatever_their_name(tmp_path: Path, name: str) -> None:
    for seed in range(40):
        chunk = random.Random(seed).randbytes(64 + 97 * seed)
        path = tmp_path / name
        path.write_bytes(chunk)
        assert describe(path) == "binary data", (seed, describe(path))
        with pytest.raises(ImportFormatError) as caught:
            detect(path)
        assert str(caught.value) == f"{path}: {EXPECTED}; found binary data"


def test_random_bytes_through_the_command(tmp_path: Path) -> None:
    path = tmp_path / "archive.tar.gz"
    path.write_bytes(bytes(b for b in random.Random(7).randbytes(300) if b) or b"\x01")  # not one NUL
    line, _ = _refused(tmp_path, path)
    assert line == f"error: import failed: {path}: {EXPECTED}; found binary data"
