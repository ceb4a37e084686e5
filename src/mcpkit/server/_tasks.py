"""Tasks: a long tool call answered at once with a task that the client polls.

Why: an archive embed or a Redmine bulk change held one ``tools/call`` open for minutes; a
proxy's idle timeout, a client's own request timeout or a dropped HTTP stream then lost the
result although the work went on. With tasks the call returns a task id straight away, the work
runs in the background, and the client asks ``tasks/get`` (status, progress), ``tasks/result``
(the final ``CallToolResult``) or ``tasks/cancel``.

Both eras are served by one store:

- 2025-11-25: the ``tasks`` capability (``requests.tools.call``, ``list``, ``cancel``); a client
  asks per call with ``params.task`` (``{"ttl": ms}``) on a tool whose definition says
  ``execution.taskSupport: "optional"``.
- 2026-07-28: the extension ``io.modelcontextprotocol/tasks`` (SEP-2663, as the official
  conformance suite checks it); a client that declares it in its capabilities gets a flat
  ``CreateTaskResult`` (``resultType: "task"``, ``taskId``, ``status``, ``ttlMs``,
  ``pollIntervalMs`` ...) for a task-capable tool (the server decides; a 2025 ``task`` param is
  ignored). ``tasks/get`` inlines the tool's ``result`` once ``completed`` (a tool's own error
  too: ``failed`` is for protocol errors, with an ``error`` object), ``tasks/cancel`` answers an
  empty acknowledgement (for a finished task too), ``tasks/result`` and ``tasks/list`` are gone
  (-32601), and ``tasks/*`` from a client that did not declare the extension is refused with
  -32021 naming it.

The SDK (mcp 2.3.0) has the types (``mcp_types.Task`` ...) and passes a 2026 claimed
``resultType`` through, but serves no ``tasks/*`` method and refuses a ``CreateTaskResult`` on the
2025 wire (its ``tools/call`` sieve wants ``content``), so the task answer is made here, in a
server middleware that owns its result. A client that did not ask gets the ordinary call.

A task's handler may ``ask`` its user: the task goes to ``input_required`` and the handler
waits, suspended in the background, for the answer (2026: ``inputRequests`` on ``tasks/get``,
answered by ``tasks/update``; 2025: ``elicitation/create`` on the ``tasks/result`` stream). A
tool with ``asks_before_task`` asks on the call first (2026 input requests of its rounds) and
becomes a task where its handler calls :func:`start_task`. A ``tasks="required"`` tool refuses
a client that takes no task.

Tasks belong to the caller who made them (over HTTP, the credentials the request carried), are
bounded in number (a full store answers the call with one line, never a queue that grows), and
a finished task is forgotten once its TTL has passed. The work runs in a task group that the
server's lifespan holds, so it ends with the server.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, cast

import anyio
import anyio.abc
import mcp_types
from mcp.shared.message import ServerMessageMetadata

from mcpkit import _sdk as sdk
from mcpkit.errors import JsonRpcError
from mcpkit.results import error_result
from mcpkit.server._ask import elicit_answer, input_required_of
from mcpkit.server._errors import sdk_errors
from mcpkit.tools import ToolContext
from mcpkit.tools._context import Elicit

if TYPE_CHECKING:
    from mcpkit.server._build import SdkServer

logger = logging.getLogger("mcpkit.server")

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
"""The 2026-07-28 extension identifier, declared under ``capabilities.extensions``."""
RELATED_TASK = "io.modelcontextprotocol/related-task"
"""The ``_meta`` key that ties a ``tasks/result`` answer to its task (2025-11-25)."""
PROGRESS_META = "mcpkit/progress"
"""The ``_meta`` key of ``tasks/get`` carrying the handler's last progress report in numbers."""

TERMINAL = frozenset({"completed", "failed", "cancelled"})


def refuse_untasked(ctx: Any, name: str) -> None:
    """A ``taskSupport: "required"`` tool called by a client that takes no task: -32021 naming
    the extension on 2026-07-28 (SEP-2663 "Required Capabilities"), -32601 on 2025-11-25 (its
    tools spec: a server refuses a required-task tool called without ``task`` that way)."""
    if modern(ctx):
        raise JsonRpcError(
            MISSING_CAPABILITY,
            f"Tool {name} runs only as a task: declare the {TASKS_EXTENSION} extension in the client's capabilities",
            {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}},
        )
    raise JsonRpcError(-32601, f"Tool {name} runs only as a task: call it with params.task")


