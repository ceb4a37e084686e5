"""The three meta-tools a client gets when the union of tools is over its tool limit.

Cursor keeps only its first 40 tools, OpenAI and VS Code refuse more than 128. Cutting the
list would hide tools without a word, so such a client sees three tools instead: one to
search the tools (by words in the name and description), one to read a tool's full
definition, and one to call a tool by name. Every tool stays reachable.

``call_tool`` takes its arguments as a JSON object in a string: an object parameter with free
keys has no definition that every profile accepts (OpenAI strict mode needs closed objects),
while a string does. An object is accepted too.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from mcpkit.compat import adapt

SEARCH = "search_tools"
DESCRIBE = "describe_tool"
CALL = "call_tool"
NAMES = (SEARCH, DESCRIBE, CALL)

_DEFINITIONS: tuple[dict[str, Any], ...] = (
    {
        "name": SEARCH,
        "description": "Find tools by words in their names and descriptions.\n"
        "Returns matching tool names with a one-line summary each; an empty query lists every tool.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "Words to look for, such as: time zone"},
                "limit": {"type": "integer", "description": "At most this many results, default 20"},
                "offset": {"type": "integer", "description": "Skip this many results, for the next page"},
            },
            "required": ["query"],
        },
        "annotations": {"readOnlyHint": True},
    },
    {
        "name": DESCRIBE,
        "description": "Show the full definition of one tool: its description and the arguments it takes.",
        "inputSchema": {
            "type": "object",
            "properties": {"name": {"type": "string", "description": "Tool name as found by search tools"}},
            "required": ["name"],
        },
        "annotations": {"readOnlyHint": True},
    },
    {
        "name": CALL,
        "description": "Call one tool by name with its arguments.\n"
        "Read its definition with describe tool first.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "Tool name as found by search tools"},
                "arguments": {
                    "type": "string",
                    "description": 'The arguments as a JSON object, for example {"timezone": "UTC"}',
                },
            },
            "required": ["name"],
        },
    },
)


def meta_tools(profiles: tuple[str, ...]) -> list[dict[str, Any]]:
    """The meta-tool definitions, adapted for ``profiles`` like any other tool."""
    return adapted(_DEFINITIONS, profiles)


def adapted(definitions: Sequence[dict[str, Any]], profiles: tuple[str, ...]) -> list[dict[str, Any]]:
    """The gateway's own tool ``definitions`` rewritten for ``profiles``."""
    out = []
    for definition in definitions:
        current = copy.deepcopy(definition)
        for profile in profiles:
            current, _ = adapt(current, profile)
        out.append(current)
    return out


def search(entries: dict[str, dict[str, Any]], query: str, limit: int, offset: int) -> str:
    """Lines ``name: summary`` of the tools whose name or description hold every query word."""
    words = [w.lower() for w in query.split()]
    hits = []
    for name, definition in sorted(entries.items()):
        description = str(definition.get("description") or "")
        haystack = f"{name} {name.replace('_', ' ')} {description}".lower()
        if all(w in haystack for w in words):
            summary = description.strip().splitlines()[0] if description.strip() else "no description"
            hits.append(f"{name}: {summary}")
    page = hits[offset : offset + limit]
    head = f"{len(hits)} tools match" + (f" {query!r}" if query.strip() else "")
    lines = [head, *page]
    if offset + len(page) < len(hits):
        lines.append(f"More: search tools with offset={offset + len(page)}.")
    return "\n".join(lines)
