"""Honest MCP servers: capabilities exactly as served, validated arguments, results always valid.

>>> server = build_server("demo", "1.0", [ECHO])      # doctest: +SKIP
>>> serve(server, transport="stdio")                   # doctest: +SKIP

The names below are loaded on first use: ``ServerOptions``, ``HttpOptions`` and ``ToolFilter``
import nothing of the MCP SDK, so a CLI that builds options (or only prints data, as
``mcpkit archive search`` does) does not pay for the SDK's import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcpkit._lazy import lazy_root

if TYPE_CHECKING:
    from mcpkit._sdk import (
        SDK_DEFAULT_VERSION,
        SDK_HANDSHAKE_VERSIONS,
        SDK_MAX_REQUEST_BODY,
        accepts_json_and_events,
        connection_of,
        is_local_host,
        request_outbound_of,
    )
    from mcpkit.server._arguments import ArgumentError, coerce_arguments
    from mcpkit.server._ask import Answer, ask, confirm, confirming
    from mcpkit.server._build import (
        McpkitServer,
        SdkServer,
        ToolDefinitionError,
        build_server,
        default_options,
        set_default_options,
    )
    from mcpkit.server._errors import as_sdk_error, sdk_errors
    from mcpkit.server._extras import PromptArgumentSpec, PromptSpec, ResourceSpec
    from mcpkit.server._filters import ToolFilter
    from mcpkit.server._http import Authorize, HttpOptions, HttpRefusal, serve_http
    from mcpkit.server._oauth import OAuthOptions, OAuthVerifier, TokenRefusedError
    from mcpkit.server._options import LIST_METHODS, ServerOptions
    from mcpkit.server._plain_calls import answer_line, is_request_id, json_object, plain_request, response
    from mcpkit.server._runner import serve
    from mcpkit.server._signals import wait_for_stop_signal
    from mcpkit.server._stdin import claimed_stdin
    from mcpkit.server._tasks import (
        TASKS_EXTENSION,
        TaskStore,
        TaskUpdateParams,
        check_task_request,
        declare_tasks,
        inlined_result,
        modern_task,
        only_on_2025,
        refuse_untasked,
        start_task,
        task_answer,
        task_owner,
        task_requested,
    )

_WHERE = {
    "ArgumentError": "._arguments",
    "coerce_arguments": "._arguments",
    "Answer": "._ask",
    "ask": "._ask",
    "confirm": "._ask",
    "confirming": "._ask",
    "McpkitServer": "._build",
    "SdkServer": "._build",
    "ToolDefinitionError": "._build",
    "build_server": "._build",
    "default_options": "._build",
    "set_default_options": "._build",
    "as_sdk_error": "._errors",
    "sdk_errors": "._errors",
    "PromptArgumentSpec": "._extras",
    "PromptSpec": "._extras",
    "ResourceSpec": "._extras",
    "ToolFilter": "._filters",
    "Authorize": "._http",
    "HttpOptions": "._http",
    "HttpRefusal": "._http",
    "serve_http": "._http",
    "OAuthOptions": "._oauth",
    "OAuthVerifier": "._oauth",
    "TokenRefusedError": "._oauth",
    "LIST_METHODS": "._options",
    "ServerOptions": "._options",
    "answer_line": "._plain_calls",
    "is_request_id": "._plain_calls",
    "json_object": "._plain_calls",
    "plain_request": "._plain_calls",
    "response": "._plain_calls",
    "SDK_DEFAULT_VERSION": "mcpkit._sdk",
    "SDK_HANDSHAKE_VERSIONS": "mcpkit._sdk",
    "SDK_MAX_REQUEST_BODY": "mcpkit._sdk",
    "accepts_json_and_events": "mcpkit._sdk",
    "connection_of": "mcpkit._sdk",
    "is_local_host": "mcpkit._sdk",
    "request_outbound_of": "mcpkit._sdk",
    "serve": "._runner",
    "wait_for_stop_signal": "._signals",
    "claimed_stdin": "._stdin",
    "TASKS_EXTENSION": "._tasks",
    "TaskStore": "._tasks",
    "TaskUpdateParams": "._tasks",
    "check_task_request": "._tasks",
    "declare_tasks": "._tasks",
    "inlined_result": "._tasks",
    "modern_task": "._tasks",
    "start_task": "._tasks",
    "only_on_2025": "._tasks",
    "refuse_untasked": "._tasks",
    "task_answer": "._tasks",
    "task_owner": "._tasks",
    "task_requested": "._tasks",
}

__all__ = [
    "LIST_METHODS",
    "SDK_DEFAULT_VERSION",
    "SDK_HANDSHAKE_VERSIONS",
    "SDK_MAX_REQUEST_BODY",
    "TASKS_EXTENSION",
    "Answer",
    "ArgumentError",
    "Authorize",
    "HttpOptions",
    "HttpRefusal",
    "McpkitServer",
    "OAuthOptions",
    "OAuthVerifier",
    "PromptArgumentSpec",
    "PromptSpec",
    "ResourceSpec",
    "SdkServer",
    "ServerOptions",
    "TaskStore",
    "TaskUpdateParams",
    "TokenRefusedError",
    "ToolDefinitionError",
    "ToolFilter",
    "accepts_json_and_events",
    "answer_line",
    "as_sdk_error",
    "ask",
    "build_server",
    "check_task_request",
    "claimed_stdin",
    "coerce_arguments",
    "confirm",
    "confirming",
    "connection_of",
    "declare_tasks",
    "default_options",
    "inlined_result",
    "is_local_host",
    "is_request_id",
    "json_object",
    "modern_task",
    "only_on_2025",
    "plain_request",
    "refuse_untasked",
    "request_outbound_of",
    "response",
    "sdk_errors",
    "serve",
    "serve_http",
    "set_default_options",
    "start_task",
    "task_answer",
    "task_owner",
    "task_requested",
    "wait_for_stop_signal",
]


__getattr__, __dir__ = lazy_root(__name__, _WHERE)
