"""What one request may ask of the archive, checked before any work is done.

A query is embedded (memory and time grow with its length: a 5 MB query once cost the MCP
server its life), a text term becomes an FTS5 query, and params are walked recursively; so
texts have a length cap and no control characters, and params a nesting cap. Every violation is
a :class:`~mcpkit.errors.ValidationError`: -32602 on the WebSocket face, an ``isError`` result
over MCP, exit code 2 on the command line, each one line saying what and what the limit is.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mcpkit.errors import ValidationError

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_DEPTH",
    "DEFAULT_MAX_LINE_BYTES",
    "DEFAULT_MAX_TEXT_CHARS",
    "InputLimits",
    "check_depth",
    "check_text",
]

DEFAULT_MAX_BYTES = 4 << 30
"""Decompressed bytes an import reads at most (a million-post export is about 300 MB)."""
DEFAULT_MAX_LINE_BYTES = 1 << 20
"""Longest physical line an import reads (a post is at most 25,000 characters, about 100 KB
in UTF-8). Both live here, not with the readers, so the CLI's defaults load no importer."""
DEFAULT_MAX_TEXT_CHARS = 2000
"""Longest query, search term or embed text (characters); upstream's posts are at most 280."""
DEFAULT_MAX_DEPTH = 8
"""Deepest nesting of params (``settings.user_filter.includes`` is 3 levels deep)."""

# C0 and C1 controls and DEL, except tab, line feed and carriage return (multi-line queries)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


@dataclass(frozen=True, slots=True)
class InputLimits:
    max_text_chars: int = DEFAULT_MAX_TEXT_CHARS
    max_depth: int = DEFAULT_MAX_DEPTH


def check_text(name: str, value: Any, limit: int) -> str:
    """``value`` as a required, non-empty text within ``limit`` characters, without controls."""
    if not value or not isinstance(value, str):
        raise ValidationError(f"Invalid params: {name} is required")
    if len(value) > limit:
        raise ValidationError(
            f"Invalid params: {name} is too long ({len(value):,} characters; the limit is {limit:,})"
        )
    control = _CONTROL.search(value)
    if control is not None:
        raise ValidationError(
            f"Invalid params: {name} contains a control character (U+{ord(control.group()):04X})"
        )
    return value


def check_depth(params: Any, limit: int) -> None:
    """Refuse params nested deeper than ``limit`` containers (without recursing on them)."""
    stack: list[tuple[Any, int]] = [(params, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, Mapping):
            children: Any = value.values()
        elif isinstance(value, list):
            children = value
        else:
            continue
        if depth > limit:
            raise ValidationError(f"Invalid params: nested deeper than {limit} levels")
        stack.extend((child, depth + 1) for child in children)
