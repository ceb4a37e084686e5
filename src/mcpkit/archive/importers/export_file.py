"""Opening an export file safely: decompression, size and line limits, encoding detection.

A file given to ``import`` may be anything: a zip that expands a thousandfold, one endless
line, a PNG, a Shift_JIS export from an old Windows tool. This module turns it into a text
stream or refuses it in one line before anything is written:

* plain, gzip and zip files are told apart by their first bytes, not by their name;
* the bytes after decompression are counted and the import stops beyond ``max_bytes``
  (a zip's declared size is checked before reading it);
* no line may be longer than ``max_line_bytes``; the CSV reader keeps a line in memory, so this
  is what bounds the memory an import can take;
* the encoding is UTF-8 (with or without a byte-order mark) when the first 64 KiB decode as
  UTF-8, else what charset-normalizer finds in them (Shift_JIS exports are read as CP932, its
  Windows superset, which is what such tools write); binary data is refused.
"""

from __future__ import annotations

import codecs
import gzip
import io
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import IO, cast

from mcpkit.archive.errors import ImportFormatError

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_LINE_BYTES",
    "MAGIC",
    "ExportFile",
    "ReadLimits",
    "detect_encoding",
    "magic_kind",
    "open_export",
]

DEFAULT_MAX_BYTES = 4 << 30
"""Decompressed bytes an import reads at most (a million-post export is about 300 MB)."""
DEFAULT_MAX_LINE_BYTES = 1 << 20
"""Longest physical line (a post is at most 25,000 characters, about 100 KB in UTF-8)."""
SAMPLE_BYTES = 1 << 16

_JAPANESE_LEGACY = {"shift_jis", "cp932", "shift_jis_2004", "shift_jisx0213", "ms932", "sjis"}


@dataclass(frozen=True, slots=True)
class ReadLimits:
    max_bytes: int = DEFAULT_MAX_BYTES
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES


class _GuardedReader(io.RawIOBase):
    """A byte stream that serves a sample read ahead, then the rest, enforcing the limits."""

    def __init__(self, source: IO[bytes], name: str, limits: ReadLimits) -> None:
        self._source = source
        self._name = name
        self._limits = limits
        self._prefix = b""
        self.total = 0
        self._line = 0  # bytes since the last line feed

    def sample(self, size: int) -> bytes:
        """The first ``size`` bytes (or fewer), which the stream will still serve."""
        chunks = []
        got = 0
        while got < size:
            chunk = self._source.read(size - got)
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
        self._prefix = b"".join(chunks)
        return self._prefix

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        view = memoryview(buffer).cast("B")
        if self._prefix:
            data, self._prefix = self._prefix[: len(view)], self._prefix[len(view) :]
        else:
            data = self._source.read(len(view))
        self._check(data)
        view[: len(data)] = data
        return len(data)

    def _check(self, data: bytes) -> None:
        self.total += len(data)
        if self.total > self._limits.max_bytes:
            raise ImportFormatError(
                f"{self._name}: more than {self._limits.max_bytes:,} bytes once decompressed; "
                "raise --max-bytes if this export is really that large"
            )
        limit = self._limits.max_line_bytes
        first = data.find(b"\n")
        if first < 0:
            self._line += len(data)
        else:
            longest = self._line + first
            if len(data) > limit:  # only then can a whole line inside this chunk be too long
                longest = max(longest, *map(len, data[first + 1 :].split(b"\n")))
            self._line = max(len(data) - data.rfind(b"\n") - 1, longest if longest > limit else 0)
        if self._line > self._limits.max_line_bytes:
            raise ImportFormatError(
                f"{self._name}: a line longer than {self._limits.max_line_bytes:,} bytes; "
                "this is not a Twilog export (raise --max-line-bytes if it is)"
            )

    def close(self) -> None:
        self._source.close()
        super().close()