RunTool = Callable[[str, Mapping[str, Any], ToolContext], Awaitable[mcp_types.CallToolResult]]
ContextOf = Callable[[Any, str], ToolContext]


def _now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class _Task:
    task_id: str
    owner: str
    tool: str
    ttl_ms: int
    started: float
    created_at: str = field(default_factory=_now_iso)
    updated_at: str = ""
    status: str = "working"
    message: str | None = None
    progress: dict[str, Any] | None = None
    result: mcp_types.CallToolResult | None = None
    error: dict[str, Any] | None = None
    """A protocol-level failure (JSON-RPC error shape): 2026's ``failed``, as opposed to a tool
    that ran and reported an error (``isError``), which that wire calls ``completed``."""
    finished: float | None = None
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    context: ToolContext | None = None
    done: anyio.Event = field(default_factory=anyio.Event)
    asked: mcp_types.InputRequiredResult | None = None
    """The question a handler that asks before its task (``asks_before_task``) put on the call:
    that round ends with it and no task is made."""
    announced: anyio.Event | None = None
    """Set once the task is told to its caller (at once, or at ``start_task`` when the handler
    asks first); ``None`` for a task told at once."""
    pending: dict[str, _Question] = field(default_factory=dict)
    side: list[_Question] = field(default_factory=list)
    """2025: questions waiting for a ``tasks/result`` stream to carry them to the client."""
    side_changed: anyio.Event = field(default_factory=anyio.Event)
    """Questions the running handler waits on (2026: ``input_required``), by server-minted key."""

    def __post_init__(self) -> None:
        self.updated_at = self.updated_at or self.created_at

    moved: anyio.Event = field(default_factory=anyio.Event)
    """Set at each change (see :meth:`touch`); the 2025 status notifier waits on it."""

    def touch(self) -> None:
        self.updated_at = _now_iso()
        self.moved.set()


@dataclass
class _Question:
    """One ``ask`` a task's handler waits on: the input request as the wire shows it, and the
    client's answer once ``tasks/update`` brings it."""

    request: dict[str, Any]
    answered: anyio.Event = field(default_factory=anyio.Event)
    response: object = None


def answer_questions(task: _Task, responses: Mapping[str, Any]) -> None:
    """Give each waiting question of ``task`` its answer from ``responses`` (keys of no waiting
    question are ignored: a late or repeated answer changes nothing); the task is ``working``
    again once no question waits. An answered key leaves ``inputRequests`` at once, before the
    handler has even resumed, so the next ``tasks/get`` shows only what is still open."""
    for key, response in responses.items():
        question = task.pending.pop(key, None)
        if question is not None:
            question.response = response
            question.answered.set()
    if not task.pending and task.status == "input_required":
        task.status, task.message = "working", None
        task.touch()


def task_asker(task: _Task) -> Elicit:
    """How a task's handler asks its user on 2026-07-28: the task goes to ``input_required`` with
    the question in ``inputRequests`` (``tasks/get`` shows it) and the handler waits, suspended,
    until ``tasks/update`` answers it. Unlike a plain call's ask (which ends the round and runs
    the handler again), the task's handler stays alive in the server's task group, so questions
    asked at once (a task group of asks) are all open together and answered in any order."""

    async def elicit(message: str, schema: dict[str, Any]) -> dict[str, Any] | None:
        key = f"input-{secrets.token_urlsafe(6)}"
        request = mcp_types.ElicitRequest(
            params=mcp_types.ElicitRequestFormParams(message=message, requested_schema=cast(Any, schema))
        ).model_dump(by_alias=True, mode="json", exclude_none=True)
        question = _Question(request)
        task.pending[key] = question
        if task.status == "working":
            task.status, task.message = "input_required", message.splitlines()[0][:300] if message else None
            task.touch()
        try:
            await question.answered.wait()
        finally:
            if (
                task.pending.pop(key, None) is not None
                and not task.pending
                and task.status == "input_required"
            ):
                task.status, task.message = "working", None  # cancelled while asking
                task.touch()
        return elicit_answer(question.response, key)

    return elicit


