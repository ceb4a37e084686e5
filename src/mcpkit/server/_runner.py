"""Run a built server on stdio or streamable HTTP until stdin closes or a signal arrives.

A server started by a client must exit cleanly when the client goes away (stdin closes) or
asks it to stop (SIGINT/SIGTERM/SIGHUP), without a traceback on stderr and without leaving
half-written output.
"""

from __future__ import annotations

from collections.abc import Sequence
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


def serve(
    server: McpkitServer,
    transport: Transport = "stdio",
    host: str = "127.0.0.1",
    port: int = 8000,
    path: str = "/mcp",
    *,
    stateless: bool = False,
    allowed_origins: Sequence[str] = (),
    bearer_token: str | None = None,
) -> None:
    """Serve ``server`` (blocking) on the chosen transport; returns on stdin close or a signal.

    HTTP options (see :mod:`mcpkit.server._http`): ``stateless`` for replicas behind a load
    balancer, ``allowed_origins`` besides local ones, and an optional ``bearer_token``.
    """
    setup_logging()
    if transport == "stdio":
        anyio.run(_serve_stdio, server)
    elif transport == "http":

        async def run_http() -> None:
            await server.run_http(
                host,
                port,
                path,
                stateless=stateless,
                allowed_origins=allowed_origins,
                bearer_token=bearer_token,
            )

        anyio.run(run_http)
    else:  # pragma: no cover - typer restricts the choice
        raise ValueError(f"unknown transport {transport!r}: use stdio or http")
