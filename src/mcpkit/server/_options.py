"""ServerOptions: how a server built with mcpkit runs, as one value the CLIs build.

The library used to read the environment itself (``ToolFilter.from_env``, ``strict_from_env``
inside ``build_server``), so a server built in a test or embedded in another program changed
behaviour with whatever ``MCPKIT_*`` variables its process happened to inherit, and the same
HTTP settings were assembled again in each runner. Now a CLI (or the ``mcpkit.testing`` pytest
plugin) reads the environment once, with :meth:`ServerOptions.from_environ`, and passes the value
down; :func:`~mcpkit.server.build_server` and :func:`~mcpkit.server.serve` only take values.

This module imports nothing of the MCP SDK, so a CLI can build options before it decides
whether it serves at all.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from mcpkit.compat import DEFAULT_PROFILES
from mcpkit.server._filters import ALLOW_SETTING, ToolFilter
from mcpkit.server._http import HttpOptions

__all__ = [
    "DEFAULT_LIST_TTL_MS",
    "ENV_ALLOW",
    "ENV_EXCLUDE",
    "ENV_INCLUDE",
    "ENV_LOG",
    "ENV_READ_ONLY",
    "ENV_STRICT",
    "LOG_LEVELS",
    "ServerOptions",
]

ENV_INCLUDE = "MCPKIT_TOOLS_INCLUDE"
ENV_EXCLUDE = "MCPKIT_TOOLS_EXCLUDE"
ENV_ALLOW = ALLOW_SETTING
ENV_READ_ONLY = "MCPKIT_READ_ONLY"
ENV_STRICT = "MCPKIT_STRICT"
ENV_LOG = "MCPKIT_LOG"
DEFAULT_LIST_TTL_MS = 300_000
LIST_METHODS = ("server/discover", "tools/list", "prompts/list", "resources/list", "resources/templates/list")
"""The results of these methods carry caching hints on the 2026-07-28 wire."""
LOG_LEVELS = ("debug", "info", "warning", "error")


@dataclass(frozen=True)
class ServerOptions:
    """Everything about running a server that is not its tools: one frozen value.

    - ``strict``: a lint error in a tool definition raises ``ToolDefinitionError`` at build
      time. Production servers warn instead of refusing to start, so one odd description never
      takes a working server down; tests (the ``mcpkit.testing`` plugin) turn it on, so a
      client-breaking definition never ships.
    - ``tool_filter``: which tools are shown (categories, allow-list, read-only); hidden tools are refused
      on call with the reason.
    - ``profiles``: the client profiles definitions are linted against.
    - ``log_level``: the level of mcpkit's log on stderr when :func:`serve` runs the server.
    - ``http``: where and how to serve streamable HTTP (address, path, origins, token, check).
    - ``list_ttl_ms`` and ``lists_per_caller``: the caching hints of the 2026-07-28 wire (see
      :meth:`list_hints`).
    """

    strict: bool = False
    tool_filter: ToolFilter = field(default_factory=ToolFilter)
    profiles: tuple[str, ...] = tuple(DEFAULT_PROFILES)
    log_level: str = "warning"
    http: HttpOptions = field(default_factory=HttpOptions)
    list_ttl_ms: int = DEFAULT_LIST_TTL_MS
    """How long a client may keep the tool, prompt and resource lists (``ttlMs``). A server built
    with :func:`~mcpkit.server.build_server` has the same lists for its whole life, so a client
    need not ask again on every turn; the figure bounds how late a client sees a new release."""
    lists_per_caller: bool = False
    """Whether the lists may differ by who asks (a list chosen per user or per key): then they
    are ``private`` (cached per authorization context), not ``public``. Also true whenever
    ``http.authorize`` checks each request's own credentials, since such a server tells its
    callers apart. A filter from the environment (categories, allow-list, read-only) is the same for every
    caller of the endpoint and keeps the lists ``public``."""

    def list_hints(self, changing: Collection[str] = ()) -> dict[str, tuple[int, str]]:
        """``{method: (ttl_ms, scope)}`` for every cacheable list and ``server/discover``.

        ``changing``: the lists (``tools``, ``prompts``, ``resources``) that may change while the
        server runs; theirs say ``ttlMs: 0``, since a client that does not listen for changes
        would otherwise keep a withdrawn tool for the whole TTL."""
        scope = "private" if self.lists_per_caller or self.http.authorize is not None else "public"
        ttl = max(0, self.list_ttl_ms)
        return {method: (0 if _list_of(method) in changing else ttl, scope) for method in LIST_METHODS}

    @property
    def read_only(self) -> bool:
        """Whether every tool that can change data is hidden and refused."""
        return self.tool_filter.read_only

    def with_http(self, **changes: Any) -> ServerOptions:
        """A copy whose HTTP options have ``changes`` (``authorize=...``, ``stateless=True``, ...)."""
        return replace(self, http=replace(self.http, **changes))

    @classmethod
    def from_environ(cls, environ: Mapping[str, str], **values: Any) -> ServerOptions:
        """The options the environment asks for; for CLIs and the pytest plugin only.

        Reads ``MCPKIT_TOOLS_INCLUDE`` / ``MCPKIT_TOOLS_EXCLUDE`` (comma-separated categories),
        ``MCPKIT_TOOLS_ALLOW`` (comma-separated tool names), ``MCPKIT_READ_ONLY``, ``MCPKIT_STRICT`` and ``MCPKIT_LOG``; ``values`` (a CLI's flags)
        win over what the environment says. ``MCPKIT_STRICT`` is on for 1, true, yes or on and
        off otherwise; an unreadable ``MCPKIT_READ_ONLY`` raises ``ValidationError`` naming the
        value, since guessing "off" would let a server meant to be read-only write.
        """
        found: dict[str, Any] = {
            "tool_filter": ToolFilter.parse(
                environ.get(ENV_INCLUDE),
                environ.get(ENV_EXCLUDE),
                environ.get(ENV_READ_ONLY),
                environ.get(ENV_ALLOW),
            )
        }
        strict = environ.get(ENV_STRICT, "").strip().lower()
        if strict:
            found["strict"] = strict in ("1", "true", "yes", "on")
        level = environ.get(ENV_LOG, "").strip().lower()
        if level:
            found["log_level"] = level
        found.update(values)
        return cls(**found)


def _list_of(method: str) -> str:
    """``tools/list`` -> ``tools``; ``resources/templates/list`` -> ``resources``."""
    return method.split("/", 1)[0]
