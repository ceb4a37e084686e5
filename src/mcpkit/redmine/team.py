"""The team deployment: stateless streamable HTTP where each request acts as its sender.

Every HTTP request may carry its sender's own Redmine key in ``X-Redmine-API-Key`` (the header
Redmine itself uses) or ``Authorization: Bearer KEY``; the tools then run as that user (see
:class:`mcpkit.redmine.keys.KeyedClients`). Before a request reaches the MCP transport, its
key is checked against Redmine (remembered per key) so a refused or missing key is an HTTP 401,
not a session that fails on every call. With ``REDMINE_API_KEY`` set, a request without a key
acts as that user. Keys are never logged: refusals are logged without them.

The check runs in the toolkit's HTTP guard (``ServerOptions.http.authorize``), after the
Origin check and before the MCP transport; stdio is untouched.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from mcpkit.redmine.api import KeyRefusedError, RedmineError
from mcpkit.redmine.keys import KeyedClients, request_key
from mcpkit.server import Authorize, HttpRefusal

logger = logging.getLogger("mcpkit.redmine")

NO_KEY = "Send your Redmine API key in the X-Redmine-API-Key header or as Authorization: Bearer KEY."
REFUSED = "Redmine refused the API key sent with this request; copy it from My account, API access key."
CHALLENGE = 'Bearer realm="redmine"'


def key_check(clients: KeyedClients) -> Authorize:
    """The per-request key check for the toolkit's HTTP guard: 401 without a usable key, 502
    when Redmine itself fails; the key is checked once and remembered (see :class:`KeyedClients`)."""

    async def authorize(headers: Mapping[str, str]) -> HttpRefusal | None:
        key = request_key(headers)
        if key is None and not clients.base.api_key:
            return HttpRefusal(401, NO_KEY, CHALLENGE)
        try:
            await clients.for_key(key).client.check_key()
        except KeyRefusedError:
            logger.warning("refused an HTTP request: Redmine does not accept its key")
            return HttpRefusal(401, REFUSED, CHALLENGE)
        except RedmineError as exc:
            return HttpRefusal(502, str(exc))
        return None

    return authorize
