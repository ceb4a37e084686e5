"""``mcpkit archive start|stop|status``: the WebSocket server as a background process.

``start`` returns only once *its own* server answers a ``get_status`` call (the answer names the
process and the archive: readiness, not just a live pid), or fails with one line. Another
server already answering on the port used to pass for ours: ``start`` exited 0 while its server
had died on "address already in use", and later queries went to the other archive. The pid file records pid and URL so
``stop`` and ``status`` need no flags; ``stop`` checks that the pid still belongs to an mcpkit
process before signalling it (pids are reused).

What the background server runs is one value, :class:`ServeSpec`, built by the CLI exactly as
``serve`` builds it and handed to the child as JSON on its stdin. ``start`` used to turn its
typed options back into an argv by hand, and every option added to ``serve`` had to be added
there again: ``--trace`` and ``--max-message-bytes`` never were ("No such option"). The spec
also carries the token through a pipe, never an argv that ``ps`` shows.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from mcpkit.archive import messages as m
from mcpkit.archive.embedders import EmbedEndpoint
from mcpkit.archive.errors import ArchiveError
from mcpkit.archive.limits import InputLimits
from mcpkit.archive.messages import Lang, Wording
from mcpkit.archive.rpc.client import RpcClient
from mcpkit.archive.rpc.server import RpcServerOptions
from mcpkit.errors import CallError

ENV_STATE = "MCPKIT_ARCHIVE_STATE"
PID_NAME = "archive-server.pid"
SPEC_COMMAND = "serve-spec"
"""The hidden ``mcpkit archive`` command that reads a :class:`ServeSpec` as JSON on stdin."""
LOG_NAME = "archive-server.log"


class DaemonError(Wording, ArchiveError):
    """The background server could not be started or stopped (its line in any language)."""


def state_dir(environ: Mapping[str, str]) -> Path:
    """``MCPKIT_ARCHIVE_STATE``, else ``$XDG_STATE_HOME/mcpkit`` (``~/.local/state/mcpkit``),
    from the environment the CLI passes."""
    explicit = environ.get(ENV_STATE)
    if explicit:
        return Path(explicit).expanduser()
    base = environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base).expanduser() / "mcpkit"


@dataclass(frozen=True)
class ServeSpec:
    """Everything ``mcpkit archive serve`` runs with: one value for the foreground server and
    the background one, so ``start`` takes every ``serve`` option by construction."""

    db: str
    server: RpcServerOptions = field(default_factory=RpcServerOptions)
    limits: InputLimits = field(default_factory=InputLimits)
    create: bool = False
    exact: bool = False
    endpoint: EmbedEndpoint = field(default_factory=EmbedEndpoint)

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> ServeSpec:
        data = json.loads(text)
        server = dict(data["server"])
        server["allowed_origins"] = tuple(server.get("allowed_origins") or ())
        return cls(
            db=str(data["db"]),
            server=RpcServerOptions(**server),
            limits=InputLimits(**data["limits"]),
            create=bool(data["create"]),
            exact=bool(data["exact"]),
            endpoint=EmbedEndpoint(**data["endpoint"]),
        )

    @property
    def url(self) -> str:
        """Where a client on this machine reaches the server (a wildcard bind is probed on loopback)."""
        host = self.server.host
        shown = "127.0.0.1" if host in ("0.0.0.0", "", "::") else host
        shown = f"[{shown}]" if ":" in shown else shown
        return f"ws://{shown}:{self.server.port}"


@dataclass(frozen=True)
class DaemonState:
    pid: int
    url: str
    log: str


def _pid_file(directory: Path) -> Path:
    return directory / PID_NAME


def read_state(directory: Path) -> DaemonState | None:
    path = _pid_file(directory)
    try:
        data = json.loads(path.read_text())
        return DaemonState(int(data["pid"]), str(data["url"]), str(data.get("log", "")))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    cmdline = Path(f"/proc/{pid}/cmdline")
    if cmdline.exists():  # Linux: make sure the pid was not reused by something else
        try:
            return b"mcpkit" in cmdline.read_bytes()
        except OSError:
            return False
    return True


async def _probe(url: str, token: str | None, timeout: float) -> dict[str, Any] | None:
    client = RpcClient(url, token=token, connect_timeout=timeout, request_timeout=timeout)
    try:
        result = await client.call("get_status", {})
        return result if isinstance(result, dict) else {"result": result}
    except (CallError, OSError):  # down, refused, gone or timed out: nothing answers
        return None
    finally:
        await client.aclose()


def probe(url: str, token: str | None = None, timeout: float = 2.0) -> dict[str, Any] | None:
    """``get_status`` of the server at ``url``, or ``None`` when nothing answers."""
    return asyncio.run(_probe(url, token, timeout))


def _why(log_path: Path, since: int) -> str:
    """The server's own last word in its log since ``since`` (its ``error:`` line when it
    wrote one), for a one-line failure."""
    try:
        with log_path.open("rb") as handle:
            handle.seek(since)
            lines = handle.read().decode(errors="replace").splitlines()
    except OSError:
        return ""
    errors = [line.strip() for line in lines if line.startswith("error:")]
    words = [line.strip() for line in lines if line.strip()]
    last = errors[-1] if errors else (words[-1] if words else "")
    return last.removeprefix("error:").strip()


def describe_server(answer: Mapping[str, Any], lang: Lang = "en") -> str:
    """``pid N, db PATH`` of a ``get_status`` answer, as far as it says."""
    parts = [
        f"pid {answer['pid']}" if answer.get("pid") else "",
        f"db {answer['db']}" if answer.get("db") else "",
    ]
    return ", ".join(p for p in parts if p) or m.UNKNOWN_ARCHIVE(lang)


def start(spec: ServeSpec, directory: Path, *, ready_timeout: float = 120.0) -> DaemonState:
    """Run ``spec`` in a detached ``mcpkit archive`` child; return once it answers at ``spec.url``."""
    directory.mkdir(parents=True, exist_ok=True)
    current = read_state(directory)
    if current is not None and _alive(current.pid):
        raise DaemonError(m.ALREADY_RUNNING, pid=current.pid, url=current.url)
    log_path = directory / LOG_NAME
    url, token = spec.url, spec.server.token
    other = probe(url, token, timeout=1.0)
    if other is not None:
        raise DaemonError(m.ANOTHER_SERVER, url=url, server=describe_server(other))
    since = log_path.stat().st_size if log_path.exists() else 0
    with log_path.open("ab") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "mcpkit.archive.cli", SPEC_COMMAND],
            stdin=subprocess.PIPE,
            stdout=log,
            stderr=log,
            start_new_session=True,
        )
    assert proc.stdin is not None
    with contextlib.suppress(BrokenPipeError):  # a child that died at once is reported below
        proc.stdin.write(spec.to_json().encode())
    with contextlib.suppress(BrokenPipeError):
        proc.stdin.close()
    state = DaemonState(proc.pid, url, str(log_path))
    _pid_file(directory).write_text(json.dumps({"pid": state.pid, "url": url, "log": state.log}))
    deadline = time.monotonic() + ready_timeout
    while time.monotonic() < deadline:
        code = proc.poll()
        if code is not None:
            _pid_file(directory).unlink(missing_ok=True)
            why = _why(log_path, since)
            if why:
                raise DaemonError(m.DID_NOT_START, why=why, log=log_path)
            raise DaemonError(m.DID_NOT_START_CODE, code=code, log=log_path)
        answer = probe(url, token, timeout=1.0)
        if answer is not None and answer.get("pid") in (proc.pid, None):
            return state  # ours (a server without a pid in its status cannot be told apart)
        time.sleep(0.1)
    proc.terminate()
    _pid_file(directory).unlink(missing_ok=True)
    raise DaemonError(m.DID_NOT_ANSWER, seconds=f"{ready_timeout:g}", why=_why(log_path, since), log=log_path)


def stop(directory: Path, timeout: float = 15.0) -> DaemonState | None:
    """SIGTERM the recorded server and wait for it to exit (SIGKILL after ``timeout``)."""
    state = read_state(directory)
    pid_file = _pid_file(directory)
    if state is None or not _alive(state.pid):
        pid_file.unlink(missing_ok=True)
        return None
    os.kill(state.pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while _alive(state.pid) and time.monotonic() < deadline:
        _reap(state.pid)
        time.sleep(0.05)
    if _alive(state.pid):
        os.kill(state.pid, signal.SIGKILL)
    _reap(state.pid)
    pid_file.unlink(missing_ok=True)
    return state


def _reap(pid: int) -> None:
    """Collect the exit status when the server is our own child (tests, or start+stop in one process)."""
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)


def status(directory: Path, token: str | None = None) -> dict[str, Any]:
    """What is known about the background server: recorded pid, liveness, and its own status."""
    state = read_state(directory)
    if state is None:
        return {"running": False}
    alive = _alive(state.pid)
    answer = probe(state.url, token) if alive else None
    return {
        "running": alive,
        "answers": answer is not None,
        "pid": state.pid,
        "url": state.url,
        "log": state.log,
        "server": answer,
    }
