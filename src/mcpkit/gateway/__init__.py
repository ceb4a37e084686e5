"""``mcpkit gateway``: any set of MCP servers behind one endpoint, rewritten for each client.

Downstreams come from the client's config shapes; each tool gets a stable ``SERVER_TOOL``
name valid for every client; each connecting client gets the tool list adapted for its
profiles (chosen from ``clientInfo.name``), with quarantine for tools that cannot be adapted
and meta-tools when a client's tool limit is exceeded. See docs/gateway.md.

Names load on first use: ``mcpkit gateway`` starts its servers before it loads the SDK.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcpkit._lazy import lazy_exports

if TYPE_CHECKING:
    from mcpkit.gateway.clients import CLIENTS as CLIENTS
    from mcpkit.gateway.clients import SAFE_SET as SAFE_SET
    from mcpkit.gateway.clients import profiles_for as profiles_for
    from mcpkit.gateway.config import GatewayConfig as GatewayConfig
    from mcpkit.gateway.config import Supervision as Supervision
    from mcpkit.gateway.config import load_gateway_config as load_gateway_config
    from mcpkit.gateway.core import Gateway as Gateway
    from mcpkit.gateway.errors import DownstreamUnavailableError as DownstreamUnavailableError
    from mcpkit.gateway.errors import GatewayConfigError as GatewayConfigError
    from mcpkit.gateway.naming import NameMap as NameMap
    from mcpkit.gateway.naming import Route as Route

__getattr__, __dir__, __all__ = lazy_exports(__name__)
