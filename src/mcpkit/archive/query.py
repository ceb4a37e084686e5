"""Query syntax of ``search_similar`` (upstream's):

* ``V|T``: ``V`` is embedded for the vector search, ``T`` filters the ranked posts by text;
  ``\\|`` is a literal bar.
* ``| T``: text only; every match scores 1.0, newest first.
* ``T`` terms: space-separated terms must all occur (AND); ``"a phrase"`` keeps spaces;
  ``-term`` excludes; a backslash escapes the next character. Matching is a case-insensitive
  substring test on the post content.
"""

from __future__ import annotations

from dataclasses import dataclass

from mcpkit.archive.posts import fold
from mcpkit.errors import ValidationError


@dataclass(frozen=True, slots=True)
class TextFilter:
    includes: tuple[str, ...] = ()
    excludes: tuple[str, ...] = ()

    @property
    def active(self) -> bool:
        return bool(self.includes or self.excludes)

    def matches(self, text: str) -> bool:
        folded = fold(text)
        return all(fold(t) in folded for t in self.includes) and not any(
            fold(t) in folded for t in self.excludes
        )


@dataclass(frozen=True, slots=True)
class ParsedQuery:
    vector_text: str
    text_filter: TextFilter

    @property
    def text_only(self) -> bool:
        return not self.vector_text


def split_query(query: str) -> tuple[str, str | None]:
    """Split at the first unescaped ``|``; ``\\|`` in the vector part becomes ``|``."""
    out: list[str] = []
    index = 0
    while index < len(query):
        char = query[index]
        if char == "\\" and index + 1 < len(query) and query[index + 1] == "|":
            out.append("|")
            index += 2
            continue
        if char == "|":
            return "".join(out), query[index + 1 :]
        out.append(char)
        index += 1
    return "".join(out), None


def parse_terms(text: str) -> TextFilter:
    """Shell-like term list: quotes group, backslash escapes, leading ``-`` excludes."""
    includes: list[str] = []
    excludes: list[str] = []
    current: list[str] = []
    negative = False
    started = False
    quoted = False
    index = 0

    def flush() -> None:
        nonlocal current, negative, started
        if started:
            term = "".join(current)
            if negative and not term:
                includes.append("-")  # a lone dash is a literal dash
            elif term:
                (excludes if negative else includes).append(term)
        current, negative, started = [], False, False

    while index < len(text):
        char = text[index]
        if char == "\\" and index + 1 < len(text):
            current.append(text[index + 1])
            started = True
            index += 2
            continue
        if char == '"':
            quoted = not quoted
            started = True
        elif quoted or not char.isspace():
            if char == "-" and not started and not quoted:
                negative = True
                started = True
            else:
                current.append(char)
                started = True
        else:
            flush()
        index += 1
    flush()
    return TextFilter(tuple(includes), tuple(excludes))


def parse_query(query: str) -> ParsedQuery:
    vector_part, text_part = split_query(query)
    text_filter = parse_terms(text_part) if text_part is not None else TextFilter()
    vector_text = vector_part.strip()
    if not vector_text and not text_filter.active:
        raise ValidationError("Invalid params: query is required")
    return ParsedQuery(vector_text, text_filter)
