"""Which export a path is: by its content, not its name.

People pass what they downloaded as it is (``twitter-2024-01-01-abc.zip``, an unpacked
folder, ``archive-20241101.tar.gz``, ``repo.car``, ``twilog.csv.gz``) and sometimes renamed;
so each format module's ``sniff`` looks inside (a zip's member names, a tar's, a CAR's
header, a CSV's first rows), and the first that recognises the path reads it. A path none
recognises gets one line naming what was expected and what was found. The format modules are
imported when detection first runs, not with this module. Each format is declared once, in
its importer module (:class:`~.base.ExportFormat`); :func:`formats` finds them all.
"""

from __future__ import annotations

import functools
import gzip
import importlib
import logging
import pkgutil
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from mcpkit.archive.errors import ImportFormatError
from mcpkit.archive.importers.base import ExportFormat, ExportReader, ReadLimits
from mcpkit.archive.importers.export_file import looks_binary, magic_kind

logger = logging.getLogger("mcpkit.archive")

__all__ = ["Format", "declared", "describe", "detect", "expected", "formats", "open_reader"]


@dataclass(frozen=True, slots=True)
class Format:
    """One export format: its declaration and the importer module that declares it and gives
    its ``sniff(path)`` and ``open_reader(path, limits)``."""

    declared: ExportFormat
    module: ModuleType

    @property
    def name(self) -> str:
        return self.declared.name

    @property
    def takes_handle(self) -> bool:
        return self.declared.takes_handle

    def sniff(self, path: Path) -> bool:
        return bool(self.module.sniff(path))

    def open(self, path: Path, limits: ReadLimits, *, handle: str = "") -> ExportReader:
        """The format's reader on ``path``; a file that cannot be read is one line too.
        ``handle`` names the account of a Bluesky CAR (which holds only its DID); the other
        formats name their account themselves and ignore it."""
        opener: Callable[..., ExportReader] = self.module.open_reader
        try:
            return (
                opener(path, limits, handle=handle) if handle and self.takes_handle else opener(path, limits)
            )
        except OSError as exc:
            raise ImportFormatError(f"{path}: cannot be read: {exc.strerror or exc}") from exc


@functools.cache
def formats() -> tuple[Format, ...]:
    """Every format an importer module of this package declares (its ``DECLARED``), in the
    order detection tries them. A module whose library is not installed (the CAR reader's
    without ``libipld``) is left out, so its exports are refused as unknown."""
    import mcpkit.archive.importers as package

    found: list[Format] = []
    for info in pkgutil.iter_modules(package.__path__, f"{package.__name__}."):
        try:
            module = importlib.import_module(info.name)
        except ModuleNotFoundError as exc:
            if exc.name == info.name or (exc.name or "").startswith("mcpkit"):
                raise
            logger.debug("no %s: %s", info.name, exc)
            continue
        declaration = getattr(module, "DECLARED", None)
        if isinstance(declaration, ExportFormat):
            found.append(Format(declaration, module))
    return tuple(sorted(found, key=lambda f: (f.declared.order, f.name)))


def declared(name: str) -> ExportFormat | None:
    """The declaration of the format stored as ``name`` (``None`` for one this mcpkit lacks)."""
    return next((f.declared for f in formats() if f.name == name), None)


def expected() -> str:
    """What a refusal says the import reads: every declared format, in detection order."""
    phrases = [f.declared.expected for f in formats()]
    return "expected " + (
        f"{', '.join(phrases[:-1])} or {phrases[-1]}" if len(phrases) > 1 else "".join(phrases)
    )


def __getattr__(name: str) -> str:
    if name == "EXPECTED":  # computed on first use: the declarations live in the importer modules
        return expected()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def detect(path: Path) -> Format:
    """The format of the export at ``path``; raises :class:`ImportFormatError` (one line) for
    a path that is none of them."""
    path = Path(path)
    if not path.exists():
        raise ImportFormatError(f"{path}: no such file or folder")
    known = formats()
    for candidate in known:
        if candidate.sniff(path):
            return candidate
    if path.is_file() and ((_is_text(path) and _text_kind(_head(path)) is None) or _one_csv_zip(path)):
        # a text file (or a zip of one CSV) that is no Twilog CSV: the CSV reader says what it
        # found in it, or which limit it passes
        return known[-1]
    raise ImportFormatError(f"{path}: {expected()}; found {describe(path)}")


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
