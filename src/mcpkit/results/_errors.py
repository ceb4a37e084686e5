"""Error results: ``isError`` true and one short line a model can act on.

A client once dropped ``isError`` and kept only the first content item, so an error has to
survive that: exactly one text item whose text reads as an error on its own. Multi-line text,
tracebacks and megabyte messages help nobody and leak internals, so the message is reduced to
one line, the traceback part is cut off, and the length is capped.
"""

from __future__ import annotations

import re

import mcp_types

from mcpkit.errors import McpkitError
from mcpkit.results._chars import scrub_surrogates

ERROR_MESSAGE_LIMIT = 500
"""Characters kept of an error message; the rest is replaced by an ellipsis."""

_TRACEBACK = "Traceback (most recent call last)"
# Everything str.splitlines() breaks on, plus the other C0/C1 controls and tabs: all become
# one space, so the message is one line however it was written.
_BREAKS = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\s]+")


def one_line(message: str, limit: int = ERROR_MESSAGE_LIMIT) -> str:
    """``message`` as one line of at most ``limit`` characters, without any traceback."""
    at = message.find(_TRACEBACK)
    if at >= 0:
        message = message[:at]
    flat = _BREAKS.sub(" ", scrub_surrogates(message)).strip()
    if len(flat) > limit:
        flat = flat[: max(limit - 1, 0)].rstrip() + "…"
    return flat


def describe(exc: BaseException) -> str:
    """What to tell the client about ``exc``.

    mcpkit's own errors carry a message written for the reader, so it is used as is. Other
    exceptions get their class name in front, because ``str(KeyError('id'))`` is just ``'id'``.
    """
    text = str(exc)
    if isinstance(exc, McpkitError):
        return text or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def error_result(message: str | BaseException) -> mcp_types.CallToolResult:
    """A result with ``isError`` true and one text item holding a one-line message."""
    text = describe(message) if isinstance(message, BaseException) else message
    line = one_line(text) or "The tool failed without a message."
    return mcp_types.CallToolResult(content=[mcp_types.TextContent(text=line)], is_error=True)
