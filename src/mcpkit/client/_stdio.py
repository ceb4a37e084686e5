"""Run a stdio MCP server as a child process we fully own.

The SDK's ``stdio_client`` frames messages well but hides what this client needs: the exit
code, the server's last stderr lines, a prompt signal when the process dies while a
grandchild keeps stdout open, and a line reader that stays linear on a 50 MB answer. This
transport keeps the SDK's message types and stream contract (so ``ClientSession`` runs on
top unchanged) and owns the process:

* the child starts a new session, so it leads its own process group; closing kills the group
  (see :mod:`mcpkit.client._procgroup`);
* stdout is split into lines without re-copying the buffer; a line that is not JSON-RPC is
  counted and logged, never fatal;
* stderr is drained all the time (a chatty server never blocks on a full pipe) and its last
  lines are kept for :class:`~mcpkit.errors.ServerExitedError`;
* a watcher notices the exit within a tenth of a second and ends the read stream, which fails
  every in-flight request at once instead of at its timeout;
* stdin is the session's write stream itself (:class:`StdinWriter`): a request waits for
  room on the pipe inside its call's deadline, so a server that stops reading fails its
  calls at their deadlines (a writer task used to block before the timeout began);
* every line read counts as a sign of life (:attr:`StdioTransport.heard`): a call that
  reaches its deadline with nothing heard since it was sent makes the server suspect (see
  :meth:`StdioTransport.expired`), and the session then decides whether it is hung.
"""

from __future__ import annotations

import asyncio
import json
import logging
import signal
import sys
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager, suppress
from pathlib import Path

import anyio
import anyio.abc
import anyio.lowlevel
import mcp_types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage

from mcpkit.client import _procgroup as procgroup
from mcpkit.client._raw import RawRequests, has_lone_surrogate
from mcpkit.client._spawn import spawn_argv
from mcpkit.client._trace import Tracer
from mcpkit.errors import CallError, ServerExitedError
from mcpkit.results import scrub_surrogates_in

logger = logging.getLogger("mcpkit.client._stdio")
stderr_logger = logging.getLogger("mcpkit.client.server_stderr")

EXIT_POLL_SECONDS = 0.05
EXIT_REPORT_WAIT = 1.0
"""How long a caller whose connection broke waits for the exit code to tell it."""
_CHUNK = 1 << 16
FORCED_CAP = 1 << 20
"""Bytes queued for a server's stdin past which a message that never waits is dropped."""


