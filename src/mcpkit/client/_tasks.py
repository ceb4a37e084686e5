"""Following a task to its result: poll ``tasks/get`` at the server's pace, then ``tasks/result``.

A server may answer a long ``tools/call`` with a task (see :mod:`mcpkit.server._tasks`): on the
2025-11-25 wire when the call asked for one (``params.task``), on 2026-07-28 when the client
declared the extension ``io.modelcontextprotocol/tasks``. The caller still wants one result, so
this module turns the task back into it: it waits the ``pollInterval`` the server suggests
between polls (bounded, so a server cannot make a client spin or sleep for an hour), and when
the caller gives up (its deadline passes, or its scope is cancelled) it sends ``tasks/cancel``
so the work does not go on for nobody.

One loop serves both of mcpkit's clients: :meth:`mcpkit.client.Session.call` (raw dicts, through
:func:`call_tool`) and the SDK's ``mcp.Client`` (through :class:`TasksExtension`, the SDK's own
hook for an extension's result shape).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, cast

import anyio
import mcp_types
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp.client.session import ClientRequestContext
from pydantic import TypeAdapter, ValidationError

from mcpkit.errors import CallError, CallTimeoutError, JsonRpcError

if TYPE_CHECKING:
    from mcpkit.client._session import Session

logger = logging.getLogger("mcpkit.client")

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
TERMINAL = frozenset({"completed", "failed", "cancelled"})
MIN_POLL_SECONDS = 0.05
MAX_POLL_SECONDS = 30.0
DEFAULT_POLL_SECONDS = 1.0
CANCEL_SECONDS = 5.0
"""How long a ``tasks/cancel`` sent on the way out may take (it runs shielded from the
cancellation that caused it)."""

Request = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]
"""Sends one request (method, params) and returns its raw result."""


def is_task(raw: Any) -> bool:
    """Whether a ``tools/call`` answer is a task rather than the tool's result: a 2025
    ``CreateTaskResult`` (``{"task": {...}}``) or a 2026 one (flat, ``resultType: "task"``)."""
    if not isinstance(raw, Mapping) or "content" in raw:
        return False
    if raw.get("resultType") == "task":
        return isinstance(raw.get("taskId"), str) or isinstance(raw.get("task"), Mapping)
    return "resultType" not in raw and isinstance(raw.get("task"), Mapping)


def task_of(raw: Mapping[str, Any]) -> dict[str, Any]:
    """The task a :func:`is_task` answer names, whichever era wrote it."""
    nested = raw.get("task")
    return dict(nested) if isinstance(nested, Mapping) else dict(raw)


def poll_seconds(task: Mapping[str, Any]) -> float:
    """The server's poll interval (2026 ``pollIntervalMs``, 2025 ``pollInterval``) in seconds,
    kept between 50 ms and 30 s (1 s without one)."""
    interval = task.get("pollIntervalMs", task.get("pollInterval"))
    if isinstance(interval, bool) or not isinstance(interval, (int, float)) or not math.isfinite(interval):
        return DEFAULT_POLL_SECONDS
    return min(max(interval / 1000, MIN_POLL_SECONDS), MAX_POLL_SECONDS)


async def dispatch_answers(client: Any, requests: Mapping[str, Any]) -> dict[str, Any]:
    """``requests`` (a task's ``inputRequests``, wire form) answered through ``client``'s input
    callbacks (the SDK's ``ClientSession.dispatch_input_request``, which mcpkit's handlers
    fill): the raw answers by key. A callback's refusal raises :class:`JsonRpcError`; a request
    that is none the client knows raises :class:`CallError`."""
    try:
        parsed = mcp_types.InputRequiredResult.model_validate(
            {"resultType": "input_required", "inputRequests": dict(requests)}, by_name=False
        )
    except ValidationError as exc:
        problem = exc.errors()[0]
        raise CallError(
            f"a task asked for input in a malformed request: {problem.get('msg')} at {problem.get('loc')}"
        ) from None
    answers: dict[str, Any] = {}
    for key, request in (parsed.input_requests or {}).items():
        meta = request.params.meta if request.params is not None else None
        answer = await client.dispatch_input_request(
            ClientRequestContext(session=client, request_id=key, meta=meta), request
        )
        if isinstance(answer, mcp_types.ErrorData):
            raise JsonRpcError(answer.code, answer.message, answer.data)
        answers[key] = answer.model_dump(by_alias=True, mode="json", exclude_none=True)
    return answers


Answer = Callable[[Mapping[str, Any]], Awaitable[dict[str, Any]]]
"""Answers a task's open input requests (key -> request) with the raw answers by key."""


async def follow(
    request: Request,
    task: Mapping[str, Any],
    *,
    on_status: Callable[[Mapping[str, Any]], Any] | None = None,
    answer: Answer | None = None,
) -> dict[str, Any]:
    """Poll ``task`` until it ends and return the tool's result (a raw ``CallToolResult``):
    inlined in the last ``tasks/get`` on 2026, from ``tasks/result`` on 2025.

    A task that failed raises the server's error as :class:`~mcpkit.errors.JsonRpcError`, as
    does one cancelled by someone else. Leaving early, by cancellation or an exception,
    cancels the task on the server first.

    A 2026 task waiting on its user (``input_required`` with ``inputRequests``) is answered
    through ``answer`` and ``tasks/update``, each question once; with no ``answer`` it waits
    until the caller gives up (the task is then cancelled)."""
    task_id = str(task.get("taskId"))
    finished = False
    answered: set[str] = set()
    try:
        current: Mapping[str, Any] = task
        while current.get("status") not in TERMINAL:
            asked = current.get("inputRequests") if current.get("status") == "input_required" else None
            if current.get("status") == "input_required" and asked is None and "ttl" in current:
                # 2025-11-25: the questions come as requests on the tasks/result stream (the
                # session's handlers answer them), which then ends with the result.
                result = await request("tasks/result", {"taskId": task_id})
                finished = True
                return result
            if answer is not None and isinstance(asked, Mapping):
                fresh = {k: v for k, v in asked.items() if k not in answered}
                if fresh:
                    responses = await answer(fresh)
                    answered.update(fresh)
                    await request("tasks/update", {"taskId": task_id, "inputResponses": responses})
            await anyio.sleep(poll_seconds(current))
            current = await request("tasks/get", {"taskId": task_id})
            if on_status is not None:
                on_status(current)
        finished = True
        inline_result, error = current.get("result"), current.get("error")
        if isinstance(inline_result, Mapping):
            return dict(inline_result)
        if isinstance(error, Mapping):
            code = error.get("code")
            raise JsonRpcError(
                code if isinstance(code, int) else -32603, str(error.get("message")), error.get("data")
            )
        if current.get("status") == "cancelled" and "ttlMs" in current:
            raise JsonRpcError(-32602, f"Task {task_id} was cancelled")
        return await request("tasks/result", {"taskId": task_id})
    finally:
        if not finished:
            await _cancel_quietly(request, task_id)


async def _cancel_quietly(request: Request, task_id: str) -> None:
    with anyio.CancelScope(shield=True), anyio.move_on_after(CANCEL_SECONDS):
        try:
            await request("tasks/cancel", {"taskId": task_id})
        except Exception as exc:  # already finished, expired or the connection is gone: nothing to stop
            logger.debug("tasks/cancel %s not accepted: %s", task_id, exc)


def offers_tasks(capabilities: Mapping[str, Any]) -> bool:
    """Whether a server's (2025) capabilities take task-augmented ``tools/call``."""
    tasks = capabilities.get("tasks")
    requests = tasks.get("requests") if isinstance(tasks, Mapping) else None
    tools = requests.get("tools") if isinstance(requests, Mapping) else None
    return isinstance(tools, Mapping) and isinstance(tools.get("call"), Mapping)


async def call_tool(
    session: Session, params: dict[str, Any], seconds: float | None, *, task: bool
) -> dict[str, Any]:
    """``tools/call`` through ``session`` under one deadline of ``seconds``, following a task
    answer to its result.

    A task is asked for where the server takes them and the tool's definition allows one,
    when ``task`` is true or the tool requires it (a call without one would be refused).
    Raises :class:`~mcpkit.errors.CallTimeoutError` when the deadline passes while the task
    runs (the task is cancelled on the server first)."""
    deadline = None if seconds is None else anyio.current_time() + seconds
    asked = False
    if offers_tasks(session.capabilities):
        support = await _task_support(session, str(params.get("name")))
        if support == "required" or (task and support == "optional"):
            params, asked = {**params, "task": {}}, True
    raw = await (
        _first_answer(session, params, seconds)
        if asked
        else session.request("tools/call", params, timeout=seconds)
    )
    raw = dict(raw)
    if not is_task(raw):
        return raw

    async def request(method: str, body: dict[str, Any]) -> dict[str, Any]:
        left = None if deadline is None else max(deadline - anyio.current_time(), 0.001)
        return dict(await session.request(method, body, timeout=left))

    with anyio.CancelScope(deadline=math.inf if deadline is None else deadline) as scope:
        return await follow(request, task_of(raw), answer=session.answer_requests)
    assert scope.cancelled_caught and seconds is not None
    raise CallTimeoutError("tools/call", seconds)


async def _task_support(session: Session, name: str) -> str | None:
    """The tool's ``execution.taskSupport`` from the session's (cached) tool list."""
    for tool in await session.list_tools():
        if tool.get("name") == name:
            execution = tool.get("execution")
            support = execution.get("taskSupport") if isinstance(execution, Mapping) else None
            return support if isinstance(support, str) else None
    return None


async def _first_answer(session: Session, params: dict[str, Any], seconds: float | None) -> dict[str, Any]:
    """The answer to a ``tools/call`` that asked for a task, even when the caller is cancelled
    while it is on its way: the task it names is then cancelled on the server, where it would
    otherwise run for nobody (the caller gone, no one knows its id). The wait for that answer
    after the caller left is bounded by :data:`CANCEL_SECONDS`."""
    box: dict[str, Any] = {}
    gone = False
    shield = anyio.CancelScope(shield=True)

    async def send() -> None:
        with shield:
            try:
                box["raw"] = dict(await session.request("tools/call", params, timeout=seconds))
            except Exception as exc:  # raised below, outside the task group (no exception group)
                box["error"] = exc
            if gone and is_task(box.get("raw")):
                task_id = str(task_of(box["raw"]).get("taskId"))

                async def request(method: str, body: dict[str, Any]) -> dict[str, Any]:
                    return dict(await session.request(method, body, timeout=CANCEL_SECONDS))

                await _cancel_quietly(request, task_id)
        tg.cancel_scope.cancel()

    async def watch() -> None:
        nonlocal gone
        try:
            await anyio.sleep_forever()
        finally:
            if "raw" not in box and "error" not in box:  # the caller left before the answer
                gone = True
                shield.deadline = min(shield.deadline, anyio.current_time() + CANCEL_SECONDS)

    async with anyio.create_task_group() as tg:
        tg.start_soon(watch)
        tg.start_soon(send)
    if "error" in box:
        raise box["error"]
    return dict(box["raw"])


# -- the SDK's client ----------------------------------------------------------------------


class TaskCreated(mcp_types.Result):
    """A 2026 ``tools/call`` answer that is a task (SEP-2663's flat ``CreateTaskResult``)."""

    result_type: Literal["task"] = "task"
    task_id: str
    status: str
    status_message: str | None = None
    created_at: str | None = None
    last_updated_at: str | None = None
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None


class _GetTask(mcp_types.GetTaskRequest):
    name_param = "taskId"  # SEP-2663: tasks/* carry Mcp-Name: <taskId> over HTTP


class _CancelTask(mcp_types.CancelTaskRequest):
    name_param = "taskId"


class _UpdateParams(mcp_types.RequestParams):
    task_id: str
    input_responses: dict[str, Any]


class _UpdateTask(mcp_types.Request[_UpdateParams, Literal["tasks/update"]]):
    """SEP-2663's ``tasks/update``: a task's answers (the SDK has no model of it)."""

    method: Literal["tasks/update"] = "tasks/update"
    params: _UpdateParams
    name_param = "taskId"


_RAW = TypeAdapter(dict[str, Any])
_REQUESTS: dict[str, Callable[[str], Any]] = {
    "tasks/get": lambda t: _GetTask(params=mcp_types.GetTaskRequestParams(task_id=t)),
    "tasks/cancel": lambda t: _CancelTask(params=mcp_types.CancelTaskRequestParams(task_id=t)),
}


class TasksExtension(ClientExtension):
    """The tasks extension for the SDK's ``mcp.Client(extensions=[TasksExtension()])``: the
    client declares it, and a task answer is followed to its ``CallToolResult``, which is what
    ``client.call_tool`` returns, as if the call had been held open."""

    identifier = TASKS_EXTENSION

    def claims(self) -> Sequence[ResultClaim[Any]]:
        return (ResultClaim(result_type="task", model=TaskCreated, resolve=self._resolve),)

    async def _resolve(self, created: TaskCreated, ctx: ClaimContext) -> mcp_types.CallToolResult:
        async def request(method: str, body: dict[str, Any]) -> dict[str, Any]:
            sent = _REQUESTS[method](str(body["taskId"]))
            # A raw dict: the SDK validates no result of a method it does not know, and the
            # loop reads only a few keys (mypy's bound on the result type is a Result model).
            answer: dict[str, Any] = await ctx.session.send_request(
                sent, cast(Any, _RAW), request_read_timeout_seconds=ctx.read_timeout_seconds
            )
            return answer

        task = created.model_dump(by_alias=True, mode="json", exclude_none=True)

        async def answer(requests: Mapping[str, Any]) -> dict[str, Any]:
            return await dispatch_answers(ctx.session, requests)

        async def update(method: str, body: dict[str, Any]) -> dict[str, Any]:
            if method != "tasks/update":
                return await request(method, body)
            sent = _UpdateTask(params=_UpdateParams.model_validate(body, by_name=False))
            answer_: dict[str, Any] = await ctx.session.send_request(
                sent, cast(Any, _RAW), request_read_timeout_seconds=ctx.read_timeout_seconds
            )
            return answer_

        raw = await follow(update, task, answer=answer)
        return mcp_types.CallToolResult.model_validate(raw, by_name=False)
