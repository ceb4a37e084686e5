"""``mcpkit check`` stopped by a signal ends its server and exits 128 + the signal's number.

``SignalledError`` is a ``CallError`` (the error tree in mcpkit.errors): the command's handler
for it must come before its handler for every other mcpkit error, or a SIGTERM would be
reported as an unreachable server with exit code 2.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest

from tests.client.procs import children_of, running

pytestmark = pytest.mark.slow

SILENT_SERVER = "import time; time.sleep(600)"
"""A stdio server that never answers initialize: the check is in its handshake until stopped."""


def _server_of(pid: int, timeout: float = 60) -> int:
    """The check's server child once it runs (the check started it, so its signal handlers are set)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        kids = children_of(pid)
        if kids:
            return kids[0]
        time.sleep(0.05)
    raise AssertionError("mcpkit check did not start its server")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_during_a_check_exits_128_plus_its_number(sig: signal.Signals) -> None:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mcpkit",
            "check",
            "--timeout",
            "600",
            "--",
            sys.executable,
            "-c",
            SILENT_SERVER,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        server = _server_of(proc.pid)
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert not running(server)
    assert proc.returncode == 128 + sig, err
    assert f"interrupted: stopped by {sig.name}" in err and "Traceback" not in err
    assert "server-unreachable" not in out
