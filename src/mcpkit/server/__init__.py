"""Honest MCP servers: capabilities exactly as served, validated arguments, results always valid.

>>> server = build_server("demo", "1.0", [ECHO])      # doctest: +SKIP
>>> serve(server, transport="stdio")                   # doctest: +SKIP
"""

from mcpkit.server.build import McpkitServer, ToolDefinitionError, build_server
from mcpkit.server.extras import PromptArgumentSpec, PromptSpec, ResourceSpec
from mcpkit.server.filters import ToolFilter
from mcpkit.server.http import HttpOptions, serve_http
from mcpkit.server.runner import serve
from mcpkit.server.signals import wait_for_stop_signal
from mcpkit.server.stdin import claimed_stdin

__all__ = [
    "HttpOptions",
    "McpkitServer",
    "PromptArgumentSpec",
    "PromptSpec",
    "ResourceSpec",
    "ToolDefinitionError",
    "ToolFilter",
    "build_server",
    "claimed_stdin",
    "serve",
    "serve_http",
    "wait_for_stop_signal",
]
