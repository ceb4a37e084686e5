"""Opening an export file safely: decompression, size and line limits, encoding detection.

A file given to ``import`` may be anything: a zip that expands a thousandfold, one endless
line, a PNG, a Shift_JIS export from an old Windows tool. This module turns it into a text
stream or refuses it in one line before anything is written:

* plain, gzip and zip files are told apart by their first bytes, not by their name;
* the bytes after decompression are counted and the import stops beyond ``max_bytes``
  (a zip's declared size is checked before reading it);
* a zip member is decompressed by :func:`open_zip_member`, never by ``zipfile``'s own reader:
  that one decompresses a whole read of bzip2 or lzma input at once (3 KB of bzip2 may hold
  3 GB), so a zip bomb took gigabytes of memory before any limit could be checked. Here every
  codec (stored, deflate, bzip2, lzma) gives at most what was asked for, and a member that
  expands beyond the size its headers declare is refused as it passes it;
* no line may be longer than ``max_line_bytes``; the CSV reader keeps a line in memory, so this
  is what bounds the memory an import can take. Blank lines count as part of the line that
  follows them: a file of nothing but line feeds is one endless line, not billions of empty
  rows to stream through;
* the encoding is UTF-8 (with or without a byte-order mark) when the first 64 KiB decode as
  UTF-8, else what charset-normalizer finds in them (Shift_JIS exports are read as CP932, its
  Windows superset, which is what such tools write); binary data is refused.
"""

from __future__ import annotations

import bz2
import codecs
import gzip
import io
import lzma
import re
import struct
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Protocol, cast

from mcpkit.archive.errors import ImportFormatError
from mcpkit.archive.limits import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINE_BYTES

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_LINE_BYTES",
    "MAGIC",
    "ExportFile",
    "ReadLimits",
    "detect_encoding",
    "looks_binary",
    "magic_kind",
    "open_export",
    "open_zip_member",
]

SAMPLE_BYTES = 1 << 16

_WHITESPACE = b" \t\r\n\f\v"
_WHITESPACE_RUN = re.compile(rb"[ \t\r\n\f\v]+")
_CONTROL = bytes(set(range(32)) - set(b"\t\n\r\f\v\x1b")) + b"\x7f"
"""Bytes that text files do not hold (ESC stays: ISO-2022-JP text is made of it)."""

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
        self._blank = 0  # bytes of whitespace since the last other byte

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
        if self._line > limit or self._blank_run(data) > limit:
            raise ImportFormatError(
                f"{self._name}: a line longer than {limit:,} bytes (blank lines count as part of the "
                "next); this is not a Twilog export (raise --max-line-bytes if it is)"
            )

    def _blank_run(self, data: bytes) -> int:
        """The longest run of whitespace bytes (line ends included) seen so far, as far as it
        can pass the limit: the run the last chunk ended with, continued by this one."""
        content = len(data.rstrip(_WHITESPACE))
        if not content:
            self._blank += len(data)
            return self._blank
        longest = self._blank + len(data) - len(data.lstrip(_WHITESPACE))
        if len(data) > self._limits.max_line_bytes:  # only then can a run inside it be too long
            longest = max([longest, *(len(run) for run in _WHITESPACE_RUN.findall(data))])
        self._blank = len(data) - content
        return longest

    def close(self) -> None:
        self._source.close()
        super().close()


def detect_encoding(sample: bytes, *, truncated: bool) -> str:
    """The text encoding of an export, from its first bytes; raises for binary data."""
    if sample.startswith(codecs.BOM_UTF8):
        return "utf-8-sig"
    if looks_binary(sample):
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


def looks_binary(sample: bytes) -> bool:
    """Whether the first bytes of a file are binary data rather than text in any encoding: a
    NUL, or more than one byte in a hundred a text file never holds (random bytes hold about
    eleven) in bytes that are not UTF-8. A short UTF-8 export whose one post holds a control
    character is still text (random bytes are UTF-8 almost never)."""
    if b"\x00" in sample:
        return True
    controls = len(sample) - len(sample.translate(None, _CONTROL))
    return controls * 100 > len(sample) and not _utf8(sample)


