"""JSON-RPC 2.0 error codes, and the error type every part raises or receives.

Three parts speak JSON-RPC (the MCP client, the archive's WebSocket server and client, the
archive API that both faces share) and each used to carry its own copy of the codes and its own
``code``/``message``/``data`` exception. They now share this module, so an error means the same
thing wherever it was raised and a face can put any of them on the wire as is.
"""

from __future__ import annotations

from typing import Any

from mcpkit.errors import JsonRpcError

__all__ = [
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "JsonRpcError",
    "error_fields",
]

PARSE_ERROR = -32700
"""The message is not JSON."""
INVALID_REQUEST = -32600
"""JSON, but not a JSON-RPC request object."""
METHOD_NOT_FOUND = -32601
"""No such method (or a capability the server does not declare)."""
INVALID_PARAMS = -32602
"""The method exists but its parameters are wrong; the message says which and why."""
INTERNAL_ERROR = -32603
"""The server failed; the message is one line for a human, the details are in its log."""


def error_fields(exc: BaseException) -> tuple[int, str, Any] | None:
    """``(code, message, data)`` of a JSON-RPC-shaped exception, else ``None``.

    Duck-typed so an error from the SDK (``MCPError``) reads the same as a :class:`JsonRpcError`.
    """
    code = getattr(exc, "code", None)
    message = getattr(exc, "message", None)
    if isinstance(code, int) and not isinstance(code, bool) and isinstance(message, str):
        return code, message, getattr(exc, "data", None)
    return None