_ANNOUNCE: ContextVar[Callable[[], None] | None] = ContextVar("mcpkit_task_announce", default=None)


async def start_task(ctx: ToolContext) -> None:
    """From here on this call is a task (for a tool with ``asks_before_task``): the call is
    answered with the task, and the handler goes on in the background, asking (if it must)
    through the task. Its questions before this point were asked on the call, as input requests
    of its rounds (2026-07-28), so a client answers what the work needs before the work starts.

    A no-op anywhere else (a plain call, 2025, a task already told), so a handler calls it
    unconditionally."""
    announce = _ANNOUNCE.get()
    if announce is not None:
        announce()


def side_channel_asker(task: _Task) -> Elicit:
    """How a task's handler asks its user on 2025-11-25: the task goes to ``input_required`` and
    the question waits for the client's ``tasks/result``, on whose stream it goes out as
    ``elicitation/create`` tied to the task by the related-task ``_meta`` (the 2025 schema's
    side channel; a client that sees ``input_required`` calls ``tasks/result``)."""

    async def elicit(message: str, schema: dict[str, Any]) -> dict[str, Any] | None:
        question = _Question({"message": message, "requestedSchema": schema})
        task.side.append(question)
        task.side_changed.set()
        if task.status == "working":
            task.status, task.message = "input_required", message.splitlines()[0][:300] if message else None
            task.touch()
        try:
            await question.answered.wait()
        finally:
            if question in task.side:
                task.side.remove(question)
            if not task.side and task.status == "input_required":
                task.status, task.message = "working", None
                task.touch()
        answer = question.response
        return dict(answer) if isinstance(answer, dict) else None

    return elicit


async def carry_questions(task: _Task, ctx: Any) -> None:
    """Put a 2025 task's waiting questions to the client on this ``tasks/result`` request's
    stream until the task ends (the caller cancels this then). A question the client cannot be
    asked (no way back, a refusal) is answered "not asked", so the handler decides."""
    while True:
        while task.side:
            question = task.side.pop(0)
            params = mcp_types.ElicitRequestFormParams.model_validate(
                {**question.request, "_meta": {RELATED_TASK: {"taskId": task.task_id}}}, by_name=False
            )
            try:
                result = await ctx.session.send_request(
                    mcp_types.ElicitRequest(params=params),
                    mcp_types.ElicitResult,
                    metadata=ServerMessageMetadata(related_request_id=ctx.request_id),
                )
                question.response = {"action": result.action, "content": dict(result.content or {})}
            except Exception as exc:  # no back channel, a refusal: the user was not asked
                logger.info(
                    "task %s: elicitation/create not answered (%s: %s)", task.task_id, type(exc).__name__, exc
                )
            question.answered.set()
        task.side_changed = anyio.Event()
        if task.side:
            continue
        await task.side_changed.wait()


