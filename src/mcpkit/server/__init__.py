"""Honest MCP servers: capabilities exactly as served, validated arguments, results always valid.

>>> server = build_server("demo", "1.0", [ECHO])      # doctest: +SKIP
>>> serve(server, transport="stdio")                   # doctest: +SKIP

The names below are what an app author uses. They are loaded on first use: ``ServerOptions``,
``HttpOptions`` and ``ToolFilter`` import nothing of the MCP SDK, so a CLI that builds options
(or only prints data, as ``mcpkit archive search`` does) does not pay for the SDK's import.
What a server that relays other servers needs beyond them (the SDK's internals, plain calls
beside the SDK's sessions, the task plumbing) is in :mod:`mcpkit.server.relay`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcpkit._lazy import lazy_exports

if TYPE_CHECKING:
    from mcpkit._sdk import is_local_host as is_local_host
    from mcpkit.server._arguments import ArgumentError as ArgumentError
    from mcpkit.server._arguments import coerce_arguments as coerce_arguments
    from mcpkit.server._ask import Answer as Answer
    from mcpkit.server._ask import ask as ask
    from mcpkit.server._ask import confirm as confirm
    from mcpkit.server._ask import confirming as confirming
    from mcpkit.server._build import McpkitServer as McpkitServer
    from mcpkit.server._build import ToolDefinitionError as ToolDefinitionError
    from mcpkit.server._build import build_server as build_server
    from mcpkit.server._build import default_options as default_options
    from mcpkit.server._build import set_default_options as set_default_options
    from mcpkit.server._errors import as_sdk_error as as_sdk_error
    from mcpkit.server._extras import PromptArgumentSpec as PromptArgumentSpec
    from mcpkit.server._extras import PromptSpec as PromptSpec
    from mcpkit.server._extras import ResourceSpec as ResourceSpec
    from mcpkit.server._filters import ToolFilter as ToolFilter
    from mcpkit.server._http import Authorize as Authorize
    from mcpkit.server._http import HttpOptions as HttpOptions
    from mcpkit.server._http import HttpRefusal as HttpRefusal
    from mcpkit.server._http import serve_http as serve_http
    from mcpkit.server._oauth import OAuthOptions as OAuthOptions
    from mcpkit.server._oauth import OAuthVerifier as OAuthVerifier
    from mcpkit.server._oauth import TokenRefusedError as TokenRefusedError
    from mcpkit.server._options import ServerOptions as ServerOptions
    from mcpkit.server._runner import serve as serve
    from mcpkit.server._signals import wait_for_stop_signal as wait_for_stop_signal
    from mcpkit.server._tasks import TASKS_EXTENSION as TASKS_EXTENSION
    from mcpkit.server._tasks import TaskStore as TaskStore
    from mcpkit.server._tasks import start_task as start_task

__getattr__, __dir__, __all__ = lazy_exports(__name__)
