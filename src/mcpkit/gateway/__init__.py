"""``mcpkit gateway``: any set of MCP servers behind one endpoint, rewritten for each client.

Downstreams come from the client's config shapes; each tool gets a stable ``SERVER_TOOL``
name valid for every client; each connecting client gets the tool list adapted for its
profiles (chosen from ``clientInfo.name``), with quarantine for tools that cannot be adapted
and meta-tools when a client's tool limit is exceeded. See docs/gateway.md.
"""

from mcpkit.gateway.clients import CLIENTS, SAFE_SET, profiles_for
from mcpkit.gateway.config import GatewayConfig, Supervision, load_gateway_config
from mcpkit.gateway.core import Gateway
from mcpkit.gateway.errors import DownstreamUnavailableError, GatewayConfigError, GatewayError
from mcpkit.gateway.naming import NameMap, Route

__all__ = [
    "CLIENTS",
    "SAFE_SET",
    "DownstreamUnavailableError",
    "Gateway",
    "GatewayConfig",
    "GatewayConfigError",
    "GatewayError",
    "NameMap",
    "Route",
    "Supervision",
    "load_gateway_config",
    "profiles_for",
]
