"""Honest MCP servers: capabilities exactly as served, validated arguments, results always valid.

>>> server = build_server("demo", "1.0", [ECHO])      # doctest: +SKIP
>>> serve(server, transport="stdio")                   # doctest: +SKIP
"""

from mcpkit.server._arguments import ArgumentError, coerce_arguments
from mcpkit.server._build import McpkitServer, ToolDefinitionError, build_server
from mcpkit.server._build import _HonestServer as HonestServer
from mcpkit.server._errors import as_sdk_error, sdk_errors
from mcpkit.server._extras import PromptArgumentSpec, PromptSpec, ResourceSpec
from mcpkit.server._filters import ToolFilter
from mcpkit.server._http import Authorize, HttpOptions, HttpRefusal, serve_http
from mcpkit.server._runner import serve
from mcpkit.server._signals import wait_for_stop_signal
from mcpkit.server._stdin import claimed_stdin

__all__ = [
    "ArgumentError",
    "Authorize",
    "HonestServer",
    "HttpOptions",
    "HttpRefusal",
    "McpkitServer",
    "PromptArgumentSpec",
    "PromptSpec",
    "ResourceSpec",
    "ToolDefinitionError",
    "ToolFilter",
    "as_sdk_error",
    "build_server",
    "claimed_stdin",
    "coerce_arguments",
    "sdk_errors",
    "serve",
    "serve_http",
    "wait_for_stop_signal",
]
