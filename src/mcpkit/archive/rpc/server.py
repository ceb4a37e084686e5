"""JSON-RPC 2.0 over WebSocket in front of the archive API.

Unlike upstream (one connection per request, one request at a time), a connection is
persistent and requests on it run concurrently (pipelining), batches are answered as arrays,
notifications get no answer — and upstream's clients, which open a connection per request and
read ``more`` at the top level of streamed chunks, work unchanged.

The server only frames: the API validates params and shapes results. Every failure becomes a
JSON-RPC error with the right code; nothing a client sends may close the connection except a
message beyond the hard size cap (then websockets closes with 1009, to protect memory).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request as HttpRequest
from websockets.http11 import Response

from mcpkit.archive.rpc.api_protocol import ArchiveAPIProtocol, open_stream
from mcpkit.archive.rpc.fair import FairLimiter
from mcpkit.archive.rpc.protocol import (
    Invalid,
    Request,
    dumps,
    error_message,
    parse_message,
    result_message,
)
from mcpkit.archive.rpc.security import AccessPolicy
from mcpkit.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, error_fields

logger = logging.getLogger("mcpkit.archive.rpc")

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
DEFAULT_MAX_MESSAGE = 1 << 20
HARD_CAP_FACTOR = 4
DEFAULT_MAX_INFLIGHT = 32
DEFAULT_MAX_BATCH = 100
DEFAULT_MAX_CONNECTIONS = 256
DEFAULT_IDLE_TIMEOUT = 300.0
STOP_METHOD = "stop_server"
REFUSAL_LOG_INTERVAL = 10.0

Send = Callable[[dict[str, Any] | list[dict[str, Any]]], Awaitable[None]]


@dataclass
class RpcServerOptions:
    """How the server listens and what it accepts."""

    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    token: str | None = field(default=None, repr=False)  # a secret: never in a log line
    allowed_origins: Sequence[str] = field(default_factory=tuple)
    max_message_bytes: int = DEFAULT_MAX_MESSAGE
    max_inflight: int = DEFAULT_MAX_INFLIGHT
    """Requests running at once, server-wide; every batch item counts (see :mod:`.fair`)."""
    max_pending: int = 64
    """Messages one connection may have unanswered before the server stops reading from it."""
    max_batch: int = DEFAULT_MAX_BATCH
    max_connections: int = DEFAULT_MAX_CONNECTIONS
    idle_timeout: float = DEFAULT_IDLE_TIMEOUT
    """Seconds a connection with nothing running may stay silent; 0 keeps it forever."""
    trace: bool = False
    allow_stop: bool = True

    @property
    def hard_cap(self) -> int:
        """Beyond this a message is not even buffered: the connection is closed (1009)."""
        return self.max_message_bytes * HARD_CAP_FACTOR + 65536


def _message_size(message: str | bytes, limit: int) -> int:
    """Size in UTF-8 bytes; exact whenever it could exceed ``limit`` (small texts skip encoding)."""
    if isinstance(message, bytes):
        return len(message)
    return len(message) if len(message) * 4 <= limit else len(message.encode())


class RpcServer:
    """A running WebSocket JSON-RPC server over one :class:`ArchiveAPIProtocol`.

    ``async with RpcServer(api, options) as server:`` binds (``server.port`` is the real port
    when 0 was asked) and closes every connection on exit. :meth:`wait_stopped` returns after
    :meth:`request_stop` or a ``stop_server`` call.
    """

    def __init__(self, api: ArchiveAPIProtocol, options: RpcServerOptions | None = None) -> None:
        self.api = api
        self.options = options or RpcServerOptions()
        opts = self.options
        self.policy = AccessPolicy.for_bind(opts.host, opts.token, opts.allowed_origins)
        self._server: Server | None = None
        self._stopped = asyncio.Event()
        self.port = self.options.port
        self.limiter = FairLimiter(opts.max_inflight)
        self.connections = 0
        self._refused = 0
        self._refusal_logged = 0.0
        # websockets logs every handshake a peer drops, with a traceback: thousands of lines
        # from one misbehaving client. Its records are kept for --trace only.
        self._ws_logger = logging.getLogger("mcpkit.archive.rpc.websockets")
        self._ws_logger.setLevel(logging.DEBUG if opts.trace else logging.CRITICAL)

    # -- lifecycle --------------------------------------------------------------------------

    async def start(self) -> None:
        self._server = await serve(
            self._handle,
            self.options.host,
            self.options.port,
            process_request=self._admit,
            max_size=self.options.hard_cap,
            logger=self._ws_logger,
            compression=None,
            server_header=None,
        )
        sockets = list(self._server.sockets)
        if sockets:
            self.port = int(sockets[0].getsockname()[1])
        logger.info("archive server listening on %s", self.url)

    @property
    def url(self) -> str:
        host = self.options.host
        host = f"[{host}]" if ":" in host else host
        return f"ws://{host}:{self.port}"

    def request_stop(self) -> None:
        self._stopped.set()

    async def wait_stopped(self) -> None:
        await self._stopped.wait()

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None
        self._stopped.set()

    async def __aenter__(self) -> RpcServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- admission ---------------------------------------------------------------------------

    def _admit(self, connection: ServerConnection, request: HttpRequest) -> Response | None:
        """Origin and token first, then the connection cap (HTTP 503, one line, logged once
        per interval with the count, however many are refused)."""
        refusal = self.policy.check(connection, request)
        if refusal is not None:
            return refusal
        limit = self.options.max_connections
        if self.connections < limit:
            return None
        self._refused += 1
        now = time.monotonic()
        if now - self._refusal_logged >= REFUSAL_LOG_INTERVAL:
            logger.warning(
                "refused %d connection(s): %d open, the limit is %d", self._refused, self.connections, limit
            )
            self._refused, self._refusal_logged = 0, now
        return connection.respond(
            HTTPStatus.SERVICE_UNAVAILABLE, f"too many connections: the limit is {limit}\n"
        )

    # -- one connection ---------------------------------------------------------------------

    async def _handle(self, ws: ServerConnection) -> None:
        self.connections += 1
        try:
            await self._serve_connection(ws)
        finally:
            self.connections -= 1

    async def _next_message(self, ws: ServerConnection, tasks: set[asyncio.Task[None]]) -> str | bytes | None:
        """The next message; ``None`` after closing a connection silent for ``idle_timeout``
        with nothing running (a connection waiting for its answers is not idle)."""
        idle = self.options.idle_timeout
        if idle <= 0:
            return await ws.recv()
        while True:
            try:
                return await asyncio.wait_for(ws.recv(), idle)  # recv() is cancellation-safe
            except TimeoutError:
                if tasks:
                    continue
            logger.debug("closing %s: idle for %s s", ws.remote_address, idle)
            await ws.close(1001, "idle timeout")
            return None

    async def _serve_connection(self, ws: ServerConnection) -> None:
        lock = asyncio.Lock()
        slots = asyncio.Semaphore(self.options.max_pending)
        tasks: set[asyncio.Task[None]] = set()

        async def send(message: dict[str, Any] | list[dict[str, Any]]) -> None:
            text = dumps(message)
            if self.options.trace:
                logger.info("-> %s", text[:2000])
            async with lock:
                await ws.send(text)

        def finished(task: asyncio.Task[None]) -> None:
            tasks.discard(task)
            slots.release()

        logger.debug("connection from %s", ws.remote_address)
        try:
            while True:
                message = await self._next_message(ws, tasks)
                if message is None:
                    break
                if self.options.trace:
                    logger.info("<- %s", str(message)[:2000])
                size = _message_size(message, self.options.max_message_bytes)
                if size > self.options.max_message_bytes:
                    await send(
                        error_message(
                            None,
                            INVALID_REQUEST,
                            f"Invalid Request: message of {size} bytes exceeds the "
                            f"{self.options.max_message_bytes}-byte limit",
                        )
                    )
                    continue
                await slots.acquire()
                task = asyncio.create_task(self._run_message(message, send, ws))
                tasks.add(task)
                task.add_done_callback(finished)
        except ConnectionClosed:
            pass
        finally:
            # The peer is gone: nobody can read the answers of requests still running.
            for task in list(tasks):
                task.cancel()
            if tasks:
                await asyncio.gather(*tasks, return_exceptions=True)
            logger.debug("connection from %s closed", ws.remote_address)

    async def _run_message(self, message: str | bytes, send: Send, key: object = None) -> None:
        try:
            incoming = parse_message(message)
            if incoming.batch:
                if len(incoming.items) > self.options.max_batch:
                    await send(
                        error_message(
                            None,
                            INVALID_PARAMS,
                            f"Invalid params: a batch of {len(incoming.items)} requests exceeds "
                            f"the limit of {self.options.max_batch}",
                        )
                    )
                    return
                answers = await asyncio.gather(*(self._answer(item, key) for item in incoming.items))
                replies = [a for a in answers if a is not None]
                if replies:
                    await send(replies)
                return
            item = incoming.items[0]
            if isinstance(item, Request) and self._is_streaming(item.method):
                async with self.limiter.slot(key):
                    await self._stream(item, send)
                return
            answer = await self._answer(item, key)
            if answer is not None:
                await send(answer)
        except ConnectionClosed:
            pass
        except asyncio.CancelledError:
            raise
        except Exception:
            logger.exception("failed to answer a message")

    def _is_streaming(self, method: str) -> bool:
        try:
            return bool(self.api.is_streaming(method))
        except Exception:
            return False

    async def _answer(self, item: Invalid | Request, key: object = None) -> dict[str, Any] | None:
        """The complete response to one item, run holding a slot of the server-wide limit."""
        if isinstance(item, Invalid):
            return error_message(item.id, item.code, item.message)
        async with self.limiter.slot(key):
            return await self._respond(item)

    async def _respond(self, item: Request) -> dict[str, Any] | None:
        """The complete response to one request (a streamed method is collected into a list)."""
        try:
            if item.method == STOP_METHOD and self._handles_stop():
                result: Any = {"status": "stopping"}
                asyncio.get_running_loop().call_later(0.05, self.request_stop)
            elif self._is_streaming(item.method):
                result = [chunk async for chunk in await open_stream(self.api, item.method, item.params)]
            else:
                result = await self.api.call(item.method, item.params)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            return None if item.notification else self._error_for(item, exc)
        if item.notification:
            return None
        reply = result_message(item.id, result)
        try:
            dumps(reply)
        except (TypeError, ValueError) as exc:
            logger.error("result of %s is not JSON: %s", item.method, exc)
            return error_message(item.id, INTERNAL_ERROR, "Internal error: the result is not valid JSON")
        return reply

    def _handles_stop(self) -> bool:
        return self.options.allow_stop and STOP_METHOD not in set(self.api.methods())

    def _error_for(self, item: Request, exc: Exception) -> dict[str, Any]:
        fields = error_fields(exc)
        if fields is not None:
            return error_message(item.id, *fields)
        logger.error("method %s failed", item.method, exc_info=exc)
        return error_message(item.id, INTERNAL_ERROR, f"Internal error: {type(exc).__name__}")

    async def _stream(self, item: Request, send: Send) -> None:
        """Send a streamed result one chunk per message; ``more`` is false on the last one."""
        try:
            chunks = await open_stream(self.api, item.method, item.params)
        except Exception as exc:
            if not item.notification:
                await send(self._error_for(item, exc))
            return
        pending: Any = None
        have = False
        try:
            async for chunk in chunks:
                if have and not item.notification:
                    await send(result_message(item.id, pending, more=True))
                pending, have = chunk, True
            if not item.notification:
                await send(result_message(item.id, pending if have else None, more=False))
        except (ConnectionClosed, asyncio.CancelledError):
            raise
        except Exception as exc:
            if not item.notification:
                await send(self._error_for(item, exc))
        finally:
            aclose = getattr(chunks, "aclose", None)
            if aclose is not None:
                with contextlib.suppress(Exception):
                    await aclose()


async def run_server(
    api: ArchiveAPIProtocol, options: RpcServerOptions, *, on_ready: Callable[[str], None] | None = None
) -> None:
    """Serve until ``stop_server``, SIGINT or SIGTERM; then close connections gracefully."""
    import signal

    async with RpcServer(api, options) as server:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            # platforms without loop signal handlers (Windows) or a loop outside the main
            # thread: stop_server and closing the process still end the server
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, server.request_stop)
        if on_ready is not None:
            on_ready(server.url)
        await server.wait_stopped()
        logger.info("archive server stopping")
