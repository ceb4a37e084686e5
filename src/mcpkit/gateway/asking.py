"""Input requests across eras: a server's question put to whichever client's call it belongs to.

A server on the 2025 handshake asks its client mid-call (``elicitation/create``,
``sampling/createMessage``, ``roots/list``) and waits for the answer. A client on the 2026-07-28
wire cannot be asked that way: its request has no channel back, so a server answers the call
with an ``InputRequiredResult`` (the questions, and a ``requestState``) and the client retries
the same call with its answers. The gateway joins the two:

* a 2026 client's call that may be asked (the client declared elicitation, sampling or roots)
  is *parked*: the downstream call runs in the gateway's own task group, outliving the front
  request; a question the downstream puts meanwhile answers the front request with an
  ``InputRequiredResult`` whose ``requestState`` names the parked call (sealed by the SDK's
  :class:`~mcp.server.request_state.RequestStateBoundary`: bound to the tool, its arguments
  and the caller, and expiring); the retry carries the answers to the waiting downstream
  and waits for its next question or its final result, which is what the retry returns;
* every other call keeps the old way (:meth:`~mcpkit.gateway.relay.ClientRelay.asker`: the
  gateway's one client on stdio, a refusal over stateless HTTP).

Nothing is kept without bound: at most :data:`MAX_PARKED` calls wait at once (one more runs
unparked, so its server's questions are refused as before), a question not answered within
``answer_seconds`` is answered ``cancel`` (elicitation: a form left unanswered) or refused,
so the downstream's tool finishes, and a finished call whose client never came back is dropped after
``answer_seconds`` too. A ``requestState`` is good only on the gateway process that made it
(sealed under a key of that process: a replica behind a balancer refuses it as invalid, and
the client calls again).

A 2026 client before a 2026 server parks nothing: the server's ``InputRequiredResult`` goes
to the client as it came, the server's own ``requestState`` inside the gateway's, and the
retry goes back to the server with the answers; the gateway keeps nothing between rounds. A
2025 client on stdio is asked a 2026 server's questions as ``elicitation/create``, the old way.

Which call a 2025 server's question belongs to the handshake wire does not say on stdio (the
request carries no reference to the call it serves), so it is put to the parked call on the
server that asks when that is the only call running there. When other calls run on that
server at once the gateway cannot tell them apart and refuses the question in one line, which
an ``ask`` helper reads as "could not ask" rather than guess and show one user another's form.
"""

from __future__ import annotations

import itertools
import logging
import secrets
from collections.abc import Awaitable, Callable, Coroutine, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.abc
import mcp_types
from mcp.server.context import ServerRequestContext
from mcp.server.session import ServerSession
from mcp.shared.exceptions import MCPError, NoBackChannelError
from mcp_types.methods import is_input_required
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from mcpkit.gateway import answers, metatools
from mcpkit.gateway.downstream import Downstream
from mcpkit.gateway.pipeline import ASKED_OF, RELAYED, CallPipeline, InputRelay, capabilities_of
from mcpkit.gateway.pipeline import wire as _wire
from mcpkit.gateway.relay import ClientRelay
from mcpkit.gateway.views import View
from mcpkit.jsonrpc import JsonRpcError
from mcpkit.server.relay import request_outbound_of

logger = logging.getLogger("mcpkit.gateway")

Ctx = ServerRequestContext[Any, Any]
WireHandler = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]

MAX_PARKED = 256
"""Parked calls at once; beyond it a call runs as on the handshake wire (its questions refused)."""


@dataclass
class Question:
    """One question a downstream asked, waiting for the front client's answer."""

    method: str
    params: dict[str, Any]
    answer: dict[str, Any] | None = None
    answered: anyio.Event = field(default_factory=anyio.Event)