class TaskStore:
    """The tasks of one server: created by task-capable tool calls, read by ``tasks/*``.

    ``max_tasks`` bounds the tasks held (running or finished, not yet expired): when it is
    reached the finished task that ended first is forgotten early, and only a store whose tasks
    are all running refuses a new one;
    ``default_ttl_ms`` is the retention a client gets when it asks for none, ``max_ttl_ms`` the
    most it may ask for; ``poll_interval_ms`` is suggested to pollers. ``clock`` (monotonic
    seconds) decides expiry, so a test can move time on instead of waiting for it.
    """

    def __init__(
        self,
        *,
        max_tasks: int = 64,
        default_ttl_ms: int = 15 * 60_000,
        max_ttl_ms: int = 24 * 3_600_000,
        poll_interval_ms: int = 1000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.max_tasks = max_tasks
        self.default_ttl_ms = default_ttl_ms
        self.max_ttl_ms = max_ttl_ms
        self.poll_interval_ms = poll_interval_ms
        self.clock = clock
        self._tasks: dict[str, _Task] = {}
        self._groups: list[anyio.abc.TaskGroup] = []

    # -- serving ---------------------------------------------------------------------------

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Hold a task group for background work while a server runs (its lifespan enters this);
        leaving it cancels every task still working."""
        async with anyio.create_task_group() as tg:
            self._groups.append(tg)
            try:
                yield
            finally:
                self._groups.remove(tg)
                for task in self._tasks.values():  # told first: work in a thread polls this
                    if task.finished is None and task.context is not None:
                        task.context.cancelled.set()
                tg.cancel_scope.cancel()

    @property
    def serving(self) -> bool:
        return bool(self._groups)

    def expire(self) -> None:
        """Forget finished tasks whose retention has passed.

        Retention counts from creation, as the spec's ``ttl`` says; a task that finished after
        its TTL had already run out is kept for one more TTL from its end (capped at a minute),
        so a long job's result is never thrown away at the moment it appears."""
        now = self.clock()
        for task_id, task in list(self._tasks.items()):
            if task.finished is None:
                continue
            ttl = task.ttl_ms / 1000
            keep_until = max(task.started + ttl, task.finished + min(ttl, 60.0))
            if now >= keep_until:
                del self._tasks[task_id]

    def start(
        self,
        tool: str,
        work: Callable[[ToolContext], Awaitable[mcp_types.CallToolResult]],
        context: ToolContext,
        *,
        owner: str,
        ttl_ms: int | None,
        ask_through_task: bool = False,
        asks_first: bool = False,
        notify: Callable[[dict[str, Any]], Awaitable[None]] | None = None,
    ) -> _Task | str:
        """``asks_first``: the handler runs, asking on the call (the request's own ``ask``),
        until it calls :func:`start_task` or ends; only then is the task held and findable
        (wait for ``task.announced``)."""
        """Start ``work`` in the background as a new task; a one-line refusal when full."""
        self.expire()
        if not self._groups:
            return "the server is not running a task group"
        if len(self._tasks) >= self.max_tasks and not self._evict_finished():
            return (
                f"Too many tasks on this server ({self.max_tasks}); wait for one to finish "
                "or cancel one, then call again."
            )
        ttl = self.default_ttl_ms if ttl_ms is None else max(0, min(int(ttl_ms), self.max_ttl_ms))
        task = _Task(
            task_id=secrets.token_urlsafe(16), owner=owner, tool=tool, ttl_ms=ttl, started=self.clock()
        )

        async def progress(value: float, total: float | None, message: str | None) -> None:
            task.progress = {"progress": value, "total": total, "message": message}
            amount = f"{value:g}/{total:g}" if total is not None else f"{value:g}"
            task.message = f"{amount}: {message}" if message else amount
            task.touch()

        # The request that made the task is answered: progress goes to the task and logs to the
        # server's log only. A client that can fill forms is asked through the task
        # (input_required): answered by tasks/update on 2026, on the tasks/result stream on 2025.
        asker = (
            (task_asker(task) if ask_through_task else side_channel_asker(task))
            if context.can_elicit
            else None
        )
        task.context = replace(
            context,
            _send_progress=progress,
            _log_threshold=lambda: None,
            _elicit=context._elicit if asks_first else asker,
        )
        if asks_first:
            task.announced = anyio.Event()
        else:
            self._tasks[task.task_id] = task
        self._groups[-1].start_soon(self._run, task, work, asker)
        if notify is not None:
            self._groups[-1].start_soon(self._notify_status, task, notify)
        return task

    async def _notify_status(self, task: _Task, notify: Callable[[dict[str, Any]], Awaitable[None]]) -> None:
        """Send ``notifications/tasks/status`` (2025-11-25, optional there) at each change of the
        task's status, the last one when it ends; a client that cannot hear it (no way back)
        loses nothing, ``tasks/get`` says the same."""
        told = "working"  # what the call's answer said; the work may have moved on already
        while True:
            await task.moved.wait()
            task.moved = anyio.Event()
            if task.status == told:
                continue
            told = task.status
            try:
                await notify(self.wire(task))
            except Exception as exc:  # the connection is gone, or has no way back
                logger.debug("task %s: status notification not sent (%s)", task.task_id, exc)
                return
            if told in TERMINAL:
                return

    def _announce(self, task: _Task, asker: Elicit | None) -> None:
        """Tell the task to its caller: held (findable by ``tasks/get``), its asking switched
        from the call's rounds to the task's ``input_required``."""
        if task.announced is None or task.announced.is_set():
            return
        assert task.context is not None
        task.context._elicit = asker
        self._tasks[task.task_id] = task
        task.announced.set()

    def _evict_finished(self) -> bool:
        """Make room by forgetting the finished task that ended first (its TTL not yet over):
        a store full of results nobody fetched must not refuse new work. False when every
        task held is still running."""
        finished = [t for t in self._tasks.values() if t.finished is not None]
        if not finished:
            return False
        oldest = min(finished, key=lambda t: t.finished or 0.0)
        del self._tasks[oldest.task_id]
        return True

    async def _run(
        self,
        task: _Task,
        work: Callable[[ToolContext], Awaitable[mcp_types.CallToolResult]],
        asker: Elicit | None = None,
    ) -> None:
        assert task.context is not None
        if task.announced is not None:
            _ANNOUNCE.set(lambda: self._announce(task, asker))
        try:
            with task.scope:
                try:
                    result = await work(task.context)
                except BaseException as exc:
                    asked = input_required_of(exc)  # asked on the call, before the task
                    if asked is None or task.announced is None or task.announced.is_set():
                        raise
                    task.asked = asked
                    return
                if task.status in ("working", "input_required"):
                    task.result = result
                    task.status = "failed" if result.is_error else "completed"
                    task.message = _first_line(result) if result.is_error else None
        except Exception:  # the server's call() turns handler errors into results; this is a bug
            logger.exception("task %s (%s) failed", task.task_id, task.tool)
            task.result = error_result(f"Tool {task.tool} failed; the server log has details.")
            task.error = {"code": -32603, "message": f"Tool {task.tool} failed; the server log has details."}
            task.status, task.message = "failed", "the tool failed"
        finally:
            if task.status in ("working", "input_required"):  # cancelled by the server's shutdown
                task.status, task.message = "cancelled", "the server stopped"
                task.context.cancelled.set()
            task.finished = self.clock()
            task.touch()
            task.done.set()
            if task.announced is not None and not task.announced.is_set():
                if task.asked is None:  # ended without start_task: the finished task is told
                    self._tasks[task.task_id] = task
                task.announced.set()

    def find(self, task_id: str, owner: str) -> _Task:
        """The caller's task, or a -32602 naming the id (another caller's task is unknown too)."""
        self.expire()
        task = self._tasks.get(task_id)
        if task is None or task.owner != owner:
            raise JsonRpcError.invalid_params(f"Unknown task {task_id!r} (never created, or expired)")
        return task

    def cancel(self, task_id: str, owner: str, *, idempotent: bool = False) -> _Task:
        """Cancel the work. A finished task is refused with -32602 (2025), or left as it is
        when ``idempotent`` (2026: cancelling a finished task is acknowledged like any other)."""
        task = self.find(task_id, owner)
        if task.status in TERMINAL:
            if idempotent:
                return task
            raise JsonRpcError.invalid_params(f"Task {task_id!r} is already {task.status}; nothing to cancel")
        task.status, task.message = "cancelled", "cancelled by the client"
        assert task.context is not None
        task.context.cancelled.set()
        task.scope.cancel()
        task.touch()
        return task

    def listed(self, owner: str) -> list[_Task]:
        self.expire()
        return [t for t in self._tasks.values() if t.owner == owner]

    def wire(self, task: _Task) -> dict[str, Any]:
        """The task as ``Task`` on the wire."""
        out: dict[str, Any] = {
            "taskId": task.task_id,
            "status": task.status,
            "createdAt": task.created_at,
            "lastUpdatedAt": task.updated_at,
            "ttl": task.ttl_ms,
            "pollInterval": self.poll_interval_ms,
        }
        if task.message:
            out["statusMessage"] = task.message
        return out

    def detailed(self, task: _Task) -> dict[str, Any]:
        """The task as 2026's ``tasks/get`` answers it (SEP-2663's DetailedTask): the task's
        fields, the tool's result inlined once it is ``completed`` (a tool error included, with
        ``isError``), the error object once it ``failed``."""
        out = modern_task(self.wire(task), protocol_failure=task.error is not None)
        if out["status"] == "completed" and task.result is not None:
            out["result"] = inlined_result(
                task.result.model_dump(by_alias=True, mode="json", exclude_none=True)
            )
        elif out["status"] == "failed" and task.error is not None:
            out["error"] = dict(task.error)
        elif out["status"] == "input_required":
            out["inputRequests"] = {k: dict(q.request) for k, q in task.pending.items()}
        return out


def modern_task(task: Mapping[str, Any], *, protocol_failure: bool) -> dict[str, Any]:
    """A 2025 ``Task`` as the 2026 extension writes one: ``ttlMs`` and ``pollIntervalMs`` for
    ``ttl`` and ``pollInterval``, and ``completed`` for a 2025 ``failed`` that was a tool's own
    error (on 2026 ``failed`` means a protocol error only, ``protocol_failure``)."""
    renamed = {"ttl": "ttlMs", "pollInterval": "pollIntervalMs"}
    out = {renamed.get(k, k): v for k, v in task.items() if k not in ("_meta", "resultType")}
    if out.get("status") == "failed" and not protocol_failure:
        out["status"] = "completed"
    return out


def inlined_result(result: Mapping[str, Any]) -> dict[str, Any]:
    """A ``CallToolResult`` (wire form) as 2026's DetailedTask inlines it: no ``resultType`` of
    its own, no related-task ``_meta`` (the task id is the answer's own)."""
    out = {k: v for k, v in result.items() if k != "resultType"}
    meta = out.get("_meta")
    if isinstance(meta, Mapping):
        meta = {k: v for k, v in meta.items() if k not in (RELATED_TASK, mcp_types.SERVER_INFO_META_KEY)}
        if meta:
            out["_meta"] = meta
        else:
            del out["_meta"]
    return out


MISSING_CAPABILITY = -32021
HEADER_MISMATCH = -32020


def modern(ctx: Any) -> bool:
    """Whether ``ctx`` is a 2026-07-28 request."""
    return ctx.protocol_version in sdk.SDK_MODERN_VERSIONS


def declared_extension(ctx: Any) -> bool:
    """Whether a 2026 request's client declared the tasks extension (its ``_meta`` capabilities)."""
    wanted = mcp_types.ClientCapabilities(extensions={TASKS_EXTENSION: {}})
    return bool(ctx.session.check_client_capability(wanted))


def check_task_request(ctx: Any, task_id: str) -> None:
    """The 2026 rules every ``tasks/*`` request meets first (SEP-2663): the client declared the
    extension (else -32021, naming it under ``requiredCapabilities``), and an ``Mcp-Name``
    header, where one came, names this task (else -32020)."""
    if not modern(ctx):
        return
    if not declared_extension(ctx):
        raise JsonRpcError(
            MISSING_CAPABILITY,
            f"{ctx.method} needs the {TASKS_EXTENSION} extension in the client's capabilities",
            {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}},
        )
    named = _headers(ctx).get("mcp-name")
    if named is not None and named != task_id:
        raise JsonRpcError(HEADER_MISMATCH, f"Mcp-Name header {named!r} does not match taskId {task_id!r}")


