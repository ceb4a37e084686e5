"""mcpkit's client following tasks: ``Session.call(task=True)`` asks a server that takes tasks for
one and polls it to the tool's result within the call's one deadline; when the deadline passes or
the caller is cancelled, the task is cancelled on the server (its handler sees it), so no work
goes on for nobody. The server is a toolkit server in the test's process (its task store is
read directly); the Redmine end-to-end test drives a real subprocess."""

from __future__ import annotations

import functools
from typing import Any

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpkit.client import CallTimeoutError, SessionOptions, connect
from mcpkit.client._tasks import MAX_POLL_SECONDS, MIN_POLL_SECONDS, is_task, poll_seconds
from mcpkit.server import McpkitServer, ServerOptions, build_server
from mcpkit.tools import ToolContext, ToolSpec
from mcpkit.tools import params as p

pytestmark = pytest.mark.anyio

GUARD = 60.0


class Job:
    def __init__(self) -> None:
        self.go = anyio.Event()
        self.started = anyio.Event()
        self.saw_cancel = anyio.Event()

    async def handler(self, args: dict[str, Any], ctx: ToolContext) -> str:
        self.started.set()
        await ctx.progress(1, 2, "half way")
        try:
            await self.go.wait()
        finally:
            if ctx.cancelled.is_set():
                self.saw_cancel.set()
        return "finished"

    def server(self) -> McpkitServer:
        spec = ToolSpec(
            name="job",
            description="Run a job and say when it finished.",
            input_schema=p.object_schema(),
            handler=self.handler,
            read_only=True,
            tasks=True,
        )
        server = build_server("jobs", "1", [spec], options=ServerOptions())
        assert server.tasks is not None
        server.tasks.poll_interval_ms = 20
        return server


def _statuses(server: McpkitServer) -> list[str]:
    assert server.tasks is not None
    return [t.status for t in server.tasks.listed("")]


async def test_a_task_call_is_polled_to_the_tools_result() -> None:
    job = Job()
    server = job.server()
    async with connect(server, SessionOptions(timeout=GUARD)) as session:
        async with anyio.create_task_group() as tg:

            async def call() -> None:
                outcome = await session.call("job", {}, task=True)
                assert outcome.text == "finished"

            tg.start_soon(call)
            with anyio.fail_after(GUARD):
                await job.started.wait()
            assert _statuses(server) == ["working"], "the call became a task"
            job.go.set()
        assert _statuses(server) == ["completed"]


async def test_a_call_without_task_is_held_open_as_before() -> None:
    job = Job()
    job.go.set()
    server = job.server()
    async with connect(server, SessionOptions(timeout=GUARD)) as session:
        assert (await session.call("job", {})).text == "finished"
        assert _statuses(server) == []


async def test_a_deadline_passing_cancels_the_task_on_the_server() -> None:
    job = Job()
    server = job.server()
    async with connect(server, SessionOptions(timeout=GUARD)) as session:
        with pytest.raises(CallTimeoutError):
            await session.call("job", {}, task=True, timeout=0.3)
        with anyio.fail_after(GUARD):
            await job.saw_cancel.wait()
        assert _statuses(server) == ["cancelled"]


async def test_a_cancelled_caller_cancels_the_task_on_the_server() -> None:
    job = Job()
    server = job.server()
    async with connect(server, SessionOptions(timeout=GUARD)) as session:
        async with anyio.create_task_group() as tg:
            store = server.tasks
            assert store is not None
            polled = anyio.Event()
            find = store.find

            def watched(task_id: str, owner: str) -> Any:  # the client holds the task once it polls
                polled.set()
                return find(task_id, owner)

            store.find = watched  # type: ignore[method-assign]
            tg.start_soon(functools.partial(session.call, "job", {}, task=True))
            with anyio.fail_after(GUARD):
                await polled.wait()
            tg.cancel_scope.cancel()
        with anyio.fail_after(GUARD):
            await job.saw_cancel.wait()
        assert _statuses(server) == ["cancelled"]


@given(st.one_of(st.none(), st.booleans(), st.text(), st.floats(allow_nan=True), st.integers()))
def test_the_poll_interval_is_the_servers_within_bounds(interval: Any) -> None:
    seconds = poll_seconds({"pollInterval": interval})
    assert MIN_POLL_SECONDS <= seconds <= MAX_POLL_SECONDS
    usable = isinstance(interval, (int, float)) and not isinstance(interval, bool) and interval == interval
    if usable and 50 <= interval <= 30_000:
        assert seconds == interval / 1000


