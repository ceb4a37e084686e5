"""What one kind of client sees: the union of tools, adapted for its profiles, with quarantine.

A *view* is computed per profile set (not per connection: every Cursor session sees the same
list) and cached until a downstream's tools change. Each tool is adapted with
:func:`mcpkit.compat.adapt` for every profile of the set in turn, then linted against all of
them: a tool that still has an error there has no rewrite that keeps its meaning (a cyclic
``$ref``, a free-key map under OpenAI strict mode, a schema that is not JSON Schema) and is
*quarantined* for that client, hidden with the reason. When the profiles limit the tool count
(``tool_budget``: the client is known to have a limit) and the union is larger, the view holds
the three meta-tools instead (see :mod:`mcpkit.gateway.metatools`); nothing is cut silently.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from mcpkit.compat import adapt, lint
from mcpkit.gateway.arguments import Restorer
from mcpkit.gateway.metatools import meta_tools
from mcpkit.gateway.naming import Route

logger = logging.getLogger("mcpkit.gateway")


@dataclass(frozen=True)
class Entry:
    """One downstream tool under its public name: the original definition and the adapted one."""

    public: str
    route: Route
    original: dict[str, Any]
    adapted: dict[str, Any]
    restore: Restorer


@dataclass
class View:
    """The tool list for one profile set, and how to route each name in it."""

    profiles: tuple[str, ...]
    entries: dict[str, Entry] = field(default_factory=dict)
    quarantined: dict[str, str] = field(default_factory=dict)
    meta: bool = False
    over_limit: str | None = None

    def listed(self) -> list[dict[str, Any]]:
        """The tool definitions this client gets from ``tools/list``."""
        if self.meta:
            return meta_tools(self.profiles)
        return [e.adapted for e in self.entries.values()]

    def status(self) -> dict[str, Any]:
        return {
            "profiles": list(self.profiles),
            "tools": len(self.entries),
            "meta_tools": self.meta,
            "over_limit": self.over_limit,
            "quarantined": dict(sorted(self.quarantined.items())),
        }


def adapt_for(
    definition: dict[str, Any], profiles: Sequence[str], server_name: str
) -> tuple[dict[str, Any], str | None]:
    """``definition`` adapted for every profile; the reason it cannot be (None when it can)."""
    current = copy.deepcopy(definition)
    for _ in range(2):  # a later profile's rewrite may wake an earlier rule: one more pass settles it
        for profile in profiles:
            current, _changes = adapt(current, profile, server_name=server_name)
        problems = [
            f for f in lint([current], list(profiles), server_name=server_name) if f.severity == "error"
        ]
        if not problems:
            return current, None
    reasons = sorted({f"{f.rule} [{f.profile}] {f.pointer or '/'}: {f.message}" for f in problems})
    return current, "; ".join(reasons)


def build_view(
    tools: dict[str, tuple[Route, dict[str, Any]]],
    profiles: tuple[str, ...],
    server_name: str,
    *,
    tool_budget: bool = True,
) -> View:
    """The view of ``tools`` (public name -> route and original definition) for ``profiles``;
    ``tool_budget=False`` lists every tool however many (a client not known to limit them)."""
    view = View(profiles)
    for public, (route, original) in tools.items():
        named = {**original, "name": public}
        adapted, reason = adapt_for(named, profiles, server_name)
        if reason is not None:
            view.quarantined[public] = reason
            logger.warning(
                "quarantined %s (%s/%s) for %s: %s",
                public,
                route.server,
                route.tool,
                "+".join(profiles),
                reason,
            )
            continue
        if adapted.get("name") != public:  # names are made valid for every profile; keep the public one
            adapted["name"] = public
        schema = original.get("inputSchema")
        view.entries[public] = Entry(
            public, route, original, adapted, Restorer(schema if isinstance(schema, dict) else {})
        )
    over = [
        f
        for f in lint(view.listed(), list(profiles), server_name=server_name)
        if tool_budget and f.tool is None and f.rule.endswith("tool-count")
    ]
    if over:
        view.meta = True
        view.over_limit = f"{over[0].message} ({over[0].client})"
        logger.info(
            "%s: %s; serving the search, describe and call meta-tools instead",
            "+".join(profiles),
            view.over_limit,
        )
    return view
