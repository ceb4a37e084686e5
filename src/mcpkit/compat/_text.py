"""Rewriting description text into the plain form Claude Desktop (2025) survives.

Parentheses, underscores and more than four lines in any description crashed Claude Desktop
(2025), and the fix was plain English: ``time_entries`` became "time entries", a parenthesised
remark became part of the sentence. These functions do that mechanically and
deterministically, so the same input always gives the same text (and the same lint result).
"""

from __future__ import annotations

import re

_INNER_PARENS = re.compile(r"[ \t]*\(([^()]*)\)")
_WORD_UNDERSCORES = re.compile(r"(?<=[^\W_])_+(?=[^\W_])")
_SPACES = re.compile(r"(?<=\S)[ \t]{2,}")
_SPACE_BEFORE_PUNCT = re.compile(r"[ \t]+(?=[,.;:!?])")
_DOUBLE_COMMA = re.compile(r",(\s*,)+")
_COMMA_BEFORE_STOP = re.compile(r",(?=\s*[.;:!?])")

TYPE_WORDS = {
    "string": "text",
    "integer": "a whole number",
    "number": "a number",
    "boolean": "true or false",
    "object": "a JSON object",
    "array": "a JSON array",
    "null": "null",
}


def _paren_replacement(text: str, match: re.Match[str]) -> str:
    """``x (y) z`` -> ``x, y, z``; ``x (y).`` -> ``x, y.``; ``(y) z`` at a line start -> ``y, z``."""
    inner = match.group(1).strip()
    before = text[: match.start()].rstrip(" \t")
    at_start = not before or before[-1] in "\n\r"
    rest = text[match.end() :].lstrip(" \t")
    at_stop = not rest or rest[0] in ",.;:!?\n\r"
    if not inner:
        return "" if at_start or at_stop else " "
    return ("" if at_start else ", ") + inner + ("" if at_stop else ", ")


def remove_parentheses(text: str) -> str:
    """Turn each parenthesised remark into a comma-separated part of its sentence.

    >>> remove_parentheses("List users (requires admin privileges).")
    'List users, requires admin privileges.'
    >>> remove_parentheses("Name (optional) of the project")
    'Name, optional, of the project'
    """
    if "(" not in text and ")" not in text:
        return text
    while match := _INNER_PARENS.search(text):
        text = text[: match.start()] + _paren_replacement(text, match) + text[match.end() :].lstrip(" \t")
    # Unbalanced leftovers carry no structure worth keeping.
    return _tidy(text.replace("(", " ").replace(")", " "))


def remove_underscores(text: str) -> str:
    """``time_entries`` -> ``time entries``; stray underscores (``__init__``) disappear.

    >>> remove_underscores("Additional data like time_entries, custom_fields")
    'Additional data like time entries, custom fields'
    """
    if "_" not in text:
        return text
    return _tidy(_WORD_UNDERSCORES.sub(" ", text).replace("_", ""))


def _tidy(text: str) -> str:
    text = _DOUBLE_COMMA.sub(",", text)
    text = _COMMA_BEFORE_STOP.sub("", text)
    text = _SPACE_BEFORE_PUNCT.sub("", text)
    text = _SPACES.sub(" ", text)
    lines = [line.rstrip(" \t") for line in text.split("\n")]
    lines = [line[2:] if line.startswith(", ") else line for line in lines]
    return "\n".join(lines)


def fold_lines(text: str, max_lines: int) -> str:
    """At most ``max_lines`` lines: blank lines go first, then the tail joins the last line.

    Lines are counted the way :meth:`str.splitlines` counts them, the same count lint uses.
    """
    lines = text.splitlines()
    if len(lines) <= max_lines:
        return text
    lines = [line.strip() for line in lines if line.strip()]
    if len(lines) > max_lines:
        head, tail = lines[: max_lines - 1], lines[max_lines - 1 :]
        lines = [*head, " ".join(tail)]
    return "\n".join(lines)


def line_count(text: str) -> int:
    return len(text.splitlines())


def plain(text: str, max_lines: int = 4) -> str:
    """Everything Claude Desktop (2025) needs: no parentheses, no underscores, few lines."""
    return fold_lines(remove_underscores(remove_parentheses(text)), max_lines)


def type_phrase(types: list[str]) -> str:
    """``["number", "string"]`` -> ``"a number or text"``."""
    words = [TYPE_WORDS.get(t, t) for t in types]
    if len(words) <= 1:
        return "".join(words)
    return ", ".join(words[:-1]) + " or " + words[-1]


def append_sentence(text: str | None, sentence: str) -> str:
    """Add a sentence to the end of a description, on its last line (so no line is added)."""
    base = (text or "").rstrip()
    if not base:
        return sentence
    if base[-1] not in ".!?":
        base += "."
    return f"{base} {sentence}"