class StdioTransport:
    """One child process speaking newline-delimited JSON-RPC on stdin/stdout."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | Path | None = None,
        name: str = "stdio",
        tracer: Tracer | None = None,
        stderr_lines: int = 50,
        forward_stderr: bool = False,
        max_line_bytes: int = 512 * 1024 * 1024,
        shutdown_grace: float = 1.0,
        process: anyio.abc.Process | None = None,
    ) -> None:
        if not argv:
            raise ValueError("empty command line")
        self.argv = list(argv)
        self.env = dict(env or {})
        self.cwd = cwd
        self.name = name
        self._tracer = tracer
        self._stderr: deque[str] = deque(maxlen=stderr_lines)
        self._forward_stderr = forward_stderr
        self._max_line = max_line_bytes
        self._grace = shutdown_grace
        self.pid: int | None = None
        self.returncode: int | None = None
        self.garbage_lines = 0
        self.garbage_sample: str | None = None
        self.exited = anyio.Event()
        self._adopt = process
        self.raw: RawRequests | None = None
        """Requests beside the SDK session (see :mod:`mcpkit.client._raw`), while open."""
        self.stdin: StdinWriter | None = None
        self.hung = False
        """The server was declared hung (see :meth:`expired` and :meth:`declare_hung`)."""
        self.hung_reason: str | None = None
        """Why, in words, once :attr:`hung`."""
        self.on_hung: Callable[[], None] | None = None
        """Called once when :attr:`hung` becomes true."""
        self.heard = 0
        """Lines read from the server's stdout so far (answers, notifications, anything)."""
        self.on_silent: Callable[[], None] | None = None
        """Called when a call reached its deadline with nothing heard since it was sent."""

    def stderr_tail(self) -> list[str]:
        """The last lines the server wrote to stderr (bounded)."""
        return list(self._stderr)

    @asynccontextmanager
    async def open(
        self,
    ) -> AsyncIterator[tuple[MemoryObjectReceiveStream[SessionMessage | Exception], StdinWriter]]:
        """Spawn the server (or adopt the ``process`` given, once); yield the (read, write) stream
        pair; stop the whole group on exit."""
        proc, self._adopt = self._adopt, None
        if proc is None:
            proc = await spawn_argv(self.argv, env=self.env, cwd=self.cwd)
        self.pid = proc.pid
        read_send, read_recv = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        writer = StdinWriter(proc, read_send.close)
        self.stdin = writer
        stdout_done = anyio.Event()
        stderr_done = anyio.Event()
        try:
            async with anyio.create_task_group() as tg:
                if writer.direct:  # asyncio: raw requests are written straight to the pipe
                    self.raw = RawRequests(self.name, writer.try_write, self._tracer, watch=self)
                tg.start_soon(self._read_stdout, proc, read_send, stdout_done)
                tg.start_soon(self._read_stderr, proc, stderr_done)
                tg.start_soon(self._watch_exit, proc, read_send, stdout_done, stderr_done)
                try:
                    yield read_recv, writer
                finally:
                    with anyio.CancelScope(shield=True):
                        await self._stop(proc, writer)
                    tg.cancel_scope.cancel()
        finally:
            if self.raw is not None:
                self.raw.fail_all(CallError(f"connection to {self.name} closed"))
            with anyio.CancelScope(shield=True):
                if proc.returncode is None:
                    procgroup.signal_group(proc.pid, signal.SIGKILL)
                await self._close_pipes(proc)
                writer.close()
                for stream in (read_send, read_recv):
                    stream.close()
            procgroup.unregister(proc.pid)

    # ----- a server that stops reading ---------------------------------------------------

    def mark(self) -> tuple[int, int]:
        """Where the server stands now: bytes it took from its stdin, lines it wrote; see
        :meth:`expired`."""
        return (self.stdin.drained() if self.stdin is not None else 0, self.heard)

    def expired(self, mark: tuple[int, int]) -> None:
        """A call whose request was sent (or waited to be sent) at ``mark`` reached its deadline.

        If bytes still wait for the server's stdin and it has taken none since ``mark``, the
        server read nothing for the call's whole timeout: it stopped reading, and is hung.
        If it wrote nothing since ``mark`` either, it may be hung although its pipe still
        takes requests (a server blocked in one handler reads nothing, but the pipe holds
        about 64 KiB of requests first): ``on_silent`` is told, and the session probes it.
        A server that is only slow on this call (it answers others, or a probe) is not hung.
        """
        if self.hung or self.stdin is None or self.returncode is not None:
            return
        drained, heard = mark
        if self.stdin.queued() and self.stdin.drained() == drained:
            self.declare_hung("it stopped reading its stdin")
        elif self.heard == heard and self.on_silent is not None:
            self.on_silent()

    def declare_hung(self, why: str) -> None:
        """Mark the server hung (once), log ``why`` and tell ``on_hung``."""
        if self.hung or self.returncode is not None:
            return
        self.hung = True
        self.hung_reason = why
        logger.warning("%s is hung: %s", self.name, why)
        if self.on_hung is not None:
            self.on_hung()

    async def _read_stdout(
        self,
        proc: anyio.abc.Process,
        out: MemoryObjectSendStream[SessionMessage | Exception],
        done: anyio.Event,
    ) -> None:
        """Split stdout into lines (linear in the message size) and hand each message on."""
        assert proc.stdout is not None
        parts: list[bytes] = []
        size = 0
        try:
            while True:
                try:
                    chunk = await proc.stdout.receive(_CHUNK)
                except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                    break
                start = 0
                while True:
                    nl = chunk.find(b"\n", start)
                    if nl < 0:
                        rest = chunk[start:]
                        if size + len(rest) <= self._max_line:
                            parts.append(rest)
                        size += len(rest)
                        break
                    parts.append(chunk[start:nl])
                    line = b"".join(parts) if size + nl - start <= self._max_line else None
                    parts, size, start = [], 0, nl + 1
                    if not await self._deliver(line, out):
                        return
        finally:
            done.set()
            out.close()
            if self.raw is not None and len(self.raw):
                await self._fail_raw_on_exit()

    async def _deliver(
        self, line: bytes | None, out: MemoryObjectSendStream[SessionMessage | Exception]
    ) -> bool:
        """Parse one line and pass it on; False when nobody is listening any more."""
        if line is None:
            self._garbage(f"<line longer than {self._max_line:,} bytes dropped>")
            return True
        if not line.strip():
            return True
        self.heard += 1
        if self.raw is not None and self.raw.take(line):
            return True
        try:
            message = mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)
        except ValueError:
            scrubbed = self._scrubbed(line)
            if scrubbed is None:
                self._garbage(line[:200].decode("utf-8", "replace"))
                return True
            message = scrubbed
        try:
            await out.send(SessionMessage(message))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            return False
        return True

    def _scrubbed(self, line: bytes) -> mcp_types.JSONRPCMessage | None:
        """A message whose only fault is a lone surrogate escape, with U+FFFD in its place
        (a Python server writing a file name it decoded with ``surrogateescape`` sends one);
        None for anything else. Refusing it would leave its request unanswered until the
        timeout."""
        if not has_lone_surrogate(line):
            return None
        try:
            parsed = scrub_surrogates_in(json.loads(line))
            message = mcp_types.jsonrpc_message_adapter.validate_python(parsed, by_name=False)
        except (ValueError, RecursionError):
            return None
        logger.warning(
            "%s wrote a lone surrogate in a message; passed on with U+FFFD in its place", self.name
        )
        return message

    def _garbage(self, sample: str) -> None:
        self.garbage_lines += 1
        self.garbage_sample = self.garbage_sample or sample
        logger.warning("%s wrote a line to stdout that is not JSON-RPC (ignored): %r", self.name, sample)
        if self._tracer:
            self._tracer.line(self.name, "<-", f"<not JSON-RPC, ignored: {sample!r}>")

    def exit_error(self) -> ServerExitedError:
        """What a caller whose request died with this connection is told."""
        return ServerExitedError(self.returncode, self.stderr_tail(), detail="server closed its stdout")

    async def _fail_raw_on_exit(self) -> None:
        """stdout ended: raw requests fail once the exit code is known (or soon, without it)."""
        try:
            with anyio.move_on_after(EXIT_REPORT_WAIT):
                await self.exited.wait()
        finally:
            if self.raw is not None:
                self.raw.fail_all(self.exit_error())

    async def _read_stderr(self, proc: anyio.abc.Process, done: anyio.Event) -> None:
        """Drain stderr forever; keep its last lines."""
        assert proc.stderr is not None
        pending = b""
        try:
            while True:
                try:
                    chunk = await proc.stderr.receive(_CHUNK)
                except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                    break
                *lines, pending = (pending + chunk).split(b"\n")
                pending = pending[-4096:]
                for raw in lines[-(self._stderr.maxlen or 50) :]:
                    self._stderr_line(raw)
            if pending:
                self._stderr_line(pending)
        finally:
            done.set()

    def _stderr_line(self, raw: bytes) -> None:
        line = raw.decode("utf-8", "replace").rstrip("\r")
        self._stderr.append(line)
        stderr_logger.debug("[%s] %s", self.name, line)
        if self._forward_stderr:
            with suppress(OSError, ValueError):
                print(f"[{self.name}] {line}", file=sys.stderr, flush=True)

    async def _watch_exit(
        self,
        proc: anyio.abc.Process,
        read_send: MemoryObjectSendStream[SessionMessage | Exception],
        stdout_done: anyio.Event,
        stderr_done: anyio.Event,
    ) -> None:
        """Notice the exit (not pipe EOF: a grandchild may hold the pipes) and fail pending calls."""
        while proc.returncode is None:
            await anyio.sleep(EXIT_POLL_SECONDS)
        self.returncode = proc.returncode
        # Answers written just before the exit still count; a crash message on stderr too.
        with anyio.move_on_after(0.3):
            await stdout_done.wait()
        with anyio.move_on_after(0.2):
            await stderr_done.wait()
        self.exited.set()
        read_send.close()
        if self.raw is not None:
            self.raw.fail_all(self.exit_error())
        if self._tracer:
            self._tracer.line(self.name, "--", f"server process {proc.pid} exited with {proc.returncode}")

    async def _stop(self, proc: anyio.abc.Process, writer: StdinWriter) -> None:
        """Close stdin, give the server a moment to exit, then end the whole group (at once
        when it is hung: it would not read the closed stdin, nor act on SIGTERM)."""
        writer.close()
        if self.hung and proc.returncode is None:
            procgroup.signal_group(proc.pid, signal.SIGKILL)
        if proc.stdin is not None:
            with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                await proc.stdin.aclose()
        with anyio.move_on_after(self._grace):
            while proc.returncode is None:
                await anyio.sleep(0.01)
        await procgroup.terminate_group(proc.pid, self._grace)
        with anyio.move_on_after(self._grace):
            while proc.returncode is None:
                await anyio.sleep(0.01)
        self.returncode = proc.returncode
        self.exited.set()

    async def _close_pipes(self, proc: anyio.abc.Process) -> None:
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            if pipe is not None:
                with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                    await pipe.aclose()
        with anyio.move_on_after(self._grace):
            await proc.wait()


