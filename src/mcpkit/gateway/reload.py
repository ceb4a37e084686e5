"""Reloading the gateway's config on SIGHUP or when its file changes, without a restart.

What a reload changes at once: each server's tool rules (``tools.include``, ``exclude``,
``overrides``) and ``rate_limit``. Clients are sent ``notifications/tools/list_changed`` (and
the 2026 wire's tools event) when their tool list changed. No downstream is restarted, so a call
in flight finishes as it started; the next ``tools/list`` and call see the new list.

Anything else that differs (servers added, removed or changed, names, limits, timeouts) needs a
restart: the reload says so in one log line and keeps serving the rest as before. A file that
does not parse or validate is refused in one line, and the running config stays.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import signal
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
import anyio.abc

from mcpkit.errors import McpkitError
from mcpkit.gateway.config import GatewayConfig, load_gateway_config

if TYPE_CHECKING:
    from mcpkit.gateway.core import Gateway

logger = logging.getLogger("mcpkit.gateway")

RELOADED = ("tool_rules", "rate_limit")
"""The config fields a reload applies; the others need a restart."""

POLL_SECONDS = 1.0
"""How often the config file's size, time and inode are compared for a change."""

RELOAD_SIGNAL = signal.SIGHUP
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
"""What ends a gateway (SIGHUP reloads it instead)."""


async def reload(gateway: Gateway) -> bool:
    """Read the gateway's config file again and apply what can be applied; True when it was."""
    path = gateway.config.source
    try:
        fresh = load_gateway_config(path)
    except (McpkitError, OSError, ValueError) as exc:
        logger.error("config %s not reloaded (the running one stays): %s", path, _one_line(exc))
        return False
    return await apply(gateway, fresh)


async def apply(gateway: Gateway, fresh: GatewayConfig) -> bool:
    """Apply ``fresh``'s tool rules and rate limit; log what else differs (needs a restart)."""
    current = gateway.config
    kept = [
        f.name
        for f in dataclasses.fields(GatewayConfig)
        if f.name not in RELOADED
        and f.name != "source"
        and getattr(current, f.name) != getattr(fresh, f.name)
    ]
    if kept:
        logger.warning("config %s: %s changed; a restart applies that", current.source, ", ".join(kept))
    config = dataclasses.replace(current, tool_rules=fresh.tool_rules, rate_limit=fresh.rate_limit)
    gateway.config = config
    if fresh.rate_limit != current.rate_limit:
        gateway.limiter.limit = fresh.rate_limit
    changed = gateway.routing.reconfigure(config)
    logger.info(
        "config %s reloaded: %d tools%s",
        current.source,
        len(gateway.routing.routes),
        ", list changed" * changed,
    )
    if changed:
        await gateway.tools_changed()
    return True


async def watch(
    gateway: Gateway, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
) -> None:
    """Reload on SIGHUP and whenever the config file changes (its size, time or inode); started
    (``tg.start``) once SIGHUP is taken, so a SIGHUP from then on reloads."""
    path = Path(gateway.config.source)
    if not path.is_file():
        task_status.started()
        return  # built from a table, not a file: nothing to reload
    with anyio.open_signal_receiver(RELOAD_SIGNAL) as signals:
        async with anyio.create_task_group() as tg:
            tg.start_soon(_poll, gateway, path)
            task_status.started()
            async for _ in signals:
                logger.info("received SIGHUP, reloading %s", path)
                await reload(gateway)


async def _poll(gateway: Gateway, path: Path) -> None:
    seen = _stamp(path)
    while True:
        await anyio.sleep(POLL_SECONDS)
        now = _stamp(path)
        if now != seen and now is not None:
            seen = now
            await reload(gateway)


def _stamp(path: Path) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None  # being replaced: the next look sees the new file
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__