@dataclass
class Parked:
    """A 2026 client's call whose downstream call outlives the front request that started it."""

    key: str
    server: str
    capabilities: frozenset[str]
    progress: str | None = None
    """The gateway's progress token of the call: its progress reaches the latest front request."""
    questions: dict[str, Question] = field(default_factory=dict)
    result: dict[str, Any] | None = None
    collected: anyio.Event = field(default_factory=anyio.Event)
    changed: anyio.Event = field(default_factory=anyio.Event)
    _keys: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def moved(self) -> None:
        self.changed.set()
        self.changed = anyio.Event()

    def open(self) -> dict[str, Question]:
        return {k: q for k, q in self.questions.items() if q.answer is None}

    async def ask(self, method: str, params: dict[str, Any], seconds: float) -> dict[str, Any]:
        """The front client's answer to ``method`` (``answer_seconds`` at most)."""
        capability = ASKED_OF[method]
        if capability not in self.capabilities:
            return _unasked(method, f"the client of this gateway does not accept {capability} requests")
        try:
            request = mcp_types.InputRequiredResult.model_validate(
                {"inputRequests": {"q": {"method": method, "params": params}}}, by_name=False
            )
        except ValidationError as exc:
            problem = exc.errors()[0]
            raise JsonRpcError(
                mcp_types.INVALID_PARAMS,
                f"the gateway cannot pass this {method} on to a 2026-07-28 client: "
                f"{problem.get('msg')} at {problem.get('loc')}",
            ) from None
        assert request.input_requests is not None
        question = Question(method, _wire(request.input_requests["q"])["params"])
        key = f"q{next(self._keys)}"
        self.questions[key] = question
        self.moved()
        with anyio.move_on_after(seconds):
            await question.answered.wait()
        if question.answer is None:
            self.questions.pop(key, None)
            if method == "elicitation/create":  # shown, never answered: as a dismissed form
                return {"action": "cancel"}
            return _unasked(method, f"the client did not answer within {seconds:g} s")
        return question.answer

    def answer(self, responses: Mapping[str, Any]) -> None:
        """The retry's answers, each to the question of its key (others ignored)."""
        for key, response in responses.items():
            question = self.questions.get(key)
            if question is None or question.answer is not None:
                continue
            question.answer = _wire(response)
            question.answered.set()
        self.moved()


@dataclass(eq=False)
class Direct:
    """A handshake client's call on a connection that can be asked mid-call (streamable HTTP
    with a session): its server's question goes to the client on that call's own stream."""

    session: ServerSession
    capabilities: frozenset[str]
    asking: int = 0

    def open(self) -> bool:
        """Whether a question of this call waits for the client's answer."""
        return self.asking > 0

    async def ask(self, method: str, params: dict[str, Any], seconds: float) -> dict[str, Any]:
        """The client's answer to ``method`` (``answer_seconds`` at most), as :meth:`Parked.ask`."""
        capability = ASKED_OF[method]
        if capability not in self.capabilities:
            return _unasked(method, f"the client of this gateway does not accept {capability} requests")
        self.asking += 1
        try:
            with anyio.move_on_after(seconds):
                answer: dict[str, Any] = await request_outbound_of(self.session).send_raw_request(
                    method, params, None
                )
                return answer
        except NoBackChannelError:
            return _unasked(method, "this client's connection has no way back for a request")
        except MCPError as exc:  # the client's refusal, passed back unchanged
            raise JsonRpcError(exc.code, exc.message, exc.data) from None
        finally:
            self.asking -= 1
        if method == "elicitation/create":  # shown, never answered: as a dismissed form
            return {"action": "cancel"}
        return _unasked(method, f"the client did not answer within {seconds:g} s")


