"""Asking the user through the client: ``elicitation/create``, and confirmation of destructive tools.

A destructive tool used to need ``confirm: true`` from the model, so the model alone decided
what was deleted. A client that declares ``elicitation`` (MCP 2025-06-18 and later, in the
handshake era) can put the question to its user instead: :func:`confirming` wraps such a tool so
that every call shows the user the tool's own preview and acts only on their yes, whatever the
model sent. A client that declares nothing, or cannot be reached back (a stateless HTTP request,
a 2026-07-28 connection, which asks through ``input_required`` results), keeps the old contract:
the preview, then ``confirm: true``.

The SDK's server session does the sending (:func:`elicitor`, installed in every
:class:`mcpkit.tools.ToolContext` by the server); handlers only call :func:`ask` or :func:`confirm`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal, cast

import mcp_types

from mcpkit.results import text_result
from mcpkit.tools import ToolContext, ToolSpec
from mcpkit.tools._context import Elicit

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

logger = logging.getLogger("mcpkit.server")

Action = Literal["accept", "decline", "cancel", "unasked"]
CONFIRM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "confirm": {"type": "boolean", "title": "Confirm", "description": "Yes, do it", "default": True}
    },
    "required": ["confirm"],
}
"""What a confirmation asks for: one yes/no box, ticked by default."""


@dataclass(frozen=True)
class Answer:
    """The user's answer: ``unasked`` when the client could not be asked (no capability, no way back)."""

    action: Action
    content: Mapping[str, Any] = field(default_factory=dict)

    @property
    def accepted(self) -> bool:
        return self.action == "accept"


def elicitor(ctx: ServerRequestContext[Any, Any]) -> Elicit | None:
    """How this request asks its client's user, or ``None`` when it cannot.

    Only a client that declared ``elicitation`` is asked. A request without a way back raises in
    the SDK (``NoBackChannelError``); a client that declared the capability and then refuses
    (mcpkit's own client without a handler does) answers with an error: both are "could not
    ask", never a failed tool call, so the caller falls back to its arguments.
    """
    session = ctx.session
    wanted = mcp_types.ClientCapabilities(elicitation=mcp_types.ElicitationCapability())
    if not session.check_client_capability(wanted):
        return None

    async def elicit(message: str, schema: dict[str, Any]) -> dict[str, Any] | None:
        try:
            result = await session.elicit_form(message, cast(Any, schema), related_request_id=ctx.request_id)
        except Exception as exc:  # no back channel, a refusal, a malformed answer: the user was not asked
            logger.info("elicitation/create not answered (%s: %s)", type(exc).__name__, exc)
            return None
        return {"action": result.action, "content": dict(result.content or {})}

    return elicit


async def ask(ctx: ToolContext, message: str, requested_schema: Mapping[str, Any]) -> Answer:
    """Ask the user ``message`` with a form of ``requested_schema`` (primitive properties only)."""
    raw = await ctx.elicit(message, requested_schema)
    if raw is None:
        return Answer("unasked")
    action = raw.get("action")
    if action not in ("accept", "decline", "cancel"):
        return Answer("unasked")
    return Answer(action, dict(raw.get("content") or {}))


async def confirm(ctx: ToolContext, message: str) -> bool | None:
    """``True`` when the user said yes, ``False`` for no (or a dismissed form), ``None`` when unasked."""
    answer = await ask(ctx, message, CONFIRM_SCHEMA)
    if answer.action == "unasked":
        return None
    return answer.accepted and answer.content.get("confirm", True) is not False


Question = Callable[[ToolSpec, Mapping[str, Any], mcp_types.CallToolResult], str]
Declined = Callable[[ToolSpec, Mapping[str, Any]], mcp_types.CallToolResult]


def result_text(result: mcp_types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, mcp_types.TextContent))


def default_question(tool: ToolSpec, args: Mapping[str, Any], preview: mcp_types.CallToolResult) -> str:
    """The tool's name and its preview, as the user is asked to confirm them."""
    return f"Allow {tool.name}? It cannot be undone.\n\n{result_text(preview)}"


def default_declined(tool: ToolSpec, args: Mapping[str, Any]) -> mcp_types.CallToolResult:
    return text_result(f"Nothing was done: the user declined {tool.name}.")


def confirming(
    tool: ToolSpec,
    *,
    flag: str = "confirm",
    question: Question = default_question,
    declined: Declined = default_declined,
) -> ToolSpec:
    """``tool`` (previewing unless ``flag`` is true) confirmed by the user where the client can ask.

    With such a client, each call runs the preview, asks the user (``question`` makes the text
    from the preview) and runs the tool with ``flag`` true only on their yes; a no returns
    ``declined``. Without one, or when asking fails, the call goes on as the arguments say.
    A tool that is not destructive, has no ``flag``, or still waits for its context is returned as is.
    """
    if (
        not tool.is_destructive
        or flag not in (tool.input_schema.get("properties") or {})
        or tool.needs_context
    ):
        return tool
    handler = cast(Callable[[dict[str, Any], ToolContext], Any], tool.handler)

    async def run(args: dict[str, Any], ctx: ToolContext) -> Any:
        if not ctx.can_elicit:
            return await handler(args, ctx)
        preview = await handler({k: v for k, v in args.items() if k != flag}, ctx)
        if isinstance(preview, str):
            preview = text_result(preview)
        if preview.is_error:
            return preview
        said = await confirm(ctx, question(tool, args, preview))
        if said is None:
            return await handler(args, ctx) if args.get(flag) is True else preview
        if not said:
            return declined(tool, args)
        return await handler({**args, flag: True}, ctx)

    return replace(tool, handler=run)
