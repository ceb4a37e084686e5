"""JSON-RPC 2.0 error codes and the one error type every part raises or receives.

Three parts speak JSON-RPC (the MCP client, the archive's WebSocket server and client, the
archive API that both faces share) and each used to carry its own copy of the codes and its own
``code``/``message``/``data`` exception. They now share this module, so an error means the same
thing wherever it was raised and a face can put any of them on the wire as is.
"""

from __future__ import annotations

from typing import Any

from mcpkit.errors import McpkitError

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


class JsonRpcError(McpkitError):
    """A JSON-RPC error object: ``code``, a one-line ``message`` and optional ``data``.

    Raised by a server-side API to be put on the wire unchanged, and by a client when a peer
    answered with an error.
    """

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    @classmethod
    def internal(cls, message: str) -> JsonRpcError:
        """An internal error (-32603) with ``message``."""
        return cls(INTERNAL_ERROR, message)

    @classmethod
    def invalid_params(cls, message: str) -> JsonRpcError:
        """A parameter error (-32602) with ``message``."""
        return cls(INVALID_PARAMS, message)

    def wire(self) -> dict[str, Any]:
        """The ``error`` member of a response, in wire form."""
        out: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            out["data"] = self.data
        return out


def error_fields(exc: BaseException) -> tuple[int, str, Any] | None:
    """``(code, message, data)`` of a JSON-RPC-shaped exception, else ``None``.

    Duck-typed so an error from the SDK (``MCPError``) reads the same as a :class:`JsonRpcError`.
    """
    code = getattr(exc, "code", None)
    message = getattr(exc, "message", None)
    if isinstance(code, int) and not isinstance(code, bool) and isinstance(message, str):
        return code, message, getattr(exc, "data", None)
    return None
