"""Outcome: everything a ``tools/call`` result says, with one text that loses nothing.

A client that kept only the first content item and ignored ``isError`` passed half an
answer, or an error's text, on as the answer. Here the result
is kept whole (``raw``, ``contents``, ``structured``) and ``text`` joins every item in order,
describing what cannot be shown as text, so a caller that only reads ``text`` still sees
that an image, a resource or an unknown item was there.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

_PREVIEW = 200


@dataclass(frozen=True)
class Outcome:
    """One tool result: joined ``text``, the ``contents`` items as sent, ``structured`` content,
    ``is_error`` and the ``raw`` result dict."""

    text: str
    contents: list[dict[str, Any]] = field(default_factory=list)
    structured: Any = None
    is_error: bool = False
    raw: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_raw(cls, raw: Mapping[str, Any]) -> Outcome:
        """Build an Outcome from a result as received; never raises on odd shapes."""
        items = raw.get("content")
        contents: list[dict[str, Any]] = []
        if isinstance(items, list):
            for item in items:
                contents.append(item if isinstance(item, dict) else {"type": None, "value": item})
        structured = raw.get("structuredContent")
        return cls(
            text=join_contents(contents, structured),
            contents=contents,
            structured=structured,
            is_error=raw.get("isError") is True,
            raw=dict(raw),
        )


def join_contents(contents: list[dict[str, Any]], structured: Any = None) -> str:
    """Every item in order, one per line; empty content falls back to the structured JSON."""
    if not contents:
        return "" if structured is None else json.dumps(structured, ensure_ascii=False)
    return "\n".join(describe_content(item) for item in contents)


def describe_content(item: Mapping[str, Any]) -> str:
    """The text of one content item, or a one-line description of what it carries."""
    kind = item.get("type")
    if kind == "text":
        text = item.get("text")
        return text if isinstance(text, str) else _unknown(item)
    if kind in ("image", "audio"):
        return f"[{kind}: {item.get('mimeType', 'unknown type')}, {_b64_size(item.get('data')):,} bytes]"
    if kind == "resource":
        res = item.get("resource")
        if not isinstance(res, Mapping):
            return _unknown(item)
        uri = res.get("uri", "?")
        if isinstance(res.get("text"), str):
            return f"[resource: {uri}]\n{res['text']}"
        mime = res.get("mimeType", "unknown type")
        return f"[resource: {uri}, {mime}, {_b64_size(res.get('blob')):,} bytes]"
    if kind == "resource_link":
        return f"[resource link: {item.get('uri', '?')}]"
    return _unknown(item)


def _unknown(item: Mapping[str, Any]) -> str:
    """Describe an item we do not understand instead of failing on it."""
    preview = json.dumps(item, ensure_ascii=False, default=str)
    if len(preview) > _PREVIEW:
        preview = preview[:_PREVIEW] + "..."
    return f"[unknown content {item.get('type')!r}: {preview}]"


def _b64_size(data: object) -> int:
    """Decoded size of a base64 string, computed without decoding it."""
    if not isinstance(data, str):
        return 0
    stripped = data.strip()
    padding = len(stripped) - len(stripped.rstrip("="))
    return max(0, len(stripped) * 3 // 4 - padding)
