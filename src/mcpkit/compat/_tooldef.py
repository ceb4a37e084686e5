"""Tools in and out: a ToolSpec, a wire dict from any server's ``tools/list``, or an SDK model.

Lint and adapt work on a private deep copy of the wire form, so the caller's objects are
never changed, and hand back the same kind of thing they were given.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from mcpkit.tools import ToolSpec

ToolLike = ToolSpec | Mapping[str, Any]


def as_definition(tool: Any) -> dict[str, Any]:
    """A deep copy of the tool's wire definition (``name``, ``description``, ``inputSchema`` ...)."""
    if isinstance(tool, ToolSpec):
        return tool.definition()
    if isinstance(tool, Mapping):
        return copy.deepcopy(dict(tool))
    dump = getattr(tool, "model_dump", None)
    if callable(dump):  # an SDK ``mcp_types.Tool``
        data = dump(by_alias=True, exclude_none=True, mode="json")
        if isinstance(data, dict):
            return data
    raise TypeError(f"not a tool definition: {type(tool).__name__}")


def rebuild(original: Any, definition: dict[str, Any]) -> Any:
    """The adapted ``definition`` in the caller's form: ToolSpec in, ToolSpec out; else a dict."""
    if isinstance(original, ToolSpec):
        return original.with_definition(definition)
    return definition
