"""Helpers for the client and check tests: fixture server command lines and process checks."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

SERVERS = Path(__file__).resolve().parents[1] / "fixtures" / "servers"
RAW = SERVERS / "raw_server.py"
SDK_ECHO = SERVERS / "sdk_echo.py"
HTTP_MISBEHAVE = SERVERS / "http_misbehave.py"


def raw(*flags: str) -> list[str]:
    """Command line of the raw JSON-RPC fixture server with the given misbehaviour flags."""
    return [sys.executable, str(RAW), *flags]


def sdk_echo() -> list[str]:
    return [sys.executable, str(SDK_ECHO)]


def running(pid: int) -> bool:
    """True while ``pid`` is a live (non-zombie) process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2] not in "ZX"


def wait_gone(pids: list[int], timeout: float = 10.0) -> list[int]:
    """Poll until none of ``pids`` runs; return the ones still running (safety bound only)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        alive = [p for p in pids if running(p)]
        if not alive:
            return []
        time.sleep(0.05)
    return [p for p in pids if running(p)]


def children_of(pid: int) -> list[int]:
    """Direct children of ``pid`` that still run."""
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            fields = stat[stat.rfind(")") + 2 :].split()
            if fields[1] == str(pid) and fields[0] not in ("Z", "X"):
                out.append(int(entry))
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_http_server(*flags: str) -> tuple[subprocess.Popen[bytes], int]:
    """Start sdk_echo on HTTP and wait until its port accepts connections."""
    port = free_port()
    return wait_listening(
        subprocess.Popen(
            [*sdk_echo(), *flags, str(port)] if flags else [*sdk_echo()], stderr=subprocess.DEVNULL
        ),
        port,
    )


def start_misbehaving_http(*flags: str) -> tuple[subprocess.Popen[bytes], int]:
    """Start the raw-socket HTTP fixture (http_misbehave.py) with ``flags``."""
    port = free_port()
    cmd = [sys.executable, str(HTTP_MISBEHAVE), str(port), *flags]
    return wait_listening(subprocess.Popen(cmd, stderr=subprocess.DEVNULL), port)


def start_command_on_port(
    cmd: list[str], port: int, env: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    """Start any HTTP server command and wait until ``port`` accepts connections."""
    proc = subprocess.Popen(
        cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, **(env or {})}
    )
    return wait_listening(proc, port)[0]


def wait_listening(proc: subprocess.Popen[bytes], port: int) -> tuple[subprocess.Popen[bytes], int]:
    """Wait until ``port`` accepts connections (kill the process if it never does)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return proc, port
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError("fixture HTTP server did not start")
