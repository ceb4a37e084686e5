"""Logging set-up shared by every mcpkit command: stderr only, at the level it is given.

stdout is the MCP stdio channel, so nothing may ever log there. The level is a value: the CLIs
read ``MCPKIT_LOG`` (:func:`mcpkit.cli_kit.log_level`) and pass it, so a program that embeds a
server decides its own logging and no variable changes it behind its back.
"""

from __future__ import annotations

import logging
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


def setup_logging(level_name: str = "warning") -> None:
    """Send mcpkit's logs to stderr at ``level_name`` (debug, info, warning, error; an unknown
    name means warning). Called by the commands and the server runner, never at import."""
    level = logging.getLevelName(level_name.strip().upper())
    if not isinstance(level, int):
        level = logging.WARNING
    root = logging.getLogger()
    if not any(getattr(h, "_mcpkit", False) for h in root.handlers):
        handler = _StderrHandler()
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        root.addHandler(handler)
    root.setLevel(level)
