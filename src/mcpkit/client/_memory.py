"""A server in the same process: the session talks to it over memory streams, no child, no socket.

Most tests of a client (or of a gateway, or of a server) need *a* server, not a process: its
start-up, pipes and exit are what the stdio transport's own tests are for. Spawning one per
test made 27 test files pay for processes and for fixed waits on them; here the server's run
loop runs as a task beside the session, exactly as the SDK's own ``Client(server)`` does.

What it takes, duck-typed so the client need not import :mod:`mcpkit.server` (the layers point
the other way): an SDK low-level ``Server``, or any object whose ``lowlevel`` attribute is
one (mcpkit's own server from ``build_server``). What it assumes of the SDK, each checked by
``tests/client/test_calls.py``: ``mcp.shared.memory.create_client_server_memory_streams``
yields ``(client_streams, server_streams)``, each a ``(read, write)`` pair; a low-level
server's ``run(read, write, create_initialization_options())`` serves one connection until
its read side ends.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
from mcp.shared.memory import create_client_server_memory_streams

from mcpkit.errors import ConnectError


def lowlevel_of(app: object) -> Any:
    """The SDK low-level server behind ``app``; ConnectError when it is not a server."""
    candidate = getattr(app, "lowlevel", app)
    if callable(getattr(candidate, "run", None)) and callable(
        getattr(candidate, "create_initialization_options", None)
    ):
        return candidate
    raise ConnectError(
        f"cannot serve {type(app).__name__!r} in process: pass an SDK low-level Server "
        "or an object whose .lowlevel is one (mcpkit's build_server returns such an object)"
    )


@asynccontextmanager
async def serve_in_memory(app: object, *, grace: float = 2.0) -> AsyncIterator[tuple[Any, Any]]:
    """Run ``app``'s server loop in a task; yield the client's (read, write) streams.

    On exit the streams are closed (the server sees the end of its input and returns, as a
    stdio server does on EOF); a server whose teardown takes longer than ``grace`` seconds
    is cancelled.
    """
    lowlevel = lowlevel_of(app)
    async with create_client_server_memory_streams() as (client_streams, server_streams):
        server_read, server_write = server_streams
        done = anyio.Event()

        async def run() -> None:
            try:
                await lowlevel.run(server_read, server_write, lowlevel.create_initialization_options())
            finally:
                done.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            try:
                yield client_streams
            finally:
                with anyio.CancelScope(shield=True):
                    await client_streams[1].aclose()
                    await server_write.aclose()
                    with anyio.move_on_after(grace):
                        await done.wait()
                tg.cancel_scope.cancel()
