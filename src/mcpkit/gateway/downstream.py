"""One downstream server, supervised: started, watched, restarted with backoff, given up on.

The gateway owns the restart policy (rather than the client session's own restart option)
because it must *act* on each step: a restart re-lists the tools, a crash loop makes the
downstream unhealthy so its tools leave every client's list, and each change is broadcast
as ``notifications/tools/list_changed``. One process per downstream serves every client;
a semaphore caps the calls running on it at once.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Literal

import anyio
import anyio.abc

from mcpkit.client import (
    CallError,
    CallTimeoutError,
    ClientHandlers,
    RawAnswer,
    ServerConfig,
    ServerExitedError,
    Session,
    SessionOptions,
)
from mcpkit.gateway.config import GatewayConfig
from mcpkit.gateway.errors import DownstreamUnavailableError
from mcpkit.jsonrpc import JsonRpcError

logger = logging.getLogger("mcpkit.gateway")

State = Literal["starting", "ready", "restarting", "failed", "unhealthy", "stopped"]
WATCH_SECONDS = 0.1

ChangeHandler = Callable[["Downstream"], Awaitable[None]]
NotificationRelay = Callable[["Downstream", str, dict[str, Any]], Awaitable[None]]


class Downstream:
    """A supervised connection to one configured server."""

    def __init__(
        self,
        server: ServerConfig,
        config: GatewayConfig,
        *,
        on_change: ChangeHandler,
        on_notification: NotificationRelay,
        handlers: ClientHandlers | None = None,
        process: anyio.abc.Process | None = None,
    ) -> None:
        self.name = server.name
        self._process = process  # started ahead by the gateway; adopted by the first connection
        self.server = server
        self.config = config
        self.state: State = "starting"
        self.error: str | None = None
        self.tools: list[dict[str, Any]] = []
        self.capabilities: dict[str, Any] = {}
        self.server_info: dict[str, Any] = {}
        self.protocol_version: str | None = None
        self.restarts = 0
        self.ready_seconds: float | None = None
        self.pid: int | None = None
        self._crashes: deque[float] = deque()
        self._session: Session | None = None
        self._on_change = on_change
        self._on_notification = on_notification
        self._handlers = handlers
        self._limit = anyio.Semaphore(config.concurrency(self.name))
        self._running = 0
        self._settled = anyio.Event()  # the first attempt answered or failed
        self._changed = anyio.Event()  # wakes waiters when the state moves
        self._relist = anyio.Event()
        self._broken = anyio.Event()
        self._stop = anyio.Event()

    # -- what the gateway reads ------------------------------------------------------------

    @property
    def healthy(self) -> bool:
        return self.state == "ready"

    @property
    def listed(self) -> bool:
        """Whether its tools are in the lists clients see (kept through a short restart)."""
        return self.state in ("ready", "restarting") and bool(self.tools)

    @property
    def listening(self) -> bool:
        """Whether a 2026 server's ``subscriptions/listen`` stream is open (its changes heard)."""
        session = self._session
        return session is not None and session.listening

    @property
    def in_flight(self) -> int:
        return self._running

    def status(self) -> dict[str, Any]:
        return {
            "server": self.name,
            "transport": self.server.kind,
            "state": self.state,
            "tools": len(self.tools),
            "restarts": self.restarts,
            "in_flight": self._running,
            "max_concurrent": self.config.concurrency(self.name),
            "pid": self.pid,
            "ready_seconds": None if self.ready_seconds is None else round(self.ready_seconds, 3),
            "error": self.error,
        }

    async def wait_settled(self) -> None:
        """Until the first start attempt has answered or failed."""
        await self._settled.wait()

    # -- running ---------------------------------------------------------------------------

    async def run(self) -> None:
        """Keep the server up until :meth:`stop`; returns when stopped or given up on."""
        started = time.perf_counter()
        while not self._stop.is_set():
            if self.restarts and self.state not in ("unhealthy", "failed"):
                self.state = "restarting"  # one that never started stays "failed" while retried
                self._wake()
            try:
                await self._hold_one(started)
            except CallError as exc:
                self.error = str(exc)
                logger.warning("%s: %s", self.name, exc)
            except Exception as exc:  # one server's surprise must not end the gateway
                self.error = f"internal error {type(exc).__name__}: {exc}"
                logger.exception("%s: connection failed unexpectedly", self.name)
            finally:
                self._session = None
                self.pid = None
            if self._stop.is_set():
                break
            first = not self._settled.is_set()
            self._settled.set()
            looping = not self._note_crash()
            if looping and self.state != "unhealthy":
                self.state = "unhealthy"
                logger.error(
                    "%s: crash loop (%d failures within %g s); marked unhealthy, its tools are withdrawn%s",
                    self.name,
                    len(self._crashes),
                    self.config.supervision.window,
                    "" if self.server.kind == "stdio" else "; still retrying the URL",
                )
                await self._moved()
            if looping and self.server.kind == "stdio":
                return  # a local process in a crash loop is not started again
            if not looping:
                self.state = "failed" if first or self.state == "failed" else "restarting"
                await self._moved()
            delay = min(
                self.config.supervision.max_backoff,
                self.config.supervision.backoff * 2 ** max(0, len(self._crashes) - 1),
            )
            with anyio.move_on_after(delay):
                await self._stop.wait()
            if not self._stop.is_set():
                self.restarts += 1
                logger.info("%s: restarting (restart %d)", self.name, self.restarts)
        self.state = "stopped"
        self._settled.set()
        self._wake()

    def _note_crash(self) -> bool:
        """Record a failure; False when the failures inside the window make a crash loop."""
        now = time.monotonic()
        self._crashes.append(now)
        window = self.config.supervision.window
        while self._crashes and now - self._crashes[0] > window:
            self._crashes.popleft()
        return len(self._crashes) <= self.config.supervision.max_restarts

    async def _hold_one(self, started: float) -> None:
        """One connection: open, list, serve until the process dies or we are told to stop."""
        self._broken = anyio.Event()
        options = SessionOptions(
            timeout=self.config.call_timeout,
            connect_timeout=self.config.connect_timeout,
            raise_on_error=False,
            on_notification=self._notified,
            handlers=self._handlers,
            on_hung=self._hung,
            protocol=self.config.protocols.get(self.name, "2025-11-25"),  # type: ignore[arg-type]
            listen=True,  # on the stateless wire its list changes come on a listen stream
        )
        async with Session(self.server, options, process=self._take_process()) as session:
            try:  # the start is bounded as a whole: a server that never lists its tools is not ready
                with anyio.fail_after(self.config.connect_timeout):
                    tools = await session.list_tools()
            except TimeoutError:
                raise DownstreamUnavailableError(
                    f"{self.name}: no answer to tools/list within {self.config.connect_timeout:g} s"
                ) from None
            self._session = session
            self.pid = session.pid
            self.tools = [dict(t) for t in tools]
            self.capabilities = session.capabilities
            self.server_info = session.server_info
            self.protocol_version = session.protocol_version
            self.error = None
            if self.ready_seconds is None:
                self.ready_seconds = time.perf_counter() - started
            self.state = "ready"
            self._settled.set()
            await self._moved()
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._relister, session)
                await self._watch(session)
                tg.cancel_scope.cancel()
            if not self._stop.is_set() and not session.hung:
                code = session.returncode
                tail = " | ".join(line.strip() for line in session.stderr_tail()[-3:])
                self.error = f"exited with code {code}" + (f"; last stderr: {tail}" if tail else "")
                logger.warning("%s: %s", self.name, self.error)

    def _take_process(self) -> anyio.abc.Process | None:
        process, self._process = self._process, None
        return process

    async def _watch(self, session: Session) -> None:
        """Return when the process exits, the connection breaks, or stop is asked."""
        while not self._stop.is_set() and not self._broken.is_set():
            if session.returncode is not None:
                return
            with anyio.move_on_after(WATCH_SECONDS):
                await self._stop.wait()

    def _hung(self, session: Session) -> None:
        """The session declared the server hung (it stopped reading its stdin, or its calls
        kept passing their deadlines with nothing answered, on any front: see
        :mod:`mcpkit.client._session`): a stdio server is restarted like one that exited, a
        URL reconnected (a hung server used to keep its slot, and the tools of a server that
        would never answer again stayed listed, its calls all timing out)."""
        if session is self._session and not self._broken.is_set():
            why = session.hung_reason or "no answers"
            self.error = f"hung: {why}"
            action = "restarting it" if self.server.kind == "stdio" else "reconnecting"
            logger.warning("%s: hung (%s); %s", self.name, why, action)
            self._broken.set()

    async def _relister(self, session: Session) -> None:
        """Re-list the tools whenever the downstream says its list changed."""
        while True:
            await self._relist.wait()
            self._relist = anyio.Event()
            try:
                self.tools = [dict(t) for t in await session.list_tools(refresh=True)]
            except CallError as exc:
                logger.warning("%s: re-listing tools failed: %s", self.name, exc)
                continue
            logger.info("%s: tool list changed, now %d tools", self.name, len(self.tools))
            await self._moved()

    async def _notified(self, method: str, params: dict[str, Any]) -> None:
        if method == "notifications/tools/list_changed":
            self._relist.set()
        await self._on_notification(self, method, params)

    async def _moved(self) -> None:
        self._wake()
        await self._on_change(self)

    def _wake(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    def stop(self) -> None:
        self._stop.set()

    # -- calls -----------------------------------------------------------------------------

    async def notify(self, method: str, params: Mapping[str, Any] | None = None) -> None:
        """Send a notification when the server is up; one that is not misses nothing it keeps
        (a restarted server asks afresh)."""
        session = self._session
        if self.state != "ready" or session is None:
            return
        try:
            await session.notify(method, params)
        except CallError as exc:
            logger.debug("%s: %s not delivered: %s", self.name, method, exc)

    async def _ready_session(self) -> Session:
        """The live session, waiting through a restart (the caller's deadline bounds the wait)."""
        while not self._stop.is_set():
            if self.state in ("starting", "restarting"):
                await self._changed.wait()
            elif self.state == "ready" and self._session is not None and self._ending(self._session):
                self._broken.set()  # exited since the last watch, or hung: wait for the restart
                await self._changed.wait()
            else:
                break
        session = self._session
        if self.state != "ready" or session is None:
            raise self._unavailable()
        return session

    def _unavailable(self, state: str | None = None) -> DownstreamUnavailableError:
        reason = f": {self.error}" if self.error else ""
        return DownstreamUnavailableError(f"server {self.name!r} is {state or self.state}{reason}")

    @staticmethod
    def _dead(session: Session) -> bool:
        return session.server.kind == "stdio" and session.returncode is not None

    def _ending(self, session: Session) -> bool:
        """Whether this connection is over: its process exited, or it was found hung (its
        restart or reconnection is under way)."""
        return self._broken.is_set() or session.hung or self._dead(session)

    async def request(
        self, method: str, params: Mapping[str, Any], timeout: float | None = None
    ) -> dict[str, Any]:
        """Send one request, at most ``max_concurrent`` at a time; raises CallError subclasses.

        One deadline (``timeout``, else ``call_timeout``) bounds the whole call: waiting
        through a restart, waiting for a call slot, writing, and waiting for the answer. A
        call queued behind a stuck server's slots used to wait for each earlier call's own
        timeout first (the 1000th answered after minutes); now it ends at its own deadline.
        """
        seconds = self.config.call_timeout if timeout is None else timeout
        deadline = anyio.current_time() + seconds
        with anyio.move_on_after(seconds):
            session = await self._ready_session()
            async with self._limit:
                self._running += 1
                try:
                    left = max(deadline - anyio.current_time(), 1e-3)
                    return await self._exchange(session, method, params, left)
                except CallError as exc:
                    told = self._told(session, exc)
                    if told is exc:
                        raise
                    assert isinstance(told, CallError)
                    raise told from None
                finally:
                    self._running -= 1
        if self.state in ("starting", "restarting"):
            raise self._unavailable()  # the deadline came during a restart: say so
        raise CallTimeoutError(method, seconds)

    async def answer_input(
        self, method: str, params: Mapping[str, Any], result: Mapping[str, Any]
    ) -> dict[str, Any]:
        """A 2026 server's ``InputRequiredResult`` for ``method`` finished: its questions answered
        through this server's handlers (the client of the call, see :mod:`mcpkit.gateway.asking`)
        and the call retried until its final result. Each round has the call timeout; the
        user's time to answer is the handlers' to bound."""
        session = self._session
        if self.state != "ready" or session is None:
            raise self._unavailable()
        return dict(await session.answer_input(method, params, result, timeout=self.config.call_timeout))

    async def _exchange(
        self, session: Session, method: str, params: Mapping[str, Any], seconds: float | None
    ) -> dict[str, Any]:
        """One request and its answer: on stdio beside the SDK session (a quarter of a
        millisecond less, the same answers and errors), else through it.

        A request asking for progress goes through the session: its progress notifications
        travel that way, and a raw answer would overtake the last of them."""
        if self.config.fast_lane and session.server.kind == "stdio" and not _wants_progress(params):
            answer = _Answer()
            sent = session.send_raw(method, params, answer.set, timeout=seconds)
            if sent is not None:
                try:
                    return await answer.get()
                except anyio.get_cancelled_exc_class():
                    session.cancel_raw(sent, "cancelled by the client")
                    raise
        return await session.request(method, params, timeout=seconds)

    # -- the fast lane (see mcpkit.gateway.stdio_front) -------------------------------------

    def send_raw(
        self, method: str, params: Mapping[str, Any], answer: Callable[[RawAnswer], None]
    ) -> int | None:
        """Send a request beside the SDK session when that can be done at once: the server is
        up, on stdio, its stdin not backed up, and a call slot free. None otherwise (nothing
        sent: use :meth:`request`, which waits for a slot or a restart). ``answer`` is called
        exactly once, unless the request is cancelled with :meth:`cancel_raw`."""
        session = self._session
        if self.state != "ready" or session is None or self._ending(session):
            return None
        try:
            self._limit.acquire_nowait()
        except anyio.WouldBlock:
            return None
        self._running += 1

        def done(value: RawAnswer) -> None:
            self._release()
            answer(self._told(session, value))

        request_id = session.send_raw(method, params, done, timeout=self.config.call_timeout)
        if request_id is None:
            self._release()
        return request_id

    def cancel_raw(self, request_id: int, reason: str | None = None) -> None:
        """Cancel a request from :meth:`send_raw` on the server; its ``answer`` is not called."""
        session = self._session
        if session is not None and session.cancel_raw(request_id, reason):
            self._release()

    def _told(self, session: Session, value: RawAnswer) -> RawAnswer:
        """What the caller of a request on ``session`` is told of its outcome ``value``, the same
        whichever way the request went (:meth:`request`, or :meth:`send_raw`'s callback); the
        connection marked for a restart or reconnection where the outcome says it is over."""
        if not isinstance(value, CallError) or isinstance(value, JsonRpcError | CallTimeoutError):
            return value  # an answer, the server's error, or a slow server: the connection is fine
        if isinstance(value, ServerExitedError):
            self._broken.set()
            # ended by its restart as hung, not a crash of its own
            return self._unavailable("restarting") if session.hung else value
        if session is not self._session or self._broken.is_set():
            return self._unavailable("restarting")  # its connection was ended
        if self.server.kind != "stdio":
            self._broken.set()  # a URL that stopped answering: reconnect with backoff
        return value

    def _release(self) -> None:
        self._running -= 1
        self._limit.release()


class _Answer:
    """The answer of one raw request, for a task that waits for it."""

    def __init__(self) -> None:
        self._value: RawAnswer | None = None
        self._arrived = anyio.Event()

    def set(self, value: RawAnswer) -> None:
        self._value = value
        self._arrived.set()

    async def get(self) -> dict[str, Any]:
        """The result; an error answer, a timeout or an exit raised as ``request`` raises them."""
        await self._arrived.wait()
        value = self._value
        if isinstance(value, Exception):
            raise value
        assert value is not None
        return value


def _wants_progress(params: Mapping[str, Any]) -> bool:
    meta = params.get("_meta")
    return isinstance(meta, Mapping) and "progressToken" in meta
