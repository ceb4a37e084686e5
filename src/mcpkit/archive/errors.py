"""Errors of the archive part.

Every :class:`ArchiveError` is a :class:`~mcpkit.errors.CallError` (the archive call failed: one
``except CallError`` covers it); the ones a caller cures by setting something up rather than by
calling again (no vectors yet, another model, an unprotected server) are
:class:`~mcpkit.errors.ConfigError`s too. None is a
:class:`~mcpkit.errors.ValidationError`: that base means a bad argument (JSON-RPC -32602, exit 2),
while an unreadable export or a damaged space is a failure (-32603, exit 1). Faces translate them
once: :class:`mcpkit.errors.ValidationError` (bad params) becomes JSON-RPC -32602 / an MCP
``isError`` result, every other :class:`ArchiveError` -32603 with its message. Keeping the
classes small lets the engine say *what* failed without knowing *where* it will be shown.
"""

from __future__ import annotations

from mcpkit.archive.messages import Wording
from mcpkit.errors import CallError, ConfigError, ValidationError

__all__ = [
    "ArchiveError",
    "DamagedSpaceError",
    "EmbedderUnavailableError",
    "ImportFormatError",
    "ModelMismatchError",
    "SpaceMissingError",
    "ValidationError",
]


class ArchiveError(CallError):
    """Base class for every error of the archive part: an archive call failed."""


class ImportFormatError(ArchiveError):
    """An input file (CSV export, upstream directory) cannot be read at all."""


class ArchiveMissingError(Wording, ArchiveError):
    """The archive file does not exist yet: nothing was imported (the message says how to, in
    the reader's language by :meth:`~mcpkit.archive.messages.Wording.text`)."""


class SpaceMissingError(ArchiveError, ConfigError):
    """A vector space needed by the request has no vectors yet (run ``mcpkit archive embed``)."""


class ModelMismatchError(ArchiveError, ConfigError):
    """A query or new vectors come from another model than the one a space was built with.

    Cosine between vectors of two different models is meaningless, so this is refused
    instead of returning plausible-looking garbage.
    """


class DamagedSpaceError(ArchiveError):
    """A vector space's files disagree with its meta.json (truncated, unreadable): one line
    saying what is wrong and that ``mcpkit archive embed --repair`` rebuilds it."""


class EmbedderUnavailableError(ArchiveError):
    """An embedding model cannot be loaded or an embedding endpoint cannot be reached."""
