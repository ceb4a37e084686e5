"""Per-request Redmine keys: where a request carries one, and one checked client per key.

Over HTTP each request may carry its sender's own key (``X-Redmine-API-Key`` or
``Authorization: Bearer``), or with single sign-on an OAuth token (:mod:`.sso`); :class:`KeyedClients` keeps one client per key on one shared
connection pool, so each key is checked once (see :meth:`RedmineClient.check_key`). A key is
never logged, and the pool is indexed by its SHA-256 rather than the key itself.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Mapping

from mcpkit.redmine.api import RedmineClient
from mcpkit.redmine.sso import SignOnError, SingleSignOn, token_of
from mcpkit.redmine.tools import RedmineContext
from mcpkit.redmine.xml import Formatter
from mcpkit.tools import ToolContext

MAX_KEYS = 256


def request_key(headers: Mapping[str, str], *, bearer: bool = True) -> str | None:
    """The caller's Redmine key from ``X-Redmine-API-Key`` or, unless ``bearer`` is false (with
    single sign-on a bearer token is an OAuth token), ``Authorization: Bearer``."""
    key = headers.get("x-redmine-api-key", "").strip()
    if key:
        return key
    return token_of(headers) if bearer else None


class KeyedClients:
    """One client per key on one connection pool, the least recently used dropped past ``MAX_KEYS``."""

    def __init__(
        self,
        base: RedmineClient,
        fmt: Formatter,
        sso: SingleSignOn | None = None,
        *,
        redmine_tokens: bool = False,
        gated: bool = False,
    ) -> None:
        self.base = base
        self.fmt = fmt
        self.default = RedmineContext(base, fmt)
        self.sso = sso
        """With single sign-on, a request with a bearer token acts as the token's holder (see
        :mod:`.sso`), one with a key as the key's owner, and there is no default user."""
        self.redmine_tokens = redmine_tokens
        """Redmine is the authorization server: a bearer token is Redmine's own OAuth token, sent
        on to Redmine as ``Authorization: Bearer``; a key still acts as its owner; no default user."""
        self.gated = gated
        """The server requires its own bearer token (``--token-env``): ``Authorization: Bearer``
        carries that token, never a Redmine key, and a key comes only in ``X-Redmine-API-Key``."""
        self._by_key: OrderedDict[str, RedmineContext] = OrderedDict()

    @property
    def signs_on(self) -> bool:
        """Whether bearer tokens are OAuth tokens (single sign-on or Redmine's own), not keys."""
        return self.sso is not None or self.redmine_tokens

    def for_key(self, key: str | None, *, token: bool = False) -> RedmineContext:
        """The context for ``key`` (``token``: a Redmine OAuth token); without one, the configured key's
        (which may be empty)."""
        if not key or (key == self.base.api_key and not token):
            return self.default
        digest = hashlib.sha256((("token:" if token else "key:") + key).encode()).hexdigest()
        found = self._by_key.get(digest)
        if found is None:
            found = RedmineContext(self.base.for_token(key) if token else self.base.for_key(key), self.fmt)
            self._by_key[digest] = found
            while len(self._by_key) > MAX_KEYS:
                self._by_key.popitem(last=False)
        else:
            self._by_key.move_to_end(digest)
        return found

    def for_request(self, headers: Mapping[str, str]) -> RedmineContext:
        """The context a request acts in: its token's holder with single sign-on or Redmine's own
        tokens, else its key's owner, else the configured key's."""
        if self.signs_on:
            token = token_of(headers)
            if token is not None:
                return self.sso.for_token(token) if self.sso is not None else self.for_key(token, token=True)
            key = request_key(headers, bearer=False)
            if key is None:
                raise SignOnError("Send an OAuth access token or your Redmine API key with this request")
            return self.for_key(key)
        return self.for_key(request_key(headers, bearer=not self.gated))

    async def provide(self, ctx: ToolContext) -> RedmineContext:
        """The provider the tools are bound to: the request's token or key when it carries one."""
        return self.for_request(ctx.request_headers)
