"""A stdin line reader that cancellation can stop at once.

The SDK's stdio transport reads stdin in a worker thread, and a thread blocked in ``read`` cannot
be cancelled: after SIGINT or SIGTERM a server waited, sometimes for ever, until its client
closed the pipe. This reader waits for readability on the event loop instead (a non-blocking
private copy of fd 0), so a signal ends the server within milliseconds. Like the SDK, it points
fd 0 itself at /dev/null while serving, so a tool's child process cannot swallow protocol bytes.
:class:`AnsweredLines` answers the lines the SDK would drop without a word.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator

_CHUNK = 1 << 16


class CancellableLines:
    """``async for line in lines``: UTF-8 lines (newline kept) from a non-blocking descriptor.

    At end of input, ``drain`` (if given) is awaited before the iteration ends: the transport
    treats the end of stdin as "stop now", so a request read just before it would otherwise be
    cancelled instead of answered (``server < requests.jsonl``).

    The descriptor stays registered with the event loop while someone reads (one registration,
    not one per line), and is read only once it is readable or the last read filled a whole
    chunk: a request costs one ``read`` and no registration calls. When nobody is waiting for a
    line (the server is busy), readiness stops being watched, so unread input never spins the
    loop. A descriptor the loop cannot watch (a regular file) is simply read: it never blocks.
    """

    def __init__(self, fd: int, drain: Callable[[], Awaitable[None]] | None = None) -> None:
        self._fd = fd
        self._drain = drain
        self._buffer = bytearray()
        self._eof = False
        self._more = True  # the last read may have left input behind: read before waiting
        self._waiter: asyncio.Future[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._watchable = True
        self._stray = False

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
        if not self._more and self._watchable:
            await self._readable()
        try:
            chunk = os.read(self._fd, _CHUNK)
        except BlockingIOError:
            self._more = False
            return
        if chunk:
            self._buffer += chunk
            self._more = len(chunk) == _CHUNK
        else:
            self._eof = True
            self.close()

    async def _readable(self) -> None:
        loop = asyncio.get_running_loop()
        if self._loop is None:
            try:
                loop.add_reader(self._fd, self._ready)
            except (PermissionError, ValueError, NotImplementedError):
                self._watchable = False  # a regular file: always readable, never waited for
                return
            self._loop = loop
        waiter: asyncio.Future[None] = loop.create_future()
        self._waiter = waiter
        self._stray = False
        try:
            await waiter
        finally:
            self._waiter = None

    def _ready(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)
        elif self._stray:
            self.close()  # nobody reads now: watched again when someone waits
        else:
            # The loop polls once more between waking the reader and the reader reading, so
            # one wake-up with nobody waiting is normal; a second means input sits unread.
            self._stray = True

    def close(self) -> None:
        """Stop watching the descriptor (before it is closed)."""
        loop, self._loop = self._loop, None
        if loop is not None and not loop.is_closed():
            loop.remove_reader(self._fd)


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
    lines = CancellableLines(private, drain)
    try:
        yield lines
    finally:
        lines.close()
        with contextlib.suppress(OSError):
            os.set_blocking(private, was_blocking)
            os.dup2(private, 0)
        os.close(private)


Answer = Callable[[str | int | None, int, str], Awaitable[None]]
"""Sends one JSON-RPC error answer: ``(id, code, message)``."""


class AnsweredLines:
    """``lines`` with every line the SDK would drop answered here instead of passed on.

    The SDK's stdio transport drops a line it cannot read as a JSON-RPC message without a word
    (invalid JSON, a lone surrogate, nesting past its decoder's limit), so the client waited out
    its timeout for an answer that never came. Each such line now gets one error answer, -32700
    or -32600 (see :func:`mcpkit._sdk.stdio_line_refused`), before the next line is read.
    ``answer`` is set once the transport's write stream exists (:meth:`answer_with`); a refused
    line read before that waits for it.
    """

    def __init__(self, lines: AsyncIterator[str]) -> None:
        self._lines = lines
        self._answer: Answer | None = None
        self._ready = asyncio.Event()

    def answer_with(self, answer: Answer) -> None:
        self._answer = answer
        self._ready.set()

    def __aiter__(self) -> AnsweredLines:
        return self

    async def __anext__(self) -> str:
        from mcpkit._sdk import JSON_WHITESPACE, stdio_line_refused

        while True:
            line = await anext(self._lines)
            refused = stdio_line_refused(line)
            if refused is None:
                if line.strip(JSON_WHITESPACE):
                    return line
                continue  # a blank line is no request: nothing to answer, nothing to pass on
            await self._ready.wait()
            assert self._answer is not None
            await self._answer(*refused)
