"""The mcpkit side of bench/server_overhead.py: the same echo tool served by build_server."""

from __future__ import annotations

from typing import Any

from mcpkit.server import ServerOptions, build_server, serve
from mcpkit.tools import ToolSpec
from mcpkit.tools import params as p


async def echo(args: dict[str, Any]) -> str:
    return str(args["text"])


if __name__ == "__main__":
    tool = ToolSpec(
        name="echo",
        description="Return the given text unchanged.",
        input_schema=p.object_schema({"text": p.string("Text to send back")}, required=["text"]),
        handler=echo,
        read_only=True,
    )
    serve(build_server("mcpkit-echo", "0", [tool], options=ServerOptions()))
