"""What the client answers when a server asks it something: roots, sampling, elicitation.

The client declares what it answers: roots always (none by default), sampling and
elicitation only when a handler is installed, on both eras. A server that asks anyway is
refused with a message that says why. A caller who has a model or a user to ask installs
real handlers through :class:`ClientHandlers`; they take and return wire dicts, so no SDK
type leaks into the public API.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import mcp_types
from mcp.client.session import ClientRequestContext
from pydantic import BaseModel
from pydantic import ValidationError as PydanticValidationError

from mcpkit.jsonrpc import JsonRpcError

logger = logging.getLogger("mcpkit.client")

_M = TypeVar("_M", bound=BaseModel)
WireHandler = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
"""An async function from the request's ``params`` (wire dict) to its ``result`` (wire dict)."""

SAMPLING_REFUSED = (
    "this mcpkit client has no model to sample from (no sampling handler installed); "
    "the tool cannot ask the client's LLM"
)
ELICITATION_REFUSED = (
    "this mcpkit client cannot ask a user (no elicitation handler installed); "
    "call the tool with the information in its arguments"
)


@dataclass(frozen=True)
class ClientHandlers:
    """Answers to server-to-client requests.

    ``roots``: the roots to list (``file://`` URIs or local paths; default none).
    ``roots_from``: ``roots/list`` params -> result, asked each time instead (a gateway asks its
    own client); with it the client declares ``roots.listChanged`` and the caller sends
    ``notifications/roots/list_changed`` through :meth:`Session.notify` when they change.
    ``sampling``: ``sampling/createMessage`` params -> CreateMessageResult (default: refused).
    ``elicitation``: ``elicitation/create`` params -> ElicitResult (default: refused).
    On the 2026-07-28 wire the same handlers answer the input requests a server embeds in an
    ``InputRequiredResult`` (see :meth:`mcpkit.client.Session.answer_input`), so a gateway that
    forwards them to its own client does so on both eras with one handler.
    A handler that raises :class:`mcpkit.jsonrpc.JsonRpcError` refuses with that code and message.
    """

    roots: Sequence[str | Path] = field(default_factory=tuple)
    sampling: WireHandler | None = None
    elicitation: WireHandler | None = None
    roots_from: WireHandler | None = None

    def capabilities(self, stateless: bool = False) -> dict[str, Any]:
        """The client capabilities to declare, on either era: roots always (the configured roots
        answer, none by default; ``listChanged`` on the handshake when ``roots_from`` is set),
        sampling and elicitation only with a handler. A server that sees them undeclared takes
        its no-client path (server-everything hides its sampling and elicitation tools, mcpkit's
        ``ask`` goes on unasked, a destructive tool keeps ``confirm: true``) instead of asking a
        client that would only refuse. ``stateless``: the 2026-07-28 wire, whose roots
        capability carries no ``listChanged``."""
        declared: dict[str, Any] = {
            "roots": {} if stateless else {"listChanged": self.roots_from is not None}
        }
        if self.sampling is not None:
            declared["sampling"] = {}
        if self.elicitation is not None:
            declared["elicitation"] = {"form": {}, "url": {}}
        return declared

    def root_list(self) -> list[dict[str, str]]:
        out = []
        for root in self.roots:
            text = str(root)
            uri = text if "://" in text else Path(text).expanduser().resolve().as_uri()
            out.append({"uri": uri, "name": Path(text.split("://", 1)[-1]).name or text})
        return out

    async def list_roots(
        self, context: ClientRequestContext
    ) -> mcp_types.ListRootsResult | mcp_types.ErrorData:
        if self.roots_from is not None:
            result = await _run(self.roots_from, {}, "roots")
            if isinstance(result, mcp_types.ErrorData):
                return result
            return _parse(mcp_types.ListRootsResult, result, "roots")
        return mcp_types.ListRootsResult.model_validate({"roots": self.root_list()}, by_name=False)

    async def create_message(
        self, context: ClientRequestContext, params: mcp_types.CreateMessageRequestParams
    ) -> mcp_types.CreateMessageResult | mcp_types.ErrorData:
        return await _answer(
            self.sampling, params, "sampling", SAMPLING_REFUSED, mcp_types.CreateMessageResult
        )

    async def elicit(
        self, context: ClientRequestContext, params: mcp_types.ElicitRequestParams
    ) -> mcp_types.ElicitResult | mcp_types.ErrorData:
        return await _answer(
            self.elicitation, params, "elicitation", ELICITATION_REFUSED, mcp_types.ElicitResult
        )


async def _answer(
    handler: WireHandler | None, params: Any, what: str, refusal: str, model: type[_M]
) -> _M | mcp_types.ErrorData:
    """A server request answered by ``handler`` (a refusal without one), checked as ``model``."""
    if handler is None:
        return mcp_types.ErrorData(code=mcp_types.INVALID_REQUEST, message=refusal)
    result = await _run(handler, params, what)
    if isinstance(result, mcp_types.ErrorData):
        return result
    return _parse(model, result, what)


async def _run(handler: WireHandler, params: Any, what: str) -> dict[str, Any] | mcp_types.ErrorData:
    wire = (
        params.model_dump(by_alias=True, mode="json", exclude_none=True)
        if isinstance(params, BaseModel)
        else dict(params)
    )
    try:
        return await handler(wire)
    except JsonRpcError as exc:  # a refusal the handler chose: its code and message go back as they are
        return mcp_types.ErrorData(code=exc.code, message=exc.message)
    except Exception as exc:
        logger.warning("%s handler failed: %s", what, exc, exc_info=True)
        return mcp_types.ErrorData(code=mcp_types.INTERNAL_ERROR, message=f"{what} handler failed: {exc}")


def _parse(model: type[_M], result: dict[str, Any], what: str) -> _M | mcp_types.ErrorData:
    try:
        return model.model_validate(result, by_name=False)
    except PydanticValidationError as exc:
        problem = exc.errors()[0]
        message = f"{what} handler returned an invalid result: {problem.get('msg')} at {problem.get('loc')}"
        return mcp_types.ErrorData(code=mcp_types.INTERNAL_ERROR, message=message)
