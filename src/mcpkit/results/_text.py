"""Plain text results and the size cap every builder shares.

Clients cut long tool output silently (Claude Code trims, others drop the result), and a model
that does not know it saw a fragment will reason as if it saw everything. So mcpkit cuts first,
at a size the caller chooses, and says so in the text itself: how much was shown of how much.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import mcp_types

from mcpkit.results._chars import scrub_surrogates

DEFAULT_TEXT_LIMIT = 50_000
"""Characters of text kept by default (about 12k tokens: under the 25k-token tool output
budget Claude Code applies, with room for the rest of the conversation)."""


def truncation_note(shown: int, total: int) -> str:
    """The line appended to cut text; numbers so a model can ask for the rest (paging, filters)."""
    return f"\n… [truncated: showed {shown} of {total} characters]"


def cap_text(text: str, limit: int) -> str:
    """``text`` if it fits in ``limit`` characters, else its first ``limit`` plus a note.

    The result is at most ``limit + len(truncation_note(...))`` characters. The cut prefers the
    last line break in the final tenth of the kept part, so a line is not split mid-way when
    that costs little.
    """
    if limit < 0:
        raise ValueError(f"limit must be zero or more, got {limit}")
    if len(text) <= limit:
        return text
    cut = limit
    newline = text.rfind("\n", limit - limit // 10, limit)
    if newline > 0:
        cut = newline
    return text[:cut] + truncation_note(cut, len(text))


def text_result(
    text: str,
    *,
    structured: Mapping[str, Any] | None = None,
    limit: int | None = DEFAULT_TEXT_LIMIT,
) -> mcp_types.CallToolResult:
    """A successful result with one text item, capped at ``limit`` (``None``: no cap).

    ``structured`` becomes ``structuredContent`` (a deep copy, so later changes by the caller
    do not leak into a result already handed over). Lone surrogates become U+FFFD: the SDK
    cannot encode them and the call would otherwise fail on the wire.
    """
    shown = scrub_surrogates(text)
    if limit is not None:
        shown = cap_text(shown, limit)
    return mcp_types.CallToolResult(
        content=[mcp_types.TextContent(text=shown)],
        structured_content=copy.deepcopy(dict(structured)) if structured is not None else None,
    )