def test_only_a_task_answer_is_taken_for_a_task() -> None:
    task = {"taskId": "t", "status": "working"}
    assert is_task({"task": task}) and is_task({"task": task, "resultType": "task"})
    assert not is_task({"content": [], "task": task})
    assert not is_task({"task": task, "resultType": "complete"})
    assert not is_task({"content": [{"type": "text", "text": "x"}]}) and not is_task(None)


async def test_a_caller_cancelled_before_the_task_answer_still_cancels_the_task() -> None:
    """The handler starts before the answer naming the task reaches the client: a caller
    cancelled then used to leave the task running for nobody (no one knew its id)."""
    job = Job()
    server = job.server()
    async with connect(server, SessionOptions(timeout=GUARD)) as session:
        await session.list_tools()  # listed before, so the call sends tools/call at once
        async with anyio.create_task_group() as tg:
            tg.start_soon(functools.partial(session.call, "job", {}, task=True))
            with anyio.fail_after(GUARD):
                await job.started.wait()
            tg.cancel_scope.cancel()
        with anyio.fail_after(GUARD):
            await job.saw_cancel.wait()
        assert _statuses(server) == ["cancelled"]


async def test_a_tool_that_allows_no_task_is_called_plainly_even_when_one_is_asked() -> None:
    job = Job()
    job.go.set()

    async def plain(args: dict[str, Any]) -> str:
        return "plain"

    quick = ToolSpec(
        name="quick", description="Answer at once.", input_schema=p.object_schema(), handler=plain
    )
    server = build_server("jobs", "1", [job.server().tools[0], quick], options=ServerOptions())
    async with connect(server, SessionOptions(timeout=GUARD)) as session:
        assert (await session.call("quick", {}, task=True)).text == "plain"
        assert (await session.call("job", {}, task=True)).text == "finished"
        assert server.tasks is not None and [t.tool for t in server.tasks.listed("")] == ["job"]


NAME_FORM = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


async def _asks(args: dict[str, Any], ctx: ToolContext) -> str:
    from mcpkit.server import ask

    answer = await ask(ctx, "Your name?", NAME_FORM)
    return f"{answer.action}: {answer.content.get('name')}"


def _asking_server() -> McpkitServer:
    spec = ToolSpec(
        "survey", "Ask a name and report it.", p.object_schema(), _asks, read_only=True, tasks=True
    )
    server = build_server("survey", "1", [spec], options=ServerOptions())
    assert server.tasks is not None
    server.tasks.poll_interval_ms = 20
    return server


async def test_a_task_waiting_on_its_user_is_answered_by_the_clients_elicitation_callback() -> None:
    """2026: the SDK's client with mcpkit's TasksExtension polls the task, answers its open
    question through the client's own elicitation callback and tasks/update, and returns the
    result as if the call had been held open."""
    import mcp
    from mcp.client.session import ClientRequestContext

    from mcpkit.client import TasksExtension

    server, asked = _asking_server(), []

    async def elicit(ctx: ClientRequestContext, params: Any) -> Any:
        import mcp_types

        asked.append(params.message)
        return mcp_types.ElicitResult(action="accept", content={"name": "Ada"})

    async with mcp.Client(
        server.lowlevel, mode="2026-07-28", elicitation_callback=elicit, extensions=[TasksExtension()]
    ) as client:
        with anyio.fail_after(GUARD):
            result = await client.call_tool("survey", {})
    assert asked == ["Your name?"]
    assert result.content[0].text == "accept: Ada"  # type: ignore[union-attr]
    assert _statuses(server) == ["completed"]


async def test_a_2025_task_asks_on_the_tasks_result_stream() -> None:
    """2025-11-25: the task goes to input_required; mcpkit's client then calls tasks/result,
    on whose stream the question comes as elicitation/create tied to the task (related-task
    ``_meta``), answered by the session's handler; tasks/result then ends with the result."""
    from mcpkit.client import ClientHandlers

    asked: list[dict[str, Any]] = []

    async def elicitation(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params)
        return {"action": "accept", "content": {"name": "Grace"}}

    server = _asking_server()
    options = SessionOptions(timeout=GUARD, handlers=ClientHandlers(elicitation=elicitation))
    async with connect(server, options) as session:
        assert (await session.call("survey", {}, task=True)).text == "accept: Grace"
    assert [a["message"] for a in asked] == ["Your name?"]
    (task,) = server.tasks.listed("") if server.tasks is not None else []
    assert asked[0]["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": task.task_id}
    assert _statuses(server) == ["completed"]
