"""Any replica answers a task (issue 38): two real gateway processes (HTTP fronts, no shared
memory, no sticky routing) in front of one real task server that both reach through its URL.

A task handle is sealed with the first of ``gateway.state_keys``, and opened by any replica
that holds the key. Replica A is configured before a key rotation (the old key only), replica
B after it (the new key first, the old one kept second): a task started on A is followed,
answered and cancelled on B; a handle B sealed with the new key is refused by A, which does not
hold it; a changed or expired handle is refused with -32602 in one line.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import anyio
import pytest

from mcpkit.client import Session, connect
from mcpkit.jsonrpc import JsonRpcError
from tests.client.procs import free_port
from tests.gateway.support import HERE, gateway_argv, wait_port, write_config
from tests.support.stateless import Stateless

pytestmark = [pytest.mark.slow, pytest.mark.anyio]

GUARD = 60


def _start(stack: ExitStack, argv: list[str], port: int) -> None:
    proc = subprocess.Popen(
        argv, env={**os.environ, "MCPKIT_LOG": "warning"}, stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )

    def stop() -> None:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    stack.callback(stop)
    wait_port(port)


@pytest.fixture
def replicas(tmp_path: Path) -> Iterator[tuple[str, str]]:
    """(A's URL, B's URL): A holds the old key, B the new one first and the old one second."""
    old, new = tmp_path / "old.key", tmp_path / "new.key"
    old.write_text("o" * 44 + "\n")
    new.write_text("n" * 44 + "\n")
    with ExitStack() as stack:
        server_port = free_port()
        server = [sys.executable, str(HERE / "fixtures" / "task_server.py"), "--port", str(server_port)]
        _start(stack, server, server_port)
        jobs = {"jobs": {"url": f"http://127.0.0.1:{server_port}/mcp"}}
        urls = []
        for name, keys in (("a", [f"file:{old}"]), ("b", [f"file:{new}", f"file:{old}"])):
            config = write_config(tmp_path / f"{name}.json", jobs, {"name": "tools", "state_keys": keys})
            port = free_port()
            _start(stack, gateway_argv(config, "--transport", "http", "--port", str(port)), port)
            urls.append(f"http://127.0.0.1:{port}/mcp")
        yield urls[0], urls[1]


async def _start_task(session: Session, path: Path, **task: object) -> str:
    call = {"name": "jobs_wait_for", "arguments": {"path": str(path)}, "task": task}
    handle = dict(await session.request("tools/call", call))["task"]["taskId"]
    assert isinstance(handle, str) and handle.startswith("s1."), handle
    return handle


async def _until(session: Session, handle: str, key: str) -> dict[str, object]:
    with anyio.fail_after(GUARD):
        while True:
            task = dict(await session.request("tasks/get", {"taskId": handle}))
            if key in task:
                return task
            await anyio.sleep(0.02)


async def _refused(session: Session, handle: str) -> str:
    with pytest.raises(JsonRpcError) as info:
        await session.request("tasks/get", {"taskId": handle})
    assert info.value.code == -32602 and "\n" not in info.value.message
    return info.value.message


async def test_a_task_started_on_one_replica_is_followed_on_another(
    replicas: tuple[str, str], tmp_path: Path
) -> None:
    url_a, url_b = replicas
    done, never, other = tmp_path / "done", tmp_path / "never", tmp_path / "other"
    async with connect(url_a) as a, connect(url_b) as b:
        handle = await _start_task(a, done)  # sealed with the old key: B opens it after rotation
        seen = await _until(b, handle, "statusMessage")
        assert seen["taskId"] == handle and seen["status"] == "working"
        done.write_text("it is done")
        result = dict(await b.request("tasks/result", {"taskId": handle}))
        assert result["content"] == [{"type": "text", "text": "it is done"}]
        assert result["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": handle}

        cancelled = await _start_task(a, never)
        await _until(b, cancelled, "statusMessage")
        answer = dict(await b.request("tasks/cancel", {"taskId": cancelled}))
        assert answer["status"] == "cancelled" and answer["taskId"] == cancelled
        marker = Path(str(never) + ".cancelled")
        with anyio.fail_after(GUARD):  # the server's handler was told, through B
            while not marker.exists():
                await anyio.sleep(0.02)

        sealed_by_b = await _start_task(b, other)  # the new key, which A does not hold
        assert "not sealed by this gateway" in await _refused(a, sealed_by_b)
        i = len(sealed_by_b) // 2
        tampered = sealed_by_b[:i] + ("A" if sealed_by_b[i] != "A" else "B") + sealed_by_b[i + 1 :]
        assert "not sealed by this gateway" in await _refused(b, tampered)
        await b.request("tasks/cancel", {"taskId": sealed_by_b})


async def test_an_expired_handle_is_refused_on_any_replica(replicas: tuple[str, str], tmp_path: Path) -> None:
    url_a, url_b = replicas
    async with connect(url_a) as a, connect(url_b) as b:
        handle = await _start_task(a, tmp_path / "never", ttl=1000)  # the server keeps it 1 s
        with anyio.fail_after(GUARD):
            while True:
                try:
                    await b.request("tasks/get", {"taskId": handle})
                except JsonRpcError as exc:
                    if "expired at" in exc.message:
                        assert exc.code == -32602 and "\n" not in exc.message
                        break
                await anyio.sleep(0.05)


async def test_a_2026_clients_task_is_followed_on_another_replica(
    replicas: tuple[str, str], tmp_path: Path
) -> None:
    """The 2026 wire (stateless, the tasks extension): started on A, its result inlined by B's
    tasks/get, and another task cancelled through B."""
    import httpx2

    url_a, url_b = replicas
    done, never = tmp_path / "done", tmp_path / "never"
    async with httpx2.AsyncClient() as http:
        a, b = Stateless(url_a, http), Stateless(url_b, http)
        call = {"name": "jobs_wait_for", "arguments": {"path": str(done)}}
        created = (await a.send("tools/call", call))["result"]
        handle = created["taskId"]
        assert created["resultType"] == "task" and handle.startswith("s1.")
        done.write_text("finished")
        with anyio.fail_after(GUARD):
            while True:
                got = (await b.send("tasks/get", {"taskId": handle}))["result"]
                if got["status"] != "working":
                    break
                await anyio.sleep(0.02)
        assert got["status"] == "completed" and got["taskId"] == handle
        assert got["result"]["content"] == [{"type": "text", "text": "finished"}]

        call = {"name": "jobs_wait_for", "arguments": {"path": str(never)}}
        cancelled = (await a.send("tools/call", call))["result"]["taskId"]
        assert (await b.send("tasks/cancel", {"taskId": cancelled}))["result"]["resultType"] == "complete"
        with anyio.fail_after(GUARD):  # the server's handler was told, through B
            while not Path(str(never) + ".cancelled").exists():
                await anyio.sleep(0.02)
        refused = (await b.send("tasks/get", {"taskId": cancelled[:-2]}))["error"]
        assert refused["code"] == -32602 and "\n" not in refused["message"]
