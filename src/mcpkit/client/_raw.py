"""Requests sent on a stdio link beside the SDK session, for relays that cannot pay its cost.

The SDK's client session validates every message into models, runs each request through
memory streams and a waiting task, and builds a result model: about a quarter of a
millisecond per call. A gateway relaying a plain ``tools/call`` needs none of that: it has
the client's JSON already and will check the result itself. :class:`RawRequests` sends such
a request as one line on the server's stdin and hands the answer line, parsed, to a callback
run by the transport's reader, with no task per request.

A request is written whole at once or not at all (None: the server's stdin is backed up),
never waited for, so a server that stops reading cannot hold a caller past its deadline;
a request that reaches its deadline while the server has read nothing since it was sent
marks the server hung, and one with nothing heard from the server since it was sent makes
it suspect (see :meth:`~mcpkit.client._stdio.StdioTransport.expired`).

The contract matches ``Session.request``: an error answer arrives as
:class:`~mcpkit.jsonrpc.JsonRpcError`, no answer within the timeout as
:class:`~mcpkit.errors.CallTimeoutError` (the request is then cancelled on the
server with ``notifications/cancelled``), a server that exits as
:class:`~mcpkit.errors.ServerExitedError`. Every request gets exactly one answer.
Ids start at 9 * 10**15 so they never meet the SDK session's own counter on the same pipe; a
line that does not answer one of these ids goes on to the SDK session untouched.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import re
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from mcpkit.client._trace import Tracer
from mcpkit.errors import CallError, CallTimeoutError
from mcpkit.jsonrpc import JsonRpcError
from mcpkit.results import scrub_surrogates_in

logger = logging.getLogger("mcpkit.client._raw")

RAW_ID_BASE = 9 * 10**15
"""First id of a raw request; every id stays below 2**53, JavaScript's last exact integer."""
RAW_ID_SPAN = 10**11
"""Ids run from the base through base + span - 1, then wrap (a request 10**11 ids old is gone)."""
_MARK = b"90000"
"""Digits every raw id starts with: a line without them is not parsed here, so the SDK
session's own answers (50 MB ones too) are not parsed twice."""

_LONE_SURROGATE = re.compile(
    rb"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
    rb"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}"
)


def has_lone_surrogate(line: bytes) -> bool:
    """Whether a JSON line escapes a lone surrogate (``"\\ud800"``): valid JSON text that no
    UTF-8 writer can send on, and that the SDK's parser refuses outright."""
    if b"\\ud" not in line and b"\\uD" not in line:  # almost every line: no regex run
        return False
    return _LONE_SURROGATE.search(line) is not None


RawAnswer = dict[str, Any] | CallError | JsonRpcError
"""A result object, or the error the session would have raised for the same request."""

AnswerHandler = Callable[[RawAnswer], None]


class StdinWatch(Protocol):
    """Tells a server that stopped reading its stdin from a slow one (the stdio transport)."""

    def mark(self) -> tuple[int, int]:
        """Where the server stands now (what it read of its stdin, what it wrote)."""

    def expired(self, mark: tuple[int, int]) -> None:
        """A request sent at ``mark`` reached its deadline unanswered."""


class _Pending:
    __slots__ = ("answer", "mark", "method", "timer")

    def __init__(self, method: str, answer: AnswerHandler, mark: tuple[int, int]) -> None:
        self.method = method
        self.answer = answer
        self.mark = mark
        self.timer: asyncio.TimerHandle | None = None


