"""The call pipeline: one sequence for every ``tools/call``, whichever front received it.

route -> restore arguments -> send -> check -> cap -> encode

* **route** (:meth:`CallPipeline.route`): the public name to a downstream tool of this
  client's view; a meta-tool, ``readmore``, a quarantined or unknown name is answered here;
* **restore** (``Entry.restore``): arguments put back as the server's own schema wants them;
* **send** (:meth:`CallPipeline.send`): the one awaitable send, ``Downstream.request``, under
  one deadline (a 2026 server's questions answered on the way, ``Downstream.answer_input``);
  the stdio lane uses its non-waiting form (:meth:`CallPipeline.start`: the same request,
  written at once by ``Downstream.send_raw``, its checked and capped result handed to a
  callback, so the lane makes no task per call);
* **check** and **cap** (:meth:`CallPipeline.finished`, :meth:`CallPipeline.failed`): the
  result validated against the server's protocol and the tool's output schema, fitted to the
  adapted definition, cut with a pointer to the rest; a failure is one line;
* **encode**: :func:`mcpkit.server.relay.answer_line` on the fast paths, the SDK's models on its own.

Each front (stdio lane, HTTP hot path, the SDK's handler, the meta-tool ``call_tool``) calls
:meth:`CallPipeline.call`, or :meth:`CallPipeline.route` then :meth:`CallPipeline.send` or
:meth:`CallPipeline.start` (and :meth:`CallPipeline.cancel`), and nothing under them, so a
change to any step reaches every front at once (tests/gateway/test_fronts_call_the_pipeline.py).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

from mcp_types import INVALID_PARAMS, InputRequiredResult
from mcp_types.methods import is_input_required
from pydantic import BaseModel

from mcpkit import telemetry
from mcpkit.client import CallError, CallTimeoutError, RawAnswer
from mcpkit.gateway import answers, metatools, overflow
from mcpkit.gateway.downstream import Downstream
from mcpkit.gateway.errors import DownstreamUnavailableError
from mcpkit.gateway.naming import Route
from mcpkit.gateway.overflow import Overflow
from mcpkit.gateway.views import Entry, View
from mcpkit.jsonrpc import JsonRpcError

logger = logging.getLogger("mcpkit.gateway")

ASKED_OF: dict[str, str] = {
    "elicitation/create": "elicitation",
    "sampling/createMessage": "sampling",
    "roots/list": "roots",
}
"""The questions a server puts to its client, and the client capability each needs."""


RELAYED = "relayed:"
"""Starts the plaintext ``requestState`` of a 2026 server's question passed through as it came
(a parked call's is a random token, which never does)."""


@dataclass(frozen=True)
class InputRelay:
    """A 2026 client in front: the capabilities it declared, and on its retry what it sent back
    for the server (``inputResponses``, the server's own ``requestState``)."""

    capabilities: frozenset[str]
    resume: Mapping[str, Any] | None = None

    @classmethod
    def of(
        cls,
        capabilities: frozenset[str],
        request_state: str | None,
        input_responses: Mapping[str, Any] | None,
    ) -> InputRelay:
        """The relay of a request: on the retry of a question passed through (``request_state``
        made by :meth:`question`, sealed by the SDK's boundary), the server's own state and
        the client's answers to send back to the server."""
        if request_state is None:
            return cls(capabilities)
        if not request_state.startswith(RELAYED):
            raise JsonRpcError(INVALID_PARAMS, "requestState: not one this gateway passed on; ask again")
        resume: dict[str, Any] = {}
        state = json.loads(request_state[len(RELAYED) :])  # ours: sealed, unchanged
        if state is not None:
            resume["requestState"] = state
        if input_responses:
            resume["inputResponses"] = {k: wire(v) for k, v in input_responses.items()}
        return cls(capabilities, resume)

    @staticmethod
    def question(raw: Mapping[str, Any]) -> InputRequiredResult:
        """A server's ``InputRequiredResult`` for the client: its questions as they came, its
        own ``requestState`` carried inside the gateway's (sealed, so the client neither reads
        nor changes it)."""
        return InputRequiredResult.model_validate(
            {**raw, "requestState": RELAYED + json.dumps(raw.get("requestState"))}, by_name=False
        )

    def answers(self, raw: Mapping[str, Any]) -> bool:
        """Whether this client can answer every question of ``raw`` (an ``InputRequiredResult``)."""
        questions = raw.get("inputRequests") or {}
        if not isinstance(questions, Mapping):
            return False
        for question in questions.values():
            method = question.get("method") if isinstance(question, Mapping) else None
            if ASKED_OF.get(str(method)) not in self.capabilities:
                return False
        return True


class CallPipeline:
    """Route, restore, send, check and cap one tool call; always a valid result (wire form)."""

    def __init__(self, downstreams: Mapping[str, Downstream], cap: Overflow | None) -> None:
        self._downstreams = downstreams
        self.overflow = cap
        self.counts = telemetry.CallCounts()
        """Calls per server, tool and outcome, for the HTTP face's ``GET /metrics``."""
        telemetry.active()  # set up now when configured, not inside the first call

    def route(self, view: View, name: str) -> Entry | None:
        """The downstream tool a plain call of ``name`` goes to; None for a meta-tool,
        ``readmore``, or a name this client does not have (:meth:`call` answers those)."""
        if view.meta and name in metatools.NAMES:
            return None
        if self.overflow is not None and name == overflow.TOOL:
            return None
        return view.entries.get(name)

    async def send(
        self,
        entry: Entry,
        arguments: dict[str, Any],
        progress: str | None = None,
        relay: InputRelay | None = None,
    ) -> dict[str, Any]:
        """The call's arguments restored and sent to its server; the checked, capped result.

        A 2026 server that asks first (``InputRequiredResult``) is answered on the way through
        its handlers, unless ``relay`` says the client in front is on the 2026 wire too and can
        answer every question itself: then the server's ``InputRequiredResult`` is returned as
        it came, for the client's retry (``relay.resume``: its answers and the server's state).
        """
        route = entry.route
        request = _request(entry, arguments)
        if progress is not None:
            request["_meta"] = {"progressToken": progress}
        if relay is not None and relay.resume:
            request.update(relay.resume)
        downstream = self._downstreams[route.server]
        began = time.perf_counter()
        trace = _Trace.begin(entry)
        try:
            if trace is None:
                raw = await downstream.request("tools/call", request)
            else:
                with trace.hop.current():
                    raw = await downstream.request("tools/call", request)
            if is_input_required(raw):  # a 2026 server asks first
                if relay is not None and relay.answers(raw):
                    if trace is not None:
                        trace.end(raw, raw)
                    return dict(raw)
                raw = await downstream.answer_input("tools/call", request, raw)
        except CallError as exc:
            result = self.failed(route, exc)
            self._count(entry, began, result, trace, exc)
            return result
        result = self.finished(entry, raw)
        self._count(entry, began, result, trace, raw)
        return result

    def _count(
        self,
        entry: Entry,
        began: float,
        result: Mapping[str, Any],
        trace: _Trace | None,
        answer: RawAnswer,
    ) -> None:
        self.counts.add(
            entry.route.server, entry.route.tool, result.get("isError") is True, time.perf_counter() - began
        )
        if trace is not None:
            trace.end(answer, result)

    def start(
        self, entry: Entry, arguments: dict[str, Any], done: Callable[[dict[str, Any]], None]
    ) -> int | None:
        """:meth:`send` without waiting, for the stdio lane: the same request, written to the
        server at once (``Downstream.send_raw``); the checked, capped result (or the one-line
        failure) goes to ``done``, called once from the reader of the server's answers, unless
        the call is cancelled with :meth:`cancel`. None when it cannot be written at once (the
        server restarting, at its call limit, not on stdio): nothing was sent, use :meth:`send`.
        Raises what restoring the arguments raises (the caller leaves the call to the SDK's
        path, which says what is wrong in its own words)."""
        request = _request(entry, arguments)
        downstream = self._downstreams[entry.route.server]
        trace = _Trace.begin(entry)
        settle = partial(self._settle, entry, done, time.perf_counter(), trace)
        if trace is None:
            return downstream.send_raw("tools/call", request, settle)
        with trace.hop.current():  # not sent (None): its spans are never ended, so never exported
            return downstream.send_raw("tools/call", request, settle)

    def cancel(self, entry: Entry, sent: int, reason: str) -> None:
        """Cancel a call from :meth:`start` on its server; its ``done`` is not called."""
        self._downstreams[entry.route.server].cancel_raw(sent, reason)

    def _settle(
        self,
        entry: Entry,
        done: Callable[[dict[str, Any]], None],
        began: float,
        trace: _Trace | None,
        value: RawAnswer,
    ) -> None:
        try:
            result = (
                self.finished(entry, value) if isinstance(value, dict) else self.failed(entry.route, value)
            )
        except Exception as exc:  # never a traceback to the client, never no answer: one line
            logger.exception("tools/call %s failed inside the gateway", entry.public)
            result = answers.gateway_failure(entry.public, exc)
        self._count(entry, began, result, trace, value)
        done(result)

    def finished(self, entry: Entry, raw: Mapping[str, Any]) -> dict[str, Any]:
        """A downstream's ``tools/call`` result as the client gets it: validated, fitted to the
        adapted definition, capped with a pointer to the rest."""
        route = entry.route
        downstream = self._downstreams[route.server]
        result = answers.checked(
            raw,
            server=route.server,
            tool=route.tool,
            protocol_version=downstream.protocol_version or "2025-11-25",
            original=entry.original,
            adapted=entry.adapted,
        )
        return self.overflow.apply(result) if self.overflow is not None else result

    @staticmethod
    def failed(route: Route, exc: Exception) -> dict[str, Any]:
        """The one-line result for a call that got no result from its server."""
        if isinstance(exc, DownstreamUnavailableError):
            return answers.failure(f"{exc}; try again later or see mcpkit gateway status.")
        if isinstance(exc, CallTimeoutError):
            return answers.failure(f"Server {route.server} did not answer {route.tool} in time: {exc}")
        if isinstance(exc, JsonRpcError):
            return answers.failure(f"Server {route.server} refused {route.tool}: {exc.message} ({exc.code})")
        return answers.failure(f"Server {route.server} failed on {route.tool}: {exc}")

    async def call(
        self,
        view: View,
        name: str,
        arguments: dict[str, Any],
        progress: str | None = None,
        relay: InputRelay | None = None,
    ) -> dict[str, Any]:
        """One ``tools/call`` as the client of ``view`` sent it; always a valid result (wire form),
        or with ``relay`` a 2026 server's ``InputRequiredResult`` for the client to answer."""
        entry = self.route(view, name)
        if entry is not None:
            return await self.send(entry, arguments, progress, relay)
        if view.meta and name in metatools.NAMES:
            return await self._meta_call(view, name, arguments, progress, relay)
        if self.overflow is not None and name == overflow.TOOL:
            text = self.overflow.read(str(arguments.get("id") or ""), _int(arguments.get("offset"), 0))
            if text is None:
                return answers.failure("That cut answer is no longer kept; call the tool again.")
            return {"content": [{"type": "text", "text": text}]}
        if name in view.quarantined:
            return answers.failure(
                f"Tool {name} is quarantined for this client: {view.quarantined[name]}"[:500]
            )
        return _unknown(view, name, "tools/list has the tools of this gateway")

    async def _meta_call(
        self,
        view: View,
        name: str,
        arguments: dict[str, Any],
        progress: str | None,
        relay: InputRelay | None = None,
    ) -> dict[str, Any]:
        if name == metatools.SEARCH:
            query = str(arguments.get("query") or "")
            limit = _int(arguments.get("limit"), 20)
            offset = _int(arguments.get("offset"), 0)
            text = metatools.search({k: e.adapted for k, e in view.entries.items()}, query, limit, offset)
            return {"content": [{"type": "text", "text": text}]}
        target = str(arguments.get("name") or "")
        entry = view.entries.get(target)
        if entry is None:
            why = view.quarantined.get(target)
            if why:
                return answers.failure(f"Tool {target} is quarantined for this client: {why}"[:500])
            return _unknown(view, target, "search tools lists the tools")
        if name == metatools.DESCRIBE:
            return {
                "content": [{"type": "text", "text": json.dumps(entry.adapted, ensure_ascii=False, indent=1)}]
            }
        raw_args = arguments.get("arguments")
        if raw_args is None or raw_args == "":
            args: Any = {}
        elif isinstance(raw_args, str):
            try:
                args = json.loads(raw_args)
            except ValueError as exc:
                return answers.failure(f"arguments is not a JSON object: {exc}")
        else:
            args = raw_args
        if not isinstance(args, dict):
            return answers.failure('arguments must be a JSON object, for example {"timezone": "UTC"}.')
        return await self.send(entry, args, progress, relay)


class _Trace:
    """A traced call through the gateway: its route (a SERVER span under the caller's context,
    named by the tool's public name) and the downstream hop (a CLIENT span, its child, named by
    the server's own tool name; current while the request is written, so the ``traceparent``
    the server receives names it). Only when telemetry is configured (:func:`begin`)."""

    __slots__ = ("hop", "route")

    def __init__(self, route: telemetry.Operation, hop: telemetry.Operation) -> None:
        self.route = route
        self.hop = hop

    @staticmethod
    def begin(entry: Entry) -> _Trace | None:
        tel = telemetry.active()
        if tel is None:
            return None
        route = tel.server("tools/call", entry.public)
        return _Trace(route, tel.client("tools/call", entry.route.tool, parent=route))

    def end(self, answer: RawAnswer | Mapping[str, Any], result: Mapping[str, Any]) -> None:
        """Close both spans: the hop by what the server answered, the route by what the client got."""
        if isinstance(answer, Exception):
            self.hop.failed(telemetry.error_type(answer))
        else:
            self.hop.result(answer)
        self.hop.end()
        self.route.result(result)
        self.route.end()


def _request(entry: Entry, arguments: dict[str, Any]) -> dict[str, Any]:
    """The downstream ``tools/call`` params: the server's own tool name, the arguments restored."""
    return {"name": entry.route.tool, "arguments": entry.restore(arguments)}


def capabilities_of(declared: Any) -> frozenset[str]:
    """Of a client's declared capabilities, those a server's question can need."""
    if declared is None:
        return frozenset()
    return frozenset(c for c in ASKED_OF.values() if getattr(declared, c, None) is not None)


def wire(value: Any) -> dict[str, Any]:
    """A model or mapping in wire form (camelCase keys, no unset fields)."""
    if isinstance(value, BaseModel):
        return value.model_dump(by_alias=True, mode="json", exclude_none=True)
    return dict(value)


def _unknown(view: View, name: str, where: str) -> dict[str, Any]:
    """The answer for a tool name this client does not have. A server's own name (its texts
    say "call get_x with offset=...") gets the name the tool has here."""
    same = [public for public, entry in view.entries.items() if entry.route.tool == name]
    if len(same) == 1:
        return answers.failure(f"Unknown tool {name!r}; on this gateway it is called {same[0]!r}.")
    return answers.failure(f"Unknown tool {name!r}; {where}.")


def _int(value: Any, default: int) -> int:
    try:
        return max(0, int(value))
    except (TypeError, ValueError):
        return default
