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
  every in-flight request at once instead of at its timeout.
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

    def stderr_tail(self) -> list[str]:
        """The last lines the server wrote to stderr (bounded)."""
        return list(self._stderr)

    @asynccontextmanager
    async def open(
        self,
    ) -> AsyncIterator[
        tuple[MemoryObjectReceiveStream[SessionMessage | Exception], MemoryObjectSendStream[SessionMessage]]
    ]:
        """Spawn the server (or adopt the ``process`` given, once); yield the (read, write) stream
        pair; stop the whole group on exit."""
        proc, self._adopt = self._adopt, None
        if proc is None:
            proc = await spawn_argv(self.argv, env=self.env, cwd=self.cwd)
        self.pid = proc.pid
        read_send, read_recv = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        write_send, write_recv = anyio.create_memory_object_stream[SessionMessage](0)
        stdout_done = anyio.Event()
        stderr_done = anyio.Event()
        try:
            async with anyio.create_task_group() as tg:
                writer = _stdin_writer(proc)
                if writer is not None:  # asyncio: raw requests are written straight to the pipe
                    self.raw = RawRequests(self.name, writer, self._tracer)
                tg.start_soon(self._read_stdout, proc, read_send, stdout_done)
                tg.start_soon(self._read_stderr, proc, stderr_done)
                tg.start_soon(self._write_stdin, proc, write_recv, read_send)
                tg.start_soon(self._watch_exit, proc, read_send, stdout_done, stderr_done)
                try:
                    yield read_recv, write_send
                finally:
                    with anyio.CancelScope(shield=True):
                        await self._stop(proc, write_send, write_recv)
                    tg.cancel_scope.cancel()
        finally:
            if self.raw is not None:
                self.raw.fail_all(CallError(f"connection to {self.name} closed"))
            with anyio.CancelScope(shield=True):
                if proc.returncode is None:
                    procgroup.signal_group(proc.pid, signal.SIGKILL)
                await self._close_pipes(proc)
                for stream in (read_send, read_recv, write_send, write_recv):
                    stream.close()
            procgroup.unregister(proc.pid)

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

    async def _write_stdin(
        self,
        proc: anyio.abc.Process,
        messages: MemoryObjectReceiveStream[SessionMessage],
        read_send: MemoryObjectSendStream[SessionMessage | Exception],
    ) -> None:
        assert proc.stdin is not None
        try:
            async for item in messages:
                data = item.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                await proc.stdin.send(data.encode("utf-8"))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            # The server stopped reading; end the read side so callers hear about it.
            read_send.close()

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

    async def _stop(
        self,
        proc: anyio.abc.Process,
        write_send: MemoryObjectSendStream[SessionMessage],
        write_recv: MemoryObjectReceiveStream[SessionMessage],
    ) -> None:
        """Close stdin, give the server a moment to exit, then end the whole group."""
        write_send.close()
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
        write_recv.close()

    async def _close_pipes(self, proc: anyio.abc.Process) -> None:
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            if pipe is not None:
                with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                    await pipe.aclose()
        with anyio.move_on_after(self._grace):
            await proc.wait()


def _stdin_writer(proc: anyio.abc.Process) -> Callable[[bytes, bool], bool] | None:
    """How raw requests reach the server's stdin: written to asyncio's pipe transport at once,
    never waiting. Unless ``force``d, a write that would take the buffer past its high-water
    mark (the server is not reading) or meet a closing pipe is not made, and says so with
    False. None when the stream is not asyncio's (no raw requests then)."""
    stream = getattr(proc.stdin, "_stream", None)
    if not isinstance(stream, asyncio.StreamWriter):
        return None
    transport = stream.transport

    def write_now(data: bytes, force: bool) -> bool:
        if transport.is_closing():
            return False
        if not force:
            queued = transport.get_write_buffer_size()
            if queued and queued + len(data) > transport.get_write_buffer_limits()[1]:
                return False
        transport.write(data)
        return True

    return write_now