class StdinWriter:
    """The server's stdin as the SDK session's write stream: a request waits for room, never longer.

    A request is put on the pipe whole or not at all: while the pipe's buffer is past its
    high-water mark (the server is not reading) it waits for room, and that wait is part of
    the call, so the call's deadline ends it and the request is never sent. The old writer
    (a task draining a memory stream) waited outside every deadline: once a server stopped
    reading, a call with ``timeout=0.01`` blocked for ever in the write. Everything else (a
    cancellation notice, an answer to the server's own request) is written at once, never
    waiting, so giving up on a request cannot block either; past :data:`FORCED_CAP` queued
    bytes it is dropped (the server reads nothing anyway).

    On asyncio (``direct``) bytes go straight to the pipe transport, which also lets
    :meth:`try_write` serve raw requests and :meth:`drained` count what the server took;
    on another event loop each message is sent on the process's stream, under a lock.
    """

    def __init__(self, proc: anyio.abc.Process, broken: Callable[[], None]) -> None:
        self._proc = proc
        self._broken = broken
        self._closed = False
        self._written = 0
        stream = getattr(proc.stdin, "_stream", None)
        self._stream = stream if isinstance(stream, asyncio.StreamWriter) else None
        self._transport = self._stream.transport if self._stream is not None else None
        self._lock = anyio.Lock()
        self.direct = self._transport is not None

    def queued(self) -> int:
        """Bytes written here that the pipe has not taken yet."""
        return self._transport.get_write_buffer_size() if self._transport is not None else 0

    def drained(self) -> int:
        """Bytes the pipe has taken so far (it grows while the server reads)."""
        return self._written - self.queued()

    def _full(self, size: int) -> bool:
        assert self._transport is not None
        queued = self._transport.get_write_buffer_size()
        return bool(queued) and queued + size > self._transport.get_write_buffer_limits()[1]

    def try_write(self, data: bytes, force: bool) -> bool:
        """Write now, never waiting; False (nothing written) when closing or, unless ``force``,
        when the pipe is backed up. Serves raw requests (see :mod:`mcpkit.client._raw`)."""
        transport = self._transport
        if transport is None or self._closed or transport.is_closing():
            return False
        if force:
            if self.queued() > FORCED_CAP:
                return False
        elif self._full(len(data)):
            return False
        transport.write(data)
        self._written += len(data)
        return True

    async def send(self, item: SessionMessage, /) -> None:
        if self._closed:
            raise anyio.ClosedResourceError
        data = (item.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n").encode("utf-8")
        try:
            if self._stream is None:
                assert self._proc.stdin is not None
                async with self._lock:
                    await self._proc.stdin.send(data)
                return
            transport = self._stream.transport
            if isinstance(item.message, mcp_types.JSONRPCRequest):
                high = transport.get_write_buffer_limits()[1]
                # Past the high-water mark asyncio has paused the pipe's protocol, so drain()
                # really waits (until the server has read the buffer down to the low mark).
                while transport.get_write_buffer_size() > high and not transport.is_closing():
                    await self._stream.drain()  # raises once the pipe is broken
                    await anyio.lowlevel.checkpoint()
            elif self.queued() > FORCED_CAP:
                logger.debug("stdin backed up past %d bytes: message dropped", FORCED_CAP)
                return
            if self._closed or transport.is_closing():
                raise anyio.BrokenResourceError
            transport.write(data)
            self._written += len(data)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError) as exc:
            # The server stopped reading for good; end the read side so callers hear about it.
            self._broken()
            raise anyio.BrokenResourceError from exc

    def close(self) -> None:
        self._closed = True

    async def aclose(self) -> None:
        self.close()

    async def __aenter__(self) -> StdinWriter:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self.close()
