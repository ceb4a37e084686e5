"""An attachment inside the export it came from: a file in an export folder, a member of a
zip or tar export. Read by the archive's post pages (which export holds a picture) and by the
web face (the picture's bytes)."""

from __future__ import annotations

import functools
import tarfile
import zipfile
import zlib
from pathlib import Path

from mcpkit.archive.errors import ImportFormatError
from mcpkit.archive.importers.export_file import ReadLimits, open_zip_member

__all__ = ["export_holds", "export_member", "read_member"]


def export_holds(export_path: str, member: str) -> bool:
    """Whether the export at ``export_path`` holds ``member`` (a file in its folder or zip)."""
    where = export_member(export_path, member)
    if where is None:
        return False
    file, inside = where
    if not inside:
        return True
    try:
        return inside in _zip_names(str(file), file.stat().st_mtime_ns)
    except OSError:
        return False


@functools.lru_cache(maxsize=4)
def _zip_names(path: str, mtime_ns: int) -> frozenset[str]:
    """Member names of a zip or tar export (kept for the last few: a thread's pictures share one)."""
    try:
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as archive:
                return frozenset(archive.namelist())
        with tarfile.open(path, "r:*") as packed:
            return frozenset(_tar_name(info.name) for info in packed if info.isfile())
    except (OSError, EOFError, zlib.error, zipfile.BadZipFile, tarfile.TarError):
        return frozenset()


def _tar_name(name: str) -> str:
    return name.removeprefix("./")


def read_member(file: Path, member: str, max_bytes: int) -> bytes | None:
    """The bytes of ``member`` in the zip or tar (gzip'd or not: a Mastodon archive is a
    tar.gz) at ``file``; ``None`` when it is not there, is larger than ``max_bytes`` or the
    file cannot be read."""
    try:
        if zipfile.is_zipfile(file):
            with zipfile.ZipFile(file) as archive:
                try:
                    info = archive.getinfo(member)
                except KeyError:
                    return None
            if info.file_size > max_bytes:
                return None
            # Decompressed a read at a time, stopped where it outgrows what its header declares
            # (zipfile's own read expands a bzip2 or lzma chunk whole: a 3 KB picture, 3 GB).
            with open_zip_member(file, info, ReadLimits(max_bytes=max_bytes)) as stream:
                return stream.read(max_bytes + 1)
        with tarfile.open(file, "r:*") as packed:
            for entry in packed:
                if entry.isfile() and _tar_name(entry.name) == member:
                    if entry.size > max_bytes:
                        return None
                    handle = packed.extractfile(entry)
                    return None if handle is None else handle.read(max_bytes)
    except (OSError, EOFError, zlib.error, zipfile.BadZipFile, tarfile.TarError, ImportFormatError):
        return None
    return None


def export_member(export_path: str, member: str) -> tuple[Path, str] | None:
    """Resolve a media path against its export: ``(file, "")`` for a directory export,
    ``(zip, member)`` for a zip export; ``None`` when it would leave the export."""
    if not export_path or not member:
        return None
    root = Path(export_path)
    clean = member.replace("\\", "/").lstrip("/")
    if any(part in ("..", "") for part in clean.split("/")):
        return None
    if root.is_dir():
        target = (root / clean).resolve()
        if not target.is_relative_to(root.resolve()) or not target.is_file():
            return None
        return target, ""
    if root.is_file():
        return root, clean
    return None
