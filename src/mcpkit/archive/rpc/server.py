"""JSON-RPC 2.0 over WebSocket in front of the archive API.

Unlike upstream (one connection per request, one request at a time), a connection is
persistent and requests on it run concurrently (pipelining), batches are answered as arrays,
notifications get no answer — and upstream's clients, which open a connection per request and
read ``more`` at the top level of streamed chunks, work unchanged.

The server only frames: the API validates params and shapes results. Every failure becomes a
JSON-RPC error with the right code; nothing a client sends may close the connection except a
message beyond the hard size cap (then websockets closes with 1009, to protect memory).

Fair under load: requests run under one server-wide limit shared out per connection (see
:mod:`.fair`), so a batch never stands between another client and its one search; and when the
connection cap is reached, the connection silent the longest is closed to admit the new one
(idle sockets held open by someone else locked every other client out with 503 for minutes).
Answers always go out: text that is not Unicode (a lone surrogate, which JSON's ``\\ud800``
escape can carry) is refused as bad params, and echoed ids or method names holding one are sent
with JSON's ASCII escapes instead of dropping the connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
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
from mcpkit.archive.rpc.fair import FairLimiter, default_slots
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
    max_inflight: int = field(default_factory=default_slots)
    """Requests running at once, server-wide; every batch item counts (see :mod:`.fair`). The
    cores this process may use: more only slows every running request down (the work is CPU)."""
    max_pending: int = 64
    """Messages one connection may have unanswered before the server stops reading from it."""
    max_batch: int = DEFAULT_MAX_BATCH
    max_connections: int = DEFAULT_MAX_CONNECTIONS
    idle_timeout: float = DEFAULT_IDLE_TIMEOUT
    """Seconds a connection with nothing running may stay silent; 0 keeps it forever. At the
    connection cap, the connection silent the longest is closed sooner, to admit a new one."""
    trace: bool = False
    allow_stop: bool = True

    @property
    def hard_cap(self) -> int:
        """Beyond this a message is not even buffered: the connection is closed (1009)."""
        return self.max_message_bytes * HARD_CAP_FACTOR + 65536


@dataclass(eq=False)
class _Peer:
    """What admission needs to know of one open connection."""

    ws: ServerConnection
    last_active: float
    running: int = 0
    evicted: bool = False


def _encoded(message: dict[str, Any] | list[dict[str, Any]]) -> bytes:
    """The UTF-8 bytes of an answer. Text that is not Unicode (a lone surrogate echoed from a
    request's id or method) cannot be UTF-8: then JSON's ``\\uXXXX`` escapes carry it, so the
    client reads back exactly the value it sent (the connection used to drop instead)."""
    try:
        return dumps(message).encode()
    except UnicodeEncodeError:
        return json.dumps(message, ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode()


def lone_surrogate(params: Any) -> str | None:
    """The name of the first param whose text (or key) holds a lone surrogate, else ``None``.

    JSON's ``\\ud800`` escape decodes to one; it is no character, so SQLite, the tokenizer and
    the UTF-8 writer all fail on it (a search answered -32603 ``UnicodeEncodeError``). Walked
    without recursion: params may be nested as deep as the decoder allows.
    """
    stack: list[tuple[str, Any]] = [("params", params)]
    while stack:
        name, value = stack.pop()
        if isinstance(value, str):
            if not value.isascii() and not _is_unicode(value):
                return name
        elif isinstance(value, dict):
            for key, child in value.items():
                if not _is_unicode(str(key)):
                    return name
                stack.append((str(key) if name == "params" else f"{name}.{key}", child))
        elif isinstance(value, list):
            stack.extend((f"{name}[{i}]", child) for i, child in enumerate(value))
    return None


_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def one_line(message: str) -> str:
    """``message`` with line breaks and other controls escaped: an error message is one line,
    even when it echoes what the client sent (``Method not found: <a newline>``)."""
    if _CONTROLS.search(message) is None:
        return message
    return _CONTROLS.sub(lambda m: m.group().encode("unicode_escape").decode(), message)


def _is_unicode(text: str) -> bool:
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


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
        self._peers: dict[ServerConnection, _Peer] = {}
        self._closing: set[asyncio.Task[None]] = set()
        self.evictions = 0
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
        """Origin and token first, then the connection cap: at the cap the connection silent
        the longest is closed to make room; with none silent, HTTP 503 (one line, logged once
        per interval with the count, however many are refused)."""
        refusal = self.policy.check(connection, request)
        if refusal is not None:
            return refusal
        limit = self.options.max_connections
        open_now = self.connections - sum(1 for p in self._peers.values() if p.evicted)
        if open_now < limit or self._evict_idlest():
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

    def _evict_idlest(self) -> bool:
        """Close the connection with nothing running that has been silent the longest."""
        idle = [p for p in self._peers.values() if not p.running and not p.evicted]
        if not idle:
            return False
        peer = min(idle, key=lambda p: p.last_active)
        peer.evicted = True
        self.evictions += 1
        logger.debug("closing %s, silent the longest, to admit a new connection", peer.ws.remote_address)
        task = asyncio.get_running_loop().create_task(peer.ws.close(1001, "idle: closed to admit another"))
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)
        return True

    # -- one connection ---------------------------------------------------------------------

    async def _handle(self, ws: ServerConnection) -> None:
        self.connections += 1
        self._peers[ws] = _Peer(ws, time.monotonic())
        try:
            await self._serve_connection(ws)
        finally:
            self.connections -= 1
            self._peers.pop(ws, None)

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

        peer = self._peers[ws]

        async def send(message: dict[str, Any] | list[dict[str, Any]]) -> None:
            data = _encoded(message)
            if self.options.trace:
                logger.info("-> %s", data[:2000].decode(errors="replace"))
            async with lock:
                await ws.send(data, text=True)

        def finished(task: asyncio.Task[None]) -> None:
            tasks.discard(task)
            slots.release()
            peer.running = len(tasks)
            peer.last_active = time.monotonic()

        logger.debug("connection from %s", ws.remote_address)
        try:
            while True:
                message = await self._next_message(ws, tasks)
                if message is None:
                    break
                peer.last_active = time.monotonic()
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
                peer.running = len(tasks)
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
                answers = await asyncio.gather(
                    *(self._answer(item, key, burst=True) for item in incoming.items)
                )
                replies = [a for a in answers if a is not None]
                if replies:
                    await send(replies)
                return
            item = incoming.items[0]
            if isinstance(item, Request) and self._is_streaming(item.method):
                if (refusal := self._refusal(item)) is not None:
                    await send(refusal)
                    return
                await self._stream(item, send, key)
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

    async def _answer(
        self, item: Invalid | Request, key: object = None, *, burst: bool = False
    ) -> dict[str, Any] | None:
        """The complete response to one item, run holding a slot of the server-wide limit."""
        if isinstance(item, Invalid):
            return error_message(item.id, item.code, item.message)
        refusal = self._refusal(item)
        if refusal is not None:
            return None if item.notification else refusal
        async with self.limiter.slot(key, burst=burst):
            return await self._respond(item)

    def _refusal(self, item: Request) -> dict[str, Any] | None:
        """The answer to a request whose params hold text that is not Unicode, else ``None``."""
        name = lone_surrogate(item.params)
        if name is None:
            return None
        return error_message(
            item.id, INVALID_PARAMS, f"Invalid params: {name} is not Unicode text (it holds a lone surrogate)"
        )

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
            code, message, data = fields
            return error_message(item.id, code, one_line(message), data)
        logger.error("method %s failed", item.method, exc_info=exc)
        return error_message(item.id, INTERNAL_ERROR, f"Internal error: {type(exc).__name__}")

    async def _stream(self, item: Request, send: Send, key: object) -> None:
        """Send a streamed result one chunk per message; ``more`` is false on the last one.

        A slot is held while a chunk is computed, not while it is sent: a client that reads
        slowly holds back only its own stream, never the server's slots.
        """
        try:
            async with self.limiter.slot(key):
                chunks = await open_stream(self.api, item.method, item.params)
        except Exception as exc:
            if not item.notification:
                await send(self._error_for(item, exc))
            return
        pending: Any = None
        have = False
        iterator = aiter(chunks)
        try:
            while True:
                async with self.limiter.slot(key):
                    try:
                        chunk = await anext(iterator)
                    except StopAsyncIteration:
                        break
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