class RawRequests:
    """The raw requests in flight on one stdio connection.

    ``write`` puts one line on the server's stdin at once, without waiting, and says whether
    it did: False when the pipe is backed up (the server is not reading) or closing. A
    request that cannot be written now is not sent at all (the caller takes the SDK
    session's path, which waits in its own task), so a full pipe never stalls the caller
    and a request is never half sent; a cancellation notice is written regardless (``force``).
    """

    def __init__(
        self,
        name: str,
        write: Callable[[bytes, bool], bool],
        tracer: Tracer | None = None,
        watch: StdinWatch | None = None,
    ) -> None:
        self.name = name
        self._write = write
        self._tracer = tracer
        self._watch = watch
        self._pending: dict[int, _Pending] = {}
        self._ids = itertools.count()
        self._sent = False  # once any was sent, late answers may still come
        self.closed = False

    def __len__(self) -> int:
        return len(self._pending)

    def send(
        self, method: str, params: Mapping[str, Any], answer: AnswerHandler, timeout: float | None
    ) -> int | None:
        """Send one request now; its answer goes to ``answer``. None when nothing was sent
        (closing, or the server's stdin is backed up): nothing will answer it then."""
        if self.closed:
            return None
        request_id = RAW_ID_BASE + next(self._ids) % RAW_ID_SPAN
        line = json.dumps(
            {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}, ensure_ascii=False
        )
        mark = self._watch.mark() if self._watch is not None else (0, 0)
        try:
            data = (line + "\n").encode("utf-8")
            written = self._write(data, False)
        except (OSError, RuntimeError, ValueError) as exc:  # a broken pipe; unencodable text
            logger.debug("%s: raw %s not sent: %s", self.name, method, exc)
            return None
        if not written:
            if self._watch is not None and timeout is not None:
                # Backed up: if the server takes nothing by this request's deadline, it is hung
                # (the caller's fallback request, bounded by the same timeout, fails then too).
                asyncio.get_running_loop().call_later(timeout, self._watch.expired, mark)
            return None
        pending = _Pending(method, answer, mark)
        if timeout is not None:
            pending.timer = asyncio.get_running_loop().call_later(timeout, self._expired, request_id, timeout)
        # Registered right after the write, before any answer can be read: this runs without
        # yielding to the loop, and answers are read by a task of the same loop.
        self._pending[request_id] = pending
        self._sent = True
        if self._tracer is not None:
            self._tracer.line(self.name, "->", line)
        return request_id

    def cancel(self, request_id: int, reason: str | None = None) -> bool:
        """Forget a request and tell the server to stop it; its handler is not called.
        False when it had already been answered (or never existed)."""
        if self._forget(request_id) is None:
            return False
        self._notify_cancelled(request_id, reason)
        return True

    def take(self, line: bytes) -> bool:
        """Answer a raw request from one stdout line; False when the line is not such an answer."""
        if (not self._pending and not self._sent) or line.find(_MARK) < 0:
            return False
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):
            return False
        if not isinstance(message, dict) or "method" in message or message.get("jsonrpc") != "2.0":
            return False  # not an answer (the SDK session reads it, or reports it as garbage)
        request_id = message.get("id")
        if type(request_id) is not int:
            return False
        if has_lone_surrogate(line):  # answered with U+FFFD in their place, as the session does
            message = scrub_surrogates_in(message)
        pending = self._forget(request_id)
        if pending is None:
            # A late answer to a request that timed out or was cancelled: ours, so it is
            # dropped here rather than reported by the SDK session as an unknown response.
            return RAW_ID_BASE <= request_id < RAW_ID_BASE + RAW_ID_SPAN
        if self._tracer is not None:
            self._tracer.line(self.name, "<-", line.decode("utf-8", "replace"))
        self._deliver(pending, _answer_of(message, self.name, pending.method))
        return True

    def fail_all(self, error: CallError) -> None:
        """The connection ended: every request still waiting gets ``error``; no more are sent."""
        self.closed = True
        for request_id in list(self._pending):
            pending = self._forget(request_id)
            if pending is not None:
                self._deliver(pending, error)

    def _expired(self, request_id: int, timeout: float) -> None:
        pending = self._forget(request_id)
        if pending is None:
            return
        self._notify_cancelled(request_id, f"no answer within {timeout:g} s")
        if self._watch is not None:
            self._watch.expired(pending.mark)
        self._deliver(pending, CallTimeoutError(pending.method, timeout))

    def _forget(self, request_id: int) -> _Pending | None:
        pending = self._pending.pop(request_id, None)
        if pending is not None and pending.timer is not None:
            pending.timer.cancel()
        return pending

    def _notify_cancelled(self, request_id: int, reason: str | None) -> None:
        if self.closed:
            return
        params: dict[str, Any] = {"requestId": request_id}
        if reason:
            params["reason"] = reason
        line = json.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params})
        if self._tracer is not None:
            self._tracer.line(self.name, "->", line)
        try:
            self._write((line + "\n").encode("utf-8"), True)
        except (OSError, RuntimeError) as exc:  # the server is going away; its exit reaches the callers
            logger.debug("%s: cancellation not sent: %s", self.name, exc)

    def _deliver(self, pending: _Pending, answer: RawAnswer) -> None:
        try:
            pending.answer(answer)
        except Exception:  # a handler's bug must not stop the reader that serves every call
            logger.exception("%s: the handler of a raw %s answer failed", self.name, pending.method)


def _answer_of(message: dict[str, Any], name: str, method: str) -> RawAnswer:
    """The result, or the error the SDK session would raise for this answer."""
    result = message.get("result")
    if "result" in message and isinstance(result, dict):
        return result
    error = message.get("error")
    if isinstance(error, dict):
        code = error.get("code")
        text = error.get("message")
        return JsonRpcError(
            code if type(code) is int else -32603,
            text if isinstance(text, str) else "error without a message",
            error.get("data"),
        )
    return CallError(f"{name} answered {method} with neither a result object nor an error")
