"""ToolSpec: one value that says everything about a tool.

A tool is data (name, description, schemas, annotations) plus one async handler. Keeping the
definition as plain data lets :mod:`mcpkit.compat` lint it before any client sees it, and lets
:mod:`mcpkit.server` validate arguments against the same schema the client was shown.
"""

from __future__ import annotations

import copy
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal, TypeVar, cast

import mcp_types

from mcpkit.tools._context import _CURRENT, ToolContext

ToolResult = mcp_types.CallToolResult | str
"""What a handler returns: a built result (see :mod:`mcpkit.results`) or plain text."""

Handler = (
    Callable[[dict[str, Any]], Awaitable[ToolResult]]
    | Callable[[dict[str, Any], ToolContext], Awaitable[ToolResult]]
)
"""An async function from validated arguments (and optionally a :class:`ToolContext`) to a
result; raise to report an error."""

C = TypeVar("C")

ContextHandler = Callable[[dict[str, Any], C], Awaitable[ToolResult]]
"""A handler whose second argument is an application's own per-call context (a Redmine client
for the caller's key, say) instead of the :class:`ToolContext`; :meth:`ToolSpec.bind` supplies it."""

Provide = Callable[[ToolContext], Awaitable[C]]
"""Makes an application's per-call context from the call's :class:`ToolContext`."""


@dataclass(frozen=True)
class ToolSpec:
    """The definition of one MCP tool and the handler that serves it.

    ``read_only`` drives both the ``readOnlyHint`` annotation and the server's read-only
    filter; ``destructive`` defaults to "writes and is not idempotent" the way the spec's
    defaults do, so a write tool is assumed destructive unless it says otherwise.
    ``category`` groups tools for the include/exclude filters.

    ``needs_context``: the handler is a :data:`ContextHandler`, whose second argument an
    application makes per call; such a tool is served only once :meth:`bind` gave it the
    maker (``build_server`` refuses it before), so a handler never receives the wrong context.
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
    needs_context: bool = False
    tasks: bool | Literal["required"] = False
    """The tool may run as a task (the tasks extension): a client that asks gets a task at once
    and polls it; every other client gets the ordinary, held-open call. Served by
    :mod:`mcpkit.server` (``execution.taskSupport: "optional"`` in the definition).
    ``"required"``: only as a task (``taskSupport: "required"``); a client that does not take
    one is refused (-32021 naming the extension on 2026-07-28, -32601 on 2025-11-25)."""
    asks_before_task: bool = False
    """A task tool whose handler asks its questions on the call itself, and becomes a task only
    where it calls ``mcpkit.server.start_task(ctx)`` (2026-07-28: the questions are input
    requests of the call's rounds, the round that answers the last one gets the task; SEP-2663's
    "MRTR, then a task"). Elsewhere ``start_task`` does nothing."""

    @classmethod
    def with_context(cls, handler: ContextHandler[C], **definition: Any) -> ToolSpec:
        """A tool whose handler takes an application context, bound with :meth:`bind` when served.

        Applications keep their handlers as plain functions ``handler(args, app_ctx)``, unit-
        testable with a context built by hand, and still define one kind of tool: this one.
        """
        return cls(handler=cast(Handler, handler), needs_context=True, **definition)

    def bind(self, provide: Provide[Any]) -> ToolSpec:
        """This tool with its handler's context made by ``provide`` from each call's ToolContext.

        Binding happens when a server is built (its clients and configuration exist then); the
        definition, and so what ``tools/list`` shows, is unchanged.
        """
        if not self.needs_context:
            raise TypeError(f"tool {self.name!r} takes no application context to bind")
        handler = cast(ContextHandler[Any], self.handler)

        async def run(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
            token = _CURRENT.set(ctx)  # current_context() inside the handler
            try:
                return await handler(args, await provide(ctx))
            finally:
                _CURRENT.reset(token)

        return replace(self, handler=run, needs_context=False)

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
        if self.tasks:
            out["execution"] = {"taskSupport": "required" if self.tasks == "required" else "optional"}
        if self.meta:  # e.g. an MCP App's ``{"ui": {"resourceUri": ...}}``
            out["_meta"] = copy.deepcopy(dict(self.meta))
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
