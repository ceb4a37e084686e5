"""Run a built server on stdio or streamable HTTP until stdin closes or a signal arrives.

A server started by a client must exit cleanly when the client goes away (stdin closes) or
asks it to stop (SIGINT/SIGTERM/SIGHUP), without a traceback on stderr and without leaving
half-written output.
"""

from __future__ import annotations

from typing import Literal

import anyio

from mcpkit.log import setup_logging
from mcpkit.server._build import McpkitServer
from mcpkit.server._signals import wait_for_stop_signal

Transport = Literal["stdio", "http"]


async def _serve_stdio(server: McpkitServer) -> None:
    async with anyio.create_task_group() as tg:

        async def stop_on_signal() -> None:
            await wait_for_stop_signal()
            tg.cancel_scope.cancel()

        tg.start_soon(stop_on_signal)
        await server.run_stdio()
        tg.cancel_scope.cancel()


def serve(server: McpkitServer, transport: Transport = "stdio") -> None:
    """Serve ``server`` (blocking) on the chosen transport; returns on stdin close or a signal.

    Everything else comes from the options the server was built with (``server.options``): the
    log level, and for ``http`` the address, path, statelessness, origins and token of
    ``options.http`` (see :class:`~mcpkit.server.HttpOptions`).
    """
    setup_logging(server.options.log_level)
    if transport == "stdio":
        anyio.run(_serve_stdio, server)
    elif transport == "http":
        anyio.run(server.run_http)
    else:  # pragma: no cover - typer restricts the choice
        raise ValueError(f"unknown transport {transport!r}: use stdio or http")
