"""``mcpkit gateway``: any set of MCP servers behind one endpoint, rewritten for each client.

Downstreams come from the client's config shapes; each tool gets a stable ``SERVER_TOOL``
name valid for every client; each connecting client gets the tool list adapted for its
profiles (chosen from ``clientInfo.name``), with quarantine for tools that cannot be adapted
and meta-tools when a client's tool limit is exceeded. See docs/gateway.md.

Names load on first use: ``mcpkit gateway`` starts its servers before it loads the SDK.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcpkit._lazy import lazy_root

if TYPE_CHECKING:
    from mcpkit.gateway.clients import CLIENTS, SAFE_SET, profiles_for
    from mcpkit.gateway.config import GatewayConfig, Supervision, load_gateway_config
    from mcpkit.gateway.core import Gateway
    from mcpkit.gateway.errors import DownstreamUnavailableError, GatewayConfigError
    from mcpkit.gateway.naming import NameMap, Route

_WHERE: dict[str, str] = {
    "CLIENTS": ".clients",
    "SAFE_SET": ".clients",
    "profiles_for": ".clients",
    "GatewayConfig": ".config",
    "Supervision": ".config",
    "load_gateway_config": ".config",
    "Gateway": ".core",
    "DownstreamUnavailableError": ".errors",
    "GatewayConfigError": ".errors",
    "NameMap": ".naming",
    "Route": ".naming",
}

__all__ = [
    "CLIENTS",
    "SAFE_SET",
    "DownstreamUnavailableError",
    "Gateway",
    "GatewayConfig",
    "GatewayConfigError",
    "NameMap",
    "Route",
    "Supervision",
    "load_gateway_config",
    "profiles_for",
]

__getattr__, __dir__ = lazy_root(__name__, _WHERE)
