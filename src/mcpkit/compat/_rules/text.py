"""Rules about description text: forbidden characters, line count, length, presence."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

from mcpkit.compat._model import CheckContext, Definition, Edit, FixContext, Issue, Rule
from mcpkit.compat._rules._util import show
from mcpkit.compat._text import fold_lines, line_count
from mcpkit.compat._walk import TOOL_SCHEMAS, descriptions


def _rewrite_all(
    rewrite: Callable[[str], str], action: str, which: tuple[str, ...]
) -> Callable[[Definition, FixContext], list[Edit]]:
    def fix(definition: Definition, ctx: FixContext) -> list[Edit]:
        edits: list[Edit] = []
        for pointer, text, holder in list(descriptions(definition, which)):
            new = rewrite(text)
            if new != text:
                holder["description"] = new
                edits.append(Edit(pointer, action, f"{show(text)} -> {show(new)}"))
        return edits

    return fix


def forbidden_chars(
    chars: str,
    what: str,
    rewrite: Callable[[str], str],
    adapt: str,
    which: tuple[str, ...] = TOOL_SCHEMAS,
    **meta: Any,
) -> Rule:
    """No description anywhere in the tool may contain any of ``chars``."""

    def check(definition: Definition, ctx: CheckContext) -> Iterator[Issue]:
        for pointer, text, _ in descriptions(definition, which):
            found = sorted({c for c in text if c in chars})
            if found:
                yield Issue(
                    pointer,
                    f"description contains {what} {' '.join(found)}: {show(text)}",
                    f"write it as {show(rewrite(text))}",
                )

    return Rule(check=check, fix=_rewrite_all(rewrite, "rewrite-description", which), adapt=adapt, **meta)


def max_lines(limit: int, which: tuple[str, ...] = TOOL_SCHEMAS, **meta: Any) -> Rule:
    """No description anywhere in the tool may have more than ``limit`` lines."""

    def check(definition: Definition, ctx: CheckContext) -> Iterator[Issue]:
        for pointer, text, _ in descriptions(definition, which):
            count = line_count(text)
            if count > limit:
                yield Issue(
                    pointer,
                    f"description has {count} lines, over {limit}",
                    f"say it in at most {limit} lines",
                )

    return Rule(
        check=check,
        fix=_rewrite_all(lambda t: fold_lines(t, limit), "fold-lines", which),
        adapt=f"drops blank lines, then joins the tail into line {limit}",
        **meta,
    )


def max_length(limit: int, **meta: Any) -> Rule:
    """The tool description may have at most ``limit`` characters."""

    def check(definition: Definition, ctx: CheckContext) -> Iterator[Issue]:
        text = definition.get("description")
        if isinstance(text, str) and len(text) > limit:
            yield Issue(
                "/description",
                f"description is {len(text)} characters long, over {limit}",
                f"shorten it to at most {limit} characters",
            )

    return Rule(check=check, adapt="none: shortening prose is a human's job", **meta)


def required_description(**meta: Any) -> Rule:
    """The tool has a non-empty description."""

    def check(definition: Definition, ctx: CheckContext) -> Iterator[Issue]:
        text = definition.get("description")
        if not isinstance(text, str) or not text.strip():
            yield Issue("/description", "the tool has no description", "say what the tool does in one line")

    return Rule(check=check, adapt="none: a description cannot be invented", **meta)


FINDABLE_WORDS = 4
"""Fewer words than this cannot say what a tool does and when to use it. Four, because a short
description that says something beside the name ("Convert time between timezones", the real
time server's) is found by a search; three-word ones rarely say more than the name."""

_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)
_STOPWORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "to",
        "for",
        "in",
        "on",
        "and",
        "or",
        "by",
        "with",
        "from",
        "this",
        "that",
        "it",
        "its",
        "is",
        "are",
        "be",
        "as",
        "at",
        "tool",
        "tools",
        "function",
        "mcp",
        "server",
        "get",
        "gets",
        "set",
        "sets",
        "do",
        "does",
        "run",
        "runs",
        "make",
        "makes",
        "use",
        "uses",
    ]
)


def _stem(word: str) -> str:
    word = word.lower()
    for suffix in ("ies", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return word


def vagueness(name: str, description: Any) -> str | None:
    """Why a search over names and descriptions would miss this tool, or None.

    Missing, fewer than :data:`FINDABLE_WORDS` words, or nothing but the name's own words
    ("get_user": "Gets the user.") are what a search cannot tell from the next tool.
    """
    text = description.strip() if isinstance(description, str) else ""
    if not text:
        return "the tool has no description"
    words = _WORD.findall(text)
    if len(words) < FINDABLE_WORDS:
        return f"the description has {len(words)} word{'s' if len(words) != 1 else ''}"
    own = {_stem(w) for w in _WORD.findall(name.replace("_", " ").replace("-", " "))}
    own |= {_stem(w) for w in re.findall(r"[A-Z]?[a-z]+", name)}
    content = {_stem(w) for w in words} - own - {_stem(w) for w in _STOPWORDS}
    if not content:
        return "the description only repeats the tool's name"
    return None


def findable(**meta: Any) -> Rule:
    """The tool's description says enough for a search to find it (deferred tool loading)."""

    def check(definition: Definition, ctx: CheckContext) -> Iterator[Issue]:
        name = definition.get("name")
        why = vagueness(name if isinstance(name, str) else "", definition.get("description"))
        if why is not None:
            yield Issue(
                "/description",
                f"{why}: a tool search may never offer it",
                "say what the tool does and when to use it, in the words a user would search with",
            )

    return Rule(check=check, adapt="none: a description cannot be invented", **meta)
