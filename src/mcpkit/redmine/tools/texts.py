"""``read_text``: the rest of a text an answer cut, exactly as Redmine stores it, in pages.

Every cut text ends in a marker naming this call (``call read_text with source="issue 9
description" and offset=4000 for the rest``). The answer is plain text, not XML: the first line
says which characters follow and the call for the next page, and everything after the first
line break is the text itself, character for character. XML cannot carry every character a
Redmine text may hold (most control characters), so only plain text can give it back whole.
A page holds what fits in the answer budget as sent (``REDMINE_ANSWER_LIMIT``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import mcp_types

from mcpkit.errors import ValidationError
from mcpkit.redmine.api import RedmineError, seg
from mcpkit.redmine.tools.args import project_ref
from mcpkit.redmine.tools.base import RedmineContext, redmine_tool
from mcpkit.redmine.tools.results import (
    answer_budget,
    entity_of,
    fitting_prefix,
    prefix_costs,
    text_hash,
)
from mcpkit.results import text_result
from mcpkit.tools import params as p

CATEGORY = "issues"
HEADER_ROOM = 400
"""Bytes kept for the first line of a page."""

_SOURCES = (
    (re.compile(r"^issue (\d+) description$"), "issue"),
    (re.compile(r"^issue (\d+) journal (\d+)$"), "journal"),
    (re.compile(r"^(project|news|version) (\S+) description$"), "description"),
    (re.compile(r"^wiki (\S+) (\S+?)(?: version (\d+))?$"), "wiki"),
)
SOURCE_FORMS = (
    "issue 9 description, issue 9 journal 12, project NAME description, news 3 description, "
    "version 4 description, wiki PROJECT TITLE"
)
_PLURAL = {"project": "projects", "news": "news", "version": "versions"}


async def source_text(rc: RedmineContext, source: str) -> str:
    """The whole text ``source`` names, as Redmine stores it (``None`` in Redmine reads as empty)."""
    text = " ".join(source.split())
    for pattern, kind in _SOURCES:
        match = pattern.match(text)
        if match is None:
            continue
        if kind == "issue":
            body = await rc.client.get(f"issues/{match[1]}.json", what=f"issue {match[1]}")
            return str(entity_of(body, "issue").get("description") or "")
        if kind == "journal":
            issue, journal = match[1], int(match[2])
            body = await rc.client.get(
                f"issues/{issue}.json", what=f"issue {issue}", params={"include": "journals"}
            )
            for entry in entity_of(body, "issue").get("journals") or []:
                if isinstance(entry, Mapping) and entry.get("id") == journal:
                    return str(entry.get("notes") or "")
            raise RedmineError(f"Issue {issue} has no journal {journal} the key's user can see", status=404)
        if kind == "description":
            noun, ref = match[1], match[2]
            ref_text = str(project_ref(ref)) if noun == "project" else ref
            body = await rc.client.get(f"{_PLURAL[noun]}/{seg(ref_text)}.json", what=f"{noun} {ref}")
            return str(entity_of(body, noun).get("description") or "")
        project, title, version = match[1], match[2], match[3]
        path = f"projects/{seg(project_ref(project))}/wiki/{seg(title)}"
        if version:
            path += f"/{version}"
        body = await rc.client.get(f"{path}.json", what=f"wiki page {title} of project {project}")
        return str(entity_of(body, "wiki_page").get("text") or "")
    raise ValidationError(f"source {source[:60]!r} is not one read_text knows; use one of: {SOURCE_FORMS}")


def editable(source: str) -> bool:
    """Whether ``edit_text`` changes the text ``source`` names (an issue description, a wiki page)."""
    return any(pattern.match(source) and kind in ("issue", "wiki") for pattern, kind in _SOURCES)


def page_of_text(text: str, source: str, offset: int, budget: int) -> str:
    """The first line (which characters follow, and what to call next) and the page of ``text``.

    For a text ``edit_text`` changes, the line names the whole text's hash, which an edit gives."""
    total = len(text)
    mark = f", hash {text_hash(text)}" if editable(source) else ""
    if offset > total:
        raise ValidationError(f"offset {offset} is past the end: {source} has {total} characters")
    costs = prefix_costs(text[offset:], xml=False)
    room = max(1, budget - HEADER_ROOM)
    end = offset + max(1 if offset < total else 0, fitting_prefix(costs, room))
    if end < total:
        head = (
            f"[{source}: characters {offset} to {end} of {total}{mark}; call read_text with "
            f'source="{source}" and offset={end} for the rest]'
        )
    else:
        head = f"[{source}: characters {offset} to {end} of {total}{mark}, the end]"
    return head + "\n" + text[offset:end]


async def read_text(args: dict[str, Any], rc: RedmineContext) -> mcp_types.CallToolResult:
    """One page of a long text, exact; the first line names the call for the next page."""
    source = " ".join(str(args["source"]).split())
    offset = args.get("offset") or 0
    text = await source_text(rc, source)
    return text_result(page_of_text(text, source, offset, answer_budget(rc)), limit=None)


TOOLS = (
    redmine_tool(
        "read_text",
        "Read a long text exactly, from the offset a cut marker names; the first line says what follows.",
        {
            "source": p.string("As the cut marker names it, such as issue 9 description"),
            "offset": p.integer("Characters to skip", minimum=0),
        },
        read_text,
        CATEGORY,
        ("source",),
    ),
)
