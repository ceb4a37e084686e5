"""Logging set-up shared by every mcpkit command: stderr only, level from ``MCPKIT_LOG``.

stdout is the MCP stdio channel, so nothing may ever log there.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import TextIO

ENV_LOG = "MCPKIT_LOG"


class _StderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to whatever ``sys.stderr`` is at the moment of the record, not the stream it was
    made with: a command run in-process (typer's CliRunner, an embedding program) swaps stderr
    per run, and a handler holding the first run's stream wrote to a closed file afterwards."""

    _mcpkit = True

    def __init__(self) -> None:
        super().__init__(sys.stderr)

    @property
    def stream(self) -> TextIO:
        return sys.stderr

    @stream.setter
    def stream(self, _value: TextIO) -> None:
        pass


def setup_logging(default: str = "warning") -> None:
    """Send mcpkit's logs to stderr at the level ``MCPKIT_LOG`` names (debug, info, warning, error).

    Called by the commands (and the server runner they start), never by library code at import.
    """
    name = os.environ.get(ENV_LOG, default).strip().upper() or default.upper()
    level = logging.getLevelName(name)
    if not isinstance(level, int):
        level = logging.WARNING
    root = logging.getLogger()
    if not any(getattr(h, "_mcpkit", False) for h in root.handlers):
        handler = _StderrHandler()
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        root.addHandler(handler)
    root.setLevel(level)
