"""The gateway's errors: a bad configuration, and a downstream that cannot serve a call."""

from __future__ import annotations

from mcpkit.errors import ConfigError, ConnectError


class GatewayConfigError(ConfigError):
    """The gateway configuration is unusable (colliding prefixes, a bad name override, ...)."""


class DownstreamUnavailableError(ConnectError):
    """A downstream server is not running (failed to start, restarting, or given up on).

    A :class:`~mcpkit.errors.ConnectError`, so the one ``except CallError`` around a relayed
    call covers it with the downstream's own errors.
    """
