"""The robust MCP client: call any server safely (seed 004).

``connect(target)`` opens a :class:`Session` to a command line, an http(s) URL or a named
server from a config file; ``Session.call`` returns an :class:`Outcome` that keeps every
content item and raises :class:`ToolError` on ``isError``; timeouts cancel on the server,
crashes raise :class:`ServerExitedError` at once, closing kills the server's process group.
A JSON-RPC error answer raises the shared :class:`mcpkit.jsonrpc.JsonRpcError`.
:class:`Pool` serves many servers from one config file.
"""

from mcpkit.client._config import (
    ServerConfig,
    ServerConfigError,
    default_config_path,
    load_config,
    parse_config,
    resolve_target,
)
from mcpkit.client._errors import (
    CallTimeoutError,
    ClientError,
    ConnectError,
    HttpError,
    ResponseTooLargeError,
    ServerExitedError,
    ToolError,
)
from mcpkit.client._handlers import ClientHandlers
from mcpkit.client._http import DEFAULT_MAX_BODY
from mcpkit.client._outcome import Outcome, describe_content, join_contents
from mcpkit.client._pool import Pool
from mcpkit.client._session import DEFAULT_TIMEOUT, Session, connect
from mcpkit.client._signals import SignalledError, run_command
from mcpkit.client._trace import Tracer
from mcpkit.jsonrpc import JsonRpcError

__all__ = [
    "DEFAULT_MAX_BODY",
    "DEFAULT_TIMEOUT",
    "CallTimeoutError",
    "ClientError",
    "ClientHandlers",
    "ConnectError",
    "HttpError",
    "JsonRpcError",
    "Outcome",
    "Pool",
    "ResponseTooLargeError",
    "ServerConfig",
    "ServerConfigError",
    "ServerExitedError",
    "Session",
    "SignalledError",
    "ToolError",
    "Tracer",
    "connect",
    "default_config_path",
    "describe_content",
    "join_contents",
    "load_config",
    "parse_config",
    "resolve_target",
    "run_command",
]
