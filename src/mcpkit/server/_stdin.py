"""A stdin line reader that cancellation can stop at once.

The SDK's stdio transport reads stdin in a worker thread, and a thread blocked in ``read`` cannot
be cancelled: after SIGINT or SIGTERM a server waited, sometimes for ever, until its client
closed the pipe. This reader waits for readability on the event loop instead (a non-blocking
private copy of fd 0), so a signal ends the server within milliseconds. Like the SDK, it points
fd 0 itself at /dev/null while serving, so a tool's child process cannot swallow protocol bytes.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Awaitable, Callable, Iterator

import anyio

_CHUNK = 1 << 16


class CancellableLines:
    """``async for line in lines``: UTF-8 lines (newline kept) from a non-blocking descriptor.

    At end of input, ``drain`` (if given) is awaited before the iteration ends: the transport
    treats the end of stdin as "stop now", so a request read just before it would otherwise be
    cancelled instead of answered (``server < requests.jsonl``).
    """

    def __init__(self, fd: int, drain: Callable[[], Awaitable[None]] | None = None) -> None:
        self._fd = fd
        self._drain = drain
        self._buffer = bytearray()
        self._eof = False

    def __aiter__(self) -> CancellableLines:
        return self

    async def __anext__(self) -> str:
        while True:
            end = self._buffer.find(b"\n")
            if end >= 0:
                line = bytes(self._buffer[: end + 1])
                del self._buffer[: end + 1]
                return line.decode("utf-8", errors="replace")
            if self._eof:
                if not self._buffer:
                    if self._drain is not None:
                        drain, self._drain = self._drain, None
                        await drain()
                    raise StopAsyncIteration
                rest = bytes(self._buffer)
                self._buffer.clear()
                return rest.decode("utf-8", errors="replace")
            await self._fill()

    async def _fill(self) -> None:
        try:
            chunk = os.read(self._fd, _CHUNK)
        except BlockingIOError:
            await anyio.wait_readable(self._fd)
            return
        if chunk:
            self._buffer += chunk
        else:
            self._eof = True


@contextlib.contextmanager
def claimed_stdin(drain: Callable[[], Awaitable[None]] | None = None) -> Iterator[CancellableLines | None]:
    """Serve from a private non-blocking copy of fd 0; ``None`` when stdin cannot be claimed.

    The descriptor's blocking mode is shared with every process holding the same pipe or
    terminal, so it is restored on the way out.
    """
    try:
        private = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    except OSError:
        yield None
        return
    was_blocking = os.get_blocking(private)
    os.set_blocking(private, False)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    try:
        yield CancellableLines(private, drain)
    finally:
        with contextlib.suppress(OSError):
            os.set_blocking(private, was_blocking)
            os.dup2(private, 0)
        os.close(private)