def only_on_2025(ctx: Any) -> None:
    """``tasks/result`` and ``tasks/list`` are 2025 methods: 2026 removed them (-32601)."""
    if modern(ctx):
        raise JsonRpcError(-32601, f"Method not found: {ctx.method} is not part of the 2026 tasks extension")


def _first_line(result: mcp_types.CallToolResult) -> str:
    for item in result.content:
        if isinstance(item, mcp_types.TextContent) and item.text.strip():
            return item.text.strip().splitlines()[0][:300]
    return "the tool reported an error"


_CREDENTIAL_WORDS = ("authorization", "cookie", "key", "token")


def owner_of(headers: Mapping[str, str]) -> str:
    """Who a task belongs to: a digest of the credentials the request carried (none on stdio,
    where the one client is the owner). A second caller with other credentials, or none, cannot
    read, list or cancel the task."""
    held = sorted((k, v) for k, v in headers.items() if any(w in k for w in _CREDENTIAL_WORDS))
    if not held:
        return ""
    return hashlib.sha256(repr(held).encode()).hexdigest()


def task_requested(ctx: Any, params: Mapping[str, Any]) -> tuple[bool, int | None]:
    """Whether this ``tools/call`` asked for a task, and the TTL it asked for (2025 only: a
    2026 client that declared the extension takes a task wherever the server offers one)."""
    if modern(ctx):
        return declared_extension(ctx), None  # a 2025 ``task`` param is ignored there
    task = params.get("task")
    if not isinstance(task, dict):
        return False, None
    ttl = task.get("ttl")
    return True, ttl if isinstance(ttl, int) and not isinstance(ttl, bool) else None


