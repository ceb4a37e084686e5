"""The robust MCP client: call any server safely (seed 004).

``connect(target)`` opens a :class:`Session` to a command line, an http(s) URL or a named
server from a config file; ``Session.call`` returns an :class:`Outcome` that keeps every
content item and raises :class:`ToolError` on ``isError``; timeouts cancel on the server,
crashes raise :class:`ServerExited` at once, closing kills the server's process group.
:class:`Pool` serves many servers from one config file.
"""

from mcpkit.client.config import ConfigError, ServerConfig, default_config_path, load_config, resolve_target
from mcpkit.client.errors import CallTimeout, ClientError, ConnectError, RpcError, ServerExited, ToolError
from mcpkit.client.outcome import Outcome, describe_content, join_contents
from mcpkit.client.pool import Pool
from mcpkit.client.session import DEFAULT_TIMEOUT, Session, connect
from mcpkit.client.trace import Tracer

__all__ = [
    "DEFAULT_TIMEOUT",
    "CallTimeout",
    "ClientError",
    "ConfigError",
    "ConnectError",
    "Outcome",
    "Pool",
    "RpcError",
    "ServerConfig",
    "ServerExited",
    "Session",
    "ToolError",
    "Tracer",
    "connect",
    "default_config_path",
    "describe_content",
    "join_contents",
    "load_config",
    "resolve_target",
]
