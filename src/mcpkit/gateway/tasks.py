"""Tasks through the gateway: a front client's task goes to the server that runs the tool.

A client in front that asks for a task (``params.task`` on 2025-11-25, the extension
``io.modelcontextprotocol/tasks`` on 2026-07-28) on a tool whose server takes tasks gets that
server's task back; the gateway remembers which server holds each task id, and sends the
client's ``tasks/get`` and ``tasks/cancel`` there. ``tasks/result`` waits for the task's end by
polling the server at its own ``pollInterval`` (the gateway's calls to a server have a deadline
that a long task outlives), then passes the result through the same checks and cap as every
other tool result (:meth:`CallPipeline.finished`). A tool whose server does not take tasks is
called as always, held open, whatever the client asked.

The servers speak the 2025 wire to the gateway; a 2026 client in front gets the extension's
shapes (SEP-2663): the flat task, ``tasks/get`` with the result inlined once the task ended
(fetched from the server's ``tasks/result``), an empty ``tasks/cancel`` acknowledgement, and no
``tasks/result`` or ``tasks/list``. A task that asks its user (2025: ``input_required``, the
question sent as ``elicitation/create`` on the server's ``tasks/result`` stream) is shown to a
2026 client as ``input_required`` with ``inputRequests``: the gateway keeps that stream open
while the task waits, the server's question waits in the task (:class:`Parked`, as a 2026
client's parked call), and ``tasks/update`` answers it. A ``taskSupport: "required"`` tool called
by a 2026 client without the extension gets -32021 from the gateway itself.

The gateway declares tasks only when one of its servers does (the toolkit's rules:
:func:`mcpkit.server.relay.declare_tasks`), and a task belongs to the caller who made it
(:func:`mcpkit.server.relay.task_owner`). Calls reach this module only on the SDK's path: a request
with ``params.task`` never takes a fast path, and 2026 requests never do.
"""

from __future__ import annotations

import logging
import weakref
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import anyio
import mcp_types

from mcpkit.client import CallError, CallTimeoutError, is_task, offers_tasks, poll_seconds
from mcpkit.gateway.asking import Parked
from mcpkit.gateway.pipeline import capabilities_of
from mcpkit.jsonrpc import JsonRpcError
from mcpkit.server.relay import (
    SDK_HANDSHAKE_VERSIONS,
    SdkServer,
    TaskUpdateParams,
    check_task_request,
    declare_tasks,
    inlined_result,
    modern_task,
    only_on_2025,
    refuse_untasked,
    sdk_errors,
    task_answer,
    task_owner,
    task_requested,
)

if TYPE_CHECKING:
    from mcpkit.gateway.core import Gateway
    from mcpkit.gateway.downstream import Downstream
    from mcpkit.gateway.views import Entry

logger = logging.getLogger("mcpkit.gateway")
RELATED_TASK = "io.modelcontextprotocol/related-task"

MAX_HELD = 4096
"""Task ids remembered at once; the oldest is forgotten first (its server expires it anyway)."""
HANDLE_SECONDS = 24 * 3600.0
"""How long a sealed task handle opens when its server set the task no ``ttl``."""
TERMINAL = frozenset({"completed", "failed", "cancelled"})


@dataclass(eq=False)
class _Held:
    entry: Entry
    owner: str
    handle: str
    """The task id its client sees: the server's own, or sealed (see :mod:`sealing`)."""
    asking: Parked | None = None
    """A 2026 client's task: its 2025 server's questions wait here for tasks/get and tasks/update."""
    relaying: bool = False
    """Whether a ``tasks/result`` to its server is open now (the stream its questions come on)."""