TASK_CAPABILITY = mcp_types.ServerTasksCapability(
    list=mcp_types.TasksListCapability(),
    cancel=mcp_types.TasksCancelCapability(),
    requests=mcp_types.ServerTasksRequestsCapability(
        tools=mcp_types.TasksToolsCapability(call=mcp_types.TasksCallCapability())
    ),
)
"""What a server with a task-capable tool declares on the 2025 wire."""


def declare_tasks(lowlevel: SdkServer) -> None:
    """Declare tasks on both eras: the ``tasks`` capability (2025), the extension (2026)."""
    lowlevel.extensions[TASKS_EXTENSION] = {}
    lowlevel.task_capability = TASK_CAPABILITY


def status_notifier(ctx: Any) -> Callable[[dict[str, Any]], Awaitable[None]] | None:
    """Sends a 2025 ``notifications/tasks/status`` to the client that made the task, over its
    session (stdio, or HTTP with sessions); ``None`` on stateless HTTP, where nothing reaches a
    client outside a request's own stream."""
    session = ctx.session
    if getattr(ctx, "request", None) is not None and _headers(ctx).get("mcp-session-id") is None:
        return None

    async def notify(task: dict[str, Any]) -> None:
        params = mcp_types.TaskStatusNotificationParams.model_validate(task, by_name=False)
        await session.send_notification(mcp_types.TaskStatusNotification(params=params))

    return notify


