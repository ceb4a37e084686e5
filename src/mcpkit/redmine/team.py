"""The team deployment: stateless streamable HTTP where each request acts as its sender.

Every HTTP request may carry its sender's own Redmine key in ``X-Redmine-API-Key`` (the header
Redmine itself uses) or ``Authorization: Bearer KEY``; the tools then run as that user (see
:class:`mcpkit.redmine.keys.KeyedClients`). Before a request reaches the MCP transport, its
key is checked against Redmine (remembered per key) so a refused or missing key is an HTTP 401,
not a session that fails on every call. With ``REDMINE_API_KEY`` set, a request without a key
acts as that user. Keys are never logged: refusals are logged without them.

The toolkit's HTTP runner builds the ASGI app from the SDK server; :class:`KeyCheckedServer`
wraps only that one method of the SDK server, so stdio and everything else is untouched.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from mcpkit.redmine.api import KeyRefusedError, RedmineError
from mcpkit.redmine.keys import KeyedClients, request_key

logger = logging.getLogger("mcpkit.redmine")

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

NO_KEY = "Send your Redmine API key in the X-Redmine-API-Key header or as Authorization: Bearer KEY."
REFUSED = "Redmine refused the API key sent with this request; copy it from My account, API access key."


async def _answer(send: Send, status: int, text: str) -> None:
    headers = [(b"content-type", b"text/plain; charset=utf-8")]
    if status == 401:
        headers.append((b"www-authenticate", b'Bearer realm="redmine"'))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": (text + "\n").encode()})


def key_checked(app: App, clients: KeyedClients) -> App:
    """``app`` behind the per-request key check: 401 without a usable key, 502 when Redmine fails."""

    async def checked(scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") != "http":
            await app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        key = request_key(headers)
        if key is None and not clients.base.api_key:
            await _answer(send, 401, NO_KEY)
            return
        try:
            await clients.for_key(key).client.check_key()
        except KeyRefusedError:
            logger.warning("refused an HTTP request: Redmine does not accept its key")
            await _answer(send, 401, REFUSED)
            return
        except RedmineError as exc:
            await _answer(send, 502, str(exc))
            return
        await app(scope, receive, send)

    return checked


class KeyCheckedServer:
    """The SDK server with its HTTP app wrapped in :func:`key_checked`; all else passes through."""

    def __init__(self, lowlevel: Any, clients: KeyedClients) -> None:
        self._lowlevel = lowlevel
        self._clients = clients

    def streamable_http_app(self, *args: Any, **kwargs: Any) -> App:
        app = self._lowlevel.streamable_http_app(*args, **kwargs)
        wrapped: App = key_checked(app, self._clients)
        return wrapped

    def __getattr__(self, name: str) -> Any:
        return getattr(self._lowlevel, name)