class TaskRelay:
    """The tasks the gateway's clients made, and the server each one lives on."""

    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway
        self._held: OrderedDict[str, _Held] = OrderedDict()
        gateway.asking.for_task = self._asking_of

    def offered(self) -> bool:
        """Whether some server takes task-augmented tool calls."""
        return any(offers_tasks(d.capabilities) for d in self.gateway.downstreams.values())

    def _downstream(self, held: _Held) -> Downstream:
        return self.gateway.downstreams[held.entry.route.server]

    def _seal(self, ctx: Any, entry: Entry, task: Mapping[str, Any]) -> str:
        """The id the client gets for its server's ``task``: the server's own, or (with state
        keys) a handle that any replica holding the key opens (:meth:`_find`)."""
        task_id = str(task.get("taskId"))
        sealer = self.gateway.sealer
        if sealer is None:
            return task_id
        ttl = task.get("ttl")
        seconds = ttl / 1000 if isinstance(ttl, int | float) and ttl > 0 else HANDLE_SECONDS
        sealed = {"s": entry.route.server, "n": entry.public, "i": task_id, "o": task_owner(ctx)}
        return sealer.seal(sealed, seconds)

    async def _find(self, ctx: Any, handle: str) -> tuple[str, _Held]:
        """The server's task id behind the client's ``handle``, and what the gateway holds of
        it: remembered here, or (a sealed handle) rebuilt from the handle on any replica."""
        owner = task_owner(ctx)
        unknown = JsonRpcError.invalid_params(f"Unknown task {handle!r} (never created here, or expired)")
        sealer = self.gateway.sealer
        if sealer is None:
            held = self._held.get(handle)
            if held is None or held.owner != owner:
                raise unknown
            return handle, held
        sealed = sealer.open(handle, "taskId")
        if not isinstance(sealed, dict) or sealed.get("o") != owner or not isinstance(sealed.get("i"), str):
            raise unknown
        task_id, server = sealed["i"], sealed.get("s")
        held = self._held.get(task_id)
        if held is None or held.entry.route.server != server:
            gateway = self.gateway
            view = await gateway.routing.view_async(gateway.relay.profiles_of(ctx))
            name = sealed.get("n")
            entry = gateway.pipeline.route(view, name) if isinstance(name, str) else None
            if entry is None or entry.route.server != server:
                raise JsonRpcError.invalid_params(f"Task {handle!r}: its tool is not served here now")
            asking = None
            if _modern(ctx):
                asking = Parked(task_id, entry.route.server, capabilities_of(ctx.session.client_capabilities))
            held = _Held(entry, owner, handle, asking)
            self._hold(task_id, held)
        return task_id, held

    def _hold(self, task_id: str, held: _Held) -> None:
        self._held[task_id] = held
        while len(self._held) > MAX_HELD:
            self._held.popitem(last=False)

    async def _ask(self, held: _Held, task_id: str, method: str) -> dict[str, Any]:
        """``method`` for ``task_id`` on its server; its refusal as the client's error."""
        try:
            return await self._downstream(held).request(method, {"taskId": task_id})
        except JsonRpcError as exc:
            if exc.code == -32602 and method == "tasks/get":  # expired on its server: here too
                self._held.pop(task_id, None)
            raise
        except CallError as exc:
            raise JsonRpcError.internal(
                f"Server {held.entry.route.server} did not answer {method}: {exc}"
            ) from None

    async def call(self, server: SdkServer, ctx: Any, call_next: Any, counted: Any) -> Any:
        """A ``tools/call`` (server middleware): a task where the client asked and the tool's
        server takes one, ``counted`` while it is sent; otherwise the gateway's ordinary call."""
        params = ctx.params if isinstance(ctx.params, Mapping) else {}
        name = params.get("name")
        if ctx.method != "tools/call" or not isinstance(name, str):
            return await call_next(ctx)
        wanted, ttl = task_requested(ctx, params)
        if not wanted and not _modern(ctx):  # a 2025 server refuses its own required tool
            return await call_next(ctx)
        gateway = self.gateway
        view = await gateway.routing.view_async(gateway.relay.profiles_of(ctx))
        entry = gateway.pipeline.route(view, name)
        if entry is None:
            return await call_next(ctx)
        downstream = gateway.downstreams[entry.route.server]
        support = (entry.original.get("execution") or {}).get("taskSupport")
        if not wanted:
            # A 2026 client without the extension: -32021 naming it (SEP-2663), as the toolkit's
            # own servers answer, where a 2025 server behind would refuse the call its own way.
            if support == "required":
                refuse_untasked(ctx, name)
            return await call_next(ctx)
        if not offers_tasks(downstream.capabilities) or support not in ("optional", "required"):
            return await call_next(ctx)
        arguments = params.get("arguments")
        request: dict[str, Any] = {
            "name": entry.route.tool,
            "arguments": entry.restore(dict(arguments) if isinstance(arguments, Mapping) else {}),
            "task": {} if ttl is None else {"ttl": ttl},
        }
        try:
            raw = await counted(lambda _ctx, body: downstream.request("tools/call", body))(ctx, request)
        except CallError as exc:
            return task_answer(server, ctx, gateway.pipeline.failed(entry.route, exc))
        if not is_task(raw):  # the server ran it at once after all: an ordinary result
            return task_answer(server, ctx, gateway.pipeline.finished(entry, raw))
        task = dict(raw["task"])
        task_id = str(task.get("taskId"))
        asking = None
        if _modern(ctx):  # its server's questions come back to this client through tasks/get
            asking = Parked(task_id, entry.route.server, capabilities_of(ctx.session.client_capabilities))
        task["taskId"] = handle = self._seal(ctx, entry, task)
        self._hold(task_id, _Held(entry, task_owner(ctx), handle, asking))
        if _modern(ctx):  # the 2026 extension's flat shape, from the server's 2025 one
            return task_answer(
                server, ctx, {"resultType": "task", **modern_task(task, protocol_failure=False)}
            )
        return task_answer(server, ctx, {"task": task})

    async def get(self, ctx: Any, params: mcp_types.GetTaskRequestParams) -> dict[str, Any]:
        check_task_request(ctx, params.task_id)
        task_id, held = await self._find(ctx, params.task_id)
        task = _task_only(await self._ask(held, task_id, "tasks/get"))
        task["taskId"] = params.task_id
        if not _modern(ctx):
            return task
        # 2026's DetailedTask: the result inlined once the task ended (a 2025 server keeps it
        # behind tasks/result), a JSON-RPC error from there as the failed task's error.
        if task.get("status") == "input_required" and held.asking is not None:
            return self._waiting(held, task_id, task)
        if task.get("status") not in ("completed", "failed"):
            return modern_task(task, protocol_failure=False)
        try:
            raw = await self._ask(held, task_id, "tasks/result")
        except JsonRpcError as exc:
            failed = modern_task(task, protocol_failure=True)
            return {**failed, "status": "failed", "error": {"code": exc.code, "message": exc.message}}
        done = modern_task(task, protocol_failure=False)
        return {**done, "result": inlined_result(self.gateway.pipeline.finished(held.entry, raw))}

    async def cancel(self, ctx: Any, params: mcp_types.CancelTaskRequestParams) -> dict[str, Any]:
        check_task_request(ctx, params.task_id)
        task_id, held = await self._find(ctx, params.task_id)
        if not _modern(ctx):
            return {**_task_only(await self._ask(held, task_id, "tasks/cancel")), "taskId": params.task_id}
        # 2026: an empty acknowledgement, for a task that already ended too (a 2025 server
        # refuses to cancel one); a task its server no longer knows is unknown here (-32602).
        task = await self._ask(held, task_id, "tasks/get")
        if task.get("status") not in TERMINAL:
            try:
                await self._ask(held, task_id, "tasks/cancel")
            except JsonRpcError as exc:
                if exc.code != -32602:  # -32602 here: it ended between the two requests
                    raise
        return {}

    async def update(self, ctx: Any, params: Any) -> dict[str, Any]:
        if not _modern(ctx):
            raise JsonRpcError(-32601, "Method not found: tasks/update is part of the 2026 tasks extension")
        check_task_request(ctx, params.task_id)
        _task_id, held = await self._find(ctx, params.task_id)
        if held.asking is not None:  # answers to questions not asked (or asked no more) are ignored
            held.asking.answer(params.input_responses or {})
        return {}  # an empty acknowledgement; the next tasks/get tells where the task went

    def _asking_of(self, server: str, params: Mapping[str, Any]) -> Parked | None:
        """The 2026 client's task that ``server``'s question (params of an ``elicitation/create``,
        ``sampling/createMessage`` or ``roots/list``) belongs to, by its related-task ``_meta``."""
        meta = params.get("_meta")
        related = meta.get(RELATED_TASK) if isinstance(meta, Mapping) else None
        task_id = related.get("taskId") if isinstance(related, Mapping) else None
        held = self._held.get(task_id) if isinstance(task_id, str) else None
        if held is None or held.entry.route.server != server:
            return None
        return held.asking

    def _waiting(self, held: _Held, task_id: str, task: dict[str, Any]) -> dict[str, Any]:
        """A 2025 server's task in ``input_required`` as 2026 shows it: its questions in
        ``inputRequests``. The 2025 server asks them on a ``tasks/result`` stream, so one is
        kept open while the task waits; until a question arrives (or after its answer went)
        the task shows ``working``."""
        assert held.asking is not None
        if not held.relaying:
            held.relaying = True

            async def relay() -> None:
                try:
                    await self._ask(held, task_id, "tasks/result")
                except Exception as exc:  # the task's end is read by tasks/get: nothing is lost
                    logger.debug("tasks/result for %s ended: %s", task_id, exc)
                finally:
                    held.relaying = False

            self.gateway.asking.start_soon(relay)
        out = modern_task(task, protocol_failure=False)
        questions = held.asking.open()
        if not questions:
            return {**out, "status": "working"}
        return {
            **out,
            "inputRequests": {k: {"method": q.method, "params": q.params} for k, q in questions.items()},
        }

    async def result(self, ctx: Any, params: mcp_types.GetTaskPayloadRequestParams) -> dict[str, Any]:
        only_on_2025(ctx)
        task_id, held = await self._find(ctx, params.task_id)
        task = await self._ask(held, task_id, "tasks/get")
        raw: dict[str, Any] | None = None
        while raw is None and task.get("status") not in TERMINAL:
            if task.get("status") == "input_required":
                # Its server asks on a tasks/result stream (2025): open one, so the question
                # goes out (to the gateway's own client on stdio, else answered "not asked")
                # instead of the task waiting for a stream no one opens. One that outlives
                # the call timeout is opened again at the next poll.
                raw = await self._result_within_timeout(held, task_id)
                if raw is not None:
                    break
            await anyio.sleep(poll_seconds(task))
            task = await self._ask(held, task_id, "tasks/get")
        if raw is None:
            raw = await self._ask(held, task_id, "tasks/result")
        out = self.gateway.pipeline.finished(held.entry, raw)
        out["_meta"] = {
            **(out.get("_meta") or {}),
            "io.modelcontextprotocol/related-task": {"taskId": params.task_id},
        }
        return out

    async def _result_within_timeout(self, held: _Held, task_id: str) -> dict[str, Any] | None:
        """The server's ``tasks/result`` for ``task_id``, or None when the call timeout passed."""
        try:
            return await self._downstream(held).request("tasks/result", {"taskId": task_id})
        except JsonRpcError:
            raise  # the server's refusal, as the client's error
        except CallTimeoutError:
            return None
        except CallError as exc:
            raise JsonRpcError.internal(
                f"Server {held.entry.route.server} did not answer tasks/result: {exc}"
            ) from None

    async def listing(self, ctx: Any, params: mcp_types.PaginatedRequestParams) -> dict[str, Any]:
        only_on_2025(ctx)
        owner = task_owner(ctx)
        tasks = []
        for task_id, held in list(self._held.items()):
            if held.owner != owner:
                continue
            try:
                task = _task_only(await self._ask(held, task_id, "tasks/get"))
                tasks.append({**task, "taskId": held.handle})
            except JsonRpcError:
                continue  # expired on its server
        return {"tasks": tasks}