def detect_encoding(sample: bytes, *, truncated: bool) -> str:
    """The text encoding of an export, from its first bytes; raises for binary data."""
    if sample.startswith(codecs.BOM_UTF8):
        return "utf-8-sig"
    if b"\x00" in sample:
        raise ImportFormatError(_binary_description(sample))
    try:
        sample.decode("utf-8")
        return "utf-8"
    except UnicodeDecodeError as exc:
        # a multi-byte character cut by the sample's end is not a reason to doubt UTF-8
        if truncated and exc.start >= len(sample) - 3 and exc.reason == "unexpected end of data":
            return "utf-8"
    from charset_normalizer import from_bytes

    best = from_bytes(sample).best()
    if best is None:
        raise ImportFormatError("the file is neither UTF-8 nor any text encoding charset-normalizer knows")
    encoding = best.encoding.lower().replace("-", "_")
    return "cp932" if encoding in _JAPANESE_LEGACY else best.encoding


MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
    (b"%PDF", "a PDF document"),
    (b"SQLite format 3", "an SQLite database"),
    (b"7z\xbc\xaf", "a 7-Zip archive"),
    (b"Rar!", "a RAR archive"),
    (b"BZh", "a bzip2 file"),
    (b"\xfd7zXZ", "an xz file"),
)
"""First bytes of files people give ``import`` by mistake, and what to call them in the line
that refuses them (zip and gzip are read, not refused, so they are not here)."""


def magic_kind(head: bytes) -> str | None:
    """What :data:`MAGIC` calls a file starting with ``head``; None when it is none of them."""
    return next((what for magic, what in MAGIC if head.startswith(magic)), None)


def _binary_description(sample: bytes) -> str:
    return f"expected a Twilog CSV export, found {magic_kind(sample) or 'binary data'}"


@dataclass
class ExportFile:
    """An opened export: ``text`` to parse, ``raw`` whose position measures progress."""

    text: IO[str]
    raw: IO[bytes]
    size: int
    encoding: str

    def close(self) -> None:
        self.text.close()
        self.raw.close()


def open_export(path: Path, limits: ReadLimits | None = None) -> ExportFile:
    """Open a plain, gzip or zip export as text within ``limits``; see the module docstring."""
    limits = limits or ReadLimits()
    raw = open(path, "rb")  # noqa: SIM115 - closed by ExportFile.close
    try:
        magic = raw.read(4)
        raw.seek(0)
        binary: IO[bytes]
        if magic[:2] == b"\x1f\x8b":
            binary = cast(IO[bytes], gzip.GzipFile(fileobj=raw, mode="rb"))
        elif magic == b"PK\x03\x04":
            binary = _zip_member(path, raw, limits)
        else:
            binary = raw
        guarded = _GuardedReader(binary, path.name, limits)
        sample = guarded.sample(SAMPLE_BYTES)
        encoding = detect_encoding(sample, truncated=len(sample) == SAMPLE_BYTES)
        buffered = io.BufferedReader(guarded, buffer_size=1 << 16)
        text = io.TextIOWrapper(buffered, encoding=encoding, errors="replace", newline="")
    except BaseException:
        raw.close()
        raise
    return ExportFile(text, raw, path.stat().st_size, encoding)


def _zip_member(path: Path, raw: IO[bytes], limits: ReadLimits) -> IO[bytes]:
    try:
        archive = zipfile.ZipFile(raw)
    except zipfile.BadZipFile as exc:
        raise ImportFormatError(f"{path}: a damaged zip archive ({exc})") from None
    members = [m for m in archive.infolist() if not m.is_dir()]
    csvs = [m for m in members if m.filename.lower().endswith(".csv")] or members
    if len(csvs) != 1:
        raise ImportFormatError(f"{path}: expected one CSV file in the zip archive, found {len(csvs)}")
    if csvs[0].file_size > limits.max_bytes:
        raise ImportFormatError(
            f"{path}: {csvs[0].filename} expands to {csvs[0].file_size:,} bytes, more than the "
            f"{limits.max_bytes:,}-byte limit; raise --max-bytes if this export is really that large"
        )
    return archive.open(csvs[0])
