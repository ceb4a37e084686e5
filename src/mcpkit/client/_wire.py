"""The wire shapes the session hands back, as TypedDicts: plain dicts exactly as received.

The session returns what the server sent, not models (a model would refuse a new content
type or a malformed item, which ``mcpkit check`` must see to grade), yet a caller should
not have to guess the keys: these name the ones the MCP schema defines. Every key is
optional to the type checker except where the schema requires it, because a server may
omit or break anything; read values with ``.get`` and check their types.
"""

from __future__ import annotations

from typing import Any, Required, TypedDict

Result = dict[str, Any]
"""Any JSON-RPC result object as received (``Session.request``'s answer)."""


class Tool(TypedDict, total=False):
    """One tool definition from ``tools/list`` (``Session.list_tools``)."""

    name: Required[str]
    title: str
    description: str
    inputSchema: dict[str, Any]
    outputSchema: dict[str, Any]
    annotations: dict[str, Any]
    icons: list[dict[str, Any]]
    execution: dict[str, Any]
    _meta: dict[str, Any]


class CallToolResult(TypedDict, total=False):
    """The answer to ``tools/call`` (``Session.request("tools/call", ...)``)."""

    content: list[dict[str, Any]]
    structuredContent: dict[str, Any]
    isError: bool
    _meta: dict[str, Any]


class ListToolsResult(TypedDict, total=False):
    """One page of ``tools/list``."""

    tools: list[Tool]
    nextCursor: str
    _meta: dict[str, Any]


class InitializeResult(TypedDict, total=False):
    """The answer to ``initialize`` (``Session.initialize_result``)."""

    protocolVersion: Required[str]
    capabilities: dict[str, Any]
    serverInfo: dict[str, Any]
    instructions: str
    _meta: dict[str, Any]