def _modern(ctx: Any) -> bool:
    return ctx.protocol_version not in SDK_HANDSHAKE_VERSIONS


def _task_only(raw: Mapping[str, Any]) -> dict[str, Any]:
    """A server's ``Task`` answer without the envelope of its own era (``resultType``, its
    ``serverInfo`` stamp): the gateway's SDK path puts the front's on."""
    out = {k: v for k, v in raw.items() if k != "resultType"}
    meta = out.get("_meta")
    if isinstance(meta, dict):
        meta = {k: v for k, v in meta.items() if k != mcp_types.SERVER_INFO_META_KEY}
        if meta:
            out["_meta"] = meta
        else:
            out.pop("_meta")
    return out


_RELAYS: weakref.WeakKeyDictionary[Gateway, TaskRelay] = weakref.WeakKeyDictionary()


def relay_tasks(gateway: Gateway, server: SdkServer, counted: Any) -> None:
    """Serve tasks on ``server`` (one of the gateway's fronts) when some server takes them:
    declared on both eras, the ``tools/call`` middleware, and the ``tasks/*`` methods, each
    ``counted`` while it runs (the end of stdin waits for it). One relay per gateway, so a task
    made on one front can be read on another."""
    relay = _RELAYS.get(gateway)
    if relay is None:
        relay = _RELAYS[gateway] = TaskRelay(gateway)
    if not relay.offered():
        return
    declare_tasks(server)

    async def middleware(ctx: Any, call_next: Any) -> Any:
        return await relay.call(server, ctx, call_next, counted)

    server.middleware.append(cast(Any, sdk_errors(middleware)))  # a refusal: its JSON-RPC error
    methods: dict[str, tuple[Any, Any]] = {
        "tasks/get": (mcp_types.GetTaskRequestParams, relay.get),
        "tasks/result": (mcp_types.GetTaskPayloadRequestParams, relay.result),
        "tasks/cancel": (mcp_types.CancelTaskRequestParams, relay.cancel),
        "tasks/list": (mcp_types.PaginatedRequestParams, relay.listing),
        "tasks/update": (TaskUpdateParams, relay.update),
    }
    for method, (params_type, handler) in methods.items():
        server.add_request_handler(method, params_type, counted(sdk_errors(handler)))
