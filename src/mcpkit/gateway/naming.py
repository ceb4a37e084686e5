"""Public tool names: ``SERVER_TOOL``, valid for every client, stable, collision-free.

A gateway shows one tool list to many clients, so one name must pass every profile's name
rules at once: the characters Cursor allows (``[A-Za-z0-9_]``), a first character Gemini
allows, and the shortest length budget once each client's own prefix is counted (Claude
Code's ``mcp__<gateway>__<tool>`` is the tightest: 50 characters for a gateway called
``gateway``).

Stability: a name depends only on its own server prefix and tool name, never on which other
tools exist, so a tool keeps its name when a server is added or restarts. That needs an
unambiguous split, which is why a prefix holds no ``_``: ``SERVER`` is the server's config
name with everything but letters and digits removed (``my-server`` -> ``myserver``), and two
servers whose prefixes collide are a configuration error, not a silent rename. Within one
server, characters a client refuses become ``_`` (``get-env`` -> ``get_env``); a name too
long, or a cleaned name that meets another tool of the same server, ends in a short hash of
the original tool name instead.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from mcpkit.compat import PROFILES, NameConstraint, name_hash
from mcpkit.gateway.errors import GatewayConfigError

ALLOWED = re.compile(r"[A-Za-z0-9_]")
FIRST = re.compile(r"[A-Za-z_]")
HASH_SUFFIX_LEN = 7  # "_" + 6 hex digits


def name_budget(gateway_name: str) -> int:
    """The longest public name every profile accepts for a gateway called ``gateway_name``."""
    constraints: list[NameConstraint] = [c for p in PROFILES.values() for c in p.name_constraints()]
    budgets = [b for b in (c.budget(gateway_name) for c in constraints) if b is not None]
    budget = min(budgets) if budgets else 64
    if budget < 16:
        raise GatewayConfigError(
            f"gateway name {gateway_name!r} is too long: clients would leave {budget} characters for tool names"
        )
    return budget


def server_prefix(server: str) -> str:
    """``my-server.v2`` -> ``myserverv2``: letters and digits only, never starting with a digit."""
    prefix = "".join(ch for ch in server if ch.isascii() and ch.isalnum())
    if not prefix:
        prefix = "s" + name_hash(server)
    elif prefix[0].isdigit():
        prefix = "s" + prefix
    return prefix


def check_name(name: str, budget: int) -> str | None:
    """Why ``name`` cannot be a public name (None when it can)."""
    if not name:
        return "is empty"
    bad = sorted({ch for ch in name if not ALLOWED.fullmatch(ch)})
    if bad:
        return "has characters outside [A-Za-z0-9_]: " + " ".join(map(repr, bad))
    if not FIRST.fullmatch(name[0]):
        return "must start with a letter or _"
    if len(name) > budget:
        return f"is {len(name)} characters long, over {budget}"
    return None


def public_name(prefix: str, tool: str, budget: int, *, hashed: bool = False) -> str:
    """The public name of ``tool`` on the server with ``prefix`` (see the module docstring).

    Invalid characters become ``_`` (``get-env`` -> ``get_env``); a name too long keeps its
    start and ends in a hash of the tool name; ``hashed`` asks for the hash anyway (the
    cleaned name would meet another tool of the same server).
    """
    plain = f"{prefix}_{tool}"
    if not hashed and check_name(plain, budget) is None:
        return plain
    cleaned = "".join(ch if ALLOWED.fullmatch(ch) else "_" for ch in tool) or "tool"
    if not hashed and len(prefix) + 1 + len(cleaned) <= budget:
        return f"{prefix}_{cleaned}"
    room = budget - len(prefix) - 1 - HASH_SUFFIX_LEN
    if room < 1:
        return f"{prefix}_{name_hash(tool)}"[:budget]
    return f"{prefix}_{cleaned[:room]}_{name_hash(tool)}"


@dataclass(frozen=True)
class Route:
    """Where a public name leads: the downstream server and the tool's own name there."""

    server: str
    tool: str


class NameMap:
    """Public name <-> (server, tool), with per-tool overrides from the config.

    ``overrides`` maps ``"server/tool"`` (or ``"server.tool"`` when unambiguous) to the public
    name the user chose; each is checked against the same rules as generated names.
    """

    def __init__(self, servers: Iterable[str], gateway_name: str, overrides: Mapping[str, str]) -> None:
        self.budget = name_budget(gateway_name)
        self.prefixes: dict[str, str] = {}
        seen: dict[str, str] = {}
        for server in servers:
            prefix = server_prefix(server)
            if prefix in seen:
                raise GatewayConfigError(
                    f"servers {seen[prefix]!r} and {server!r} would share the tool prefix {prefix!r}; "
                    "rename one of them"
                )
            seen[prefix] = server
            self.prefixes[server] = prefix
        self.overrides: dict[Route, str] = {}
        for key, name in overrides.items():
            route = self._route_of_key(key)
            problem = check_name(name, self.budget)
            if problem is not None:
                raise GatewayConfigError(f"name override {key!r} -> {name!r}: the name {problem}")
            if name in self.overrides.values():
                raise GatewayConfigError(f"name override {key!r}: {name!r} is already given to another tool")
            self.overrides[route] = name

    def _route_of_key(self, key: str) -> Route:
        for sep in ("/", "."):
            for server in sorted(self.prefixes, key=len, reverse=True):
                if key.startswith(server + sep) and len(key) > len(server) + 1:
                    return Route(server, key[len(server) + 1 :])
        raise GatewayConfigError(
            f"name override {key!r} does not start with a configured server name and '/' "
            f"(servers: {', '.join(sorted(self.prefixes)) or 'none'})"
        )

    def name(self, server: str, tool: str, *, hashed: bool = False) -> str:
        """The public name of one downstream tool."""
        chosen = self.overrides.get(Route(server, tool))
        if chosen is not None:
            return chosen
        return public_name(self.prefixes[server], tool, self.budget, hashed=hashed)

    def assign(self, tools: Mapping[str, Iterable[str]]) -> dict[str, Route]:
        """Public name -> route for every listed tool.

        A name depends only on its own server's tool list: where two tools of one server
        clean up to the same name (``get-env`` and ``get_env``), the one that needed no
        cleaning keeps it and the other gets a hash suffix; a generated name that meets an
        override gets one too.
        """
        out: dict[str, Route] = {}
        overridden = set(self.overrides.values())
        for server in sorted(tools):
            listed = list(dict.fromkeys(tools[server]))  # a tool listed twice: keep the first
            plain = {t: self.name(server, t) for t in listed}
            counts: dict[str, int] = {}
            for name in plain.values():
                counts[name] = counts.get(name, 0) + 1
            for tool in listed:
                route = Route(server, tool)
                name = plain[tool]
                if route not in self.overrides:
                    unaltered = name == f"{self.prefixes[server]}_{tool}"
                    if name in overridden or (counts[name] > 1 and not unaltered):
                        name = self.name(server, tool, hashed=True)
                out[name] = route
        return out
