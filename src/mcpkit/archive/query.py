"""Query syntax of ``search_similar`` and ``search_posts_by_text`` (upstream's, rule for rule):

* ``V|T``: ``V`` is embedded for the vector search, ``T`` filters the ranked posts by text;
  ``\\|`` is a literal bar.
* ``| T``: text only; every match scores 1.0, newest first.
* ``T`` terms, shell-like: terms are separated by whitespace and must all occur (AND);
  ``"a phrase"`` keeps its spaces and ends the term at its closing quote; a term starting with
  ``-`` excludes; a backslash makes the next character literal (``\\-x`` is the term ``-x``,
  ``\\"`` a quote); an empty term (a lone ``-``, ``""``) is dropped. Matching is a
  case-insensitive substring test.

The same :class:`TextFilter` serves every face and every ``source``: the text search, the
``T`` of ``V|T`` in every mode and of ``vector_search``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mcpkit.archive.posts import fold
from mcpkit.errors import ValidationError

__all__ = ["ParsedQuery", "TextFilter", "parse_query", "parse_terms", "quote_term", "split_query"]


@dataclass(frozen=True, slots=True)
class TextFilter:
    """Terms every matching text contains (``includes``) and none it may contain (``excludes``)."""

    includes: tuple[str, ...] = ()
    excludes: tuple[str, ...] = ()
    _folded: tuple[tuple[str, ...], tuple[str, ...]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # folded once: matches() runs for every candidate post of a search
        folded = (tuple(fold(t) for t in self.includes), tuple(fold(t) for t in self.excludes))
        object.__setattr__(self, "_folded", folded)

    @property
    def active(self) -> bool:
        return bool(self.includes or self.excludes)

    @property
    def folded_includes(self) -> tuple[str, ...]:
        return self._folded[0]

    def matches(self, text: str | None) -> bool:
        """Does ``text`` (``None``: a post without that text, matched as ``""``) pass?"""
        folded = fold(text or "")
        includes, excludes = self._folded
        return all(t in folded for t in includes) and not any(t in folded for t in excludes)


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


class _TermReader:
    """Reads one term at a time from the text; see the module docstring for the rules."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def skip_space(self) -> bool:
        """Move past whitespace; False at the end of the text."""
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1
        return self.pos < len(self.text)

    def term(self) -> tuple[bool, str]:
        """``(excluded, term)`` starting at a non-space character."""
        text = self.text
        excluded = text[self.pos] == "-"
        self.pos += excluded
        chars: list[str] = []
        in_quotes = False
        while self.pos < len(text):
            char = text[self.pos]
            self.pos += 1
            if char == "\\" and self.pos < len(text):
                chars.append(text[self.pos])
                self.pos += 1
            elif char == '"':
                if in_quotes:
                    break  # a closing quote ends the term
                in_quotes = True
            elif char.isspace() and not in_quotes:
                break
            else:
                chars.append(char)
        return excluded, "".join(chars)


def parse_terms(text: str) -> TextFilter:
    """The include and exclude terms of ``text`` in the order written."""
    includes: list[str] = []
    excludes: list[str] = []
    reader = _TermReader(text)
    while reader.skip_space():
        excluded, term = reader.term()
        if term:
            (excludes if excluded else includes).append(term)
    return TextFilter(tuple(includes), tuple(excludes))


def quote_term(term: str) -> str:
    """``term`` written so that :func:`parse_terms` reads it back as exactly one term."""
    return '"' + term.replace("\\", "\\\\").replace('"', '\\"') + '"'


def parse_query(query: str) -> ParsedQuery:
    vector_part, text_part = split_query(query)
    text_filter = parse_terms(text_part) if text_part is not None else TextFilter()
    vector_text = vector_part.strip()
    if not vector_text and not (text_part or "").strip():
        # as upstream, ``| -`` is a text query (no terms left: every post) but ``|`` is empty
        raise ValidationError("Invalid params: query is required")
    return ParsedQuery(vector_text, text_filter)
