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

from mcpkit._lazy import lazy_exports

if TYPE_CHECKING:
    from mcpkit.client._config import ServerConfig as ServerConfig
    from mcpkit.client._config import ServerConfigError as ServerConfigError
    from mcpkit.client._config import default_config_path as default_config_path
    from mcpkit.client._config import load_config as load_config
    from mcpkit.client._config import parse_config as parse_config
    from mcpkit.client._config import resolve_target as resolve_target
    from mcpkit.client._handlers import ClientHandlers as ClientHandlers
    from mcpkit.client._options import DEFAULT_MAX_BODY as DEFAULT_MAX_BODY
    from mcpkit.client._options import DEFAULT_TIMEOUT as DEFAULT_TIMEOUT
    from mcpkit.client._options import SessionOptions as SessionOptions
    from mcpkit.client._outcome import Outcome as Outcome
    from mcpkit.client._outcome import describe_content as describe_content
    from mcpkit.client._outcome import join_contents as join_contents
    from mcpkit.client._pool import Pool as Pool
    from mcpkit.client._raw import RawAnswer as RawAnswer
    from mcpkit.client._session import Session as Session
    from mcpkit.client._session import connect as connect
    from mcpkit.client._signals import SignalledError as SignalledError
    from mcpkit.client._signals import run_command as run_command
    from mcpkit.client._spawn import spawn as spawn
    from mcpkit.client._tasks import TasksExtension as TasksExtension
    from mcpkit.client._tasks import is_task as is_task
    from mcpkit.client._tasks import offers_tasks as offers_tasks
    from mcpkit.client._tasks import poll_seconds as poll_seconds
    from mcpkit.client._trace import Tracer as Tracer
    from mcpkit.client._trace import tracer_for as tracer_for
    from mcpkit.client._wire import CallToolResult as CallToolResult
    from mcpkit.client._wire import InitializeResult as InitializeResult
    from mcpkit.client._wire import ListToolsResult as ListToolsResult
    from mcpkit.client._wire import Result as Result
    from mcpkit.client._wire import Tool as Tool
    from mcpkit.errors import CallError as CallError
    from mcpkit.errors import CallTimeoutError as CallTimeoutError
    from mcpkit.errors import ConnectError as ConnectError
    from mcpkit.errors import HttpError as HttpError
    from mcpkit.errors import JsonRpcError as JsonRpcError
    from mcpkit.errors import ResponseTooLargeError as ResponseTooLargeError
    from mcpkit.errors import ServerExitedError as ServerExitedError
    from mcpkit.errors import ToolError as ToolError

__getattr__, __dir__, __all__ = lazy_exports(__name__)
