"""Where an archive lives: a file path, never a URL taken for one.

``--db`` and ``MCPKIT_ARCHIVE_DB`` name a SQLite file. A value with a URL scheme
(``postgresql://user@host/db``) once went through ``Path`` unchanged: the command exited 0 and wrote
a SQLite archive into a folder called ``postgresql:`` under the current directory. Every value now
passes :func:`archive_path` first, which refuses any ``scheme://`` in one line naming what this
release opens. This module loads nothing heavy, so the CLI checks the option while it parses.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from mcpkit.errors import ValidationError

__all__ = ["ENV_DB", "archive_path", "default_db_path"]

ENV_DB = "MCPKIT_ARCHIVE_DB"

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
_POSTGRES = {"postgres", "postgresql", "postgresql+psycopg", "postgresql+psycopg2"}


def archive_path(value: str | Path, *, name: str = "--db") -> Path:
    """The archive file ``value`` names (``~`` expanded); a URL is refused, never made a folder."""
    text = str(value)  # a Path already collapsed "//": check the text the person gave when there is one
    found = _SCHEME.match(text)
    if found:
        scheme = found.group(1).lower()
        if scheme in _POSTGRES:
            raise ValidationError(
                f"{name} {scheme}://...: this release keeps an archive in a SQLite file only; "
                "give the file's path (PostgreSQL archives are not supported yet)"
            )
        if scheme == "file":
            return Path(text[len("file://") :]).expanduser()
        raise ValidationError(f"{name} {scheme}://...: not a file path; give the archive file's path")
    if not text.strip():
        raise ValidationError(f"{name} is empty; give the archive file's path")
    return Path(text).expanduser()


def default_db_path(environ: Mapping[str, str]) -> Path:
    """Where the archive lives unless ``--db`` says: ``MCPKIT_ARCHIVE_DB``, then the XDG data dir."""
    explicit = environ.get(ENV_DB)
    if explicit:
        return archive_path(explicit, name=ENV_DB)
    base = environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base).expanduser() / "mcpkit" / "archive.db"
