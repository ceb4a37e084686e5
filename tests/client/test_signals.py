"""SIGTERM, SIGHUP and SIGINT end the server's whole process group before the command exits.

The server spawns children of its own at start, so a kill of the server's pid alone would
leave them running; the test looks at the whole group.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest

from mcpkit.client._procgroup import live_members
from tests.client.procs import children_of, raw

pytestmark = pytest.mark.slow


def _group_of_server(client_pid: int, members: int, timeout: float = 30) -> int:
    """Wait until the client's server child and its own children run; return the group id."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        kids = children_of(client_pid)
        if kids and len(live_members(kids[0])) >= members:
            return kids[0]
        time.sleep(0.05)
    raise AssertionError("the server and its children did not start")


def _hanging_call() -> list[str]:
    """``mcpkit call`` of a tool that never answers, on a server that starts two children."""
    return [
        sys.executable,
        "-m",
        "mcpkit",
        "call",
        "hang",
        "--timeout",
        "600",
        "--",
        *raw("--spawn-on-start", "2"),
    ]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_signal_ends_the_servers_whole_group(sig: signal.Signals) -> None:
    proc = subprocess.Popen(
        _hanging_call(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        group = _group_of_server(proc.pid, members=3)
        proc.send_signal(sig)  # during the handshake or the call: either way the group must go
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    # By the time the command has exited, nothing of the server's group runs any more.
    assert live_members(group) == []
    assert proc.returncode == 128 + sig
    assert f"stopped by {sig.name}" in err and "Traceback" not in err


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def test_a_command_started_with_sigint_ignored_keeps_ignoring_it() -> None:
    """A background job of a shell starts with SIGINT ignored so that Ctrl-C spares it:
    the command must not take the signal back. SIGTERM still ends it cleanly."""
    proc = subprocess.Popen(
        _hanging_call(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_ignore_sigint,
    )
    try:
        group = _group_of_server(proc.pid, members=3)
        # Sent in this order, a handled SIGINT would be seen first (and the exit code be 130).
        proc.send_signal(signal.SIGINT)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert live_members(group) == []
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert "stopped by SIGTERM" in err
