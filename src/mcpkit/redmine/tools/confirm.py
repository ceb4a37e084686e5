"""How a Redmine delete is put to the user when the client can ask (see :func:`mcpkit.server.confirming`).

The preview a delete tool returns is written for the model ("call again with confirm true");
the user is asked in plain words what goes, with the preview's facts, one per line.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import mcp_types

from mcpkit.redmine.xml import response
from mcpkit.results import parse_xml, xml_result
from mcpkit.server import confirming
from mcpkit.tools import ToolSpec

_WHAT = re.compile(r"Deleting (.+?) cannot be undone")


def question(tool: ToolSpec, args: Mapping[str, Any], preview: mcp_types.CallToolResult) -> str:
    """``Delete issue 5? It cannot be undone.`` and the preview's impact, one fact per line."""
    text = "".join(c.text for c in preview.content if isinstance(c, mcp_types.TextContent))
    try:
        root = parse_xml(text)
    except ValueError:
        return f"Allow {tool.name}? It cannot be undone.\n\n{text}"
    message = next((c.text or "" for c in root.children if c.tag == "message"), "")
    found = _WHAT.search(message)
    lines = [f"Delete {found.group(1)}? It cannot be undone." if found else f"Allow {tool.name}?"]
    for box in (c for c in root.children if c.tag == "impact"):
        for item in box.children:
            name = " ".join(str(v) for v in (item.tag.replace("_", " "), item.attrs.get("id")) if v)
            facts = [f"{c.tag.replace('_', ' ')}: {c.text}" for c in item.children if c.text]
            lines.append(f"{name}: {', '.join(facts)}" if facts else name)
    return "\n".join(lines)


def declined(tool: ToolSpec, args: Mapping[str, Any]) -> mcp_types.CallToolResult:
    return xml_result(response("Nothing was deleted: the user declined.", status="declined"))


def by_user(tool: ToolSpec) -> ToolSpec:
    """``tool`` confirmed by the user where the client can ask (a delete tool; others unchanged)."""
    return confirming(tool, question=question, declined=declined)
