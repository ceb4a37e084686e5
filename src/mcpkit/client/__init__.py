"""The robust MCP client: call any server safely.

It exists because of a client that ignored ``isError`` (passing error text on as data),
kept only the first content item, and leaked timed-out requests on the server.
``connect(target, SessionOptions(...))`` opens a :class:`Session` to a command line, an http(s) URL or a named
server from a config file; ``Session.call`` returns an :class:`Outcome` that keeps every
content item and raises :class:`ToolError` on ``isError``; timeouts cancel on the server,
crashes raise :class:`ServerExitedError` at once, closing kills the server's process group.
A JSON-RPC error answer raises the shared :class:`mcpkit.jsonrpc.JsonRpcError`.
:class:`Pool` serves many servers from one config file; :func:`spawn` starts a stdio server
ahead of its session (a gateway starts its servers before it loads the SDK).

Names load on first use (PEP 562): reading a config file or spawning a server must not pay
the MCP SDK's import (about 0.3 s), which only the session needs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcpkit._lazy import lazy_root

if TYPE_CHECKING:
    from mcpkit.client._config import (
        ServerConfig,
        ServerConfigError,
        default_config_path,
        load_config,
        parse_config,
        resolve_target,
    )
    from mcpkit.client._handlers import ClientHandlers
    from mcpkit.client._options import (
        DEFAULT_MAX_BODY,
        DEFAULT_TIMEOUT,
        SessionOptions,
    )
    from mcpkit.client._outcome import Outcome, describe_content, join_contents
    from mcpkit.client._pool import Pool
    from mcpkit.client._raw import RawAnswer
    from mcpkit.client._session import Session, connect
    from mcpkit.client._signals import SignalledError, run_command
    from mcpkit.client._spawn import spawn
    from mcpkit.client._tasks import TasksExtension, is_task, offers_tasks, poll_seconds
    from mcpkit.client._trace import Tracer, tracer_for
    from mcpkit.client._wire import CallToolResult, InitializeResult, ListToolsResult, Result, Tool
    from mcpkit.errors import (
        CallError,
        CallTimeoutError,
        ConnectError,
        HttpError,
        JsonRpcError,
        ResponseTooLargeError,
        ServerExitedError,
        ToolError,
    )

_WHERE: dict[str, str] = {
    "TasksExtension": "._tasks",
    "is_task": "._tasks",
    "offers_tasks": "._tasks",
    "poll_seconds": "._tasks",
    "ServerConfig": "._config",
    "ServerConfigError": "._config",
    "default_config_path": "._config",
    "load_config": "._config",
    "parse_config": "._config",
    "resolve_target": "._config",
    "CallTimeoutError": "mcpkit.errors",
    "CallError": "mcpkit.errors",
    "ConnectError": "mcpkit.errors",
    "HttpError": "mcpkit.errors",
    "ResponseTooLargeError": "mcpkit.errors",
    "ServerExitedError": "mcpkit.errors",
    "ToolError": "mcpkit.errors",
    "ClientHandlers": "._handlers",
    "DEFAULT_MAX_BODY": "._options",
    "SessionOptions": "._options",
    "CallToolResult": "._wire",
    "InitializeResult": "._wire",
    "ListToolsResult": "._wire",
    "Result": "._wire",
    "Tool": "._wire",
    "Outcome": "._outcome",
    "describe_content": "._outcome",
    "join_contents": "._outcome",
    "Pool": "._pool",
    "RawAnswer": "._raw",
    "DEFAULT_TIMEOUT": "._options",
    "Session": "._session",
    "connect": "._session",
    "SignalledError": "._signals",
    "run_command": "._signals",
    "spawn": "._spawn",
    "Tracer": "._trace",
    "tracer_for": "._trace",
    "JsonRpcError": "mcpkit.errors",
}

__all__ = [
    "DEFAULT_MAX_BODY",
    "DEFAULT_TIMEOUT",
    "CallError",
    "CallTimeoutError",
    "CallToolResult",
    "ClientHandlers",
    "ConnectError",
    "HttpError",
    "InitializeResult",
    "JsonRpcError",
    "ListToolsResult",
    "Outcome",
    "Pool",
    "RawAnswer",
    "ResponseTooLargeError",
    "Result",
    "ServerConfig",
    "ServerConfigError",
    "ServerExitedError",
    "Session",
    "SessionOptions",
    "SignalledError",
    "TasksExtension",
    "Tool",
    "ToolError",
    "Tracer",
    "connect",
    "default_config_path",
    "describe_content",
    "is_task",
    "join_contents",
    "load_config",
    "offers_tasks",
    "parse_config",
    "poll_seconds",
    "resolve_target",
    "run_command",
    "spawn",
    "tracer_for",
]


__getattr__, __dir__ = lazy_root(__name__, _WHERE)
