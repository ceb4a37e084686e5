"""Running a gateway on stdio or stateless streamable HTTP until stdin closes or a signal.

SIGHUP reloads the config (see :mod:`mcpkit.gateway.reload`). On every way out (stdin closed,
SIGINT, SIGTERM) the downstreams are stopped and each
stdio child's whole process group is ended before the process exits: the session closes
stdin, then SIGTERM, then SIGKILL to the group (see :mod:`mcpkit.client`).
"""

from __future__ import annotations

import asyncio
import logging
import os
import stat
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, cast

import anyio
from mcp.server.stdio import stdio_server

from mcpkit.gateway.core import Gateway
from mcpkit.gateway.http_front import fast_calls
from mcpkit.gateway.limits_http import limit_calls
from mcpkit.gateway.reload import STOP_SIGNALS, watch
from mcpkit.gateway.status import StatusFile
from mcpkit.gateway.stdio_front import StdioFastLane
from mcpkit.server import HttpOptions, OAuthOptions, serve_http, wait_for_stop_signal
from mcpkit.server.relay import claimed_stdin, drain

logger = logging.getLogger("mcpkit.gateway")


class _LoopStdout:
    """stdout for the SDK's ``stdio_server`` written from the event loop.

    The SDK writes each message through ``anyio.wrap_file``: a worker-thread hop per write and
    per flush, which made the gateway's relay hop cost more than the call it relays. A pipe
    written from the loop has no hop. fd 1 then points at stderr, so stray prints cannot
    corrupt the wire.
    """

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer
        self.observer: Callable[[str], None] | None = None
        """Sees each line the SDK writes (the fast lane reads the handshake's answer)."""

    @classmethod
    async def open(cls) -> _LoopStdout | None:
        """None when stdout is not a pipe or socket (a file, a terminal): the SDK's writer is used."""
        if not stat.S_ISFIFO(os.fstat(1).st_mode) and not stat.S_ISSOCK(os.fstat(1).st_mode):
            return None
        loop = asyncio.get_running_loop()
        private = os.fdopen(os.dup(1), "wb", buffering=0)
        transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, private)
        os.dup2(2, 1)
        return cls(asyncio.StreamWriter(transport, protocol, None, loop))

    async def write(self, data: str) -> int:
        if self.observer is not None:
            self.observer(data)
        self._writer.write(data.encode("utf-8"))
        return len(data)

    def write_line(self, data: bytes) -> None:
        """Write one whole line now (lines never interleave: both writers run on the loop)."""
        self._writer.write(data)

    def congested(self) -> bool:
        """Whether more is waiting to be written than the pipe's high-water mark."""
        transport = self._writer.transport
        return transport.get_write_buffer_size() > transport.get_write_buffer_limits()[1]

    async def flush(self) -> None:
        await self._writer.drain()


async def run_stdio(gateway: Gateway, status_path: Path | None = None) -> None:
    """Serve one client on stdin/stdout; the downstreams start first, in parallel."""
    async with anyio.create_task_group() as tg:

        async def stop_on_signal() -> None:
            await wait_for_stop_signal(STOP_SIGNALS)
            tg.cancel_scope.cancel()

        tg.start_soon(stop_on_signal)
        gateway.relay_client_requests = True  # one client: a server's sampling request goes to it
        gateway.local_caller = "stdio"  # one caller: the client process, for the rate limit
        await gateway.start(tg)
        await tg.start(watch, gateway)
        tg.start_soon(StatusFile(gateway, status_path).keep_written)
        server = gateway.lowlevel()
        lane: StdioFastLane | None = None

        async def answer_what_was_read() -> None:
            """At the end of stdin: calls already read, on the SDK's path and the lane's, are
            answered before the gateway stops (``gateway < requests.jsonl``)."""
            await drain(gateway, *([lane] if lane is not None else []))

        with claimed_stdin(answer_what_was_read) as lines:
            stdout = await _LoopStdout.open()
            source: Any = lines
            if lines is not None and stdout is not None and gateway.config.fast_lane:
                lane = StdioFastLane(gateway, stdout.write_line, stdout.congested)
                stdout.observer = lane.sent
                source = lane.lines(lines)
            async with stdio_server(stdin=source, stdout=cast(Any, stdout)) as (
                read_stream,
                write_stream,
            ):
                await server.run(read_stream, write_stream, server.create_initialization_options())
        tg.cancel_scope.cancel()


async def run_http(
    gateway: Gateway,
    host: str,
    port: int,
    *,
    path: str = "/mcp",
    origins: Sequence[str] = (),
    token: str | None = None,
    oauth: OAuthOptions | None = None,
    status_path: Path | None = None,
    sessions: bool = False,
) -> None:
    """Serve stateless streamable HTTP: no session state, so replicas behind a balancer share nothing.

    ``sessions``: a handshake client that initializes gets a session (``Mcp-Session-Id``), on
    which its servers' questions (elicitation, sampling, roots) reach it mid-call; replicas then
    need sticky sessions. Calls without a session (and 2026-07-28 clients) stay stateless.

    The server's HTTP runner refuses foreign Origins and, when a token is set, requests without it;
    with ``oauth``, requests without an access token issued for this gateway (before its fast path).
    """
    async with anyio.create_task_group() as tg:
        await gateway.start(tg)
        await tg.start(watch, gateway)
        tg.start_soon(StatusFile(gateway, status_path).keep_written)
        options = HttpOptions(
            host=host,
            port=port,
            path=path,
            stateless=not sessions,
            allowed_origins=tuple(origins),
            bearer_token=token,
            oauth=oauth,
        )
        await serve_http(
            gateway.lowlevel(),
            options,
            name=f"gateway {gateway.config.name}",
            front=lambda app, check_host: limit_calls(
                fast_calls(app, gateway, path=path, check_host=check_host), gateway, path=path
            ),
            stop=STOP_SIGNALS,
        )
        tg.cancel_scope.cancel()
