"""The downstream of bench/gateway_overhead.py: ``echo`` on the SDK's low-level Server.

``work_ms`` makes a call take that long on the server, as a real tool's own work would, so
the gateway's added latency can be read against calls of a realistic length. Stdio by
default; ``--http PORT`` serves streamable HTTP at /mcp.
"""

from __future__ import annotations

import argparse
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server

ECHO = types.Tool(
    name="echo",
    description="Return the text, after working for work ms milliseconds.",
    input_schema={
        "type": "object",
        "properties": {"text": {"type": "string"}, "work_ms": {"type": "number"}},
        "required": ["text"],
    },
)


async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[ECHO])


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    args = params.arguments or {}
    work = float(args.get("work_ms") or 0)
    if work:
        await anyio.sleep(work / 1000)
    return types.CallToolResult(content=[types.TextContent(text=str(args.get("text")))])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int)
    port = parser.parse_args().http
    server = Server("bench-echo", version="1", on_list_tools=list_tools, on_call_tool=call_tool)
    if port:
        import uvicorn

        app = server.streamable_http_app(streamable_http_path="/mcp", host="127.0.0.1")
        uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")
        return

    async def stdio() -> None:
        from mcp.server.stdio import stdio_server

        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(stdio)


if __name__ == "__main__":
    main()
