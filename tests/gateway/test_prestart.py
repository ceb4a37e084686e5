"""The gateway starts its stdio servers before it loads the SDK, and adopts each one once."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest

from mcpkit.client._procgroup import group_alive, live_members
from mcpkit.gateway import Gateway, load_gateway_config
from mcpkit.gateway.prestart import spawn_stdio
from tests.client.procs import wait_gone
from tests.gateway.support import flaky, write_config

pytestmark = pytest.mark.anyio


def test_serving_starts_the_servers_before_the_sdk_loads() -> None:
    """What ``mcpkit gateway`` imports before it spawns: the CLI, the config, the spawner."""
    probe = (
        "import mcpkit.cli, mcpkit.gateway.cli, mcpkit.gateway.prestart, sys\n"
        "print(sorted(m for m in ('mcp', 'mcp_types', 'pydantic', 'mcpkit.compat') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert out.stdout.strip() == "[]"


async def test_the_gateway_adopts_what_it_started_and_reports_what_would_not_start(tmp_path: Path) -> None:
    config = load_gateway_config(
        write_config(
            tmp_path / "g.json",
            {"flaky": flaky(), "missing": {"command": str(tmp_path / "no-such-server")}},
        )
    )
    spawned = await spawn_stdio(config)
    assert set(spawned) == {"flaky"}  # the missing command is left to its downstream to report
    gateway = Gateway(config, spawned=spawned)
    async with anyio.create_task_group() as tg:
        await gateway.start(tg)
        flaky_down, missing = gateway.downstreams["flaky"], gateway.downstreams["missing"]
        assert flaky_down.state == "ready"
        assert flaky_down.pid == spawned["flaky"].pid  # adopted, not a second process
        assert missing.state == "failed"
        assert "no-such-server" in str(missing.error)
        assert any(name.startswith("flaky") for name in gateway.routing.routes)
        gateway.stop()
        tg.cancel_scope.cancel()
    assert wait_gone([spawned["flaky"].pid]) == []
    assert not group_alive(spawned["flaky"].pid)


def test_a_signal_before_the_gateway_is_up_leaves_no_server_behind(tmp_path: Path) -> None:
    """SIGTERM while the gateway still loads (after it started its servers) ends them too."""
    config = write_config(tmp_path / "g.json", {"a": flaky("--child"), "b": flaky()})
    script = (
        "import anyio, time\n"
        "from mcpkit.gateway.config import load_gateway_config\n"
        "from mcpkit.gateway.prestart import spawn_stdio\n"
        "async def main():\n"
        f"    spawned = await spawn_stdio(load_gateway_config({str(config)!r}))\n"
        "    print(' '.join(str(p.pid) for p in spawned.values()), flush=True)\n"
        "    time.sleep(60)  # the gateway loading the SDK, its signal handling not yet started\n"
        "anyio.run(main)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    pids = [int(p) for p in proc.stdout.readline().split()]
    assert len(pids) == 2
    deadline = time.monotonic() + 60  # a guard only: until the first server started its grandchild
    while not live_members(pids[0]) and time.monotonic() < deadline:
        time.sleep(0.05)
    groups = {pid: live_members(pid) for pid in pids}
    assert len(groups[pids[0]]) >= 1
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(30) == 128 + signal.SIGTERM
    members = [m for group in groups.values() for m in group] + pids
    assert wait_gone(members) == []
    assert all(live_members(pid) == [] for pid in pids)
