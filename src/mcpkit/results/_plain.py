"""The wire form of the commonest result, without the SDK's models.

Most ``tools/call`` results are text content, perhaps ``structuredContent`` and ``isError``.
Sending such a result the SDK's way (validate the ``CallToolResult`` model, dump it with its
defaults, sieve it through the version's surface model) costs three pydantic passes, the
largest part of what a gateway does per call. For that shape the outcome is known without
them: the same keys in the surface model's order, ``isError`` spelled out. Anything else
(other content types, annotations, ``_meta``, a ``"true"`` for a boolean, a protocol version
with another result shape) gets None, and the caller takes the SDK's way.

The values inside ``structuredContent`` are passed as they are: write the message with
pydantic's JSON writer, as the SDK does (``pydantic_core.to_json(..., inf_nan_mode="null")``),
and the bytes are the SDK's, non-finite numbers included (null).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcpkit._sdk import PLAIN_RESULT_VERSIONS

PLAIN_VERSIONS = PLAIN_RESULT_VERSIONS
"""Versions whose result surface is the SDK's 2025-11-25 ``CallToolResult`` (an assumption about
the SDK, kept with the others in :mod:`mcpkit._sdk` and checked there for every version)."""

_KEYS = frozenset({"content", "structuredContent", "isError"})


def plain_text_wire(raw: Mapping[str, Any], version: str) -> dict[str, Any] | None:
    """What the SDK would send for ``raw`` in ``version``, when ``raw`` is text content with an
    optional ``structuredContent`` object and an optional boolean ``isError``; else None."""
    if version not in PLAIN_VERSIONS or not _KEYS.issuperset(raw):
        return None
    content = raw.get("content")
    if type(content) is not list:
        return None
    items = []
    for item in content:
        if type(item) is not dict or len(item) != 2 or item.get("type") != "text":
            return None
        text = item.get("text")
        if type(text) is not str:
            return None
        items.append({"text": text, "type": "text"})
    is_error = raw.get("isError", False)
    if type(is_error) is not bool:
        return None
    wire: dict[str, Any] = {"content": items, "isError": is_error}
    if "structuredContent" in raw:
        structured = raw["structuredContent"]
        if type(structured) is not dict:
            return None
        wire["structuredContent"] = structured
    return wire
