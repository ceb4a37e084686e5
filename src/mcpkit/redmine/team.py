"""The team deployment: stateless streamable HTTP where each request acts as its sender.

Every HTTP request may carry its sender's own Redmine key in ``X-Redmine-API-Key`` (the header
Redmine itself uses) or ``Authorization: Bearer KEY`` (with single sign-on, an OAuth access token
there instead: see :mod:`mcpkit.redmine.sso`, and no request acts as ``REDMINE_API_KEY``'s owner); the tools then run as that user (see
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
from typing import Any

from mcpkit.redmine.api import KeyRefusedError, RedmineError
from mcpkit.redmine.keys import KeyedClients, request_key
from mcpkit.redmine.sso import token_of
from mcpkit.server import Authorize, HttpRefusal

logger = logging.getLogger("mcpkit.redmine")

NO_CREDENTIAL = (
    "Sign in with your organisation's account (an OAuth access token as Authorization: Bearer TOKEN) "
    "or send your Redmine API key in the X-Redmine-API-Key header."
)
NO_KEY = "Send your Redmine API key in the X-Redmine-API-Key header or as Authorization: Bearer KEY."
REFUSED = "Redmine refused the API key sent with this request; copy it from My account, API access key."
REFUSED_TOKEN = "Redmine refused the access token sent with this request; sign in again."
CHALLENGE = 'Bearer realm="redmine"'


def key_check(clients: KeyedClients) -> Authorize:
    """The per-request check for the toolkit's HTTP guard: 401 without a usable key, 502
    when Redmine itself fails; the key is checked once and remembered (see :class:`KeyedClients`).
    With single sign-on, a request whose token the guard accepted is admitted by
    :meth:`SingleSignOn.admit <mcpkit.redmine.sso.SingleSignOn.admit>`; where Redmine is the
    authorization server, Redmine itself judges each token like a key."""
    sso = clients.sso

    async def authorize(headers: Mapping[str, str], claims: Mapping[str, Any] | None) -> HttpRefusal | None:
        if sso is not None and claims is not None:
            return await sso.admit(headers, claims)
        token = token_of(headers) if clients.redmine_tokens else None
        if clients.signs_on:
            if token is None and request_key(headers, bearer=False) is None:
                # the guard adds the OAuth challenge, which points at the authorization server
                return HttpRefusal(401, NO_CREDENTIAL)
        elif request_key(headers, bearer=not clients.gated) is None and not clients.base.api_key:
            return HttpRefusal(401, NO_KEY, CHALLENGE)
        try:
            await clients.for_request(headers).client.check_key()
        except KeyRefusedError:
            logger.warning(
                "refused an HTTP request: Redmine does not accept its %s", "token" if token else "key"
            )
            if token is not None:
                return HttpRefusal(401, REFUSED_TOKEN)
            return HttpRefusal(401, REFUSED, None if clients.signs_on else CHALLENGE)
        except RedmineError as exc:
            return HttpRefusal(502, str(exc))
        return None

    return authorize
