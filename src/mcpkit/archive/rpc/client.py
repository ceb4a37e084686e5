"""A persistent, pipelining JSON-RPC client for the archive server that reconnects by itself.

Upstream's wrapper opened a connection per request; this client keeps one connection, sends
requests concurrently on it and routes answers by id. When the server restarts, the next
call notices the closed connection and dials again, so a long-lived MCP face survives server
restarts without being restarted itself (upstream's wrapper needed a restart of its own
after every server restart: its MCP tools failed until then).

Failures are the MCP client's own classes from :mod:`mcpkit.errors`, so every face words them
from one tree: :class:`~mcpkit.errors.ConnectError` (nothing listens),
:class:`~mcpkit.errors.HttpError` (the handshake was refused: a bad token, a forbidden origin),
:class:`~mcpkit.errors.CallTimeoutError` (no connection or no answer in time),
:class:`~mcpkit.errors.ServerExitedError` (the server went away mid-request) and
:class:`~mcpkit.errors.JsonRpcError` (the server answered with a JSON-RPC error).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
from collections.abc import AsyncIterator, Iterable
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus, InvalidURI

from mcpkit.archive.rpc.api_protocol import Params
from mcpkit.archive.rpc.protocol import dumps, request_message
from mcpkit.errors import CallTimeoutError, ConnectError, HttpError, JsonRpcError, ServerExitedError
from mcpkit.jsonrpc import INTERNAL_ERROR

logger = logging.getLogger("mcpkit.archive.rpc.client")

ENV_URL = "MCPKIT_ARCHIVE_URL"
"""Read by the CLI (the default of ``--url``), never here."""
DEFAULT_URL = "ws://127.0.0.1:8765"
"""The upstream default port on loopback."""
CONNECT_TIMEOUT = 5.0


def _wire_params(params: Params) -> dict[str, Any] | list[Any]:
    return list(params) if isinstance(params, list) else dict(params or {})


_CLOSED = object()


class RpcClient:
    """JSON-RPC over one reconnecting WebSocket. Safe to share between concurrent tasks.

    It also satisfies the API protocol (``call``/``stream``), so a face runs the same code
    over a remote server as over the in-process API.
    """

    def __init__(
        self,
        url: str = DEFAULT_URL,
        *,
        token: str | None = None,
        connect_timeout: float = CONNECT_TIMEOUT,
        request_timeout: float | None = None,
    ) -> None:
        self.url = url
        self.token = token or None
        self.connect_timeout = connect_timeout
        self.request_timeout = request_timeout
        self._ws: ClientConnection | None = None
        self._reader: asyncio.Task[None] | None = None
        self._pending: dict[int, asyncio.Queue[Any]] = {}
        self._ids = itertools.count(1)
        self._connect_lock = asyncio.Lock()

    # -- the API protocol------------------------------------------------------------------------

    def methods(self) -> Iterable[str]:
        return ()

    def is_streaming(self, method: str) -> bool:
        return False

    async def call(self, method: str, params: Params = None) -> Any:
        """The result of one call; a streamed answer comes back as the list of its chunks."""
        chunks: list[Any] = []
        streamed = False
        async for chunk, more in self._exchange(method, params):
            if more is None and not streamed:
                return chunk
            streamed = True
            chunks.append(chunk)
        return chunks

    async def stream(self, method: str, params: Params = None) -> AsyncIterator[Any]:
        """Each chunk of a streamed answer as it arrives (a plain answer is one chunk)."""
        async for chunk, _more in self._exchange(method, params):
            yield chunk

    async def notify(self, method: str, params: Params = None) -> None:
        """Send a notification: no id, no answer."""
        ws = await self._connection()
        await ws.send(dumps({"jsonrpc": "2.0", "method": method, "params": _wire_params(params)}))

    # -- plumbing -----------------------------------------------------------------------------

    async def _exchange(self, method: str, params: Params) -> AsyncIterator[tuple[Any, Any]]:
        req_id = next(self._ids)
        queue: asyncio.Queue[Any] = asyncio.Queue()
        self._pending[req_id] = queue
        try:
            await self._send_with_retry(request_message(method, params, req_id))
            while True:
                if self.request_timeout is None:
                    message = await queue.get()
                else:
                    try:
                        message = await asyncio.wait_for(queue.get(), self.request_timeout)
                    except TimeoutError:
                        raise CallTimeoutError(
                            method,
                            self.request_timeout,
                            f"no answer to {method} within {self.request_timeout:g} s",
                        ) from None
                if message is _CLOSED:
                    raise ServerExitedError(
                        None, detail=f"the connection to {self.url} closed before the answer to {method}"
                    )
                if "error" in message:
                    err = message["error"] if isinstance(message["error"], dict) else {}
                    raise JsonRpcError(
                        int(err.get("code", INTERNAL_ERROR)), str(err.get("message", "")), err.get("data")
                    )
                more = message.get("more")
                yield message.get("result"), more
                if not more:
                    return
        finally:
            self._pending.pop(req_id, None)

    async def _send_with_retry(self, message: dict[str, Any]) -> None:
        """Send once; a connection found dead at send time (server restarted) is redialled once."""
        for attempt in (1, 2):
            ws = await self._connection()
            try:
                await ws.send(dumps(message))
                return
            except ConnectionClosed:
                await self._drop(ws)
                if attempt == 2:
                    raise ServerExitedError(None, detail=f"the connection to {self.url} closed") from None

    async def _connection(self) -> ClientConnection:
        async with self._connect_lock:
            ws = self._ws
            if ws is not None and ws.state.name == "OPEN":
                return ws
            if ws is not None:
                await self._drop(ws)
            ws = await self._dial()
            self._ws = ws
            self._reader = asyncio.create_task(self._read(ws))
            return ws

    async def _dial(self) -> ClientConnection:
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else None
        try:
            return await asyncio.wait_for(
                connect(
                    self.url,
                    additional_headers=headers,
                    open_timeout=None,
                    max_size=None,
                    compression=None,
                    ping_interval=None,
                ),
                self.connect_timeout,
            )
        except TimeoutError:
            raise CallTimeoutError(
                "connect",
                self.connect_timeout,
                f"could not connect to {self.url} within {self.connect_timeout:g} s",
            ) from None
        except InvalidStatus as exc:
            status = exc.response.status_code
            raise HttpError(
                f"{self.url} refused the connection with HTTP {status}",
                url=self.url,
                kind="status",
                status=status,
            ) from None
        except InvalidURI as exc:
            raise ConnectError(f"invalid server URL {self.url}: {exc}") from None
        except (OSError, InvalidHandshake) as exc:
            raise ConnectError(f"no archive server answers at {self.url} ({type(exc).__name__})") from None

    async def _read(self, ws: ClientConnection) -> None:
        try:
            async for raw in ws:
                try:
                    data = json.loads(raw)
                except ValueError:
                    logger.warning("ignoring a message that is not JSON from %s", self.url)
                    continue
                for message in data if isinstance(data, list) else [data]:
                    self._route(message)
        except ConnectionClosed:
            pass
        finally:
            if self._ws is ws:
                self._ws = None
            for queue in list(self._pending.values()):
                queue.put_nowait(_CLOSED)

    def _route(self, message: Any) -> None:
        if not isinstance(message, dict):
            return
        msg_id = message.get("id")
        if msg_id is None and "error" in message and len(self._pending) == 1:
            # An error the server could not tie to a request (e.g. a message over its size
            # limit): with one request outstanding it can only be that one's.
            msg_id = next(iter(self._pending))
        queue = self._pending.get(msg_id) if isinstance(msg_id, int) else None
        if queue is not None:
            queue.put_nowait(message)
        else:
            logger.debug("unroutable message from %s: %.200s", self.url, message)

    async def _drop(self, ws: ClientConnection) -> None:
        if self._ws is ws:
            self._ws = None
        with contextlib.suppress(Exception):
            await ws.close()

    async def aclose(self) -> None:
        """Close the connection (calls after this dial again)."""
        ws, reader = self._ws, self._reader
        self._ws = self._reader = None
        if ws is not None:
            with contextlib.suppress(Exception):
                await ws.close()
        if reader is not None:
            reader.cancel()
            with contextlib.suppress(BaseException):
                await reader

    async def __aenter__(self) -> RpcClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
