"""Where a doc block runs: a throw-away directory that looks like a checkout, a home of its own,
``mcpkit`` and the third-party servers on PATH, and nothing left running afterwards.

The directory links the checkout's top level (``.venv``, ``bench``, ``scripts``, ``tests`` ...)
so commands written for the repository root (``.venv/bin/python bench/x.py``, ``make demo``) run
as written, while every file a block writes (a database, ``report.sarif``) lands in the
sandbox. The virtualenv counts as installed (see ``_link_venv``): no block installs anything. ``HOME`` is the sandbox's own, so ``~/.local/share/mcpkit/archive.db`` and
``~/mcp.json`` are the block's, not the developer's.

``uvx NAME`` and ``npx -y PACKAGE`` are shims that start the servers ``make test`` installed
into ``.third-party/``: the page's command runs unchanged, with no network.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

from tests.support.env import REPO, THIRD_PARTY

LINKED = (
    ".venv",
    ".third-party",
    ".redmine",
    "bench",
    "examples",
    "scripts",
    "src",
    "tests",
    "docs",
    "packaging",
)
LINKED_FILES = ("Makefile", "pyproject.toml", "README.md", "LICENSE")
PROBE = REPO / "tests" / "docs" / "probe.py"
RUN_PYTHON = REPO / "tests" / "docs" / "run_python.py"
LOCKS = Path(os.environ.get("TMPDIR", "/tmp")) / "mcpkit-docs-locks"

UVX = f"""#!/bin/sh
# uvx NAME ARGS...: the PyPI server make test installed (no download).
# uvx --from 'mcpkit-suite[extra]' mcpkit ARGS...: this checkout's mcpkit (tests/install runs the
# real uvx on the built wheel).
if [ "$1" = "--from" ]; then
  shift 2; name="$1"; shift
  exec "{REPO}/.venv/bin/$name" "$@"
fi
name="$1"; shift
exec "{THIRD_PARTY}/venv/bin/$name" "$@"
"""
NPX = f"""#!/bin/sh
# npx -y @scope/server-NAME ARGS...: the npm server make test installed (no download)
[ "$1" = "-y" ] && shift
pkg="${{1##*/}}"; shift
exec "{THIRD_PARTY}/node/node_modules/.bin/mcp-$pkg" "$@"
"""


class Sandbox:
    """One block's directory, environment and background processes."""

    def __init__(self, root: Path, extra_env: Mapping[str, str] = {}) -> None:
        self.root = root
        self.home = root / "home"
        self.home.mkdir(parents=True)
        bin_dir = root / ".docs-bin"
        bin_dir.mkdir()
        for name, text in (("uvx", UVX), ("npx", NPX)):
            shim = bin_dir / name
            shim.write_text(text)
            shim.chmod(0o755)
        for name in LINKED + LINKED_FILES:
            if name == ".venv":
                self._link_venv()
            elif (REPO / name).exists():
                (root / name).symlink_to(REPO / name)
        keep = ("PATH", "LANG", "LC_ALL", "TMPDIR", "CI", "TERM")
        self.env = {k: v for k, v in os.environ.items() if k in keep}
        self.env.update(
            HOME=str(self.home),
            PATH=os.pathsep.join([str(bin_dir), str(REPO / ".venv" / "bin"), os.environ.get("PATH", "")]),
            PYTHONUNBUFFERED="1",
            NO_COLOR="1",
            COLUMNS="200",
        )
        self.env.update(extra_env)
        self._background: list[subprocess.Popen[bytes]] = []
        self._cleanup: list[str] = []
        self.transcript: list[str] = []

    def _link_venv(self) -> None:
        """The checkout's virtualenv, with a stamp of its own that says it is installed.

        ``make demo`` reinstalls the package when pyproject.toml is newer than the stamp; run in
        a sandbox that would be ``pip install -e`` into the virtualenv every test shares, in the
        middle of their runs. The suite's virtualenv is installed already (``make test``)."""
        venv = self.root / ".venv"
        venv.mkdir()
        for entry in (REPO / ".venv").iterdir():
            if entry.name != ".installed":
                (venv / entry.name).symlink_to(entry)
        (venv / ".installed").touch()

    # -- running -------------------------------------------------------------------------------

    def run(
        self, line: str, *, stdin: str | None = None, timeout: float = 300
    ) -> subprocess.CompletedProcess[str]:
        """Run one command line in bash; exports and sourced files carry over to the next line."""
        env_file = self.root / ".docs-env"
        script = f"{line}\n__rc=$?\nenv -0 > {env_file}\nexit $__rc\n"
        done = subprocess.run(
            ["bash", "-c", script],
            cwd=self.root,
            env=self.env,
            input=stdin if stdin is not None else "",
            capture_output=True,
            text=True,
            timeout=timeout,
            start_new_session=True,
        )
        if env_file.exists():
            pairs = env_file.read_bytes().split(b"\0")
            self.env = dict(p.decode().split("=", 1) for p in pairs if b"=" in p)
            self.env.pop("__rc", None)
        self.transcript.append(f"$ {line}\n[exit {done.returncode}]\n{done.stdout}{done.stderr}")
        return done

    def probe(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, str(PROBE), *args]
        done = subprocess.run(
            command,
            cwd=self.root,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            start_new_session=True,
        )
        self.transcript.append(f"[probe {' '.join(args)}] exit {done.returncode}\n{done.stdout}{done.stderr}")
        return done

    def background(self, line: str) -> subprocess.Popen[bytes]:
        log = open(self.root / f".docs-bg-{len(self._background)}.log", "wb")  # noqa: SIM115
        process = subprocess.Popen(
            ["bash", "-c", line],
            cwd=self.root,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self._background.append(process)
        return process

    def background_log(self) -> str:
        return "\n".join(
            p.read_text(errors="replace")[-3000:] for p in sorted(self.root.glob(".docs-bg-*.log"))
        )

    def on_close(self, line: str) -> None:
        self._cleanup.append(line)

    def close(self) -> None:
        for line in reversed(self._cleanup):
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.run(line, timeout=60)
        for process in self._background:
            _end_group(process)
        for pid in _started_here(self.home):
            # A daemon a block started (``archive start``) whose stop line never ran, say because
            # an earlier line failed: it is ours by its HOME, which no other process has.
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            shutil.rmtree(self.root / "home" / ".cache", ignore_errors=True)


def _end_group(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the whole group, SIGKILL after a grace: no grandchild outlives the block."""
    for sig, grace in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 10.0)):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, sig)
        try:
            process.wait(timeout=grace)
            break
        except subprocess.TimeoutExpired:
            continue
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)


def _started_here(home: Path) -> list[int]:
    marker = f"HOME={home}".encode() + b"\0"
    found = []
    for environ in Path("/proc").glob("[0-9]*/environ"):
        with contextlib.suppress(OSError):
            if marker in environ.read_bytes():
                found.append(int(environ.parent.name))
    return [pid for pid in found if pid != os.getpid()]


@contextlib.contextmanager
def port_locks(ports: tuple[int, ...]) -> Iterator[None]:
    """Blocks that use the same fixed port (8765, 8000) run one at a time, across xdist workers."""
    LOCKS.mkdir(parents=True, exist_ok=True)
    with contextlib.ExitStack() as stack:
        for port in sorted(ports):
            handle = stack.enter_context(open(LOCKS / f"port-{port}.lock", "w"))
            fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def wait_for_port(port: int, deadline_s: float = 120) -> bool:
    import socket

    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return True
        time.sleep(0.2)
    return False
