"""Logging set-up shared by every mcpkit command: stderr only, level from ``MCPKIT_LOG``.

stdout is the MCP stdio channel, so nothing may ever log there.
"""

from __future__ import annotations

import logging
import os
import sys

ENV_LOG = "MCPKIT_LOG"


def setup_logging(default: str = "warning") -> None:
    """Send mcpkit's logs to stderr at the level ``MCPKIT_LOG`` names (debug, info, warning, error)."""
    name = os.environ.get(ENV_LOG, default).strip().upper() or default.upper()
    level = logging.getLevelName(name)
    if not isinstance(level, int):
        level = logging.WARNING
    root = logging.getLogger()
    if not any(getattr(h, "_mcpkit", False) for h in root.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        handler._mcpkit = True  # type: ignore[attr-defined]
        root.addHandler(handler)
    root.setLevel(level)
