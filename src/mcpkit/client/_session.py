"""Session: one robust connection to one MCP server, and ``connect()`` to open it.

Built on the SDK: its ``ClientSession`` answers server requests (ping, roots, sampling) and
tracks the negotiated version; its ``JSONRPCDispatcher`` correlates requests, sends
``notifications/cancelled`` on timeout or cancellation and drops the pending entry on every
path (so a timed-out call leaves nothing behind). On top of it this module adds what a client
that ignored ``isError``, kept only the first content item and leaked timed-out requests was
missing: results kept whole (:class:`Outcome`), ``isError`` raised as
:class:`ToolError`, a crash reported at once as :class:`ServerExitedError`, restart on failure,
and a process-group kill on close (see :mod:`mcpkit.client._stdio`).

One deadline bounds each call, from waiting for a restart through writing (a stdio server
that stops reading its stdin no longer holds a caller past it) to reading the answer.

Health is driven by those deadlines. A server that read nothing of its stdin for a whole
call's timeout is hung. A call that reaches its deadline with nothing at all heard from the
server since it was sent (no answer, no notification, on any of its calls) makes it suspect:
the session then probes it (``ping``; ``server/discover`` on the stateless wire) for half a
call timeout, and a server that does not answer that either is declared hung, so within one
call timeout of the first missed deadline however few calls follow
(:attr:`Session.hung`, ``SessionOptions.on_hung``). A server that is only slow on one call
still answers the probe and is left alone.

Requests go through the dispatcher as raw dicts rather than through the SDK's typed
``call_tool``: the typed path rejects results it cannot model (a new content type, a
malformed item) and we want to keep and describe those, and ``mcpkit check`` needs the
exact wire data to grade it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any, Literal, cast, overload

import anyio
import anyio.abc
import httpx2
import mcp_types
from mcp.client._input_required import InputRequiredRoundsExceededError, run_input_required_driver
from mcp.client._probe import negotiate_auto
from mcp.client.session import ClientRequestContext
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.client.subscriptions import listen as sdk_listen
from mcp.shared.dispatcher import CallOptions
from mcp.shared.exceptions import MCPError
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher
from mcp_types.methods import is_input_required
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION, MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError as PydanticValidationError

from mcpkit import __version__, telemetry
from mcpkit import _sdk as sdk
from mcpkit._sdk import SDK_JSON_PARSE_PREFIX, SDK_SSE_TOO_LARGE, is_sdk_closed, is_sdk_timeout
from mcpkit.client._config import ServerConfig, resolve_target
from mcpkit.client._handlers import ClientHandlers
from mcpkit.client._http import (
    HTTP_FAILURE,
    BodyLimitError,
    HttpGuard,
    HttpProblem,
    describe_http_exception,
)
from mcpkit.client._memory import serve_in_memory
from mcpkit.client._options import (
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_TIMEOUT,
    Restart,
    SessionOptions,
)
from mcpkit.client._outcome import Outcome
from mcpkit.client._raw import AnswerHandler
from mcpkit.client._stdio import EXIT_REPORT_WAIT, StdioTransport
from mcpkit.client._trace import (
    TracedReadStream,
    TracedWriteStream,
    redact_env,
    redact_headers,
    secrets_of,
)
from mcpkit.client._tracecontext import RequestSpans
from mcpkit.client._wire import CallToolResult, InitializeResult, ListToolsResult, Result, Tool
from mcpkit.errors import (
    CallError,
    CallTimeoutError,
    ConnectError,
    HttpError,
    ResponseTooLargeError,
    ServerExitedError,
    ToolError,
)
from mcpkit.jsonrpc import JsonRpcError

logger = logging.getLogger("mcpkit.client")

__all__ = ["DEFAULT_CONNECT_TIMEOUT", "DEFAULT_TIMEOUT", "UNSET", "Session", "SessionOptions", "connect"]


TOOLS_CHANGED = "notifications/tools/list_changed"
DEADLINE_SLACK = 0.05
"""Seconds before a call's deadline within which a cancellation from outside counts as that
deadline (a caller that bounds the call by the same deadline, as the gateway does, cancels it
a moment before the call's own scope would)."""


class _Unset:
    """Marks "not given" where None already means "no timeout"."""


UNSET = _Unset()


class _Link:
    """One live connection: the SDK session, its dispatcher and (stdio) its process."""

    def __init__(self, kind: str, transport: StdioTransport | None) -> None:
        self.kind = kind
        self.transport = transport
        self.dispatcher: JSONRPCDispatcher[Any] | None = None
        self.client: Any = None  # the SDK's ClientSession (see _sdk.declaring_session)
        self.init: dict[str, Any] = {}
        self.discover: dict[str, Any] | None = None
        """The ``server/discover`` answer on a stateless (2026-07-28) link, else None."""
        self.stateless: str | None = None
        """The stateless revision this link speaks, or None on the handshake wire."""
        self.init_seconds = 0.0
        self.stop = anyio.Event()
        self.finished = anyio.Event()
        self.listening = False  # a subscriptions/listen stream of this link is acknowledged
        self.opening = "initialize"
        """The request that opens this link, as sent: ``initialize`` or ``server/discover``."""
        self.answered = 0
        """Answers received on a link without a process (HTTP): its sign of life."""
        self.suspect = anyio.Event()
        """Set when a call reached its deadline with nothing heard since it was sent."""
        self.hung: str | None = None
        """Why the server was declared hung, once it was."""

    @property
    def version(self) -> str:
        if self.stateless is not None:
            return self.stateless
        return str(self.init.get("protocolVersion", LATEST_HANDSHAKE_VERSION))

    def mark(self) -> tuple[int, int]:
        """Where the server stands now, for :meth:`expired`."""
        return self.transport.mark() if self.transport is not None else (0, self.answered)

    def expired(self, mark: tuple[int, int]) -> None:
        """A call sent at ``mark`` reached its deadline: suspect the server if nothing was heard since."""
        if self.transport is not None:
            self.transport.expired(mark)
        elif self.hung is None and self.answered == mark[1]:
            self.suspect.set()

    @property
    def hello(self) -> dict[str, Any]:
        """What the server said of itself: its ``initialize`` or its ``server/discover`` answer."""
        return self.discover if self.discover is not None else self.init

    def options(self, timeout: float | None) -> CallOptions:
        opts: CallOptions = {}
        if self.kind in ("http", "sse"):
            opts["headers"] = {MCP_PROTOCOL_VERSION_HEADER: self.version}
        if timeout is not None:
            opts["timeout"] = timeout
        return opts

    def prepare(
        self, method: str, params: Mapping[str, Any] | None, timeout: float | None
    ) -> tuple[Mapping[str, Any] | None, CallOptions]:
        """``params`` and call options as this link's wire wants them: on the stateless wire every
        request carries the ``_meta`` envelope (version, client info, capabilities) the SDK stamps."""
        opts = self.options(timeout)
        if self.stateless is None or self.client is None:
            return params, opts
        return sdk.stamp_request(self.client, method, params, opts), opts


class Session:
    """A connection to one server. Open it with :func:`connect`; calls are safe to run concurrently.

    ``client_info`` is the ``clientInfo`` sent in ``initialize`` (default: mcpkit's own), so a
    caller can present itself as a given client; ``on_notification`` receives every server
    notification as ``(method, params)`` (a gateway relays ``tools/list_changed`` and progress).
    ``process`` is a running child of ``server.command`` from :func:`mcpkit.client.spawn`, to
    adopt for the first connection instead of starting one.
    """

    def __init__(
        self,
        server: ServerConfig,
        options: SessionOptions | None = None,
        *,
        process: anyio.abc.Process | None = None,
    ) -> None:
        options = options or SessionOptions()
        self.server = server
        self.options = options
        self._process = process
        self.client_info = dict(options.client_info or {"name": "mcpkit", "version": __version__})
        self._on_notification = options.on_notification
        self.timeout = server.timeout if server.timeout is not None else options.timeout
        # One timeout bounds everything: start-up and initialize too, unless told otherwise.
        connect_timeout = options.connect_timeout
        if connect_timeout is None:
            connect_timeout = self.timeout if self.timeout is not None else DEFAULT_CONNECT_TIMEOUT
        self.connect_timeout = connect_timeout
        self.max_body = options.max_body
        self.handlers = options.handlers or ClientHandlers()
        restart = options.restart if server.restart is None else server.restart
        if restart not in ("never", "on-failure"):
            raise ValueError(f"restart must be 'never' or 'on-failure', not {restart!r}")
        self.restart: Restart = cast(Restart, restart)
        self.max_restarts = options.max_restarts
        self.backoff = options.backoff
        self.max_backoff = options.max_backoff
        self.raise_on_error = options.raise_on_error
        self.restarts = 0
        self._tracer = options.tracer
        if self._tracer is not None:
            self._tracer = self._tracer.with_secrets(secrets_of(server.env, server.headers))
        self._forward_stderr = options.forward_stderr
        self._grace = options.shutdown_grace
        self._tg: anyio.abc.TaskGroup | None = None
        self._link: _Link | None = None
        self._ready = anyio.Event()
        self._dead: CallError | None = None
        self._closing = False
        self._tools: list[Tool] | None = None
        self._tools_until: float | None = None  # monotonic end of the list's ttlMs, if it gave one
        self._tools_changes = 0  # change notices heard: a list fetched across one is not kept
        self._inflight = 0
        self._http_guard: HttpGuard | None = None
        self._spans = RequestSpans()  # each request a span: under the caller's, or this session's trace

    # ----- lifecycle -------------------------------------------------------------------

    async def __aenter__(self) -> Session:
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        try:
            self._link = await self._open_any()
            self._ready.set()
            self._tg.start_soon(self._supervise)
        except BaseException:
            tg, self._tg = self._tg, None
            await _close_group(tg)
            raise
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the connection and end the server's whole process group (idempotent)."""
        if self._tg is None:
            return
        self._closing = True
        if self._link is not None:
            self._link.stop.set()
        tg, self._tg = self._tg, None
        if self._link is not None:
            # Shielded: a cancelled or Ctrl-C'd caller must still wait for the group to be killed.
            with anyio.move_on_after(self._grace * 4 + 2, shield=True):
                await self._link.finished.wait()
        await _close_group(tg)
        if self._dead is None:
            self._dead = CallError("session closed")

    async def _open_any(self) -> _Link:
        """Open a link with the configured transport; ``auto`` HTTP falls back from streamable to SSE."""
        kind = self.server.kind
        if kind in ("stdio", "memory", "sse") or self.server.transport == "http":
            return await self._start_link(kind)
        try:
            return await self._start_link("http")
        except HttpError as first:
            # Only an endpoint without streamable HTTP (a 4xx such as 404/405 to the first POST,
            # spec "Backwards Compatibility") may be an old SSE server; anything else is the answer.
            if first.kind != "status" or first.status not in (400, 404, 405):
                raise
            logger.warning(
                "%s: no streamable HTTP here (POST answered HTTP %s); trying the legacy SSE transport",
                self.server.url,
                first.status,
            )
            try:
                return await self._start_link("sse")
            except ConnectError as second:
                raise ConnectError(f"{first}; the legacy SSE transport failed too: {second}") from second

    async def _start_link(self, kind: str) -> _Link:
        assert self._tg is not None
        link: _Link = await self._tg.start(self._run_link, kind)
        return link

    async def _run_link(self, kind: str, *, task_status: anyio.abc.TaskStatus[_Link]) -> None:
        """Own one connection for its whole life (anyio scopes must close in the task that opened them)."""
        transport = self._stdio() if kind == "stdio" else None
        link = _Link(kind, transport)
        if transport is not None:
            transport.on_hung = lambda: self._on_hung(link)
            transport.on_silent = lambda: link.suspect.set()
        failure: CallError | None = None
        started = False
        try:
            async with AsyncExitStack() as stack:
                try:
                    read, write = await stack.enter_async_context(self._streams(kind, transport))
                    if self._tracer is not None:
                        read = TracedReadStream(read, self._tracer, self.server.name)
                        write = TracedWriteStream(write, self._tracer, self.server.name)
                    link.dispatcher = JSONRPCDispatcher(read, write)
                    link.client = sdk.declaring_session()(
                        dispatcher=link.dispatcher,
                        client_info=mcp_types.Implementation.model_validate(self.client_info),
                        list_roots_callback=self.handlers.list_roots,
                        sampling_callback=self.handlers.create_message,
                        elicitation_callback=self.handlers.elicit,
                        message_handler=self._message_handler,
                        declared=self._declared,
                        handshake=lambda: self._initialize(link),
                    )
                    await stack.enter_async_context(link.client)
                    await self._negotiate(link)
                except Exception as exc:
                    # Raised here it would leave wrapped in the transport's task-group error;
                    # unwind the transport first, then raise it plain below.
                    failure = exc if isinstance(exc, CallError) else await self._connect_error(link, exc)
                    failure.__cause__ = exc
                else:
                    async with anyio.create_task_group() as watch:
                        if transport is not None:
                            watch.start_soon(self._stop_on_exit, transport, link)
                        if self.timeout is not None:
                            watch.start_soon(self._health, link, self.timeout)
                        if self.options.listen and link.stateless is not None:
                            watch.start_soon(self._listen, link)
                        task_status.started(link)
                        started = True
                        await link.stop.wait()
                        watch.cancel_scope.cancel()
        except Exception as exc:
            if failure is not None:
                raise failure from None
            if not started:
                raise await self._connect_error(link, _leaf(exc)) from exc
            # A failure after start belongs to the calls (they see the closed connection).
            logger.debug("%s: connection ended with an error", self.server.name, exc_info=True)
        finally:
            link.stop.set()
            link.finished.set()
        if failure is not None:
            raise failure
        if not started:
            raise ConnectError(f"{self.server.name}: connection closed during the handshake")

    def _stdio(self) -> StdioTransport:
        return StdioTransport(
            self.server.command,
            env=self.server.env,
            cwd=self.server.cwd,
            name=self.server.name,
            tracer=self._tracer,
            forward_stderr=self._forward_stderr,
            shutdown_grace=self._grace,
            process=self._take_process(),
        )

    def _take_process(self) -> anyio.abc.Process | None:
        """The process given to the constructor, for the first connection only (a restart
        spawns afresh)."""
        process, self._process = self._process, None
        return process

    @asynccontextmanager
    async def _streams(self, kind: str, transport: StdioTransport | None) -> AsyncIterator[tuple[Any, Any]]:
        """The (read, write) stream pair of one transport."""
        if kind == "memory":
            if self._tracer:
                self._tracer.line(
                    self.server.name, "--", f"serve {type(self.server.app).__name__} in process"
                )
            async with serve_in_memory(self.server.app, grace=self._grace) as streams:
                yield streams
            return
        if transport is not None:
            if self._tracer:
                self._tracer.line(
                    self.server.name, "--", f"spawn {self.server.command} env={redact_env(self.server.env)}"
                )
            async with transport.open() as streams:
                yield streams
            return
        assert self.server.url is not None
        if self._tracer:
            headers = redact_headers(self.server.headers)
            self._tracer.line(self.server.name, "--", f"connect {kind} {self.server.url} headers={headers}")
        guard = self._http_guard = HttpGuard(max_body=self.max_body, timeout=self.connect_timeout)

        def guarded_client(
            headers: dict[str, str] | None = None,
            timeout: httpx2.Timeout | None = None,
            auth: httpx2.Auth | None = None,
        ) -> httpx2.AsyncClient:
            # No read timeout: each request is bounded by its own timeout (the dispatcher
            # cancels it, and the guard then closes its stream); a listen stream may idle.
            limits = httpx2.Timeout(self.connect_timeout, read=None)
            return guard.install(httpx2.AsyncClient(headers=headers, timeout=limits, auth=auth))

        if kind == "sse":
            async with sse_client(
                self.server.url,
                headers=dict(self.server.headers),
                timeout=self.connect_timeout,
                sse_read_timeout=self.timeout or DEFAULT_TIMEOUT,
                httpx_client_factory=guarded_client,
            ) as sse_streams:
                yield sse_streams
            return
        async with (
            guarded_client(headers=dict(self.server.headers)) as http,
            streamable_http_client(
                self.server.url, http_client=http, max_sse_event_size=self.max_body
            ) as http_streams,
        ):
            yield http_streams

    def _declared(self, version: str) -> mcp_types.ClientCapabilities:
        """The capabilities this client declares on ``version``'s wire (see :class:`ClientHandlers`)."""
        stateless = version in MODERN_PROTOCOL_VERSIONS
        return mcp_types.ClientCapabilities.model_validate(self.handlers.capabilities(stateless))

    async def _negotiate(self, link: _Link) -> None:
        """Pick the wire as ``options.protocol`` says: the handshake, the stateless wire, or (``auto``)
        the SDK's own negotiation: ``server/discover`` first, the handshake when the server
        shows no stateless revision."""
        protocol = self.options.protocol
        if protocol in HANDSHAKE_PROTOCOL_VERSIONS:
            await self._initialize(link)
            return
        started = time.perf_counter()
        link.opening = "server/discover"  # auto too: the handshake follows only if it is refused
        with anyio.fail_after(self.connect_timeout):
            if protocol == "auto":
                await negotiate_auto(link.client)
            else:
                await self._discover(link)
        if link.client.discover_result is None:
            return  # the handshake ran (auto fell back to it): _initialize kept its answer
        link.init_seconds = time.perf_counter() - started
        link.discover = dict(link.client.discovered or {})
        link.stateless = link.client.protocol_version

    async def _discover(self, link: _Link) -> None:
        """``server/discover`` only (``--protocol 2026-07-28``): a server without it is refused in one line."""
        try:
            await link.client.discover()
        except (MCPError, RuntimeError, PydanticValidationError) as exc:
            if isinstance(exc, MCPError) and (_http_error(exc) is not None or is_sdk_closed(exc)):
                raise
            why = exc.message if isinstance(exc, MCPError) else str(exc).splitlines()[0]
            raise ConnectError(
                f"{self.server.name}: the server does not offer the stateless 2026-07-28 wire "
                f"(server/discover: {why}); use protocol auto or 2025-11-25"
            ) from None

    async def _initialize(self, link: _Link) -> None:
        """Handshake with raw dicts (``mcpkit check`` grades the exact answer), then let the SDK adopt it."""
        assert link.dispatcher is not None and link.client is not None
        link.opening = "initialize"
        params = {
            "protocolVersion": LATEST_HANDSHAKE_VERSION,
            "capabilities": self.handlers.capabilities(),
            "clientInfo": self.client_info,
        }
        started = time.perf_counter()
        with anyio.fail_after(self.connect_timeout):
            raw = await link.dispatcher.send_raw_request(
                "initialize", params, {"cancel_on_abandon": False, "timeout": self.connect_timeout}
            )
        link.init_seconds = time.perf_counter() - started
        link.init = raw
        version = raw.get("protocolVersion")
        if version not in HANDSHAKE_PROTOCOL_VERSIONS:
            raise ConnectError(f"server answered initialize with unsupported protocol version {version!r}")
        try:
            link.client.adopt(mcp_types.InitializeResult.model_validate(raw, by_name=False))
        except PydanticValidationError as exc:
            # Keep going: calls only need the version, and ``mcpkit check`` reports what is wrong.
            logger.warning(
                "%s: initialize result is malformed (%s); continuing", self.server.name, exc.errors()[0]
            )
        await link.client.send_notification(mcp_types.InitializedNotification())

    async def _message_handler(self, message: Any) -> None:
        """Hand server notifications to ``on_notification`` as (method, params) in wire form."""
        if self._link is not None:
            self._link.answered += 1  # a sign of life (HTTP; stdio counts every line itself)
        if isinstance(message, Exception):
            return
        if getattr(message, "method", None) == TOOLS_CHANGED:
            self._tools_changed()
        if self._on_notification is None:
            return
        data = message.model_dump(by_alias=True, mode="json", exclude_none=True)
        params = data.get("params")
        await self._on_notification(str(data.get("method")), params if isinstance(params, dict) else {})

    async def _listen(self, link: _Link) -> None:
        """``subscriptions/listen`` on the stateless wire for the list changes the server
        declares. Its events reach ``on_notification`` as the handshake's notifications (the
        SDK hands each to the session's message handler too), so a caller reacts to one
        callback on either wire. The stream is reopened after a drop (backoff as for restarts);
        events may have been missed meanwhile, so a reopened stream reports every list it
        covers as changed (the spec keeps no replay: refetch)."""
        declared = link.hello.get("capabilities")  # this link's: self._link may not be it yet
        caps = declared if isinstance(declared, dict) else {}
        wanted = {kind: _lists_change(caps, kind) for kind in ("tools", "prompts", "resources")}
        if not any(wanted.values()) or self._on_notification is None:
            return
        drops = 0
        while not link.stop.is_set():
            try:
                async with sdk_listen(
                    link.client,
                    tools_list_changed=wanted["tools"],
                    prompts_list_changed=wanted["prompts"],
                    resources_list_changed=wanted["resources"],
                ) as stream:
                    link.listening = True
                    if drops:
                        if wanted["tools"]:
                            self._tools_changed()
                        for kind, on in wanted.items():
                            if on:
                                await self._on_notification(f"notifications/{kind}/list_changed", {})
                    async for _event in stream:  # each event reached _message_handler already
                        drops = 0  # (the SDK tees them): here they are only drained
            except Exception as exc:  # refused, dropped, or the connection ending: never the link's end
                logger.info("%s: subscriptions/listen ended: %s", self.server.name, exc)
            finally:
                link.listening = False
            if link.stop.is_set():
                return
            drops += 1
            with anyio.move_on_after(min(self.max_backoff, self.backoff * 2 ** min(drops, 10))):
                await link.stop.wait()

    async def _connect_error(self, link: _Link, exc: BaseException) -> CallError:
        """Say why the handshake failed, in terms a user can act on."""
        name = self.server.name
        if isinstance(exc, TimeoutError) or (isinstance(exc, MCPError) and is_sdk_timeout(exc)):
            return ConnectError(f"{name}: no answer to {link.opening} within {self.connect_timeout:g} s")
        if isinstance(exc, FileNotFoundError):
            return ConnectError(str(exc))
        if isinstance(exc, MCPError) and is_sdk_closed(exc) and link.transport is not None:
            return ConnectError(f"{name}: {await self._exit_error(link)}")
        if isinstance(exc, MCPError):
            mapped = _http_error(exc)
            if mapped is not None:
                return mapped
            return ConnectError(f"{name}: {link.opening} failed: {exc.message} ({exc.code})")
        described = describe_http_exception(self.server.url or name, exc)
        if described is not None:
            status = getattr(getattr(exc, "response", None), "status_code", None)
            kind = "status" if status is not None else "network"
            return HttpError(described, url=self.server.url or name, kind=kind, status=status)
        return ConnectError(f"{name}: cannot connect: {type(exc).__name__}: {exc}")

    async def _stop_on_exit(self, transport: StdioTransport, link: _Link) -> None:
        """When the process ends, new calls must wait for the restart (or fail): decide now."""
        await transport.exited.wait()
        if link is self._link and not self._closing:
            if self.restart == "on-failure" and self.restarts < self.max_restarts:
                self._ready = anyio.Event()
            else:
                self._dead = ServerExitedError(transport.returncode, transport.stderr_tail())
        link.stop.set()

    async def _health(self, link: _Link, timeout: float) -> None:
        """Probe a suspect server (see the module's docstring): a server that answers nothing
        within half a call ``timeout`` after a call's missed deadline is hung."""
        probe = timeout / 2
        method = "ping" if link.stateless is None else "server/discover"
        while link.hung is None:
            await link.suspect.wait()
            mark = link.mark()
            answered = await self._probe(link, method, probe)
            if answered is None:
                return  # the connection ended: its end is handled where it is noticed
            if not answered and link.mark()[1] == mark[1]:
                why = (
                    f"calls passed their {timeout:g} s deadline with nothing answered, "
                    f"and {method} had no answer within {probe:g} s"
                )
                if link.transport is not None:
                    link.transport.declare_hung(why)
                else:
                    link.hung = why
                    logger.warning("%s is hung: %s", self.server.name, why)
                    self._on_hung(link)
                return
            link.suspect = anyio.Event()

    async def _probe(self, link: _Link, method: str, seconds: float) -> bool | None:
        """Whether the server answered ``method`` within ``seconds`` (an error answer counts);
        None when the connection ended meanwhile."""
        assert link.dispatcher is not None
        params, opts = link.prepare(method, None, seconds)
        opts["cancel_on_abandon"] = False  # a cancel notice to a hung server could block past the probe
        with anyio.move_on_after(seconds):
            try:
                await link.dispatcher.send_raw_request(method, params, opts)
            except MCPError as exc:
                if is_sdk_timeout(exc):
                    return False
                if is_sdk_closed(exc) or _http_error(exc) is not None:
                    return None
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                return None
            if link.transport is None:
                link.answered += 1
            return True
        return False

    def _on_hung(self, link: _Link) -> None:
        """The server was declared hung: tell ``on_hung``; restart it when asked to."""
        if link is not self._link or self._closing:
            return
        if link.transport is not None and self.restart == "on-failure" and self.restarts < self.max_restarts:
            logger.warning("%s is hung: restarting it", self.server.name)
            self._ready = anyio.Event()  # new calls wait for the new process (within their deadline)
            link.stop.set()
        if self.options.on_hung is not None:
            try:
                self.options.on_hung(self)
            except Exception:  # a supervisor's bug must not break the call that noticed
                logger.exception("%s: the on_hung handler failed", self.server.name)

    async def _supervise(self) -> None:
        """Restart the server after it fails, with exponential backoff, when asked to."""
        while True:
            link = self._link
            assert link is not None
            await link.finished.wait()
            if self._closing:
                return
            t = link.transport
            exited = ServerExitedError(t.returncode if t else None, t.stderr_tail() if t else ())
            if self.restart != "on-failure" or t is None:
                self._dead = self._dead or exited
                self._ready.set()
                return
            while not self._closing:
                if self.restarts >= self.max_restarts:
                    logger.error("%s: giving up after %d restarts", self.server.name, self.restarts)
                    self._dead = self._dead or exited
                    self._ready.set()
                    return
                await anyio.sleep(min(self.max_backoff, self.backoff * 2**self.restarts))
                self.restarts += 1
                try:
                    self._link = await self._open_any()
                    self._tools = None
                    await self._fetch_tools(self._link)
                except CallError as exc:
                    logger.warning("%s: restart %d failed: %s", self.server.name, self.restarts, exc)
                    continue
                logger.info("%s: restarted (%d)", self.server.name, self.restarts)
                self._dead = None
                self._ready.set()
                break

    # ----- information -----------------------------------------------------------------

    @property
    def initialize_result(self) -> InitializeResult:
        """The server's ``initialize`` result exactly as received (empty on the stateless wire)."""
        return cast(InitializeResult, self._live().init)

    @property
    def discover_result(self) -> Result | None:
        """The server's ``server/discover`` result exactly as received, on the stateless wire; else None."""
        return self._live().discover

    @property
    def stateless(self) -> bool:
        """Whether this session speaks the stateless wire (2026-07-28): no handshake, no
        server-to-client requests, input requests inside results."""
        return self._live().stateless is not None

    @property
    def listening(self) -> bool:
        """Whether a ``subscriptions/listen`` stream (``SessionOptions.listen``) is open now."""
        return self._live().listening

    @property
    def protocol_version(self) -> str:
        return self._live().version

    @property
    def server_info(self) -> dict[str, Any]:
        link = self._live()
        info = link.init.get("serverInfo")
        if link.discover is not None:  # the stateless wire names the server in _meta (optional)
            meta = link.discover.get("_meta")
            info = meta.get(mcp_types.SERVER_INFO_META_KEY) if isinstance(meta, dict) else None
        return info if isinstance(info, dict) else {}

    @property
    def capabilities(self) -> dict[str, Any]:
        caps = self._live().hello.get("capabilities")
        return caps if isinstance(caps, dict) else {}

    @property
    def instructions(self) -> str | None:
        text = self._live().hello.get("instructions")
        return text if isinstance(text, str) else None

    @property
    def init_seconds(self) -> float:
        """Seconds the ``initialize`` (or ``server/discover``) exchange took (spawn time not included)."""
        return self._live().init_seconds

    @property
    def hung(self) -> bool:
        """Whether the server was declared hung: it stopped reading its stdin for a call's
        whole timeout, or a call passed its deadline with nothing heard from the server and a
        probe went unanswered too (see the module's docstring). Its calls fail at their
        deadlines; a supervisor restarts it (``on_hung``)."""
        return self.hung_reason is not None

    @property
    def hung_reason(self) -> str | None:
        """Why the server was declared hung, in words; None while it is not."""
        link = self._link
        if link is None:
            return None
        return link.transport.hung_reason if link.transport is not None else link.hung

    @property
    def pending(self) -> int:
        """Requests sent and not yet settled (0 after every call returns, raises or times out)."""
        return self._inflight

    @property
    def open_http_streams(self) -> int:
        """HTTP response streams still open (0 once every request settled; always 0 on stdio)."""
        return self._http_guard.open_streams if self._http_guard is not None else 0

    @property
    def pid(self) -> int | None:
        t = self._live().transport
        return t.pid if t else None

    @property
    def returncode(self) -> int | None:
        t = self._live().transport
        return t.returncode if t else None

    @property
    def garbage_lines(self) -> int:
        """Lines the server wrote to stdout that were not JSON-RPC."""
        t = self._live().transport
        return t.garbage_lines if t else 0

    def stderr_tail(self) -> list[str]:
        t = self._live().transport
        return t.stderr_tail() if t else []

    def _live(self) -> _Link:
        if self._link is None:
            raise CallError("session is not open")
        return self._link

    # ----- requests --------------------------------------------------------------------

    async def list_tools(self, *, refresh: bool = False) -> list[Tool]:
        """Every tool definition as sent (all pages), cached until ``refresh``, a restart, a
        change notice from the server (``notifications/tools/list_changed``, or its event on a
        2026 ``subscriptions/listen`` stream), or the end of the result's ``ttlMs`` (2026;
        ``ttlMs: 0`` is stale at once, so every call asks again).

        Each page is one call with its own deadline (the session's ``timeout``)."""
        if self._tools is not None and not refresh:
            until = self._tools_until
            if until is None or time.monotonic() < until:
                return self._tools
        return await self._fetch_tools(await self._usable_link(self.timeout))

    async def _fetch_tools(self, link: _Link) -> list[Tool]:
        tools: list[Tool] = []
        cursor: str | None = None
        changes = self._tools_changes
        ttl: float | None = None  # seconds: the shortest ttlMs of the pages
        for _ in range(1000):
            params = {"cursor": cursor} if cursor else None
            page = await self._request_on(link, "tools/list", params, self.timeout)
            items = page.get("tools")
            if isinstance(items, list):
                tools.extend(cast(Tool, t) for t in items if isinstance(t, dict))
            given = page.get("ttlMs")
            if isinstance(given, int) and not isinstance(given, bool) and given >= 0:
                ttl = given / 1000 if ttl is None else min(ttl, given / 1000)
            cursor = page.get("nextCursor") if isinstance(page.get("nextCursor"), str) else None
            if not cursor:
                break
        if changes == self._tools_changes:  # no notice came meanwhile: the list is current
            self._tools = tools
            self._tools_until = None if ttl is None else time.monotonic() + ttl
        return tools

    def _tools_changed(self) -> None:
        """The server said its tool list changed: the cached one is stale."""
        self._tools_changes += 1
        self._tools = None

    async def call(
        self,
        tool: str,
        args: Mapping[str, Any] | None = None,
        *,
        timeout: float | _Unset | None = UNSET,
        raise_on_error: bool | None = None,
        task: bool = False,
    ) -> Outcome:
        """Call a tool. Raises ToolError on an ``isError`` result unless ``raise_on_error=False``.

        A 2026 server that needs its user's input first is answered through ``handlers`` and the
        call retried (:meth:`answer_input`), as ``elicitation/create`` is answered on 2025.

        ``task``: ask a server that takes tasks to run the call as one. A task answer (asked for,
        or sent by a 2026 server) is polled to its result within the same ``timeout``, and
        cancelled on the server when the caller gives up (see :mod:`mcpkit.client._tasks`)."""
        from mcpkit.client._tasks import call_tool

        seconds = self.timeout if isinstance(timeout, _Unset) else timeout
        params = {"name": tool, "arguments": dict(args or {})}
        raw = await call_tool(self, params, seconds, task=task)
        if is_input_required(raw):
            raw = await self.answer_input("tools/call", params, raw, timeout=timeout)
        outcome = Outcome.from_raw(raw)
        if outcome.is_error and (self.raise_on_error if raise_on_error is None else raise_on_error):
            raise ToolError(tool, outcome)
        return outcome

    # The literal methods' shapes are narrower than the general answer: the overlap is the point.
    @overload
    async def request(  # type: ignore[overload-overlap]
        self,
        method: Literal["tools/call"],
        params: Mapping[str, Any] | None = None,
        *,
        timeout: float | _Unset | None = UNSET,
    ) -> CallToolResult: ...

    @overload
    async def request(  # type: ignore[overload-overlap]
        self,
        method: Literal["tools/list"],
        params: Mapping[str, Any] | None = None,
        *,
        timeout: float | _Unset | None = UNSET,
    ) -> ListToolsResult: ...

    @overload
    async def request(
        self, method: str, params: Mapping[str, Any] | None = None, *, timeout: float | _Unset | None = UNSET
    ) -> Result: ...

    async def request(
        self, method: str, params: Mapping[str, Any] | None = None, *, timeout: float | _Unset | None = UNSET
    ) -> Any:
        """Send any JSON-RPC request and return its raw result; errors become CallError subclasses.

        ``timeout`` (default: the session's) is one deadline for the whole call: waiting for
        a restart, waiting for room on a stdio server's stdin, writing, waiting and reading.
        With tracing configured it is a CLIENT span and a ``mcp.client.operation.duration``
        (:mod:`mcpkit.telemetry`), unless a traced operation is already sending it (a gateway hop).
        """
        tel = telemetry.active()
        if tel is not None and not telemetry.sending():
            return await tel.client_call(method, params, partial(self._request, method, params, timeout))
        return await self._request(method, params, timeout)

    async def _request(
        self, method: str, params: Mapping[str, Any] | None, timeout: float | _Unset | None
    ) -> Any:
        seconds = self.timeout if isinstance(timeout, _Unset) else timeout
        if seconds is None:
            return await self._request_on(await self._usable_link(None), method, params, None)
        deadline = anyio.current_time() + seconds
        link: _Link | None = None
        with anyio.CancelScope(deadline=deadline):
            link = await self._usable_link(None)
        if link is None:  # the deadline passed while a restart was still under way
            raise CallTimeoutError(method, seconds)
        return await self._request_on(link, method, params, seconds, deadline)

    async def _request_on(
        self,
        link: _Link,
        method: str,
        params: Mapping[str, Any] | None,
        seconds: float | None,
        deadline: float | None = None,
    ) -> Result:
        assert link.dispatcher is not None
        mark = link.mark()
        params, opts = link.prepare(method, params, seconds)
        self._inflight += 1
        try:
            if seconds is None:
                with self._spans.around(params):
                    result = await link.dispatcher.send_raw_request(method, params, opts)
            else:
                # The SDK's own clock starts only once the request is written; this scope bounds
                # the write too (a server that stops reading no longer holds a caller for ever).
                end = deadline or anyio.current_time() + seconds
                try:
                    with anyio.CancelScope(deadline=end) as scope, self._spans.around(params):
                        result = await link.dispatcher.send_raw_request(method, params, opts)
                except anyio.get_cancelled_exc_class():
                    if anyio.current_time() >= end - DEADLINE_SLACK:
                        link.expired(mark)  # the caller's own deadline, around this call, came first
                    raise
                if scope.cancelled_caught:
                    link.expired(mark)
                    raise CallTimeoutError(method, seconds)
            link.answered += 1
            return result
        except MCPError as exc:
            if is_sdk_timeout(exc) and seconds is not None:
                link.expired(mark)
                raise CallTimeoutError(method, seconds) from None
            if not is_sdk_closed(exc) and exc.code != HTTP_FAILURE:
                link.answered += 1  # the server answered, with an error
            mapped = _http_error(exc, self.server.url, self.max_body)
            if mapped is None and is_sdk_closed(exc):
                raise await self._exit_error(link) from None
            if mapped is not None:
                raise mapped from None
            raise JsonRpcError(exc.code, exc.message, exc.data) from None
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            raise await self._exit_error(link) from None
        finally:
            self._inflight -= 1

    async def answer_input(
        self,
        method: str,
        params: Mapping[str, Any],
        result: Mapping[str, Any],
        *,
        timeout: float | _Unset | None = UNSET,
    ) -> Result:
        """Finish a request whose ``result`` asks for input (a 2026 ``InputRequiredResult``): answer
        each input request through this session's :class:`ClientHandlers` (elicitation, sampling,
        roots), retry ``method`` with ``params`` plus the answers and the server's ``requestState``,
        and repeat until the server gives its final result, which is returned raw.

        The SDK's own loop drives it (``mcp.client._input_required``: the rounds are capped, and a
        state-only answer is retried after a short wait); ``timeout`` bounds each round, not the
        time a user takes to answer. A handler's refusal raises :class:`JsonRpcError` with its
        code and message; a server that keeps asking past the cap raises :class:`CallError`.
        :meth:`request` never does this: a relay that forwards the question to its own client
        takes the ``InputRequiredResult`` from there as it came.
        """
        link = self._live()
        client = link.client
        try:
            first = mcp_types.InputRequiredResult.model_validate(result, by_name=False)
        except PydanticValidationError as exc:
            problem = exc.errors()[0]
            raise CallError(
                f"{self.server.name}: {method} asked for input in a malformed result: "
                f"{problem.get('msg')} at {problem.get('loc')}"
            ) from None
        base = {k: v for k, v in params.items() if k not in ("inputResponses", "requestState")}

        async def dispatch(key: str, request: Any) -> Any:
            meta = request.params.meta if request.params is not None else None
            return await client.dispatch_input_request(
                ClientRequestContext(session=client, request_id=key, meta=meta), request
            )

        async def retry(responses: Mapping[str, Any] | None, state: str | None) -> Any:
            again = dict(base)
            if responses:
                again["inputResponses"] = {
                    key: answer.model_dump(by_alias=True, mode="json", exclude_none=True)
                    for key, answer in responses.items()
                }
            if state is not None:
                again["requestState"] = state
            raw = await self.request(method, again, timeout=timeout)
            if is_input_required(raw):
                return mcp_types.InputRequiredResult.model_validate(raw, by_name=False)
            return raw

        try:
            return cast(Result, await run_input_required_driver(first, dispatch=dispatch, retry=retry))
        except InputRequiredRoundsExceededError as exc:
            raise CallError(
                f"{self.server.name}: {method} still asked for input after {exc.max_rounds} rounds of answers"
            ) from None
        except MCPError as exc:  # a handler refused an input request: the call ends with its word
            raise JsonRpcError(exc.code, exc.message, exc.data) from None

    async def answer_requests(self, requests: Mapping[str, Any]) -> dict[str, Any]:
        """Answer input requests that are not a call's (a 2026 task's ``inputRequests``, shown
        by ``tasks/get`` while it is ``input_required``) through this session's
        :class:`ClientHandlers`, as :meth:`answer_input` answers a call's: the raw answers by
        key, for ``tasks/update``. A handler's refusal raises :class:`JsonRpcError`."""
        from mcpkit.client._tasks import dispatch_answers

        return await dispatch_answers(self._live().client, requests)

    def send_raw(
        self,
        method: str,
        params: Mapping[str, Any],
        answer: AnswerHandler,
        *,
        timeout: float | _Unset | None = UNSET,
    ) -> int | None:
        """Send a request beside the SDK session, for a relay: its answer, or the error
        :meth:`request` would raise, goes to ``answer`` (called once, from the reader).

        It is written at once, never waited for. Only a live stdio connection on the handshake
        wire takes one; None means nothing was sent (HTTP, the stateless wire, whose requests
        carry the SDK's envelope, not connected yet, restarting, closing, or the server's stdin
        is backed up): use :meth:`request`. See :mod:`mcpkit.client._raw`.
        """
        link = self._link
        if link is None or link.stop.is_set() or self._dead is not None or link.transport is None:
            return None
        if link.stateless is not None:
            return None
        raw = link.transport.raw
        if raw is None or raw.closed:
            return None
        seconds = self.timeout if isinstance(timeout, _Unset) else timeout
        return raw.send(method, self._spans.meta_for(params), answer, seconds)

    def cancel_raw(self, request_id: int, reason: str | None = None) -> bool:
        """Cancel a request from :meth:`send_raw` on the server; its ``answer`` is not called.
        False when it was already answered."""
        link = self._link
        raw = link.transport.raw if link is not None and link.transport is not None else None
        return raw.cancel(request_id, reason) if raw is not None else False

    async def notify(self, method: str, params: Mapping[str, Any] | None = None) -> None:
        """Send a notification; on the stateless wire, which defines none from client to server
        (cancellation is the dispatcher's own), it is dropped."""
        link = await self._usable_link(self.timeout)
        assert link.dispatcher is not None
        if link.stateless is not None:
            logger.debug(
                "%s: %s not sent: the stateless wire has no client notifications", self.server.name, method
            )
            return
        await link.dispatcher.notify(method, params, link.options(None))

    async def _usable_link(self, timeout: float | None) -> _Link:
        """The live link; during a restart wait for it (bounded by ``timeout`` and by the
        caller's own deadline, which :meth:`request` sets around this wait and the call)."""
        if self._tg is None:
            raise CallError("session is closed")
        if not self._ready.is_set():
            with anyio.move_on_after(timeout):
                await self._ready.wait()
        link = self._link
        if self._dead is not None:
            raise self._dead
        if link is None or link.stop.is_set():
            raise ServerExitedError(None, detail=f"{self.server.name} is restarting")
        return link

    async def _exit_error(self, link: _Link) -> CallError:
        """What to tell a caller whose request died with its connection."""
        t = link.transport
        if t is None:
            return ServerExitedError(None, detail=f"connection to {self.server.name} closed")
        with anyio.move_on_after(EXIT_REPORT_WAIT):
            await t.exited.wait()
        return t.exit_error()


def _http_error(exc: MCPError, url: str | None = None, max_body: int | None = None) -> CallError | None:
    """The client error for an HTTP failure the guard turned into a JSON-RPC error, else None."""
    problem = HttpProblem.from_data(exc.data) if exc.code == HTTP_FAILURE else None
    if problem is not None:
        if problem.kind == "too-large":
            return ResponseTooLargeError(problem.message, url=problem.url)
        return HttpError(problem.message, url=problem.url, kind=problem.kind, status=problem.status)
    if exc.code == mcp_types.PARSE_ERROR and BodyLimitError.MARKER in exc.message:
        # A body without Content-Length passed the limit mid-stream (the SDK wraps our error).
        return ResponseTooLargeError(exc.message.removeprefix(SDK_JSON_PARSE_PREFIX), url="")
    if exc.code == mcp_types.CONNECTION_CLOSED and SDK_SSE_TOO_LARGE in exc.message and url:
        # One event of an event-stream answer passed the limit (checked by the SDK's parser).
        problem = HttpProblem(url, "too-large", detail=f"{(max_body or 0) / (1024 * 1024):g} MB")
        return ResponseTooLargeError(problem.message.replace("response body", "server-sent event"), url=url)
    return None


def _lists_change(capabilities: Mapping[str, Any], kind: str) -> bool:
    """Whether a server's capabilities say its ``kind`` list (tools, prompts, resources) changes."""
    declared = capabilities.get(kind)
    return isinstance(declared, Mapping) and declared.get("listChanged") is True


def _leaf(exc: BaseException) -> BaseException:
    """The first real error inside nested exception groups (transports raise them on teardown)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


async def _close_group(tg: anyio.abc.TaskGroup) -> None:
    """Cancel and leave a task group entered by hand, safe from an outer cancellation."""
    tg.cancel_scope.cancel()
    tg.cancel_scope.shield = True
    await tg.__aexit__(None, None, None)


@asynccontextmanager
async def connect(
    target: str | Sequence[str] | ServerConfig | object,
    options: SessionOptions | None = None,
    *,
    config: str | Path | None = None,
    env: Mapping[str, str] | None = None,
    headers: Mapping[str, str] | None = None,
) -> AsyncIterator[Session]:
    """Open a session to ``target``: a command line (str or argv list), an http(s) URL, a
    :class:`ServerConfig`, a server name from the config file ``config``, or a server object
    of this process (an SDK low-level ``Server`` or mcpkit's own), served in memory.

    ``options`` says how the session behaves (:class:`SessionOptions`; default: a 60 s
    timeout per call). ``env`` and ``headers`` are added to the server's own. The child's
    whole process group ends on exit.
    """
    server = resolve_target(target, config=config)
    if env or headers:
        server = replace(
            server, env={**server.env, **(env or {})}, headers={**server.headers, **(headers or {})}
        )
    async with Session(server, options) as session:
        yield session
