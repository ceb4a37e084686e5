"""Hostile exports made cheaply: zip members compressed with any codec, tars under any
compression, and gzip streams of gigabytes built from one repeated member.

Nothing here holds the expanded data: every generator feeds its compressor 1 MiB at a time, so
a test can make a member that expands to hundreds of MB (or a .csv.gz of 3.5 GiB of newlines)
in a few MB of memory.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import struct
import tarfile
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Member", "compressed_member", "gzip_repeated", "repeated", "tar_with", "write_raw_zip"]

STORED, DEFLATED, BZIP2, LZMA = 0, 8, 12, 14
METHODS = {"stored": STORED, "deflate": DEFLATED, "bzip2": BZIP2, "lzma": LZMA}
_LZMA_PROPS = bytes([(2 * 5 + 0) * 9 + 3]) + (1 << 20).to_bytes(4, "little")  # lc=3 lp=0 pb=2, 1 MiB
_LZMA_FILTER = {"id": lzma.FILTER_LZMA1, "preset": 0, "lc": 3, "lp": 0, "pb": 2, "dict_size": 1 << 20}


def repeated(head: bytes, unit: bytes, size: int, tail: bytes = b"") -> Iterator[bytes]:
    """``head``, then ``unit`` repeated to ``size`` bytes in all, then ``tail``, 1 MiB at a time."""
    yield head
    block = unit * max(1, (1 << 20) // len(unit))
    left = size - len(head) - len(tail)
    while left > 0:
        piece = block[:left]
        left -= len(piece)
        yield piece
    yield tail


@dataclass(frozen=True)
class Member:
    """One zip member as it will be written: its compressed bytes and what its headers say."""

    name: str
    method: int
    data: bytes
    crc: int
    size: int  # the uncompressed size the headers declare


def compressed_member(
    name: str, codec: str, chunks: Iterable[bytes], *, declare: int | None = None
) -> Member:
    """A member compressed with ``codec`` (stored, deflate, bzip2, lzma) as zip tools write it;
    its headers declare its real size unless ``declare`` says otherwise."""
    method = METHODS[codec]
    compress: Callable[[bytes], bytes]
    flush: Callable[[], bytes]
    if method == DEFLATED:
        deflater = zlib.compressobj(9, zlib.DEFLATED, -15)
        compress, flush = deflater.compress, deflater.flush
    elif method == BZIP2:
        bzipper = bz2.BZ2Compressor(9)
        compress, flush = bzipper.compress, bzipper.flush
    elif method == LZMA:
        lzmaer = lzma.LZMACompressor(lzma.FORMAT_RAW, filters=[_LZMA_FILTER])
        compress, flush = lzmaer.compress, lzmaer.flush
    else:
        compress, flush = (lambda data: data), (lambda: b"")
    parts = [struct.pack("<BBH", 9, 4, len(_LZMA_PROPS)) + _LZMA_PROPS] if method == LZMA else []
    crc = size = 0
    for chunk in chunks:
        crc = zlib.crc32(chunk, crc)
        size += len(chunk)
        parts.append(compress(chunk))
    parts.append(flush())
    return Member(name, method, b"".join(parts), crc, size if declare is None else declare)


def write_raw_zip(path: Path, members: Iterable[Member]) -> Path:
    """A zip of ``members`` exactly as given (their headers may lie about the sizes)."""
    body = io.BytesIO()
    central = io.BytesIO()
    count = 0
    for member in members:
        name = member.name.encode()
        offset = body.tell()
        version = {LZMA: 63, BZIP2: 46}.get(member.method, 20)
        body.write(
            struct.pack(
                "<4s5H3L2H",
                b"PK\x03\x04",
                version,
                0,
                member.method,
                0,
                0x21,
                member.crc,
                len(member.data),
                member.size,
                len(name),
                0,
            )
        )
        body.write(name + member.data)
        central.write(
            struct.pack(
                "<4s4B4HL2L5H2L",
                b"PK\x01\x02",
                version,
                3,
                version,
                0,
                0,
                member.method,
                0,
                0x21,
                member.crc,
                len(member.data),
                member.size,
                len(name),
                0,
                0,
                0,
                0,
                0o100644 << 16,
                offset,
            )
            + name
        )
        count += 1
    start = body.tell()
    directory = central.getvalue()
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, count, count, len(directory), start, 0)
    path.write_bytes(body.getvalue() + directory + end)
    return path


class _Chunks(io.RawIOBase):
    """A read-only stream over generated chunks (for tarfile.addfile)."""

    def __init__(self, chunks: Iterable[bytes]) -> None:
        self._chunks = iter(chunks)
        self._rest = b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        while not self._rest:
            chunk = next(self._chunks, None)
            if chunk is None:
                return 0
            self._rest = chunk
        size = min(len(buffer), len(self._rest))
        memoryview(buffer).cast("B")[:size] = self._rest[:size]
        self._rest = self._rest[size:]
        return size


def tar_with(path: Path, packing: str, files: Iterable[tuple[str, int, Iterable[bytes]]]) -> Path:
    """A tar (``tar``, ``tar.gz``, ``tar.bz2``, ``tar.xz``) of ``(name, size, chunks)`` files,
    compressed as it is written."""
    with open(path, "wb") as raw:
        packed: io.IOBase
        if packing == "tar.gz":
            packed = gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=6, mtime=0)
        elif packing == "tar.bz2":
            packed = bz2.BZ2File(raw, "wb", compresslevel=9)
        elif packing == "tar.xz":
            packed = lzma.LZMAFile(raw, "wb", preset=0)  # noqa: SIM115 - closed below
        else:
            packed = raw  # type: ignore[assignment]
        with packed, tarfile.open(fileobj=packed, mode="w|", format=tarfile.USTAR_FORMAT) as tar:  # type: ignore[arg-type]
            for name, size, chunks in files:
                info = tarfile.TarInfo(name)
                info.size = size
                info.mode = 0o444
                tar.addfile(info, io.BufferedReader(_Chunks(chunks)))
    return path


def gzip_repeated(path: Path, unit: bytes, size: int, *, head: bytes = b"") -> Path:
    """A gzip file of ``head`` then ``unit`` repeated to about ``size`` bytes, made of one
    64 MiB member written again and again (gzip readers read every member in turn), so that a
    file expanding to gigabytes takes a few MB and well under a second to write."""
    block = unit * ((64 << 20) // len(unit))
    member = gzip.compress(block, compresslevel=9, mtime=0)
    with open(path, "wb") as out:
        if head:
            out.write(gzip.compress(head, mtime=0))
        for _ in range(max(1, size // len(block))):
            out.write(member)
    return path
