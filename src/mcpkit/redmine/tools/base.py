"""A Redmine tool as data: what ``tools/list`` shows, and a module-level handler.

Handlers are plain module-level functions ``handler(rc, args)`` that take the Redmine context
explicitly, so each one is unit-testable without a server: build a :class:`RedmineCtx` on a
client and await the handler. :meth:`Tool.spec` binds a tool to a *provider*, which picks the
context for each call: one fixed context over stdio, the caller's own key over HTTP.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import mcp_types

from mcpkit.redmine.api import RedmineClient
from mcpkit.redmine.xml import Formatter
from mcpkit.tools import ToolSpec
from mcpkit.tools import params as p


@dataclass(frozen=True)
class RedmineCtx:
    """What a handler needs: the client for this call's key, and the list formatter."""

    client: RedmineClient
    fmt: Formatter


Handler = Callable[[RedmineCtx, dict[str, Any]], Awaitable[mcp_types.CallToolResult | str]]
Provider = Callable[[Any], Awaitable[RedmineCtx]]
"""From the toolkit's per-call context (``None`` when it has none) to the Redmine context."""

Kind = Literal["read", "write", "idempotent", "destructive"]
_SAYS_ONLY_NUMBER = re.compile(r"^[A-Z][a-z]*( [a-z]+)? number$")


def compact(properties: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """The properties without descriptions that only repeat the name (``tracker_id``: "Tracker number").

    ``tools/list`` is read by the model on every turn and some clients cap its size; a name
    such as ``status_id`` already says all that "Status number" would.
    """
    out: dict[str, dict[str, Any]] = {}
    for name, schema in properties.items():
        node = dict(schema)
        said = node.get("description")
        if name.endswith("_id") and isinstance(said, str) and _SAYS_ONLY_NUMBER.match(said):
            del node["description"]
        out[name] = node
    return out


@dataclass(frozen=True)
class Tool:
    """One tool: name, description, parameter schemas, handler, filter category, and kind.

    ``kind`` is the honest answer to "what can a call do": ``read`` (read-only), ``write``
    (creates something each time), ``idempotent`` (the same call twice leaves the same state),
    ``destructive`` (deletes; such tools preview unless called with confirm true).
    """

    name: str
    description: str
    properties: Mapping[str, Mapping[str, Any]]
    handler: Handler
    category: str
    required: tuple[str, ...] = ()
    kind: Kind = "read"

    def spec(self, provide: Provider) -> ToolSpec:
        """The toolkit's ToolSpec, with the handler bound to ``provide``."""
        handler = self.handler

        async def run(args: dict[str, Any], ctx: Any = None) -> mcp_types.CallToolResult | str:
            return await handler(await provide(ctx), args)

        read_only = self.kind == "read"
        return ToolSpec(
            name=self.name,
            description=self.description,
            input_schema=p.object_schema(compact(self.properties), required=self.required),
            handler=run,
            category=self.category,
            read_only=read_only,
            destructive=None if read_only else self.kind == "destructive",
            idempotent=True if read_only else self.kind in ("idempotent", "destructive"),
        )