class Asking:
    """Parked calls of 2026 clients, and the per-server handlers that put questions to them."""

    def __init__(
        self,
        pipeline: CallPipeline,
        downstreams: Mapping[str, Downstream],
        answer_seconds: float,
        relay: ClientRelay | None = None,
    ) -> None:
        self._pipeline = pipeline
        self._clients = relay
        self._downstreams = downstreams
        self.answer_seconds = answer_seconds
        self._parked: dict[str, Parked] = {}
        self._waiting: dict[str, list[Parked]] = {}
        self._direct: dict[str, list[Direct]] = {}
        self._tg: anyio.abc.TaskGroup | None = None
        self.for_task: Callable[[str, Mapping[str, Any]], Parked | None] | None = None
        """The 2026 client's task a server's question belongs to (its related-task ``_meta``),
        set by :mod:`mcpkit.gateway.tasks`; such a question waits in that task's inputRequests."""

    def start(self, tg: anyio.abc.TaskGroup) -> None:
        """Parked calls run in ``tg`` (the gateway's own, alive as long as it serves)."""
        self._tg = tg

    def start_soon(self, func: Callable[[], Coroutine[Any, Any, Any]]) -> None:
        """Run ``func`` in the gateway's task group (a task's question relay outlives requests)."""
        assert self._tg is not None, "the gateway has not started"
        self._tg.start_soon(func)

    @property
    def parked(self) -> int:
        """Calls parked now (for tests and status: the count never grows without bound)."""
        return len(self._parked)

    # -- the downstream side ----------------------------------------------------------------

    def handler(self, server: str, method: str, fallback: WireHandler) -> WireHandler:
        """``server``'s ``method`` requests: to its parked call when one waits, else ``fallback``."""

        async def ask(params: dict[str, Any]) -> dict[str, Any]:
            task = self.for_task(server, params) if self.for_task is not None else None
            if task is not None:
                return await task.ask(method, params, self.answer_seconds)
            waiting: list[Parked | Direct] = [*self._waiting.get(server, ()), *self._direct.get(server, ())]
            if not waiting:
                return await fallback(params)
            running = max(len(waiting), self._downstreams[server].in_flight)
            # A call whose question is still open waits for that answer and asks nothing else:
            # it is not the one asking. (One whose client never came back used to count, so
            # every later question on that server was refused until its wait ran out.)
            free = [call for call in waiting if not call.open()]
            others = running - (len(waiting) - len(free))  # calls that may be asking now
            if others == 1 and len(free) == 1:
                return await free[0].ask(method, params, self.answer_seconds)
            if others == 1 and not free:  # the one call not tracked here asks: the old way
                return await fallback(params)
            if running == 1:  # the only call, asking again before its first answer came
                return await waiting[0].ask(method, params, self.answer_seconds)
            return _unasked(
                method,
                f"{others} calls to {server} that could be asking are running at once; the "
                "gateway cannot tell which one this question belongs to",
            )

        return ask

    # -- the front side ---------------------------------------------------------------------

    @contextmanager
    def direct(self, ctx: Ctx, view: View, params: mcp_types.CallToolRequestParams) -> Iterator[None]:
        """A handshake client's call, askable while it runs when its connection can carry a
        request back (streamable HTTP with a session; stdio keeps its one client's way)."""
        server = _server_of(self._pipeline, view, params.name, dict(params.arguments or {}))
        if server is None or ctx.protocol_version in MODERN_PROTOCOL_VERSIONS or not _can_ask(ctx):
            yield
            return
        call = Direct(ctx.session, _capabilities(ctx))
        calls = self._direct.setdefault(server, [])
        calls.append(call)
        try:
            yield
        finally:
            calls.remove(call)
            if not calls:
                self._direct.pop(server, None)

    def parks(self, ctx: Ctx, params: mcp_types.CallToolRequestParams) -> bool:
        """Whether this call is a 2026 client's retry or may be asked (and can be parked)."""
        if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS or self._tg is None:
            return False
        return params.request_state is not None or bool(_capabilities(ctx))

    async def call(
        self, ctx: Ctx, view: View, params: mcp_types.CallToolRequestParams
    ) -> dict[str, Any] | mcp_types.InputRequiredResult:
        """A 2026 client's call: its result, or the questions its server asked meanwhile."""
        arguments = dict(params.arguments or {})
        if params.request_state is not None and params.request_state.startswith(RELAYED):
            return await self._relay(ctx, view, params, arguments)
        if params.request_state is not None:
            parked = self._parked.get(params.request_state)
            if parked is None:
                return answers.failure(
                    f"{params.name}: the call this answers is no longer waiting (answered already, "
                    "or its wait for an answer ran out); call the tool again."
                )
            if self._clients is not None:
                self._clients.progress_to(parked.progress, ctx)
            parked.answer(params.input_responses or {})
            return await self._outcome(parked)
        server = _server_of(self._pipeline, view, params.name, arguments)
        if server is not None and self._downstreams[server].protocol_version in MODERN_PROTOCOL_VERSIONS:
            return await self._relay(ctx, view, params, arguments)
        if server is None or len(self._parked) >= MAX_PARKED or self._tg is None:
            with self._progress(ctx) as token:
                return await self._pipeline.call(view, params.name, arguments, token)
        token = self._clients.progress_token(ctx) if self._clients is not None else None
        parked = Parked(secrets.token_urlsafe(24), server, _capabilities(ctx), token)
        self._parked[parked.key] = parked
        self._tg.start_soon(self._run, parked, view, params.name, arguments)
        return await self._outcome(parked)

    @contextmanager
    def _progress(self, ctx: Ctx) -> Iterator[str | None]:
        """The gateway's progress token for one front request's call, while it runs."""
        token = self._clients.progress_token(ctx) if self._clients is not None else None
        try:
            yield token
        finally:
            if self._clients is not None:
                self._clients.progress_done(token)

    async def _relay(
        self, ctx: Ctx, view: View, params: mcp_types.CallToolRequestParams, arguments: dict[str, Any]
    ) -> dict[str, Any] | mcp_types.InputRequiredResult:
        """A 2026 client before a 2026 server: nothing parked, the server's questions passed to
        the client as they came and its answers back, the server's own ``requestState`` carried
        inside the gateway's (sealed, so the client neither reads nor changes it)."""
        relay = InputRelay.of(_capabilities(ctx), params.request_state, params.input_responses)
        with self._progress(ctx) as token:
            raw = await self._pipeline.call(view, params.name, arguments, token, relay=relay)
        if not is_input_required(raw):
            return raw
        return InputRelay.question(raw)

    async def _run(self, parked: Parked, view: View, name: str, arguments: dict[str, Any]) -> None:
        waiting = self._waiting.setdefault(parked.server, [])
        waiting.append(parked)
        try:
            try:
                parked.result = await self._pipeline.call(view, name, arguments, parked.progress)
            except Exception as exc:  # never a traceback to the client: one line, logged in full
                logger.exception("tools/call %s failed inside the gateway", name)
                parked.result = answers.gateway_failure(name, exc)
            finally:
                waiting.remove(parked)
                if not waiting:
                    self._waiting.pop(parked.server, None)
            parked.moved()
            with anyio.move_on_after(self.answer_seconds):  # the client comes back for the result
                await parked.collected.wait()
        finally:
            self._parked.pop(parked.key, None)
            if self._clients is not None:
                self._clients.progress_done(parked.progress)

    async def _outcome(self, parked: Parked) -> dict[str, Any] | mcp_types.InputRequiredResult:
        while True:
            changed = parked.changed
            if parked.result is not None:
                parked.collected.set()
                return parked.result
            questions = parked.open()
            if questions:
                return mcp_types.InputRequiredResult.model_validate(
                    {
                        "inputRequests": {
                            k: {"method": q.method, "params": q.params} for k, q in questions.items()
                        },
                        "requestState": parked.key,
                    },
                    by_name=False,
                )
            await changed.wait()