def task_owner(ctx: Any) -> str:
    """Who owns the tasks a request makes or reads (see :func:`owner_of`)."""
    return owner_of(_headers(ctx))


def task_answer(lowlevel: SdkServer, ctx: Any, result: dict[str, Any]) -> dict[str, Any]:
    """``result`` in this request's era, for a middleware that answers itself (the SDK adds
    nothing to such an answer): 2026 results carry ``resultType`` and the server's ``_meta``
    stamp; 2025 results carry neither."""
    if ctx.protocol_version in sdk.SDK_MODERN_VERSIONS:
        meta = dict(result.get("_meta") or {})
        meta.setdefault(mcp_types.SERVER_INFO_META_KEY, lowlevel.server_info_stamp)
        return {**result, "resultType": result.get("resultType", "complete"), "_meta": meta}
    return {k: v for k, v in result.items() if k != "resultType"}


def install(
    lowlevel: SdkServer,
    store: TaskStore,
    *,
    is_task_tool: Callable[[str], bool | str],
    run_tool: RunTool,
    context_of: ContextOf,
    asks_first: Callable[[str], bool] = lambda _name: False,
) -> None:
    """Serve tasks on ``lowlevel``: the capability (2025) and extension (2026), the ``tasks/*``
    methods, the ``tools/call`` middleware that answers with a task, and the lifespan that
    holds the background work."""
    declare_tasks(lowlevel)
    inner = lowlevel.lifespan

    @asynccontextmanager
    async def lifespan(server: Any) -> AsyncIterator[Any]:
        async with store.running(), inner(server) as state:
            yield state

    lowlevel.lifespan = lifespan

    owner = task_owner

    def answer(ctx: Any, result: dict[str, Any]) -> dict[str, Any]:
        return task_answer(lowlevel, ctx, result)

    async def middleware(ctx: Any, call_next: Any) -> Any:
        params = ctx.params if isinstance(ctx.params, Mapping) else {}
        name = params.get("name")
        if ctx.method != "tools/call" or not isinstance(name, str) or not is_task_tool(name):
            return await call_next(ctx)
        wanted, ttl = task_requested(ctx, params)
        if not wanted and is_task_tool(name) == "required":
            refuse_untasked(ctx, name)
        if not wanted or not store.serving:
            return await call_next(ctx)
        arguments = params.get("arguments")
        arguments = arguments if isinstance(arguments, Mapping) else {}
        context = context_of(ctx, name)

        async def work(task_context: ToolContext) -> mcp_types.CallToolResult:
            return await run_tool(name, arguments, task_context)

        first = modern(ctx) and asks_first(name)
        task = store.start(
            name,
            work,
            context,
            owner=owner(ctx),
            ttl_ms=ttl,
            ask_through_task=modern(ctx),
            asks_first=first,
            notify=None if modern(ctx) else status_notifier(ctx),
        )
        if isinstance(task, str):
            refused = error_result(task).model_dump(by_alias=True, mode="json", exclude_none=True)
            return answer(ctx, refused)
        if task.announced is not None:
            try:
                await task.announced.wait()
            finally:
                if not task.announced.is_set():  # the caller left while the handler was asking
                    task.scope.cancel()
            if task.asked is not None:  # this round ends with the handler's question
                return answer(ctx, task.asked.model_dump(by_alias=True, mode="json", exclude_none=True))
        if modern(ctx):  # SEP-2663: flat, the task's fields beside resultType "task"
            return answer(
                ctx, {"resultType": "task", **modern_task(store.wire(task), protocol_failure=False)}
            )
        return answer(ctx, {"task": store.wire(task)})

    lowlevel.middleware.append(cast(Any, sdk_errors(middleware)))  # a refusal: its JSON-RPC error, not -32603

    async def get(ctx: Any, params: mcp_types.GetTaskRequestParams) -> dict[str, Any]:
        check_task_request(ctx, params.task_id)
        task = store.find(params.task_id, owner(ctx))
        out = store.detailed(task) if modern(ctx) else store.wire(task)
        if task.progress is not None:
            out["_meta"] = {PROGRESS_META: dict(task.progress)}
        return out

    async def update(ctx: Any, params: TaskUpdateParams) -> dict[str, Any]:
        if not modern(ctx):
            raise JsonRpcError(-32601, "Method not found: tasks/update is part of the 2026 tasks extension")
        check_task_request(ctx, params.task_id)
        task = store.find(params.task_id, owner(ctx))
        answer_questions(task, params.input_responses or {})
        return {}  # an empty acknowledgement; the next tasks/get tells where the task went

    async def result(ctx: Any, params: mcp_types.GetTaskPayloadRequestParams) -> dict[str, Any]:
        only_on_2025(ctx)
        task = store.find(params.task_id, owner(ctx))
        async with anyio.create_task_group() as tg:
            tg.start_soon(carry_questions, task, ctx)
            await task.done.wait()
            tg.cancel_scope.cancel()
        if task.result is None:
            raise JsonRpcError.invalid_params(f"Task {task.task_id!r} was {task.status}: {task.message}")
        out = task.result.model_dump(by_alias=True, mode="json", exclude_none=True)
        out["_meta"] = {**(out.get("_meta") or {}), RELATED_TASK: {"taskId": task.task_id}}
        return answer(ctx, out)

    async def cancel(ctx: Any, params: mcp_types.CancelTaskRequestParams) -> dict[str, Any]:
        check_task_request(ctx, params.task_id)
        if modern(ctx):  # an empty acknowledgement, for a finished task too; tasks/get tells
            store.cancel(params.task_id, owner(ctx), idempotent=True)
            return {}
        return store.wire(store.cancel(params.task_id, owner(ctx)))

    async def listing(ctx: Any, params: mcp_types.PaginatedRequestParams) -> dict[str, Any]:
        only_on_2025(ctx)
        return {"tasks": [store.wire(t) for t in store.listed(owner(ctx))]}

    lowlevel.add_request_handler("tasks/get", mcp_types.GetTaskRequestParams, sdk_errors(get))
    lowlevel.add_request_handler("tasks/result", mcp_types.GetTaskPayloadRequestParams, sdk_errors(result))
    lowlevel.add_request_handler("tasks/cancel", mcp_types.CancelTaskRequestParams, sdk_errors(cancel))
    lowlevel.add_request_handler("tasks/list", mcp_types.PaginatedRequestParams, sdk_errors(listing))
    lowlevel.add_request_handler("tasks/update", TaskUpdateParams, sdk_errors(update))


class TaskUpdateParams(mcp_types.RequestParams):
    """``tasks/update`` (2026): a client's answers to a task waiting for input, keyed as the
    task's ``inputRequests`` named them (SEP-2663); acknowledged empty, whatever it answered."""

    task_id: str
    input_responses: dict[str, Any] | None = None


def _headers(ctx: Any) -> dict[str, str]:
    headers = getattr(ctx.request, "headers", None)
    if headers is None:
        return {}
    return {str(k).lower(): str(v) for k, v in headers.items()}
