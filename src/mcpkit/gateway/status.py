"""Where a running gateway publishes its status, so ``mcpkit gateway status`` can read it.

A gateway on stdio has no channel but its client's, so it writes its status (health, tool
counts, restarts, quarantine per profile) as JSON to a file named after its config, rewritten
every second and removed on exit. ``status`` reads that file when its writer is alive;
otherwise it starts the downstreams itself once and reports what it finds.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread

if TYPE_CHECKING:
    from mcpkit.gateway.core import Gateway

INTERVAL = 1.0


def default_status_path(config_source: str) -> Path:
    """``$XDG_RUNTIME_DIR/mcpkit-gateway/<hash of the config path>.json`` (temp dir without it)."""
    base = Path(os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir()) / "mcpkit-gateway"
    key = hashlib.sha256(str(Path(config_source).resolve()).encode()).hexdigest()[:16]
    return base / f"{key}.json"


def read_live(path: Path) -> dict[str, Any] | None:
    """The status a live gateway wrote at ``path``; None when there is none or its writer is gone."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    pid = data.get("pid")
    if not isinstance(pid, int):
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        pass
    return data


class StatusFile:
    """Keeps ``gateway.status()`` written to a file while the gateway runs."""

    def __init__(self, gateway: Gateway, path: Path | None) -> None:
        self.gateway = gateway
        self.path = path or default_status_path(gateway.config.source or gateway.config.name)

    def write(self) -> None:
        data = {"pid": os.getpid(), "written": time.time(), **self.gateway.status()}
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        tmp = self.path.with_suffix(f".{os.getpid()}.tmp")
        # Only the user may read it: errors quote a server's last stderr lines.
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(json.dumps(data, indent=1))
        os.replace(tmp, self.path)

    async def keep_written(self) -> None:
        try:
            while True:
                await anyio.sleep(INTERVAL)  # first write after start-up: clients come first
                with contextlib.suppress(OSError):  # a courtesy: serving goes on without it
                    await anyio.to_thread.run_sync(self.write)  # may build views: off the loop
        finally:
            with contextlib.suppress(OSError):
                self.path.unlink()
