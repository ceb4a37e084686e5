"""The gateway's configuration: the client's server table plus an optional ``gateway`` table.

Downstream servers come from the same files and shapes the client reads
(:func:`mcpkit.client.load_config`: ``mcpServers``, VS Code's ``servers``, Codex's
``mcp_servers``), so any such file works as is. Gateway settings
sit beside it in a ``gateway`` table, which the client ignores::

    {"mcpServers": {"time": {"command": "uvx", "args": ["mcp-server-time"]}},
     "gateway": {"name": "tools", "max_concurrent": 8,
                 "names": {"time/get_current_time": "now"},
                 "servers": {"time": {"max_concurrent": 2}}}}
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcpkit.client import ServerConfig, SessionOptions, load_config
from mcpkit.gateway.controls import NO_RULES, RateLimit, ToolRules, parse_rate_limit, parse_tool_rules
from mcpkit.gateway.errors import GatewayConfigError
from mcpkit.gateway.sealing import check_key_source

DEFAULT_NAME = "gateway"
DEFAULT_MAX_CONCURRENT = 16
DEFAULT_CALL_TIMEOUT = 300.0
SERVER_KEYS = frozenset({"max_concurrent", "protocol", "tools"})
"""What ``gateway.servers.NAME`` may hold."""


@dataclass(frozen=True)
class Supervision:
    """How crashed stdio downstreams are restarted: exponential backoff, and when to give up.

    ``max_restarts`` restarts within ``window`` seconds make a crash loop: the downstream is
    marked unhealthy and left down (its tools leave every client's list).
    """

    max_restarts: int = 5
    window: float = 60.0
    backoff: float = 0.5
    max_backoff: float = 10.0


@dataclass(frozen=True)
class GatewayConfig:
    """Everything the gateway needs: downstreams, names, limits."""

    servers: dict[str, ServerConfig]
    name: str = DEFAULT_NAME
    names: dict[str, str] = field(default_factory=dict)
    max_concurrent: dict[str, int] = field(default_factory=dict)
    protocols: dict[str, str] = field(default_factory=dict)
    """The wire spoken to each server (``gateway.servers.NAME.protocol``: ``auto``, ``2026-07-28``
    or ``2025-11-25``); unnamed servers get the handshake, which every server speaks."""
    default_max_concurrent: int = DEFAULT_MAX_CONCURRENT
    call_timeout: float = DEFAULT_CALL_TIMEOUT
    connect_timeout: float = 30.0
    output_cap: int | None = None
    overflow_dir: Path | None = None
    """Where cut answers are kept for ``readmore`` (shared by replicas); None: in memory."""
    supervision: Supervision = field(default_factory=Supervision)
    fast_lane: bool = True
    """Relay plain calls beside the SDK sessions (stdio front, stdio servers); false: every call
    takes the SDK's path (the same answers, about 0.4 ms slower each)."""
    tool_rules: dict[str, ToolRules] = field(default_factory=dict)
    """``gateway.servers.NAME.tools``: which tools are served, with overrides (see :mod:`controls`)."""
    rate_limit: RateLimit | None = None
    """``gateway.rate_limit``: tool calls allowed per caller; None: no limit."""
    state_keys: tuple[str, ...] = ()
    """``gateway.state_keys``: where the keys that seal task handles are (``env:NAME`` or
    ``file:PATH``; the first seals, all open: see :mod:`sealing`); empty: nothing sealed."""
    source: str = ""

    def rules(self, server: str) -> ToolRules:
        """The tool rules of ``server`` (none: every tool as the server defines it)."""
        return self.tool_rules.get(server, NO_RULES)

    def concurrency(self, server: str) -> int:
        """How many calls may run at once on ``server``."""
        return self.max_concurrent.get(server, self.default_max_concurrent)


def load_gateway_config(path: str | Path) -> GatewayConfig:
    """Read the downstream servers (client config shapes) and the ``gateway`` table."""
    p = Path(path).expanduser()
    servers = load_config(p)
    raw = _raw(p).get("gateway") or {}
    if not isinstance(raw, Mapping):
        raise GatewayConfigError(f"{p}: 'gateway' must be a table")
    return parse_gateway_table(raw, servers, source=str(p))


def _raw(p: Path) -> Mapping[str, Any]:
    text = p.read_text(encoding="utf-8")
    data: Any = tomllib.loads(text) if p.suffix.lower() == ".toml" else json.loads(text)
    return data if isinstance(data, Mapping) else {}


def _positive(raw: Mapping[str, Any], key: str, where: str, kind: type = float) -> Any:
    value = raw.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise GatewayConfigError(f"{where}: {key!r} must be a positive number")
    if kind is int and value != int(value):
        raise GatewayConfigError(f"{where}: {key!r} must be a whole number")
    return kind(value)


def parse_gateway_table(
    raw: Mapping[str, Any], servers: Mapping[str, ServerConfig], *, source: str = "config"
) -> GatewayConfig:
    """Validate the ``gateway`` table against the configured servers."""
    where = f"{source}: gateway"
    known = {"name", "names", "servers", "max_concurrent", "call_timeout", "connect_timeout", "output_cap"}
    known |= {"restart", "overflow_dir", "fast_lane", "rate_limit", "state_keys"}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise GatewayConfigError(
            f"{where}: unknown keys {', '.join(unknown)} (known: {', '.join(sorted(known))})"
        )
    name = raw.get("name", DEFAULT_NAME)
    if not isinstance(name, str) or not name.strip():
        raise GatewayConfigError(f"{where}: 'name' must be a non-empty string")
    names = raw.get("names") or {}
    if not isinstance(names, Mapping) or not all(isinstance(v, str) for v in names.values()):
        raise GatewayConfigError(f"{where}: 'names' must map 'server/tool' to a name")
    per_server: dict[str, int] = {}
    protocols: dict[str, str] = {}
    tool_rules: dict[str, ToolRules] = {}
    table = raw.get("servers") or {}
    if not isinstance(table, Mapping):
        raise GatewayConfigError(f"{where}: 'servers' must be a table")
    for server, opts in table.items():
        if server not in servers:
            raise GatewayConfigError(f"{where}.servers: no server {server!r} in mcpServers")
        if not isinstance(opts, Mapping):
            raise GatewayConfigError(f"{where}.servers.{server} must be a table")
        strange = sorted(str(k) for k in set(opts) - SERVER_KEYS)
        if strange:  # a misspelt "tools" would serve every tool, unnoticed
            raise GatewayConfigError(
                f"{where}.servers.{server}: unknown keys {', '.join(map(repr, strange))}"
                f" (known: {', '.join(sorted(SERVER_KEYS))})"
            )
        limit = _positive(opts, "max_concurrent", f"{where}.servers.{server}", int)
        if limit is not None:
            per_server[server] = limit
        protocol = opts.get("protocol")
        if protocol is not None:
            try:
                SessionOptions(protocol=protocol)  # its own check, its own words
            except ValueError as exc:
                raise GatewayConfigError(f"{where}.servers.{server}: {exc}") from None
            protocols[server] = protocol
        if opts.get("tools") is not None:
            tool_rules[server] = parse_tool_rules(opts["tools"], f"{where}.servers.{server}.tools")
    overflow_dir = raw.get("overflow_dir")
    if overflow_dir is not None and (not isinstance(overflow_dir, str) or not overflow_dir.strip()):
        raise GatewayConfigError(f"{where}: 'overflow_dir' must be a directory path")
    fast_lane = raw.get("fast_lane", True)
    if not isinstance(fast_lane, bool):
        raise GatewayConfigError(f"{where}: 'fast_lane' must be true or false")
    state_keys = raw.get("state_keys") or []
    if not isinstance(state_keys, list):
        raise GatewayConfigError(f"{where}: 'state_keys' must be a list such as [\"env:NAME\"]")
    state_keys = [check_key_source(k, f"{where}.state_keys") for k in state_keys]
    restart = raw.get("restart") or {}
    if not isinstance(restart, Mapping):
        raise GatewayConfigError(f"{where}: 'restart' must be a table")
    supervision = Supervision(
        max_restarts=_positive(restart, "max_restarts", f"{where}.restart", int) or Supervision.max_restarts,
        window=_positive(restart, "window", f"{where}.restart") or Supervision.window,
        backoff=_positive(restart, "backoff", f"{where}.restart") or Supervision.backoff,
        max_backoff=_positive(restart, "max_backoff", f"{where}.restart") or Supervision.max_backoff,
    )
    return GatewayConfig(
        servers=dict(servers),
        name=name.strip(),
        names={str(k): str(v) for k, v in names.items()},
        max_concurrent=per_server,
        protocols=protocols,
        default_max_concurrent=_positive(raw, "max_concurrent", where, int) or DEFAULT_MAX_CONCURRENT,
        call_timeout=_positive(raw, "call_timeout", where) or DEFAULT_CALL_TIMEOUT,
        connect_timeout=_positive(raw, "connect_timeout", where) or 30.0,
        output_cap=_positive(raw, "output_cap", where, int),
        overflow_dir=Path(overflow_dir).expanduser() if overflow_dir else None,
        supervision=supervision,
        fast_lane=fast_lane,
        tool_rules=tool_rules,
        rate_limit=parse_rate_limit(raw.get("rate_limit"), f"{where}.rate_limit"),
        state_keys=tuple(state_keys),
        source=source,
    )
