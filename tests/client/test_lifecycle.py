"""Process lifecycle: close, cancel and Ctrl-C end the server's whole process group; restart."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import anyio
import pytest

from mcpkit.client import ServerExitedError, SessionOptions, connect
from tests.client.procs import RAW, children_of, raw, running, wait_gone

pytestmark = pytest.mark.anyio


async def test_close_kills_server_and_its_grandchildren() -> None:
    async with connect(raw(), SessionOptions(timeout=30)) as s:
        kids = (await s.call("spawn", {"count": 3})).structured["pids"]
        server = s.pid
        assert server is not None and all(running(p) for p in kids)
    assert wait_gone([server, *kids]) == []
    assert children_of(os.getpid()) == []


async def test_crash_is_seen_even_when_a_grandchild_holds_stdout_open() -> None:
    # No EOF ever arrives on stdout; only the exit watcher can end the call (no timeout set).
    async with connect(raw(), SessionOptions(timeout=None)) as s:
        kids = (await s.call("spawn", {"count": 1, "hold_pipes": True})).structured["pids"]
        with anyio.fail_after(60):  # safety net only
            with pytest.raises(ServerExitedError, match="code 6"):
                await s.call("crash", {"code": 6})
        assert running(kids[0])  # the orphan is still there until the session closes
    assert wait_gone(kids) == []


async def test_cancelling_the_task_kills_the_group() -> None:
    seen: dict[str, list[int]] = {}
    with anyio.move_on_after(30):
        async with anyio.create_task_group() as tg:

            async def worker() -> None:
                async with connect(raw(), SessionOptions(timeout=None)) as s:
                    seen["pids"] = [s.pid or 0, *(await s.call("spawn", {"count": 2})).structured["pids"]]
                    await s.call("hang")

            tg.start_soon(worker)
            while "pids" not in seen:
                await anyio.sleep(0.02)
            tg.cancel_scope.cancel()
    assert wait_gone(seen["pids"]) == []


async def test_close_during_hanging_call_returns_and_kills() -> None:
    async with connect(raw(), SessionOptions(timeout=None)) as s:
        pid = s.pid or 0
        async with anyio.create_task_group() as tg:
            tg.start_soon(s.call, "hang")
            while s.pending == 0:  # the call is on its way
                await anyio.sleep(0.01)
            tg.cancel_scope.cancel()
        assert s.pending == 0
    assert wait_gone([pid]) == []


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_kills_the_whole_group(tmp_path: Path) -> None:
    script = tmp_path / "client.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import json, sys, anyio
            from mcpkit.client import connect, SessionOptions

            async def main():
                async with connect([sys.executable, {str(RAW)!r}], SessionOptions(timeout=None)) as s:
                    kids = (await s.call("spawn", {{"count": 2}})).structured["pids"]
                    print(json.dumps([s.pid, *kids]), flush=True)
                    await s.call("hang")

            anyio.run(main)
            """
        )
    )
    # The client gets SIGINT's default disposition whatever this test worker has: a worker
    # started with SIGINT ignored passed SIG_IGN on, Python then installed no handler, and
    # the test measured the runner, not the client (a client started that way keeps
    # ignoring SIGINT on purpose, see test_signals.py).
    proc = subprocess.Popen(
        [sys.executable, str(script)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_default_sigint,
    )
    assert proc.stdout is not None
    pids = json.loads(proc.stdout.readline())
    assert all(running(p) for p in pids)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode != 0 and "KeyboardInterrupt" in err
    assert wait_gone(pids) == []


async def test_restart_on_failure_reconnects_and_relists_tools() -> None:
    async with connect(raw(), SessionOptions(timeout=30, restart="on-failure", backoff=0.05)) as s:
        first = s.pid
        with pytest.raises(ServerExitedError, match="code 9"):
            await s.call("crash", {"code": 9})
        out = await s.call("echo", {"text": "back"})
        assert out.text == "back"
        assert s.restarts == 1 and s.pid != first
        assert any(t["name"] == "echo" for t in await s.list_tools())
    assert wait_gone([first or 0, s.pid or 0]) == []


async def test_restart_stops_after_max_restarts() -> None:
    # Crashes on the 1st call of every incarnation; with max_restarts=2 the session ends dead.
    async with connect(
        raw("--crash-after", "1"),
        SessionOptions(timeout=30, restart="on-failure", backoff=0.01, max_restarts=2),
    ) as s:
        for _ in range(3):
            with pytest.raises(ServerExitedError):
                await s.call("echo", {"text": "x"})
        assert s.restarts == 2
        with pytest.raises(ServerExitedError):
            await s.call("echo", {"text": "x"})


def test_atexit_hook_kills_groups_a_dead_loop_left(tmp_path: Path) -> None:
    """A program that exits without closing its session still leaves no server behind."""
    script = tmp_path / "abandon.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import json, os, sys, anyio
            from mcpkit.client import Session, ServerConfig

            async def main():
                s = Session(ServerConfig(name="x", command=[sys.executable, {str(RAW)!r}]))
                await s.__aenter__()
                kids = (await s.call("spawn", {{"count": 1}})).structured["pids"]
                print(json.dumps([s.pid, *kids]), flush=True)
                sys.exit(0)

            try:
                anyio.run(main)
            except BaseException:
                pass
            """
        )
    )
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    pids = json.loads(out.stdout.splitlines()[0])
    assert wait_gone(pids) == []
