"""mcpkit's errors to the SDK's, in one place.

Handlers and routers in mcpkit raise :class:`mcpkit.errors.JsonRpcError` (or any other
:class:`~mcpkit.errors.McpkitError`); only here do they become the SDK's ``MCPError``, the one
exception its dispatcher puts on the wire as a JSON-RPC error object. Before, each part raised
``MCPError`` itself, and a server-side code or message could differ between the gateway and
mcpkit's own servers for the same failure.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, ParamSpec, TypeVar

from mcpkit.errors import JsonRpcError, McpkitError

if TYPE_CHECKING:
    from mcp.shared.exceptions import MCPError

__all__ = ["as_sdk_error", "sdk_errors"]

P = ParamSpec("P")
R = TypeVar("R")

_INTERNAL_ERROR = -32603


def as_sdk_error(exc: McpkitError) -> MCPError:
    """The SDK's ``MCPError`` for ``exc``: a :class:`JsonRpcError` keeps its code, message and data.

    Any other mcpkit error is an internal error (-32603) whose message is its one-line ``str()``
    (never a traceback: the client shows that line to a person or a model).
    """
    from mcp.shared.exceptions import MCPError

    if isinstance(exc, JsonRpcError):
        return MCPError(code=exc.code, message=exc.message, data=exc.data)
    return MCPError(code=_INTERNAL_ERROR, message=str(exc) or type(exc).__name__)


def sdk_errors(handler: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
    """``handler`` with every mcpkit error it raises converted by :func:`as_sdk_error`.

    For request handlers registered with the SDK's low-level server (resources, prompts,
    completion): they raise mcpkit's errors like every other part and the SDK still sees its own.
    """

    @functools.wraps(handler)
    async def converted(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return await handler(*args, **kwargs)
        except McpkitError as exc:
            raise as_sdk_error(exc) from exc

    return converted
