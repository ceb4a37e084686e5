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

__all__ = ["highlight", "match_spans", "post_html"]

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
    spans = match_spans(text, terms)
    out: list[str] = []
    pos = 0
    for found in _URL.finditer(text):
        if found.start() > pos:
            out.append(highlight(text[pos : found.start()], terms, pos, spans))
        url = found.group(0)
        inner = highlight(url, terms, found.start(), spans)
        out.append(f'<a href="{escape(url)}" rel="nofollow noopener noreferrer">{inner}</a>')
        pos = found.end()
    out.append(highlight(text[pos:], terms, pos, spans))
    return Markup("".join(out))
