"""Starting a stdio server's process: one place, light enough to run before the SDK loads.

A stdio server starts in a session of its own, so it leads its own process group and closing
it can end every process it spawned (see :mod:`mcpkit.client._procgroup`); the group is
registered at once, so even a process nobody adopts is killed at interpreter exit.

:func:`spawn` is also public for one reason: a gateway starts its servers *before* it imports
the MCP SDK and the compatibility profiles (about half a second), so each server's own
start-up runs meanwhile instead of after; the session then adopts the running process
(``Session(..., process=...)``) instead of starting another.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

import anyio
import anyio.abc

from mcpkit.client import _procgroup as procgroup
from mcpkit.client._config import ServerConfig


async def spawn_argv(
    argv: Sequence[str], *, env: Mapping[str, str] | None = None, cwd: str | Path | None = None
) -> anyio.abc.Process:
    """Start ``argv`` with piped stdio in a new session; FileNotFoundError names a missing command."""
    if not argv:
        raise ValueError("empty command line")
    try:
        proc = await anyio.open_process(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, **(env or {})},
            cwd=cwd,
            start_new_session=True,
        )
    except OSError as exc:
        raise FileNotFoundError(f"cannot start {argv[0]!r}: {exc.strerror or exc}") from exc
    procgroup.register(proc.pid)
    return proc


async def spawn(server: ServerConfig) -> anyio.abc.Process:
    """Start the stdio server ``server`` as its session would; hand the result to
    ``Session(server, process=...)``, which owns it from then on."""
    if server.kind != "stdio":
        raise ValueError(f"{server.name} is not a stdio server")
    return await spawn_argv(server.command, env=server.env, cwd=server.cwd)
