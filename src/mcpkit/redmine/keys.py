"""Per-request Redmine keys: where a request carries one, and one checked client per key.

Over HTTP each request may carry its sender's own key (``X-Redmine-API-Key`` or
``Authorization: Bearer``); :class:`KeyedClients` keeps one client per key on one shared
connection pool, so each key is checked once (see :meth:`RedmineClient.check_key`). A key is
never logged, and the pool is indexed by its SHA-256 rather than the key itself.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Mapping

from mcpkit.redmine.api import RedmineClient
from mcpkit.redmine.tools import RedmineContext
from mcpkit.redmine.xml import Formatter
from mcpkit.tools import ToolContext

MAX_KEYS = 256


def request_key(headers: Mapping[str, str]) -> str | None:
    """The caller's Redmine key from ``X-Redmine-API-Key`` or ``Authorization: Bearer``."""
    key = headers.get("x-redmine-api-key", "").strip()
    if key:
        return key
    scheme, _, token = headers.get("authorization", "").strip().partition(" ")
    if scheme.lower() == "bearer" and token.strip():
        return token.strip()
    return None


class KeyedClients:
    """One client per key on one connection pool, the least recently used dropped past ``MAX_KEYS``."""

    def __init__(self, base: RedmineClient, fmt: Formatter) -> None:
        self.base = base
        self.fmt = fmt
        self.default = RedmineContext(base, fmt)
        self._by_key: OrderedDict[str, RedmineContext] = OrderedDict()

    def for_key(self, key: str | None) -> RedmineContext:
        """The context for ``key``; without one, the configured key's (which may be empty)."""
        if not key or key == self.base.api_key:
            return self.default
        digest = hashlib.sha256(key.encode()).hexdigest()
        found = self._by_key.get(digest)
        if found is None:
            found = RedmineContext(self.base.for_key(key), self.fmt)
            self._by_key[digest] = found
            while len(self._by_key) > MAX_KEYS:
                self._by_key.popitem(last=False)
        else:
            self._by_key.move_to_end(digest)
        return found

    async def provide(self, ctx: ToolContext) -> RedmineContext:
        """The provider the tools are bound to: the request's key when it carries one."""
        return self.for_key(request_key(ctx.request_headers))
