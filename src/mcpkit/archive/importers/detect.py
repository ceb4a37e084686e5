"""Which export a path is: by its content, not its name.

People pass what they downloaded as it is (``twitter-2024-01-01-abc.zip``, an unpacked
folder, ``archive-20241101.tar.gz``, ``repo.car``, ``twilog.csv.gz``) and sometimes renamed;
so each format module's ``sniff`` looks inside (a zip's member names, a tar's, a CAR's
header, a CSV's first rows), and the first that recognises the path reads it. A path none
recognises gets one line naming what was expected and what was found. The format modules are
imported only when asked, so importing a Twilog CSV never loads the CAR library.
"""

from __future__ import annotations

import gzip
import importlib
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcpkit.archive.errors import ImportFormatError
from mcpkit.archive.importers.base import ExportReader, ReadLimits, TwilogCsvReader, sniff_twilog_csv
from mcpkit.archive.importers.export_file import looks_binary, magic_kind

__all__ = ["EXPECTED", "FORMATS", "Format", "describe", "detect", "open_reader"]

EXPECTED = "expected a Twilog CSV, an X archive (zip or folder), a Mastodon archive (tar.gz, tar.bz2, tar.xz, zip or folder) or a Bluesky CAR"


@dataclass(frozen=True, slots=True)
class Format:
    """One export format: its name and where its ``sniff``/``open_reader`` live."""

    name: str
    module: str  # a module with sniff(path) and open_reader(path, limits); "" for the Twilog CSV
    takes_handle: bool = False  # open_reader takes handle= (the export does not name its account)

    def _load(self) -> Any | None:
        try:
            return importlib.import_module(self.module)
        except ModuleNotFoundError as exc:
            if exc.name == self.module:  # this mcpkit has no reader for the format
                return None
            raise

    def sniff(self, path: Path) -> bool:
        if not self.module:
            return sniff_twilog_csv(path)
        module = self._load()
        return module is not None and bool(module.sniff(path))

    def open(self, path: Path, limits: ReadLimits, *, handle: str = "") -> ExportReader:
        """The format's reader on ``path``; a file that cannot be read is one line too.
        ``handle`` names the account of a Bluesky CAR (which holds only its DID); the other
        formats name their account themselves and ignore it."""
        try:
            if not self.module:
                return TwilogCsvReader(path, limits)
            module = self._load()
            if module is None:
                raise ImportFormatError(f"{path}: this mcpkit cannot read {self.name} exports")
            opener: Callable[..., ExportReader] = module.open_reader
            return (
                opener(path, limits, handle=handle) if handle and self.takes_handle else opener(path, limits)
            )
        except OSError as exc:
            raise ImportFormatError(f"{path}: cannot be read: {exc.strerror or exc}") from exc


FORMATS: tuple[Format, ...] = (
    Format("bluesky-car", "mcpkit.archive.importers.bluesky_car", takes_handle=True),
    Format("x-archive", "mcpkit.archive.importers.x_archive"),
    Format("mastodon", "mcpkit.archive.importers.mastodon"),
    Format("twilog-csv", ""),
)
"""Tried in this order; the Twilog CSV last, as it is the one plain text file."""


def detect(path: Path) -> Format:
    """The format of the export at ``path``; raises :class:`ImportFormatError` (one line) for
    a path that is none of them."""
    path = Path(path)
    if not path.exists():
        raise ImportFormatError(f"{path}: no such file or folder")
    for candidate in FORMATS:
        if candidate.sniff(path):
            return candidate
    if path.is_file() and ((_is_text(path) and _text_kind(_head(path)) is None) or _one_csv_zip(path)):
        # a text file (or a zip of one CSV) that is no Twilog CSV: the CSV reader says what it
        # found in it, or which limit it passes
        return FORMATS[-1]
    raise ImportFormatError(f"{path}: {EXPECTED}; found {describe(path)}")


def open_reader(path: Path, limits: ReadLimits | None = None) -> ExportReader:
    """Detect the export at ``path`` and open its reader."""
    return detect(path).open(Path(path), limits or ReadLimits())


def describe(path: Path) -> str:
    """What ``path`` is, in a few words, for the line that refuses it."""
    path = Path(path)
    if path.is_dir():
        names = sorted(p.name for p in path.iterdir())[:4]
        shown = ", ".join(names) if names else "nothing"
        return f"a folder holding {shown}{', ...' if len(names) == 4 else ''}"
    try:
        with open(path, "rb") as raw:
            head = raw.read(512)
    except OSError as exc:
        return f"a file that cannot be read ({exc.strerror or exc})"
    known = magic_kind(head)
    if known is not None:
        return known
    if head.startswith(b"PK\x03\x04"):
        return _describe_zip(path)
    if head.startswith(b"\x1f\x8b"):
        return _describe_gzip(path)
    if not head:
        return "an empty file"
    if looks_binary(head):
        return "binary data"
    return _text_kind(head) or "a text file"


def _text_kind(head: bytes) -> str | None:
    """What a text file is when it is one file of an export, given alone."""
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if text.startswith((b"window.YTD.", b"Grailbird.data.")):
        return "one file of an X archive: give the whole archive (the zip, or the folder holding data/)"
    if text.startswith((b"{", b"[")):
        return "a JSON file (for a Mastodon archive, give the whole tar.gz or the folder holding outbox.json)"
    return None


def _head(path: Path) -> bytes:
    try:
        with open(path, "rb") as raw:
            return raw.read(512)
    except OSError:
        return b""


def _describe_zip(path: Path) -> str:
    try:
        with zipfile.ZipFile(path) as archive:
            names = [n for n in archive.namelist() if not n.endswith("/")]
    except (zipfile.BadZipFile, ValueError, OSError, NotImplementedError):
        return "a damaged or truncated zip file"
    shown = ", ".join(names[:3]) if names else "nothing"
    return f"a zip file holding {shown}{', ...' if len(names) > 3 else ''}"


def _describe_gzip(path: Path) -> str:
    try:
        with gzip.open(path, "rb") as stream:
            head = stream.read(512)
    except (OSError, EOFError):
        return "a damaged or truncated gzip file"
    if not head:
        return "an empty gzip file"
    if len(head) >= 262 and head[257:262] == b"ustar":
        return "a tar.gz file without a Mastodon outbox.json"
    return "a gzip file of binary data" if looks_binary(head) else "a gzip file of text that is no Twilog CSV"


def _one_csv_zip(path: Path) -> bool:
    """Whether ``path`` is a zip holding exactly one CSV file, as Twilog's zipped exports do."""
    try:
        with zipfile.ZipFile(path) as archive:
            return sum(name.lower().endswith(".csv") for name in archive.namelist()) == 1
    except (zipfile.BadZipFile, ValueError, OSError, NotImplementedError):
        return False


def _is_text(path: Path) -> bool:
    """Whether the file (or what a gzip holds) starts as text, which only a CSV could be."""
    try:
        with open(path, "rb") as raw:
            head = raw.read(4096)
        if head.startswith(b"\x1f\x8b"):
            with gzip.open(path, "rb") as stream:
                head = stream.read(4096)
    except (OSError, EOFError):
        return False
    if not head or looks_binary(head) or head.startswith(b"PK\x03\x04"):
        return False
    return magic_kind(head) is None
