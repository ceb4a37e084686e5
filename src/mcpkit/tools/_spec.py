"""ToolSpec: one value that says everything about a tool.

A tool is data (name, description, schemas, annotations) plus one async handler. Keeping the
definition as plain data lets :mod:`mcpkit.compat` lint it before any client sees it, and lets
:mod:`mcpkit.server` validate arguments against the same schema the client was shown.
"""

from __future__ import annotations

import copy
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import mcp_types

from mcpkit.tools._context import ToolContext

ToolResult = mcp_types.CallToolResult | str
"""What a handler returns: a built result (see :mod:`mcpkit.results`) or plain text."""

Handler = (
    Callable[[dict[str, Any]], Awaitable[ToolResult]]
    | Callable[[dict[str, Any], ToolContext], Awaitable[ToolResult]]
)
"""An async function from validated arguments (and optionally a :class:`ToolContext`) to a
result; raise to report an error."""


@dataclass(frozen=True)
class ToolSpec:
    """The definition of one MCP tool and the handler that serves it.

    ``read_only`` drives both the ``readOnlyHint`` annotation and the server's read-only
    filter; ``destructive`` defaults to "writes and is not idempotent" the way the spec's
    defaults do, so a write tool is assumed destructive unless it says otherwise.
    ``category`` groups tools for the include/exclude filters.
    """

    name: str
    description: str
    input_schema: Mapping[str, Any]
    handler: Handler
    category: str = "general"
    read_only: bool = False
    destructive: bool | None = None
    idempotent: bool | None = None
    open_world: bool | None = None
    title: str | None = None
    output_schema: Mapping[str, Any] | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)

    @property
    def is_destructive(self) -> bool:
        """Whether a call may destroy data: never for read-only tools, by default for writers."""
        if self.read_only:
            return False
        return True if self.destructive is None else self.destructive

    def annotations(self) -> dict[str, Any]:
        """The MCP ``annotations`` object, in wire form (camelCase keys)."""
        ann: dict[str, Any] = {"readOnlyHint": self.read_only}
        if not self.read_only:
            ann["destructiveHint"] = self.is_destructive
            ann["idempotentHint"] = bool(self.idempotent)
        elif self.idempotent is not None:
            ann["idempotentHint"] = self.idempotent
        if self.open_world is not None:
            ann["openWorldHint"] = self.open_world
        if self.title:
            ann["title"] = self.title
        return ann

    def definition(self) -> dict[str, Any]:
        """The tool as it appears in ``tools/list``: a plain JSON-ready dict (deep copy)."""
        out: dict[str, Any] = {
            "name": self.name,
            "description": self.description,
            "inputSchema": copy.deepcopy(dict(self.input_schema)),
            "annotations": self.annotations(),
        }
        if self.title:
            out["title"] = self.title
        if self.output_schema is not None:
            out["outputSchema"] = copy.deepcopy(dict(self.output_schema))
        return out

    def to_mcp(self) -> mcp_types.Tool:
        """The SDK's ``Tool`` model for this definition."""
        return mcp_types.Tool.model_validate(self.definition())

    def with_definition(self, definition: Mapping[str, Any]) -> ToolSpec:
        """A copy whose name, description and schemas come from ``definition``.

        Used by :func:`mcpkit.compat._adapt` results: the handler stays, the wire form changes.
        """
        return replace(
            self,
            name=str(definition["name"]),
            description=str(definition.get("description", "")),
            input_schema=copy.deepcopy(dict(definition["inputSchema"])),
            output_schema=(
                copy.deepcopy(dict(definition["outputSchema"])) if "outputSchema" in definition else None
            ),
        )