def _utf8(sample: bytes) -> bool:
    """Whether ``sample`` is UTF-8, allowing a character cut at its end (a sample is a prefix)."""
    try:
        sample.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.reason == "unexpected end of data"
    return True


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
    except (zipfile.BadZipFile, NotImplementedError) as exc:
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
    return open_zip_member(path, csvs[0], limits)


# -- zip members, decompressed within bounds ------------------------------------------------------


class _Codec(Protocol):
    """What :class:`_ZipMember` needs of a decompressor (bz2's and lzma's have it as they are)."""

    @property
    def eof(self) -> bool: ...

    @property
    def needs_input(self) -> bool: ...

    def decompress(self, data: bytes, max_length: int = -1) -> bytes: ...


class _Inflate:
    """zlib's raw deflate decompressor with the interface of bz2's and lzma's."""

    def __init__(self) -> None:
        self._zlib = zlib.decompressobj(-15)
        self._tail = b""

    @property
    def eof(self) -> bool:
        return self._zlib.eof

    @property
    def needs_input(self) -> bool:
        return not self._tail

    def decompress(self, data: bytes, max_length: int = -1) -> bytes:
        out = self._zlib.decompress(self._tail + data, max(max_length, 0))
        self._tail = self._zlib.unconsumed_tail
        return out


class _Stored:
    """A stored member: the bytes as they are."""

    def __init__(self) -> None:
        self._rest = b""
        self.eof = False

    @property
    def needs_input(self) -> bool:
        return not self._rest

    def decompress(self, data: bytes, max_length: int = -1) -> bytes:
        data = self._rest + data
        self._rest = data[max_length:] if max_length >= 0 else b""
        return data[:max_length] if max_length >= 0 else data


def _lzma_codec(header: bytes) -> _Codec:
    """A zip's LZMA member: 2 bytes of version, 2 of the properties' size, the properties (one
    byte of lc/lp/pb, four of the dictionary size), then raw LZMA1."""
    size = struct.unpack("<H", header[2:4])[0]
    props = header[4 : 4 + size]
    if size != 5 or len(props) != 5 or props[0] >= 9 * 5 * 5:
        raise ValueError("bad LZMA properties")
    pb, rest = divmod(props[0], 45)
    lp, lc = divmod(rest, 9)
    dict_size = int.from_bytes(props[1:5], "little")
    lzma_filter = {"id": lzma.FILTER_LZMA1, "lc": lc, "lp": lp, "pb": pb, "dict_size": dict_size}
    return cast(_Codec, lzma.LZMADecompressor(lzma.FORMAT_RAW, filters=[lzma_filter]))


_CODECS = {
    zipfile.ZIP_STORED: "stored",
    zipfile.ZIP_DEFLATED: "deflate",
    zipfile.ZIP_BZIP2: "bzip2",
    zipfile.ZIP_LZMA: "lzma",
}
_COMPRESSED_READ = 1 << 16
"""Compressed bytes fed to a decompressor at a time (what it gives back is bounded apart)."""


