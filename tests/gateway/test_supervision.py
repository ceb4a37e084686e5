"""Supervision through a real gateway child: crash, restart, crash loop, list_changed,
cancellation, progress, the per-downstream call cap, and no leftover processes after SIGTERM."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpkit.client import Session
from tests.client.procs import running, wait_gone
from tests.gateway.support import INITIALIZE, flaky, gateway_argv, gateway_session, run_cli, write_config

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


def text(raw: dict[str, Any]) -> str:
    return "\n".join(str(c.get("text")) for c in raw.get("content", []))


async def call(session: Session, name: str, args: dict[str, Any] | None = None, **kw: Any) -> dict[str, Any]:
    return await session.request("tools/call", {"name": name, "arguments": args or {}}, **kw)


async def names(session: Session) -> set[str]:
    return {t["name"] for t in await session.list_tools(refresh=True)}


class Notes:
    """Notifications the client received, with a way to wait for one."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, dict[str, Any]]] = []
        self._event = anyio.Event()

    async def __call__(self, method: str, params: dict[str, Any]) -> None:
        self.seen.append((method, params))
        self._event.set()
        self._event = anyio.Event()

    async def wait_for(self, method: str, count: int = 1, timeout: float = 30) -> None:
        with anyio.fail_after(timeout):
            while sum(1 for m, _ in self.seen if m == method) < count:
                await self._event.wait()


async def test_crash_is_reported_then_restarted(tmp_path: Path) -> None:
    config = write_config(tmp_path / "gw.json", {"flaky": flaky()})
    notes = Notes()
    async with gateway_session(config, on_notification=notes) as session:
        assert "flaky_echo" in await names(session)
        crashed = await call(session, "flaky_crash")
        assert crashed["isError"] is True
        assert "flaky" in text(crashed)
        # The next call waits for the restart and succeeds on the new process.
        again = await call(session, "flaky_echo", {"text": "back"})
        assert again.get("isError") is not True, again
        assert text(again) == "back"
        # `mcpkit gateway status` reads the running gateway's own status.
        with anyio.fail_after(30):
            while True:
                done = await anyio.to_thread.run_sync(
                    lambda: run_cli("gateway", "status", "--json", "--config", str(config))
                )
                data = json.loads(done.stdout)
                if data["live"] and data["servers"][0]["restarts"] == 1:
                    break
                await anyio.sleep(0.5)
        assert data["servers"][0]["state"] == "ready" and done.returncode == 0


async def test_crash_loop_marks_unhealthy_and_withdraws_tools(tmp_path: Path) -> None:
    die = tmp_path / "die"
    config = write_config(
        tmp_path / "gw.json",
        {"flaky": flaky("--die-file", str(die)), "steady": flaky()},
        {"restart": {"max_restarts": 2, "backoff": 0.05, "window": 60}},
    )
    notes = Notes()
    async with gateway_session(config, on_notification=notes) as session:
        before = await names(session)
        assert {"flaky_echo", "steady_echo"} <= before
        die.write_text("x")
        await call(session, "flaky_crash")
        await notes.wait_for("notifications/tools/list_changed")
        with anyio.fail_after(30):
            while "flaky_echo" in await names(session):
                await notes.wait_for("notifications/tools/list_changed", len(notes.seen) + 1)
        after = await names(session)
        assert "steady_echo" in after and not any(n.startswith("flaky_") for n in after)
        refused = await call(session, "flaky_echo", {"text": "x"})
        assert refused["isError"] is True and "flaky_echo" in text(refused)


async def test_downstream_list_changed_relists(tmp_path: Path) -> None:
    config = write_config(tmp_path / "gw.json", {"flaky": flaky()})
    notes = Notes()
    async with gateway_session(config, on_notification=notes) as session:
        assert "flaky_extra" not in await names(session)
        assert text(await call(session, "flaky_grow")) == "grown"
        await notes.wait_for("notifications/tools/list_changed")
        assert "flaky_extra" in await names(session)
        assert text(await call(session, "flaky_extra", {"k": 1})) == '{"k": 1}'


async def test_cancellation_reaches_the_downstream(tmp_path: Path) -> None:
    config = write_config(tmp_path / "gw.json", {"flaky": flaky()})
    async with gateway_session(config) as session:

        async def stats() -> dict[str, Any]:
            counts: dict[str, Any] = json.loads(text(await call(session, "flaky_stats")))
            return counts

        with anyio.fail_after(60):  # guards against a hang only
            async with anyio.create_task_group() as tg:
                tg.start_soon(call, session, "flaky_sleep", {"seconds": 600})
                while (await stats())["active"] < 1:  # the server runs it: now the client gives up
                    await anyio.sleep(0.05)
                tg.cancel_scope.cancel()
            while (await stats())["cancelled"] < 1:
                await anyio.sleep(0.05)
        assert (await stats())["completed"] == 0


async def test_progress_is_forwarded_with_the_clients_token(tmp_path: Path) -> None:
    config = write_config(tmp_path / "gw.json", {"flaky": flaky()})
    notes = Notes()
    async with gateway_session(config, on_notification=notes) as session:
        params = {"name": "flaky_sleep", "arguments": {"seconds": 0.3}, "_meta": {"progressToken": "mine-7"}}
        result = await session.request("tools/call", params)
        assert text(result) == "slept 0.3"
        progress = [p for m, p in notes.seen if m == "notifications/progress"]
        assert progress, "no progress reached the client"
        assert {p["progressToken"] for p in progress} == {"mine-7"}
        assert progress[-1]["progress"] == progress[-1]["total"]


async def test_concurrent_calls_per_downstream_are_capped(tmp_path: Path) -> None:
    config = write_config(
        tmp_path / "gw.json", {"flaky": flaky()}, {"servers": {"flaky": {"max_concurrent": 2}}}
    )
    async with gateway_session(config) as session:
        async with anyio.create_task_group() as tg:
            for _ in range(6):
                tg.start_soon(call, session, "flaky_sleep", {"seconds": 0.2})
        stats = json.loads(text(await call(session, "flaky_stats")))
        assert stats["completed"] == 6
        assert stats["max_active"] == 2


def _descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (Linux /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            ppid = int(stat[stat.rfind(")") + 2 :].split()[1])
            children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, None])
def test_no_leftover_processes_after_a_signal(tmp_path: Path, sig: signal.Signals | None) -> None:
    """SIGTERM, SIGINT, or the client closing stdin (None): every group is ended (SIGHUP reloads
    the config: tests/gateway/test_controls.py)."""
    config = write_config(tmp_path / "gw.json", {"a": flaky("--child"), "b": flaky("--child"), "c": flaky()})
    proc = subprocess.Popen(
        gateway_argv(config), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write((json.dumps(INITIALIZE) + "\n").encode())
        proc.stdin.flush()
        assert b'"result"' in proc.stdout.readline()  # ready: every downstream answered
        below = _descendants(proc.pid)
        assert len(below) >= 5  # three servers, two grandchildren
        if sig is None:
            proc.stdin.close()
        else:
            proc.send_signal(sig)
        assert proc.wait(30) is not None
        assert wait_gone(below) == [], [p for p in below if running(p)]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
