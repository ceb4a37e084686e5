"""Running a gateway on stdio or stateless streamable HTTP until stdin closes or a signal.

On every way out (stdin closed, SIGINT, SIGTERM, SIGHUP) the downstreams are stopped and each
stdio child's whole process group is ended before the process exits: the session closes
stdin, then SIGTERM, then SIGKILL to the group (see :mod:`mcpkit.client`).
"""

from __future__ import annotations

import hmac
import logging
import signal
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from pathlib import Path
from typing import Any, cast

import anyio
import anyio.abc
from mcp.server.stdio import stdio_server

from mcpkit.gateway.core import Gateway
from mcpkit.gateway.status import StatusFile
from mcpkit.server import claimed_stdin

logger = logging.getLogger("mcpkit.gateway")

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")


async def _until_signal(scope: anyio.CancelScope) -> None:
    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM, signal.SIGHUP) as signals:
        async for signum in signals:
            logger.info("received %s, stopping the gateway and its servers", signal.Signals(signum).name)
            scope.cancel()
            return


async def run_stdio(gateway: Gateway, status_path: Path | None = None) -> None:
    """Serve one client on stdin/stdout; the downstreams start first, in parallel."""
    async with anyio.create_task_group() as tg:
        tg.start_soon(_until_signal, tg.cancel_scope)
        await gateway.start(tg)
        status = StatusFile(gateway, status_path)
        tg.start_soon(status.keep_written)
        server = gateway.lowlevel()
        with claimed_stdin() as lines:
            async with stdio_server(stdin=cast(Any, lines)) as (read_stream, write_stream):
                await server.run(read_stream, write_stream, server.create_initialization_options())
        gateway.stop()
        tg.cancel_scope.cancel()


class Guard:
    """ASGI wrapper: refuse foreign Origins (DNS rebinding) and, when set, a missing bearer token."""

    def __init__(self, app: ASGIApp, *, origins: Sequence[str], token: str | None) -> None:
        self.app = app
        self.origins = {o.rstrip("/") for o in origins}
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        origin = headers.get("origin")
        if origin is not None and origin.rstrip("/") not in self.origins and not _local_origin(origin, scope):
            await _refuse(send, 403, f"Origin {origin} is not allowed")
            return
        if self.token is not None:
            given = headers.get("authorization", "")
            if not hmac.compare_digest(given.encode(), f"Bearer {self.token}".encode()):
                await _refuse(send, 401, "missing or wrong bearer token", bearer=True)
                return
        await self.app(scope, receive, send)


def _local_origin(origin: str, scope: Scope) -> bool:
    """A page served from the gateway's own loopback address may call it."""
    server = scope.get("server") or ("", 0)
    host = str(server[0])
    if host not in LOCAL_HOSTS:
        return False
    return any(
        origin.startswith(f"http://{h}:") or origin == f"http://{h}"
        for h in ("127.0.0.1", "localhost", "[::1]")
    )


async def _refuse(send: Send, status: int, message: str, *, bearer: bool = False) -> None:
    body = ('{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"' + message + '"}}').encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if bearer:
        headers.append((b"www-authenticate", b"Bearer"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def run_http(
    gateway: Gateway,
    host: str,
    port: int,
    *,
    path: str = "/mcp",
    origins: Sequence[str] = (),
    token: str | None = None,
    status_path: Path | None = None,
) -> None:
    """Serve stateless streamable HTTP: no session state, so replicas behind a balancer share nothing."""
    import uvicorn
    from mcp.server.transport_security import TransportSecuritySettings

    async with anyio.create_task_group() as tg:
        await gateway.start(tg)
        status = StatusFile(gateway, status_path)
        tg.start_soon(status.keep_written)
        server = gateway.lowlevel()
        # The Guard checks Origin (for any bind address); the SDK's own check would only cover loopback.
        security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
        app = server.streamable_http_app(
            streamable_http_path=path, stateless_http=True, host=host, transport_security=security
        )
        guarded = Guard(cast(ASGIApp, app), origins=origins, token=token)
        config = uvicorn.Config(guarded, host=host, port=port, log_level="warning", lifespan="on")
        http = _QuietSignals(config)

        async def stop_on_signal() -> None:
            with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM, signal.SIGHUP) as signals:
                async for _ in signals:
                    http.should_exit = True
                    return

        tg.start_soon(stop_on_signal)
        logger.info("gateway %s serving on http://%s:%d%s", gateway.config.name, host, port, path)
        await http.serve()
        gateway.stop()
        tg.cancel_scope.cancel()


def _quiet_signals_class() -> type[Any]:
    import contextlib
    from collections.abc import Iterator

    import uvicorn

    class QuietSignals(uvicorn.Server):
        """uvicorn without its own signal capture: the gateway stops its servers first."""

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            yield

    return QuietSignals


def _QuietSignals(config: Any) -> Any:
    return _quiet_signals_class()(config)
