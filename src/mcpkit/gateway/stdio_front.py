"""The gateway's stdio fast lane: plain tool calls relayed without the SDK's sessions.

On stdio every request crosses the SDK twice: the server session in front (a model for the
request, a task and a context for the handler, a model for the result) and the client session
behind it (the same again). For a tool that answers at once, that is most of what a call
through the gateway costs. The fast lane sits between the gateway's stdin and the SDK:

* a plain ``tools/call`` (see :func:`mcpkit.server.relay.plain_request`) for a tool of this client's
  current view, whose server is up on stdio with a call slot free, goes through the call
  pipeline as every front's does (``CallPipeline.route``, then ``CallPipeline.start``, the
  non-waiting form of its one send: the request written to the server as one line);
* the server's answer is handed back by the transport's reader, checked and capped by the
  pipeline, and written to stdout as one line; no task is made for the call;
* the client's ``notifications/cancelled`` for such a call cancels it on the server.

Everything else goes to the SDK untouched: the handshake (the lane opens once the client has
sent ``notifications/initialized`` and the SDK has answered ``initialize``), lists, calls with
a progress token, meta-tools, ``readmore``, unknown or quarantined names, a view not built
yet, a server restarting or at its call limit, lines over 1 MiB. The lane changes only how
fast an answer comes, never what it says (tests/gateway/test_stdio_front.py).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterable, AsyncIterator, Callable
from functools import partial
from typing import TYPE_CHECKING, Any

import anyio

from mcpkit.gateway import answers
from mcpkit.log import continue_trace
from mcpkit.server.relay import answer_line, is_request_id, json_object, plain_request, response

if TYPE_CHECKING:
    from mcpkit.gateway.core import Gateway
    from mcpkit.gateway.views import Entry

logger = logging.getLogger("mcpkit.gateway")

MAX_FAST_LINE = 1 << 20
"""Longer lines go to the SDK: parsing them twice would cost more than the lane saves."""


def _key(request_id: str | int) -> tuple[bool, str | int]:
    """Ids 1 and "1" are different requests."""
    return (isinstance(request_id, str), request_id)


class StdioFastLane:
    """Relays plain calls from the lines of stdin; ``write`` puts one answer line on stdout.

    While ``congested()`` (answers pile up unread on stdout) no call is taken: they go the
    SDK's way, whose writer waits for the client, so unread answers cannot grow without end.
    """

    def __init__(
        self,
        gateway: Gateway,
        write: Callable[[bytes], None],
        congested: Callable[[], bool] = lambda: False,
    ) -> None:
        self._gateway = gateway
        self._write = write
        self._congested = congested  # the client is not reading its answers: let the SDK's writer wait
        self._client: str | None = None
        self._initialize_id: Any = None
        self._version: str | None = None
        self._initialized = False
        self._open = False
        self._calls: dict[tuple[bool, str | int], tuple[Entry, int]] = {}
        self._idle = anyio.Event()
        self._idle.set()
        self._profiles: tuple[str, ...] | None = None
        self.relayed = 0
        """Calls answered by the lane (for tests and status)."""

    async def lines(self, source: AsyncIterable[str]) -> AsyncIterator[str]:
        """``source`` without the lines the lane has taken."""
        async for line in source:
            if not self._took(line):
                yield line

    @property
    def busy(self) -> bool:
        return bool(self._calls)

    async def wait_idle(self) -> None:
        """Until every call the lane relayed has been answered (or cancelled)."""
        while self._calls:
            if self._idle.is_set():  # made here, not per call: only the drain at end of input waits
                self._idle = anyio.Event()
            await self._idle.wait()

    def sent(self, line: str) -> None:
        """Each line the SDK writes, seen until the handshake is done (its negotiated version)."""
        if self._version is not None or self._initialize_id is None or '"protocolVersion"' not in line:
            return
        message = json_object(line)
        if message is None or message.get("id") != self._initialize_id:
            return
        result = message.get("result")
        version = result.get("protocolVersion") if isinstance(result, dict) else None
        if isinstance(version, str):
            self._version = version
            self._open = self._initialized

    # -- taking lines -----------------------------------------------------------------------

    def _took(self, line: str) -> bool:
        if not self._open:
            self._watch_handshake(line)
            return False
        if len(line) > MAX_FAST_LINE:
            return False
        if '"tools/call"' in line:
            return not self._congested() and self._relay(line)
        if '"notifications/cancelled"' in line and self._calls:
            return self._cancel(line)
        return False

    def _watch_handshake(self, line: str) -> None:
        if '"initialize"' not in line and '"notifications/initialized"' not in line:
            return
        message = json_object(line)
        if message is None:
            return
        if message.get("method") == "initialize":
            params = message.get("params")
            info = params.get("clientInfo") if isinstance(params, dict) else None
            name = info.get("name") if isinstance(info, dict) else None
            self._client = name if isinstance(name, str) else None
            self._initialize_id = message.get("id")
        elif message.get("method") == "notifications/initialized":
            self._initialized = True
            self._open = self._version is not None

    def _relay(self, line: str) -> bool:
        """Send a plain call on; False (the SDK's turn) for anything the lane does not take."""
        message = plain_request(line)
        if message is None or message["method"] != "tools/call":
            return False
        gateway = self._gateway
        if gateway.limiter.active:
            return False  # each call counted against the rate limit, on the SDK's path
        if self._profiles is None:  # one client per lane: its profiles are settled at initialize
            self._profiles = gateway.profiles_for_query(self._client, None)
        view = gateway.routing.cached_view(self._profiles)
        params = message.get("params") or {}
        entry = gateway.pipeline.route(view, params["name"]) if view is not None else None
        if entry is None:
            return False
        request_id = message["id"]
        key = _key(request_id)
        if key in self._calls:
            return False  # an id still in flight, reused: the SDK's path deals with the client's error
        arguments = dict(params.get("arguments") or {})
        try:
            with continue_trace(params.get("_meta")):  # the downstream call: a child span of the client's
                sent = gateway.pipeline.start(entry, arguments, partial(self._answered, request_id, entry))
        except Exception:  # arguments it cannot restore: the SDK's path says what is wrong, in its own words
            logger.debug("fast lane: arguments of %s left to the SDK's path", entry.public, exc_info=True)
            return False
        if sent is None:
            return False
        # Registered after the send: the send does not yield, and the answer is read by
        # another task of this loop, so it cannot come first.
        self._calls[key] = (entry, sent)
        return True

    def _cancel(self, line: str) -> bool:
        message = json_object(line)
        if message is None or message.get("method") != "notifications/cancelled":
            return False
        params = message.get("params")
        request_id = params.get("requestId") if isinstance(params, dict) else None
        if not is_request_id(request_id):
            return False
        call = self._calls.get(_key(request_id))
        if call is None:
            return False  # not one of the lane's: the SDK's path has it
        self._forget(request_id)
        entry, sent = call
        reason = params.get("reason") if isinstance(params, dict) else None
        self._gateway.pipeline.cancel(
            entry, sent, reason if isinstance(reason, str) else "cancelled by the client"
        )
        return True

    # -- answers ----------------------------------------------------------------------------

    def _answered(self, request_id: str | int, entry: Entry, result: dict[str, Any]) -> None:
        if self._forget(request_id) is None:
            return  # cancelled by the client meanwhile: a cancelled request is not answered
        assert self._version is not None
        try:
            line = answer_line(request_id, result, self._version, entry.public)
        except Exception as exc:  # never a traceback to the client, never no answer: one line
            logger.exception("tools/call %s failed inside the gateway", entry.public)
            line = response(request_id, answers.gateway_failure(entry.public, exc))
        self.relayed += 1
        try:
            self._write(line + b"\n")
        except (OSError, RuntimeError) as exc:  # stdout closed: the client is gone
            logger.debug("fast lane: answer to %r not written: %s", request_id, exc)

    def _forget(self, request_id: str | int) -> tuple[Entry, int] | None:
        call = self._calls.pop(_key(request_id), None)
        if call is not None and not self._calls:
            self._idle.set()
        return call
