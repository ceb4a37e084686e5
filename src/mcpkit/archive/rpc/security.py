"""Who may talk to the archive server: bind address, browser origins and the shared token.

A WebSocket server on localhost is reachable from every web page the user opens: browsers
let any page open a WebSocket to 127.0.0.1 and only the server can refuse it, by looking at
the ``Origin`` header browsers always send. Command-line clients (upstream's Python and
Node clients, ours) send no ``Origin``, so they pass. Off loopback, anyone on the network can
connect, so a token is mandatory there.
"""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, urlsplit

from mcpkit.archive.errors import ArchiveError
from mcpkit.errors import ConfigError

if TYPE_CHECKING:  # the CLI reads this module's names; websockets loads only with the server
    from websockets.asyncio.server import ServerConnection
    from websockets.http11 import Request, Response

ENV_TOKEN = "MCPKIT_ARCHIVE_TOKEN"
ENV_ORIGINS = "MCPKIT_ARCHIVE_ORIGINS"


class SecurityConfigError(ArchiveError, ConfigError):
    """The server would be reachable by others without protection (refused at start)."""


def is_loopback(host: str) -> bool:
    """Whether ``host`` only accepts connections from this machine."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def parse_origins(raw: str | None) -> list[str]:
    """Allowed browser origins from a comma-separated list (the CLI passes
    ``$MCPKIT_ARCHIVE_ORIGINS``), without trailing slashes, as browsers send them."""
    return [o.strip().rstrip("/") for o in (raw or "").split(",") if o.strip()]


@dataclass(frozen=True)
class AccessPolicy:
    """The checks run on every WebSocket handshake before any JSON-RPC is read."""

    token: str | None = None
    allowed_origins: Sequence[str] = field(default_factory=tuple)

    @classmethod
    def for_bind(cls, host: str, token: str | None, allowed_origins: Iterable[str] = ()) -> AccessPolicy:
        """Build the policy, refusing a non-loopback bind without a token."""
        token = token or None
        if not is_loopback(host) and not token:
            raise SecurityConfigError(
                f"Refusing to bind {host}: it is reachable from other machines. "
                f"Set {ENV_TOKEN} (or --token-env NAME), or bind 127.0.0.1."
            )
        return cls(token=token, allowed_origins=tuple(o.rstrip("/") for o in allowed_origins))

    def origin_ok(self, origin: str | None) -> bool:
        """No Origin (not a browser) passes; a browser page only when its origin is listed."""
        if origin is None:
            return True
        return origin.rstrip("/") in self.allowed_origins

    def token_ok(self, request: Request) -> bool:
        """The token from ``Authorization: Bearer`` or the ``token`` query parameter, if one is set."""
        if self.token is None:
            return True
        presented = None
        auth = request.headers.get("Authorization")
        if auth and auth.lower().startswith("bearer "):
            presented = auth[7:].strip()
        if presented is None:
            values = parse_qs(urlsplit(request.path).query).get("token")
            presented = values[0] if values else None
        if presented is None:
            return False
        return hmac.compare_digest(presented.encode(), self.token.encode())

    def check(self, connection: ServerConnection, request: Request) -> Response | None:
        """websockets ``process_request`` hook: ``None`` to continue, else the refusal."""
        if not self.origin_ok(request.headers.get("Origin")):
            return connection.respond(
                HTTPStatus.FORBIDDEN,
                "Origin not allowed: web pages may not read the archive. "
                f"Add the origin to {ENV_ORIGINS} to allow it.\n",
            )
        if not self.token_ok(request):
            return connection.respond(
                HTTPStatus.UNAUTHORIZED, "Missing or wrong token: send Authorization: Bearer <token>.\n"
            )
        return None
