"""Post text as safe HTML: escaped, matches marked, plain http(s) links made clickable.

Post text is hostile input: an archive holds whatever anyone wrote or a bookmarked post said.
Nothing from it is ever trusted as markup: every character is escaped by markupsafe, and the
only tags added are ``<mark>`` and ``<a>`` whose ``href`` is an ``http``/``https`` URL found
in the text (so ``javascript:`` and ``data:`` never become links).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from markupsafe import Markup, escape

from mcpkit.archive.posts import fold

__all__ = [
    "CLAMP_CHARS",
    "CLAMP_LINES",
    "clamp_point",
    "highlight",
    "match_spans",
    "post_html",
    "post_html_parts",
]

_URL = re.compile(r"https?://[^\s<>\"'\u3000、。「」]+", re.IGNORECASE)


def match_spans(text: str, terms: Sequence[str]) -> list[tuple[int, int]]:
    """Merged ``(start, end)`` spans of ``text`` where a term occurs, case folded as searches
    fold (:func:`posts.fold`), in positions of the original text even where folding changes
    a character's length."""
    wanted = [fold(t) for t in terms if t]
    if not wanted or not text:
        return []
    origin: list[int] = []
    pieces: list[str] = []
    for index, char in enumerate(text):
        folded = fold(char)
        pieces.append(folded)
        origin.extend([index] * len(folded))
    haystack = "".join(pieces)
    spans: list[tuple[int, int]] = []
    for term in wanted:
        start = haystack.find(term)
        while start >= 0:
            spans.append((origin[start], origin[start + len(term) - 1] + 1))
            start = haystack.find(term, start + 1)
    spans.sort()
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def highlight(
    text: str, terms: Sequence[str], offset: int = 0, spans: Sequence[tuple[int, int]] = ()
) -> Markup:
    """``text`` escaped, with ``spans`` (positions in a larger text starting at ``offset``)
    wrapped in ``<mark>``."""
    out: list[str] = []
    pos = 0
    for start, end in spans:
        start, end = max(start - offset, 0), min(end - offset, len(text))
        if end <= 0 or start >= len(text) or start >= end:
            continue
        if start > pos:
            out.append(str(escape(text[pos:start])))
        out.append(f"<mark>{escape(text[max(start, pos) : end])}</mark>")
        pos = max(pos, end)
    out.append(str(escape(text[pos:])))
    return Markup("".join(out))


def post_html(text: str, terms: Sequence[str] = ()) -> Markup:
    """A post's text as HTML: escaped, ``terms`` marked, http(s) URLs as links."""
    return _html(text, terms, match_spans(text, terms), 0, len(text))


def _html(text: str, terms: Sequence[str], spans: Sequence[tuple[int, int]], begin: int, end: int) -> Markup:
    """``text[begin:end]`` as :func:`post_html` writes it (``spans`` are of the whole text)."""
    out: list[str] = []
    pos = begin
    for found in _URL.finditer(text, begin, end):
        if found.start() > pos:
            out.append(highlight(text[pos : found.start()], terms, pos, spans))
        url = found.group(0)
        inner = highlight(url, terms, found.start(), spans)
        out.append(f'<a href="{escape(url)}" rel="nofollow noopener noreferrer">{inner}</a>')
        pos = found.end()
    out.append(highlight(text[pos:end], terms, pos, spans))
    return Markup("".join(out))


CLAMP_CHARS = 1000
"""A post in a list shows at most this many characters before its "Show more"."""
CLAMP_LINES = 12
"""... and at most this many lines (a post of many short lines fills a list as well)."""


def clamp_point(text: str, chars: int = CLAMP_CHARS, lines: int = CLAMP_LINES) -> int:
    """Where a list cuts ``text`` (``len(text)`` when it is short enough to show whole): at a
    line or word boundary near the limit, never inside a link; a cut that would leave less
    than a fifth hidden is not made."""
    limit = chars
    newline = -1
    for _ in range(lines):
        newline = text.find("\n", newline + 1)
        if newline < 0:
            break
    else:
        limit = min(limit, newline)
    if len(text) <= limit or (limit == chars and len(text) <= chars * 6 // 5):
        return len(text)
    cut = limit
    space = max(text.rfind(" ", 0, limit), text.rfind("\n", 0, limit))
    if space > limit // 2:
        cut = space
    for found in _URL.finditer(text, 0, min(len(text), cut + 2048)):
        if found.start() < cut < found.end():
            cut = found.start()
            break
    return cut if cut > 0 else limit


def post_html_parts(text: str, terms: Sequence[str] = ()) -> tuple[Markup, Markup]:
    """A post's text for a list: what shows at first, and the rest behind "Show more"
    (``""`` when the post is short); both as :func:`post_html` writes them."""
    cut = clamp_point(text)
    spans = match_spans(text, terms)
    head = _html(text, terms, spans, 0, cut)
    return head, (_html(text, terms, spans, cut, len(text)) if cut < len(text) else Markup(""))
