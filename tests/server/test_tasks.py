"""Tasks on toolkit servers, over streamable HTTP: a task-capable tool answers a client that asks
with a task (2025: ``params.task``; 2026: the ``io.modelcontextprotocol/tasks`` extension), whose
progress ``tasks/get`` shows, whose result ``tasks/result`` gives, which ``tasks/cancel`` stops and
which expires after its TTL; every other client gets the ordinary result. Clients are real: the
SDK's ``mcp.Client`` and mcpkit's own ``Session``."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp
import pytest

from mcpkit.client import Session, TasksExtension, connect
from mcpkit.jsonrpc import JsonRpcError
from mcpkit.results import text_result
from mcpkit.server import TASKS_EXTENSION, McpkitServer, ServerOptions, ask, build_server, start_task
from mcpkit.tools import ToolContext, ToolSpec
from mcpkit.tools import params as p
from tests.support.stateless import Stateless

pytestmark = pytest.mark.anyio

GUARD = 30  # seconds: a guard against a hang, never a wait for something to happen


class Work:
    """A long tool whose end the test decides: it reports progress, then waits for ``go``."""

    def __init__(self) -> None:
        self.go = anyio.Event()
        self.saw_cancel = anyio.Event()

    async def handler(self, args: dict[str, Any], ctx: ToolContext) -> str:
        await ctx.progress(1, 2, "half way")
        try:
            await self.go.wait()
        finally:
            if ctx.cancelled.is_set():
                self.saw_cancel.set()
        return f"done {args.get('n', 0)}"

    def spec(self) -> ToolSpec:
        return ToolSpec(
            name="long_job",
            description="Run a long job in steps and report how far it got.",
            input_schema=p.object_schema({"n": p.integer("A number to echo back.")}),
            handler=self.handler,
            read_only=True,
            tasks=True,
        )


async def _quick(args: dict[str, Any]) -> str:
    return "quick"


QUICK = ToolSpec(
    name="quick",
    description="Answer at once.",
    input_schema=p.object_schema(),
    handler=_quick,
    read_only=True,
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@asynccontextmanager
async def serving(*tools: ToolSpec) -> AsyncIterator[tuple[McpkitServer, str]]:
    port = _free_port()
    server = build_server(
        "tasks", "1", list(tools), options=ServerOptions().with_http(port=port, stateless=True)
    )
    if server.tasks is not None:
        server.tasks.poll_interval_ms = 50
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.run_http)
        with anyio.fail_after(GUARD):
            while True:
                try:
                    stream = await anyio.connect_tcp("127.0.0.1", port)
                except OSError:
                    await anyio.sleep(0.02)
                    continue
                await stream.aclose()
                break
        yield server, f"http://127.0.0.1:{port}/mcp"
        tg.cancel_scope.cancel()


async def _until(session: Session, task_id: str, done: Any) -> dict[str, Any]:
    """Poll ``tasks/get`` until ``done(task)`` holds (under the guard)."""
    with anyio.fail_after(GUARD):
        while True:
            task = dict(await session.request("tasks/get", {"taskId": task_id}))
            if done(task):
                return task
            await anyio.sleep(0.02)


async def test_a_2025_task_shows_progress_then_gives_its_result() -> None:
    work = Work()
    async with serving(work.spec(), QUICK) as (_server, url), connect(url) as session:
        assert session.capabilities["tasks"]["requests"] == {"tools": {"call": {}}}
        listed = {t["name"]: t for t in await session.list_tools()}
        assert listed["long_job"]["execution"] == {"taskSupport": "optional"}
        assert "execution" not in listed["quick"]

        created = dict(
            await session.request(
                "tools/call", {"name": "long_job", "arguments": {"n": 7}, "task": {"ttl": 60000}}
            )
        )
        task = created["task"]
        assert task["status"] == "working" and task["ttl"] == 60000 and task["pollInterval"] == 50
        seen = await _until(session, task["taskId"], lambda t: "statusMessage" in t)
        assert seen["statusMessage"] == "1/2: half way"
        assert seen["_meta"]["mcpkit/progress"] == {"progress": 1, "total": 2, "message": "half way"}

        work.go.set()
        result = dict(await session.request("tasks/result", {"taskId": task["taskId"]}))
        assert result["content"] == [{"type": "text", "text": "done 7"}]
        assert result["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": task["taskId"]}
        assert (await _until(session, task["taskId"], lambda t: True))["status"] == "completed"
        listing = dict(await session.request("tasks/list", {}))
        assert [t["taskId"] for t in listing["tasks"]] == [task["taskId"]]


async def test_cancel_stops_the_work_and_the_handler_sees_it() -> None:
    work = Work()
    async with serving(work.spec()) as (_server, url), connect(url) as session:
        created = dict(await session.request("tools/call", {"name": "long_job", "arguments": {}, "task": {}}))
        task_id = created["task"]["taskId"]
        await _until(session, task_id, lambda t: "statusMessage" in t)
        cancelled = dict(await session.request("tasks/cancel", {"taskId": task_id}))
        assert cancelled["status"] == "cancelled"
        with anyio.fail_after(GUARD):
            await work.saw_cancel.wait()
        with pytest.raises(JsonRpcError, match="already cancelled"):
            await session.request("tasks/cancel", {"taskId": task_id})
        with pytest.raises(JsonRpcError, match="was cancelled"):
            await session.request("tasks/result", {"taskId": task_id})


async def test_a_finished_task_expires_after_its_ttl() -> None:
    work = Work()
    work.go.set()
    now = [1000.0]
    async with serving(work.spec()) as (server, url), connect(url) as session:
        assert server.tasks is not None
        server.tasks.clock = lambda: now[0]
        created = dict(
            await session.request("tools/call", {"name": "long_job", "arguments": {}, "task": {"ttl": 5000}})
        )
        task_id = created["task"]["taskId"]
        await session.request("tasks/result", {"taskId": task_id})
        now[0] += 4.9
        assert (await _until(session, task_id, lambda t: True))["status"] == "completed"
        now[0] += 0.2
        with pytest.raises(JsonRpcError, match="Unknown task"):
            await session.request("tasks/get", {"taskId": task_id})


async def test_a_store_full_of_running_tasks_refuses_and_other_callers_cannot_see_a_task() -> None:
    work = Work()
    async with serving(work.spec()) as (server, url):
        assert server.tasks is not None
        server.tasks.max_tasks = 1
        async with connect(url, headers={"Authorization": "Bearer one"}) as mine:
            created = dict(
                await mine.request("tools/call", {"name": "long_job", "arguments": {}, "task": {}})
            )
            refused = dict(
                await mine.request("tools/call", {"name": "long_job", "arguments": {}, "task": {}})
            )
            assert refused["isError"] is True
            assert refused["content"][0]["text"].startswith("Too many tasks on this server (1)")
            async with connect(url, headers={"Authorization": "Bearer two"}) as theirs:
                with pytest.raises(JsonRpcError, match="Unknown task"):
                    await theirs.request("tasks/get", {"taskId": created["task"]["taskId"]})
                assert dict(await theirs.request("tasks/list", {}))["tasks"] == []
            work.go.set()
            result = dict(await mine.request("tasks/result", {"taskId": created["task"]["taskId"]}))
            assert result["content"][0]["text"] == "done 0"
            # Full of a finished task: the new one takes its place, the old result is forgotten.
            again = dict(
                await mine.request("tools/call", {"name": "long_job", "arguments": {"n": 1}, "task": {}})
            )
            assert "task" in again
            with pytest.raises(JsonRpcError, match="Unknown task"):
                await mine.request("tasks/get", {"taskId": created["task"]["taskId"]})
            later = dict(await mine.request("tasks/result", {"taskId": again["task"]["taskId"]}))
            assert later["content"][0]["text"] == "done 1"


async def test_clients_that_do_not_ask_get_the_plain_result_on_both_eras() -> None:
    work = Work()
    work.go.set()
    async with serving(work.spec()) as (_server, url):
        async with mcp.Client(url, mode="legacy") as legacy:
            plain = await legacy.call_tool("long_job", {"n": 1})
            assert plain.content[0].text == "done 1"  # type: ignore[union-attr]
        async with mcp.Client(url, mode="auto", cache=None) as modern:
            assert modern.protocol_version == "2026-07-28"
            assert modern.server_capabilities.extensions == {TASKS_EXTENSION: {}}
            plain = await modern.call_tool("long_job", {"n": 2})
            assert plain.content[0].text == "done 2"  # type: ignore[union-attr]


async def test_a_2026_client_with_the_extension_gets_a_task_and_follows_it() -> None:
    work = Work()
    async with (
        serving(work.spec()) as (_server, url),
        mcp.Client(url, mode="auto", cache=None, extensions=[TasksExtension()]) as modern,
    ):
        claimed = await modern.session.call_tool("long_job", {"n": 3}, allow_claimed=True)
        assert claimed.result_type == "task"
        work.go.set()
        followed = await modern.call_tool("long_job", {"n": 4})
        assert followed.content[0].text == "done 4"  # type: ignore[union-attr]
        assert "io.modelcontextprotocol/related-task" not in (followed.meta or {})


async def test_a_server_without_task_tools_declares_no_tasks() -> None:
    server = build_server("plain", "1", [QUICK], options=ServerOptions())
    assert server.tasks is None
    caps = server.capabilities()
    assert "tasks" not in caps and "extensions" not in caps
    async with mcp.Client(server.lowlevel, mode="auto", cache=None) as modern:
        assert not modern.server_capabilities.extensions


async def test_the_2026_wire_is_the_tasks_extensions() -> None:
    """SEP-2663 as the official conformance suite checks it: a flat CreateTaskResult, tasks/get
    inlining the result (a tool's error is completed with isError), an empty cancel
    acknowledgement (idempotent), tasks/result and tasks/list gone, -32021 for a client that did
    not declare the extension, -32602 for an unknown task, -32020 for a mismatched Mcp-Name."""
    import httpx2

    work, failing = Work(), Work()
    work.go.set()
    failing.go.set()

    async def fails(args: dict[str, Any]) -> Any:
        from mcpkit.results import error_result

        return error_result("the job broke")

    failing_spec = ToolSpec(
        name="failing_job",
        description="A job that reports an error.",
        input_schema=p.object_schema(),
        handler=fails,
        tasks=True,
    )
    async with serving(work.spec(), failing_spec, QUICK) as (_server, url), httpx2.AsyncClient() as http:
        raw = Stateless(url, http)
        created = (await raw.send("tools/call", {"name": "long_job", "arguments": {"n": 5}}))["result"]
        assert created["resultType"] == "task" and "task" not in created and "result" not in created
        assert {"taskId", "status", "createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs"} <= set(created)
        assert "ttl" not in created and "pollInterval" not in created
        task_id = created["taskId"]
        with anyio.fail_after(GUARD):
            while True:
                got = (await raw.send("tasks/get", {"taskId": task_id}, mcp_name=task_id))["result"]
                if got["status"] == "completed":
                    break
                await anyio.sleep(0.02)
        assert got["resultType"] == "complete" and got["result"]["content"][0]["text"] == "done 5"
        assert "io.modelcontextprotocol/related-task" not in got["result"].get("_meta", {})

        broke = (await raw.send("tools/call", {"name": "failing_job", "arguments": {}}))["result"]
        with anyio.fail_after(GUARD):
            while True:
                got = (await raw.send("tasks/get", {"taskId": broke["taskId"]}))["result"]
                if got["status"] != "working":
                    break
                await anyio.sleep(0.02)
        assert got["status"] == "completed" and got["result"]["isError"] is True and "error" not in got

        ack = (await raw.send("tasks/cancel", {"taskId": task_id}))["result"]
        assert ack["resultType"] == "complete" and not {"taskId", "status", "result"} & set(ack)
        for gone in ("tasks/result", "tasks/list"):
            assert (await raw.send(gone, {"taskId": task_id}))["error"]["code"] == -32601
        assert (await raw.send("tasks/get", {"taskId": "nope"}))["error"]["code"] == -32602
        mismatch = await raw.send("tasks/get", {"taskId": task_id}, mcp_name="another-task")
        assert mismatch["error"]["code"] == -32020
        plain = (await raw.send("tools/call", {"name": "quick", "arguments": {}, "task": {"ttl": 1000}}))[
            "result"
        ]
        assert plain["resultType"] == "complete" and plain["content"][0]["text"] == "quick"

        undeclared = Stateless(url, http, tasks=False)
        for method in ("tasks/get", "tasks/update", "tasks/cancel"):
            refused = (await undeclared.send(method, {"taskId": task_id, "inputResponses": {}}))["error"]
            assert refused["code"] == -32021
            assert refused["data"] == {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}}
        sync = (await undeclared.send("tools/call", {"name": "long_job", "arguments": {"n": 6}}))["result"]
        assert sync["resultType"] == "complete" and sync["content"][0]["text"] == "done 6"


NAME_FORM = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
OK_FORM = {"type": "object", "properties": {"ok": {"type": "boolean"}}}


async def _asks_twice(args: dict[str, Any], ctx: ToolContext) -> str:
    """Two questions at once (a task group of asks), then the answers."""
    answers: dict[str, Any] = {}

    async def put(key: str, message: str, schema: dict[str, Any]) -> None:
        answers[key] = await ask(ctx, message, schema)

    async with anyio.create_task_group() as tg:
        tg.start_soon(put, "name", "Your name?", NAME_FORM)
        tg.start_soon(put, "ok", "Go on?", OK_FORM)
    return f"{answers['name'].action}:{answers['name'].content.get('name')} {answers['ok'].content.get('ok')}"


ASKS_TWICE = ToolSpec(
    "survey", "Ask two questions and report the answers.", p.object_schema(), _asks_twice, tasks=True
)


async def _get_until(raw: Stateless, task_id: str, done: Any) -> dict[str, Any]:
    with anyio.fail_after(GUARD):
        while True:
            got: dict[str, Any] = (await raw.send("tasks/get", {"taskId": task_id}))["result"]
            if done(got):
                return got
            await anyio.sleep(0.02)


async def test_a_task_asks_its_user_through_the_task_on_2026() -> None:
    """SEP-2663: the task goes to input_required with its open questions in inputRequests; each
    tasks/update is acknowledged empty; an answered key leaves at once while the other stays
    open; the task then completes with the answers. Answers for no open question change nothing."""
    import httpx2

    async with serving(ASKS_TWICE) as (_server, url), httpx2.AsyncClient() as http:
        raw = Stateless(url, http, elicitation=True)
        created = (await raw.send("tools/call", {"name": "survey", "arguments": {}}))["result"]
        task_id = created["taskId"]
        asking = await _get_until(raw, task_id, lambda t: len(t.get("inputRequests") or {}) == 2)
        assert asking["status"] == "input_required" and "requestState" not in asking
        keys = {k: r["params"]["message"] for k, r in asking["inputRequests"].items()}
        assert all(r["method"] == "elicitation/create" for r in asking["inputRequests"].values())
        name_key = next(k for k, m in keys.items() if m == "Your name?")
        ok_key = next(k for k in keys if k != name_key)

        ack = await raw.send(
            "tasks/update",
            {
                "taskId": task_id,
                "inputResponses": {name_key: {"action": "accept", "content": {"name": "Ada"}}, "stray": {}},
            },
            mcp_name=task_id,
        )
        assert ack["result"]["resultType"] == "complete"
        assert not {"taskId", "status", "inputRequests"} & set(ack["result"])
        after = (await raw.send("tasks/get", {"taskId": task_id}))["result"]
        assert after["status"] == "input_required" and list(after["inputRequests"]) == [ok_key]

        await raw.send(
            "tasks/update",
            {"taskId": task_id, "inputResponses": {ok_key: {"action": "accept", "content": {"ok": "true"}}}},
        )
        done = await _get_until(raw, task_id, lambda t: t["status"] in ("completed", "failed", "cancelled"))
        assert done["status"] == "completed" and "inputRequests" not in done
        assert done["result"]["content"][0]["text"] == "accept:Ada True"
        late = await raw.send(
            "tasks/update", {"taskId": task_id, "inputResponses": {ok_key: {"action": "decline"}}}
        )
        assert late["result"]["resultType"] == "complete"


async def test_a_2026_client_that_cannot_fill_forms_is_not_asked_through_the_task() -> None:
    import httpx2

    async with serving(ASKS_TWICE) as (_server, url), httpx2.AsyncClient() as http:
        raw = Stateless(url, http)  # declares the extension, not elicitation
        created = (await raw.send("tools/call", {"name": "survey", "arguments": {}}))["result"]
        done = await _get_until(raw, created["taskId"], lambda t: t["status"] != "working")
        assert done["status"] == "completed" and done["result"]["content"][0]["text"] == "unasked:None None"


async def _quick_job(args: dict[str, Any]) -> str:
    return "ran as a task"


ONLY_TASK = ToolSpec("only_task", "Run only as a task.", p.object_schema(), _quick_job, tasks="required")


async def test_a_required_task_tool_refuses_a_client_that_takes_no_task() -> None:
    """2026 without the extension: -32021 naming it; 2025 without params.task: -32601. A client
    that takes tasks gets one (mcpkit's client asks for it where the tool requires it)."""
    import httpx2

    assert ONLY_TASK.definition()["execution"] == {"taskSupport": "required"}
    async with serving(ONLY_TASK) as (_server, url), httpx2.AsyncClient() as http:
        refused = await Stateless(url, http, tasks=False).send(
            "tools/call", {"name": "only_task", "arguments": {}}
        )
        assert refused["error"]["code"] == -32021
        assert refused["error"]["data"] == {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}}
        taken = (await Stateless(url, http).send("tools/call", {"name": "only_task", "arguments": {}}))[
            "result"
        ]
        assert taken["resultType"] == "task"
        async with connect(url) as session:
            with pytest.raises(JsonRpcError) as plain:
                await session.request("tools/call", {"name": "only_task", "arguments": {}})
            assert plain.value.code == -32601
            assert (await session.call("only_task", {})).text == "ran as a task"


async def _greets_later(args: dict[str, Any], ctx: ToolContext) -> str:
    answer = await ask(ctx, "Your name?", NAME_FORM)
    await start_task(ctx)
    return f"Hello, {answer.content.get('name')}!"


GREETS_LATER = ToolSpec(
    "greet_later",
    "Ask a name, then greet as a task.",
    p.object_schema(),
    _greets_later,
    tasks="required",
    asks_before_task=True,
)


async def test_a_tool_asks_on_the_call_and_then_becomes_a_task() -> None:
    """SEP-2663 MRTR then a task: the first round ends with the question (no task id), the
    round that answers it gets the task (no requestState), whose result has the answer."""
    import httpx2

    async with serving(GREETS_LATER) as (server, url), httpx2.AsyncClient() as http:
        raw = Stateless(url, http, elicitation=True)
        first = (await raw.send("tools/call", {"name": "greet_later", "arguments": {}}))["result"]
        assert first["resultType"] == "input_required" and "taskId" not in first
        assert server.tasks is not None and server.tasks.listed("") == [], "no task for a round that asked"
        (key,) = first["inputRequests"]
        second = (
            await raw.send(
                "tools/call",
                {
                    "name": "greet_later",
                    "arguments": {},
                    "inputResponses": {key: {"action": "accept", "content": {"name": "Alice"}}},
                    "requestState": first["requestState"],
                },
            )
        )["result"]
        assert (
            second["resultType"] == "task" and "requestState" not in second and "inputRequests" not in second
        )
        done = await _get_until(raw, second["taskId"], lambda t: t["status"] != "working")
        assert done["status"] == "completed" and done["result"]["content"][0]["text"] == "Hello, Alice!"


async def test_a_2025_task_tells_each_change_of_status() -> None:
    """notifications/tasks/status (2025-11-25, optional there): one per change of status, the
    last at the end; progress alone sends none. (The SDK's 2025 client drops this notification
    as unknown, so the store's notifier is read here.)"""
    from mcpkit.server import TaskStore

    store, told = TaskStore(), []
    go = anyio.Event()

    async def notify(task: dict[str, Any]) -> None:
        told.append(task["status"])

    async def work(ctx: ToolContext) -> Any:
        await ctx.progress(1, 2)
        answer = await ctx.elicit("Go on?", OK_FORM)
        await go.wait()
        return text_result(f"{answer}")

    async def asks(message: str, schema: dict[str, Any]) -> dict[str, Any] | None:
        return {"action": "accept", "content": {}}

    async with store.running():
        task = store.start(
            "job", work, ToolContext(tool="job", _elicit=asks), owner="", ttl_ms=None, notify=notify
        )
        assert not isinstance(task, str)
        with anyio.fail_after(GUARD):
            while not task.side:
                await anyio.sleep(0.01)
        task.side[0].response = {"action": "accept", "content": {}}
        task.side[0].answered.set()
        with anyio.fail_after(GUARD):
            while told != ["input_required", "working"]:
                await anyio.sleep(0.01)
        go.set()
        with anyio.fail_after(GUARD):
            await task.done.wait()
            while told[-1:] != ["completed"]:
                await anyio.sleep(0.01)
    assert told == ["input_required", "working", "completed"]
