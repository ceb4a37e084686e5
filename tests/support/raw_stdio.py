"""A deliberately plain JSON-RPC client over a child's stdio, for tests that need the raw wire.

The SDK client parses and normalises what it receives; tests that assert exactly what a
server put on the wire (capability objects, result dicts) read the lines themselves.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
PROTOCOL_VERSION = "2025-11-25"


class RawStdioClient:
    """Spawn ``argv``, speak newline-delimited JSON-RPC, return decoded messages as dicts."""

    def __init__(self, argv: Sequence[str], env: dict[str, str] | None = None, timeout: float = 30.0) -> None:
        full_env = dict(os.environ)
        full_env.update(env or {})
        self.timeout = timeout
        self.proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=full_env,
            cwd=REPO,
        )
        self._lines: queue.Queue[bytes] = queue.Queue()
        self._stderr: list[bytes] = []
        threading.Thread(target=self._pump_stdout, daemon=True).start()
        threading.Thread(target=self._pump_stderr, daemon=True).start()
        self._next_id = 0

    def _pump_stdout(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put(b"")

    def _pump_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self._stderr.append(line)

    @property
    def stderr(self) -> str:
        return b"".join(self._stderr).decode("utf-8", "replace")

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def receive(self) -> dict[str, Any]:
        line = self._lines.get(timeout=self.timeout)
        if not line:
            raise EOFError(f"server closed stdout; stderr:\n{self.stderr[-2000:]}")
        return dict(json.loads(line))

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send one request and return the whole response message (result or error)."""
        self._next_id += 1
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": self._next_id, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        while True:
            reply = self.receive()
            if reply.get("id") == self._next_id:
                return reply

    def initialize(self) -> dict[str, Any]:
        reply = self.request(
            "initialize",
            {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "raw-test-client", "version": "0"},
            },
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return reply

    def close(self, timeout: float = 10.0) -> int:
        """Close stdin (the polite way to stop a stdio server) and return its exit code."""
        if self.proc.stdin and not self.proc.stdin.closed:
            self.proc.stdin.close()
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise

    def __enter__(self) -> RawStdioClient:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.close()


def python_argv(*args: str) -> list[str]:
    """Run something with this interpreter (the test venv)."""
    return [sys.executable, *args]