def _can_ask(ctx: Ctx) -> bool:
    """Whether ``ctx``'s request can carry a request back to its client mid-call (not on
    stateless HTTP, and not on stdio, whose one client the fallback asks already)."""
    return ctx.request is not None and ctx.session.can_send_request


def _capabilities(ctx: Ctx) -> frozenset[str]:
    """The client capabilities of ``ctx`` that a server's question can need."""
    return capabilities_of(ctx.session.client_capabilities)


def _server_of(pipeline: CallPipeline, view: View, name: str, arguments: Mapping[str, Any]) -> str | None:
    """The downstream a call of ``name`` goes to (a meta-tool's ``call_tool`` too), if any."""
    entry = pipeline.route(view, name)
    if entry is None and view.meta and name == metatools.CALL:
        entry = view.entries.get(str(arguments.get("name") or ""))
    return entry.route.server if entry is not None else None


def _unasked(method: str, why: str) -> dict[str, Any]:
    """What a downstream hears when its question could not be put: an empty root list (as a
    client with no roots says), else a refusal in one line (an ``ask`` helper reads it as
    "could not ask" and goes on as its arguments say)."""
    logger.info("%s not put to the client: %s", method, why)
    if method == "roots/list":
        return {"roots": []}
    raise JsonRpcError(mcp_types.INVALID_REQUEST, why)