class _ZipMember(io.RawIOBase):
    """One member's bytes, decompressed at most as many at a time as a read asks for; see
    :func:`open_zip_member`."""

    def __init__(self, path: Path, info: zipfile.ZipInfo, limits: ReadLimits) -> None:
        self._where = f"{path}: {info.filename}"
        self._info = info
        self._limit = min(info.file_size, limits.max_bytes)
        self._max_bytes = limits.max_bytes
        self._file = open(path, "rb")  # noqa: SIM115 - closed by close()
        try:
            self._file.seek(info.header_offset)
            local = self._file.read(30)
            if len(local) != 30 or local[:4] != b"PK\x03\x04":
                raise self._damaged("no local header where the directory says")
            names, extra = struct.unpack("<2H", local[26:30])
            self._file.seek(names + extra, io.SEEK_CUR)
            self._left = info.compress_size
            self._codec = self._open_codec()
        except BaseException:
            self._file.close()
            raise
        self._crc = 0
        self.total = 0

    def _damaged(self, why: str) -> ImportFormatError:
        return ImportFormatError(
            f"{self._where}: expected a complete file, found a truncated or damaged one ({why})"
        )

    def _open_codec(self) -> _Codec:
        method = self._info.compress_type
        if self._info.flag_bits & 1:
            raise ImportFormatError(
                f"{self._where}: an encrypted zip member; unpack it and import the folder"
            )
        if method not in _CODECS:
            raise ImportFormatError(
                f"{self._where}: compressed with zip method {method}, which mcpkit cannot read "
                "(it reads stored, deflate, bzip2 and lzma); unpack it and import the folder"
            )
        if method == zipfile.ZIP_DEFLATED:
            return _Inflate()
        if method == zipfile.ZIP_BZIP2:
            return cast(_Codec, bz2.BZ2Decompressor())
        if method == zipfile.ZIP_LZMA:
            header = self._compressed(4)
            header += self._compressed(struct.unpack("<H", header[2:4])[0] if len(header) == 4 else 0)
            try:
                return _lzma_codec(header)
            except (ValueError, lzma.LZMAError, struct.error) as exc:
                raise self._damaged(str(exc)) from None
        return _Stored()

    def _compressed(self, size: int) -> bytes:
        want = min(size, self._left)
        data = self._file.read(want)
        if len(data) < want:
            raise self._damaged("the file ends inside its compressed data")
        self._left -= len(data)
        return data

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        view = memoryview(buffer).cast("B")
        data = self._decompressed(len(view))
        view[: len(data)] = data
        return len(data)

    def _decompressed(self, size: int) -> bytes:
        codec = self._codec
        try:
            while not codec.eof:
                if codec.needs_input and self._left:
                    data = codec.decompress(self._compressed(_COMPRESSED_READ), size)
                elif codec.needs_input:  # no input left, and the codec wants more
                    if isinstance(codec, _Stored):
                        break
                    raise self._damaged("it ends before its compressed data does")
                else:
                    data = codec.decompress(b"", size)
                if data:
                    return self._counted(data)
        except (OSError, EOFError, ValueError, zlib.error, lzma.LZMAError) as exc:
            raise self._damaged(str(exc) or type(exc).__name__) from None
        if self.total != self._info.file_size or self._crc != self._info.CRC:
            raise self._damaged(
                f"{self.total:,} bytes with CRC {self._crc:08x}, its headers say "
                f"{self._info.file_size:,} bytes with CRC {self._info.CRC:08x}"
            )
        return b""

    def _counted(self, data: bytes) -> bytes:
        self.total += len(data)
        if self.total > self._limit:
            if self.total > self._max_bytes:
                raise ImportFormatError(
                    f"{self._where}: more than {self._max_bytes:,} bytes once decompressed; "
                    "raise --max-bytes if this export is really that large"
                )
            raise ImportFormatError(
                f"{self._where}: expands to more than the {self._info.file_size:,} bytes its headers "
                "declare; a damaged or hostile zip"
            )
        self._crc = zlib.crc32(data, self._crc)
        return data

    def close(self) -> None:
        self._file.close()
        super().close()


def open_zip_member(path: Path, info: zipfile.ZipInfo, limits: ReadLimits) -> IO[bytes]:
    """The bytes of one member of the zip at ``path``, decompressed as they are read with at
    most what each read asks for in memory, whatever the codec (stored, deflate, bzip2, lzma);
    a member that expands beyond the size its headers declare or beyond ``limits.max_bytes``,
    is damaged, encrypted or compressed otherwise raises :class:`ImportFormatError` (one line)."""
    return cast(IO[bytes], io.BufferedReader(_ZipMember(path, info, limits), buffer_size=1 << 16))
