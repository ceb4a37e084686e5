"""A bare SDK low-level server whose one tool returns mcpkit.results builders unchanged.

Used by test_validate to compare :func:`mcpkit.results.to_wire` with the bytes the real SDK puts
on stdout, independently of :mod:`mcpkit.server`. Arguments: {"kind": "text"|"error"|"xml",
"text": str}.
"""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from mcpkit.results import error_result, text_result, xml_result
from mcpkit.results._xml import Element


def build(kind: str, text: str) -> mcp_types.CallToolResult:
    if kind == "error":
        return error_result(text)
    if kind == "xml":
        return xml_result(Element("r", {"a": text}, text))
    return text_result(text, structured={"text": text})


async def list_tools(ctx: Any, params: Any) -> mcp_types.ListToolsResult:
    schema = {"type": "object", "properties": {"kind": {"type": "string"}, "text": {"type": "string"}}}
    return mcp_types.ListToolsResult(tools=[mcp_types.Tool(name="show", input_schema=schema)])


async def call_tool(ctx: Any, params: mcp_types.CallToolRequestParams) -> mcp_types.CallToolResult:
    args = params.arguments or {}
    return build(str(args.get("kind", "text")), str(args.get("text", "")))


async def main() -> None:
    server: Server[Any] = Server("bare", version="0", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
