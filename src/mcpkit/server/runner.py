"""Run a built server on stdio or streamable HTTP until stdin closes or a signal arrives.

A server started by a client must exit cleanly when the client goes away (stdin closes) or
asks it to stop (SIGINT/SIGTERM), without a traceback on stderr and without leaving
half-written output.
"""

from __future__ import annotations

import contextlib
import logging
import signal
from collections.abc import Iterator
from typing import Any, Literal

import anyio

from mcpkit.log import setup_logging
from mcpkit.server.build import McpkitServer

logger = logging.getLogger("mcpkit.server")

Transport = Literal["stdio", "http"]


async def _until_signal(scope: anyio.CancelScope) -> None:
    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async for signum in signals:
            logger.info("received %s, shutting down", signal.Signals(signum).name)
            scope.cancel()
            return


async def _serve_stdio(server: McpkitServer) -> None:
    async with anyio.create_task_group() as tg:
        tg.start_soon(_until_signal, tg.cancel_scope)
        await server.run_stdio()
        tg.cancel_scope.cancel()


def _uvicorn_server_class() -> type[Any]:
    """uvicorn.Server whose own signal capture is switched off: the runner owns SIGINT/SIGTERM.

    uvicorn (>= 0.29) swaps the process's signal handlers during ``serve`` and re-raises the
    signal afterwards, which would kill the process instead of letting it shut down cleanly.
    """
    import uvicorn

    class ServerWithoutSignalHandlers(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            yield

    return ServerWithoutSignalHandlers


async def serve_http(server: McpkitServer, host: str, port: int, path: str = "/mcp") -> None:
    """Serve streamable HTTP until SIGINT/SIGTERM or cancellation; uvicorn shuts down gracefully."""
    import uvicorn

    app = server.lowlevel.streamable_http_app(streamable_http_path=path, host=host)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
    http = _uvicorn_server_class()(config)

    async def stop_on_signal() -> None:
        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async for _ in signals:
                http.should_exit = True
                return

    async with anyio.create_task_group() as tg:
        tg.start_soon(stop_on_signal)
        logger.info("serving %s on http://%s:%d%s", server.name, host, port, path)
        await http.serve()
        tg.cancel_scope.cancel()


def serve(
    server: McpkitServer,
    transport: Transport = "stdio",
    host: str = "127.0.0.1",
    port: int = 8000,
    path: str = "/mcp",
) -> None:
    """Serve ``server`` (blocking) on the chosen transport; returns on stdin close or a signal."""
    setup_logging()
    if transport == "stdio":
        anyio.run(_serve_stdio, server)
    elif transport == "http":
        anyio.run(serve_http, server, host, port, path)
    else:  # pragma: no cover - typer restricts the choice
        raise ValueError(f"unknown transport {transport!r}: use stdio or http")
