"""How a real gateway process ends: a stop signal is an exit of 128 + its number, as for
``mcpkit call`` (docs/client.md), on both fronts; the client closing stdin is a clean 0."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

from tests.client.procs import free_port
from tests.gateway.support import INITIALIZE, flaky, gateway_argv, wait_port, write_config

pytestmark = pytest.mark.slow


def _ready_stdio(config: Path) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        gateway_argv(config), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write((json.dumps(INITIALIZE) + "\n").encode())
    proc.stdin.flush()
    assert b'"result"' in proc.stdout.readline()  # serving: the signal meets a running gateway
    return proc


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_stop_signal_exits_128_plus_its_number_on_stdio(tmp_path: Path, sig: signal.Signals) -> None:
    proc = _ready_stdio(write_config(tmp_path / "gw.json", {"flaky": flaky()}))
    try:
        proc.send_signal(sig)
        assert proc.wait(60) == 128 + sig
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_stdin_closed_exits_0(tmp_path: Path) -> None:
    proc = _ready_stdio(write_config(tmp_path / "gw.json", {"flaky": flaky()}))
    try:
        assert proc.stdin is not None
        proc.stdin.close()
        assert proc.wait(60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_sigterm_exits_143_on_http(tmp_path: Path) -> None:
    port = free_port()
    config = write_config(tmp_path / "gw.json", {"flaky": flaky()})
    proc = subprocess.Popen(
        gateway_argv(config, "--transport", "http", "--port", str(port)),
        env={**os.environ, "MCPKIT_LOG": "warning"},
        stdin=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_port(port)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 143
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
