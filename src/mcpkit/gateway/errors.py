"""The gateway's errors: a bad configuration, and a downstream that cannot serve a call."""

from __future__ import annotations

from mcpkit.errors import McpkitError


class GatewayError(McpkitError):
    """Base class of the gateway's own failures."""


class GatewayConfigError(GatewayError):
    """The gateway configuration is unusable (colliding prefixes, a bad name override, ...)."""


class DownstreamUnavailableError(GatewayError):
    """A downstream server is not running (failed to start, restarting, or given up on)."""
