"""Errors the client raises, each one naming what a caller can act on.

A naive client turns every failure into "connection closed" or a silent wrong answer
(seed 004). These classes keep the cause apart: the server said the call failed
(:class:`ToolError`), the server did not answer in time (:class:`CallTimeoutError`), the server
process died (:class:`ServerExitedError`, with its exit code and last stderr lines), the
server answered a JSON-RPC error (the shared :class:`mcpkit.jsonrpc.JsonRpcError`), an HTTP
peer answered something that is not MCP (:class:`HttpError`) or too much of it
(:class:`ResponseTooLargeError`), or we never got a session at all (:class:`ConnectError`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from mcpkit.errors import McpkitError

if TYPE_CHECKING:
    from mcpkit.client._outcome import Outcome


class ClientError(McpkitError):
    """Base class for every failure of a client call or connection."""


class ConnectError(ClientError):
    """The server could not be started, reached or initialized."""


class ToolError(ClientError):
    """The tool ran and reported failure (``isError: true``); ``str()`` is the server's text."""

    def __init__(self, tool: str, outcome: Outcome) -> None:
        self.tool = tool
        self.outcome = outcome
        super().__init__(outcome.text or f"tool {tool!r} reported an error with no message")


class CallTimeoutError(ClientError, TimeoutError):
    """No answer within the timeout; the request was cancelled on the server and forgotten here."""

    def __init__(self, method: str, timeout: float) -> None:
        self.method = method
        self.timeout = timeout
        super().__init__(f"{method} timed out after {timeout:g} s (cancelled on the server)")


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


class ResponseTooLargeError(ClientError):
    """A response body passed the size limit; it was refused without being read whole."""

    def __init__(self, message: str, *, url: str) -> None:
        self.url = url
        super().__init__(message)


class ServerExitedError(ClientError):
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
