"""Tasks through the gateway (real HTTP front, a real downstream process): a front client that
asks for a task on a tool whose server takes tasks gets the server's task, follows it with
``tasks/get`` and ``tasks/result`` through the gateway, and ``tasks/cancel`` reaches the server's
handler; a 2026 client with the extension gets the result through its own polling; a tool whose
server takes no tasks is called as always."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import mcp
import pytest

from mcpkit.client import Session, TasksExtension, connect
from mcpkit.jsonrpc import JsonRpcError
from tests.client.procs import free_port
from tests.gateway.support import HERE, gateway_argv, wait_port, write_config
from tests.support.stateless import Stateless

pytestmark = [pytest.mark.slow, pytest.mark.anyio]

GUARD = 60


@pytest.fixture
def gateway_url(tmp_path: Path) -> Iterator[str]:
    server = {"command": sys.executable, "args": [str(HERE / "fixtures" / "task_server.py")]}
    config = write_config(tmp_path / "gw.json", {"jobs": server})
    port = free_port()
    proc = subprocess.Popen(
        gateway_argv(config, "--transport", "http", "--port", str(port)),
        env={**os.environ, "MCPKIT_LOG": "warning"},
        stdin=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wait_port(port)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


async def _until(session: Session, task_id: str, key: str) -> dict[str, object]:
    with anyio.fail_after(GUARD):
        while True:
            task = dict(await session.request("tasks/get", {"taskId": task_id}))
            if key in task:
                return task
            await anyio.sleep(0.02)


async def test_a_task_passes_through_the_gateway(gateway_url: str, tmp_path: Path) -> None:
    done = tmp_path / "done"
    async with connect(gateway_url) as session:
        assert session.capabilities["tasks"]["requests"] == {"tools": {"call": {}}}
        listed = {t["name"]: t for t in await session.list_tools()}
        assert listed["jobs_wait_for"].get("execution") == {"taskSupport": "optional"}
        assert "execution" not in listed["jobs_echo"]
        created = dict(
            await session.request(
                "tools/call", {"name": "jobs_wait_for", "arguments": {"path": str(done)}, "task": {}}
            )
        )
        task_id = created["task"]["taskId"]
        seen = await _until(session, task_id, "statusMessage")
        assert seen["statusMessage"] == "1/2: waiting for the file" and seen["status"] == "working"
        done.write_text("it is done")
        result = dict(await session.request("tasks/result", {"taskId": task_id}))
        assert result["content"] == [{"type": "text", "text": "it is done"}]
        assert [t["taskId"] for t in dict(await session.request("tasks/list", {}))["tasks"]] == [task_id]
        plain = dict(
            await session.request(
                "tools/call", {"name": "jobs_echo", "arguments": {"text": "hi"}, "task": {}}
            )
        )
        assert plain["content"] == [{"type": "text", "text": "hi"}], "a tool without tasks is held open"


async def test_cancel_reaches_the_servers_handler(gateway_url: str, tmp_path: Path) -> None:
    never = tmp_path / "never"
    async with connect(gateway_url) as session:
        created = dict(
            await session.request(
                "tools/call", {"name": "jobs_wait_for", "arguments": {"path": str(never)}, "task": {}}
            )
        )
        task_id = created["task"]["taskId"]
        await _until(session, task_id, "statusMessage")
        assert dict(await session.request("tasks/cancel", {"taskId": task_id}))["status"] == "cancelled"
        marker = Path(str(never) + ".cancelled")
        with anyio.fail_after(GUARD):
            while not marker.exists():
                await anyio.sleep(0.02)
        async with connect(gateway_url, headers={"Authorization": "Bearer someone-else"}) as other:
            with pytest.raises(JsonRpcError, match="Unknown task"):
                await other.request("tasks/get", {"taskId": task_id})


async def test_a_2026_client_follows_a_task_through_the_gateway(gateway_url: str, tmp_path: Path) -> None:
    done = tmp_path / "done"
    done.write_text("ready")
    async with mcp.Client(gateway_url, mode="auto", cache=None, extensions=[TasksExtension()]) as modern:
        assert modern.protocol_version == "2026-07-28"
        assert "io.modelcontextprotocol/tasks" in (modern.server_capabilities.extensions or {})
        claimed = await modern.session.call_tool("jobs_wait_for", {"path": str(done)}, allow_claimed=True)
        assert claimed.result_type == "task" and claimed.task_id  # type: ignore[attr-defined]
        assert claimed.ttl_ms and claimed.poll_interval_ms == 50  # type: ignore[attr-defined]
        followed = await modern.call_tool("jobs_wait_for", {"path": str(done)})
        assert followed.content[0].text == "ready"  # type: ignore[union-attr]
    async with mcp.Client(gateway_url, mode="legacy") as legacy:
        plain = await legacy.call_tool("jobs_wait_for", {"path": str(done)})
        assert plain.content[0].text == "ready"  # type: ignore[union-attr]


async def test_a_2026_client_gets_the_extensions_shapes_from_a_2025_server(
    gateway_url: str, tmp_path: Path
) -> None:
    """The server behind speaks 2025 tasks; the gateway's 2026 face answers as the extension
    says: a flat task, the result inlined by tasks/get once done, empty acknowledgements of
    tasks/update (answers to nothing asked, as the toolkit takes them) and tasks/cancel, no
    tasks/result, and -32021 for a client that did not declare the extension."""
    import httpx2

    done = tmp_path / "done"
    async with httpx2.AsyncClient() as http:
        raw = Stateless(gateway_url, http)
        created = (await raw.send("tools/call", {"name": "jobs_wait_for", "arguments": {"path": str(done)}}))[
            "result"
        ]
        assert created["resultType"] == "task" and "task" not in created and "ttlMs" in created
        task_id = created["taskId"]
        working = (await raw.send("tasks/get", {"taskId": task_id}))["result"]
        assert working["status"] == "working" and "result" not in working
        done.write_text("finished")
        with anyio.fail_after(GUARD):
            while True:
                got = (await raw.send("tasks/get", {"taskId": task_id}))["result"]
                if got["status"] != "working":
                    break
                await anyio.sleep(0.02)
        assert got["status"] == "completed" and got["result"]["content"] == [
            {"type": "text", "text": "finished"}
        ]
        update = {"taskId": task_id, "inputResponses": {"ask-1": {"action": "accept", "content": {}}}}
        acknowledged = (await raw.send("tasks/update", update))["result"]
        assert acknowledged["resultType"] == "complete" and "status" not in acknowledged
        unknown = {"taskId": "no-such-task", "inputResponses": {}}
        assert (await raw.send("tasks/update", unknown))["error"]["code"] == -32602
        ack = (await raw.send("tasks/cancel", {"taskId": task_id}))["result"]
        assert ack["resultType"] == "complete" and "status" not in ack
        assert (await raw.send("tasks/result", {"taskId": task_id}))["error"]["code"] == -32601
        refused = (await Stateless(gateway_url, http, tasks=False).send("tasks/get", {"taskId": task_id}))[
            "error"
        ]
        assert refused["code"] == -32021


async def test_a_required_task_tool_refuses_a_2026_client_without_the_extension(
    gateway_url: str, tmp_path: Path
) -> None:
    """The gateway answers -32021 naming the extension itself (its 2025 server behind would
    refuse with its own error), and a client with the extension gets the task."""
    import httpx2

    done = tmp_path / "done"
    done.write_text("ready")
    call = {"name": "jobs_only_task", "arguments": {"path": str(done)}}
    async with httpx2.AsyncClient() as http:
        refused = (await Stateless(gateway_url, http, tasks=False).send("tools/call", call))["error"]
        assert refused["code"] == -32021, refused
        assert refused["data"]["requiredCapabilities"] == {
            "extensions": {"io.modelcontextprotocol/tasks": {}}
        }
        created = (await Stateless(gateway_url, http).send("tools/call", call))["result"]
        assert created["resultType"] == "task" and created["taskId"]


async def test_a_2025_servers_task_asks_a_2026_client_through_the_gateway(gateway_url: str) -> None:
    """The server behind asks on the 2025 wire (elicitation/create on its tasks/result stream);
    the gateway's 2026 client sees the question in tasks/get's inputRequests, answers it with
    tasks/update, and the task ends with the answer in its result."""
    import httpx2

    async with httpx2.AsyncClient() as http:
        raw = Stateless(gateway_url, http, elicitation=True)
        created = (await raw.send("tools/call", {"name": "jobs_greet", "arguments": {}}))["result"]
        assert created["resultType"] == "task", created
        task_id = created["taskId"]
        with anyio.fail_after(GUARD):
            while True:
                got = (await raw.send("tasks/get", {"taskId": task_id}))["result"]
                if got["status"] != "working":
                    break
                await anyio.sleep(0.02)
        assert got["status"] == "input_required", got
        [(key, question)] = got["inputRequests"].items()
        assert question["method"] == "elicitation/create"
        assert question["params"]["message"] == "What is your name?"
        answer = {"action": "accept", "content": {"name": "Ada"}}
        await raw.send("tasks/update", {"taskId": task_id, "inputResponses": {key: answer}})
        with anyio.fail_after(GUARD):
            while True:
                got = (await raw.send("tasks/get", {"taskId": task_id}))["result"]
                if got["status"] == "completed":
                    break
                assert "inputRequests" not in got or key not in got["inputRequests"], got
                await anyio.sleep(0.02)
        assert got["result"]["content"] == [{"type": "text", "text": "Hello, Ada!"}]


async def test_a_2025_client_over_http_gets_a_task_that_asks_run_unasked(gateway_url: str) -> None:
    """A 2025 client over HTTP cannot be asked through the gateway (only its stdio face passes
    a server's questions on): the task's question is answered "not asked" and the task ends,
    where it used to wait in input_required for a tasks/result stream no one opened."""
    async with connect(gateway_url) as session:
        created = dict(
            await session.request("tools/call", {"name": "jobs_greet", "arguments": {}, "task": {}})
        )
        task_id = created["task"]["taskId"]
        with anyio.fail_after(GUARD):
            result = dict(await session.request("tasks/result", {"taskId": task_id}))
        assert result["content"] == [{"type": "text", "text": "No name (unasked)"}]
