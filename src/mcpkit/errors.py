"""Every error mcpkit raises on purpose, drawn as one tree.

::

    McpkitError                      something went wrong; str() is one line for a person
    ├── ValidationError (ValueError) an argument or input value is not acceptable
    ├── ConfigError                  a configuration cannot be used (server, gateway, Redmine, ...)
    └── CallError                    the call failed: whatever a caller of a server can catch
        ├── JsonRpcError             a JSON-RPC error object (code, message, data), sent or received
        ├── ToolError                the tool ran and answered isError
        ├── CallTimeoutError         (TimeoutError) no answer by the call's deadline
        ├── ResponseTooLargeError    an answer over the size limit, refused unread
        ├── ServerExitedError        the server process ended or the connection closed
        └── ConnectError             no session: not started, not reached, handshake refused
            └── HttpError            an HTTP peer that gave no MCP answer

Each part adds leaves under these bases where its callers need to tell a case apart
(``ArchiveError``, ``RedmineError``, ``GatewayConfigError``, ``ServerConfigError`` ...), and the
faces translate them once: an MCP server turns any of them into an ``isError`` result (or, for
a :class:`JsonRpcError`, the SDK's error on the wire, converted in :mod:`mcpkit.server` only), a
JSON-RPC server puts a :class:`JsonRpcError` on the wire as it is, a CLI prints ``str()`` and exits 1.

Because "the call failed" is one base, a caller writes ``except CallError`` and gets a received
JSON-RPC error, a timeout, a crash and a refused connection alike; no part needs a tuple of
two mcpkit bases. This module imports nothing of the SDK, so every part (and every CLI) can
use it without loading the MCP SDK.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcpkit.client import Outcome

__all__ = [
    "CallError",
    "CallTimeoutError",
    "ConfigError",
    "ConnectError",
    "HttpError",
    "JsonRpcError",
    "McpkitError",
    "ResponseTooLargeError",
    "ServerExitedError",
    "ToolError",
    "ValidationError",
]


class McpkitError(Exception):
    """Base class for every error mcpkit raises on purpose.

    Its ``str()`` is a one-line message meant for a human (and a model): what went wrong
    and, where it helps, what to do.
    """


class ValidationError(McpkitError, ValueError):
    """An argument or a piece of input data is not acceptable.

    Raised by the coercers in :mod:`mcpkit.tools.coerce` and by schema validation; a
    server turns it into an ``isError`` result naming the bad value.
    """


class ConfigError(McpkitError):
    """A configuration (a file, an option, an environment variable) cannot be used as given."""


class CallError(McpkitError):
    """The call failed: the base of every failure a caller of a server can meet.

    A received JSON-RPC error, a tool's ``isError``, a timeout, a crash and a connection that
    never opened are all ``CallError``\\ s, so one ``except CallError`` covers a call.
    """


class JsonRpcError(CallError):
    """A JSON-RPC error object: ``code``, a one-line ``message`` and optional ``data``.

    Raised by a server-side API to be put on the wire unchanged, and by a client when a peer
    answered with an error. The codes are in :mod:`mcpkit.jsonrpc`.
    """

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    @classmethod
    def internal(cls, message: str) -> JsonRpcError:
        """An internal error (-32603) with ``message``."""
        return cls(-32603, message)

    @classmethod
    def invalid_params(cls, message: str) -> JsonRpcError:
        """A parameter error (-32602) with ``message``."""
        return cls(-32602, message)

    def wire(self) -> dict[str, Any]:
        """The ``error`` member of a response, in wire form."""
        out: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            out["data"] = self.data
        return out


class ToolError(CallError):
    """The tool ran and reported failure (``isError: true``); ``str()`` is the server's text.

    Raised rather than returned so a caller cannot mistake a failure for an answer, which is
    how a client that ignored ``isError`` passed error text on as data.
    """

    def __init__(self, tool: str, outcome: Outcome) -> None:
        self.tool = tool
        self.outcome = outcome
        super().__init__(outcome.text or f"tool {tool!r} reported an error with no message")


class CallTimeoutError(CallError, TimeoutError):
    """No answer by the call's deadline; the request was cancelled on the server and forgotten here.

    ``message`` replaces the default text where the deadline was not a request's (a connection
    that could not be opened in time).
    """

    def __init__(self, method: str, timeout: float, message: str | None = None) -> None:
        self.method = method
        self.timeout = timeout
        super().__init__(message or f"{method} timed out after {timeout:g} s (cancelled on the server)")


class ResponseTooLargeError(CallError):
    """A response body passed the size limit; it was refused without being read whole."""

    def __init__(self, message: str, *, url: str) -> None:
        self.url = url
        super().__init__(message)


class ServerExitedError(CallError):
    """The server process ended (or the connection dropped) while calls were in flight.

    ``exit_code`` is the process's return code (negative: killed by that signal; None: not
    a local process or not known), ``stderr`` its last lines, which usually say why.
    """

    def __init__(self, exit_code: int | None, stderr: Sequence[str] = (), *, detail: str = "") -> None:
        self.exit_code = exit_code
        self.stderr = list(stderr)
        if exit_code is None:
            head = detail or "connection to the server closed"
        elif exit_code < 0:
            head = f"server killed by signal {-exit_code}"
        else:
            head = f"server exited with code {exit_code}"
        tail = ""
        if self.stderr:
            tail = "; last stderr: " + " | ".join(line.strip() for line in self.stderr[-5:])
        super().__init__(head + tail)


class ConnectError(CallError):
    """The server could not be started, reached or initialized."""


class HttpError(ConnectError):
    """An HTTP peer gave no MCP answer: refused, TLS failure, an error status, an HTML page.

    ``str()`` is one line naming the URL, the status and what to do; ``status`` is the HTTP
    status (None when there was no answer at all) and ``kind`` one of refused, tls, timeout,
    network, status, content-type.
    """

    def __init__(self, message: str, *, url: str, kind: str, status: int | None = None) -> None:
        self.url = url
        self.kind = kind
        self.status = status
        super().__init__(message)
