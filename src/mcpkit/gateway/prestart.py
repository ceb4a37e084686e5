"""Starting the stdio servers before the gateway loads the rest of itself.

A gateway is ready when its slowest server is. Loading the MCP SDK and the client profiles
takes the gateway about half a second; starting the servers first lets each server's own
start-up (often an interpreter loading the same SDK) run during that half second instead of
after it. Only light modules are imported here; each process is handed to its downstream's
first session, which owns it from then on (a group nobody adopts is killed at exit).

Until the gateway's own signal handling starts, SIGTERM and SIGHUP would kill it outright,
skipping that exit hook and leaving the servers behind: they are turned into a normal exit
first, so the hook runs.
"""

from __future__ import annotations

import logging
import signal
import sys
from types import FrameType

import anyio.abc

from mcpkit.client import spawn
from mcpkit.gateway.config import GatewayConfig

logger = logging.getLogger("mcpkit.gateway")


async def spawn_stdio(config: GatewayConfig) -> dict[str, anyio.abc.Process]:
    """Start every stdio server of ``config``; by name. One that cannot start is left out: its
    downstream's own attempt reports why, as for any other start."""
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _exit_cleanly)
    spawned: dict[str, anyio.abc.Process] = {}
    for name, server in config.servers.items():
        if server.kind != "stdio":
            continue
        try:
            spawned[name] = await spawn(server)
        except (OSError, ValueError) as exc:
            logger.debug("%s: not started ahead: %s", name, exc)
    return spawned


def _exit_cleanly(signum: int, frame: FrameType | None) -> None:
    """Exit with 128 + the signal, through ``SystemExit``, so exit hooks end the servers."""
    sys.exit(128 + signum)
