"""The routing table: public tool name -> downstream tool, and the view of it per profile set.

One job: know which tool each public name stands for, and what each kind of client sees of
them. The table is rebuilt from the downstreams that list tools; views are built from it on
demand (in a worker thread: adapting 100 tools for seven profiles takes seconds), cached per
profile set, and dropped whenever the table changes.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import anyio
import anyio.to_thread

from mcpkit.gateway.clients import has_tool_budget, profiles_for
from mcpkit.gateway.config import GatewayConfig
from mcpkit.gateway.downstream import Downstream
from mcpkit.gateway.naming import NameMap, Route
from mcpkit.gateway.views import View, build_view

logger = logging.getLogger("mcpkit.gateway")


class RoutingTable:
    """Public names over the listed downstreams' tools, with a cached view per profile set."""

    def __init__(self, config: GatewayConfig, downstreams: Mapping[str, Downstream], forced: str) -> None:
        self.config = config
        self.forced = forced
        """``--profile``: wins over what the client says (``auto``: the client decides)."""
        self.names = NameMap(config.servers, config.name, config.names)
        self.routes: dict[str, tuple[Route, dict[str, Any]]] = {}
        self._downstreams = downstreams
        self._views: dict[tuple[str, ...], View] = {}
        self._building: dict[tuple[str, ...], anyio.Lock] = {}
        self._by_client: dict[tuple[str | None, str | None], tuple[str, ...]] = {}

    def reroute(self) -> bool:
        """Rebuild public name -> route from the listed downstreams; True when it changed."""
        served = {d.name: self._served(d) for d in self._downstreams.values() if d.listed}
        names = self.names.assign({name: list(tools) for name, tools in served.items()})
        by_route = {(server, tool): t for server, tools in served.items() for tool, t in tools.items()}
        routes = {public: (route, by_route[(route.server, route.tool)]) for public, route in names.items()}
        changed = routes != self.routes
        self.routes = routes
        if changed:
            self._views.clear()
        return changed

    def _served(self, downstream: Downstream) -> dict[str, dict[str, Any]]:
        """Server tool name -> definition, for the tools the config serves (overrides applied)."""
        rules = self.config.rules(downstream.name)
        return {
            t["name"]: rules.apply(t)
            for t in downstream.tools
            if isinstance(t.get("name"), str) and rules.serves(t["name"])
        }

    def reconfigure(self, config: GatewayConfig) -> bool:
        """Serve under ``config``'s tool rules from now on (a reload); True when the tools changed."""
        self.config = config
        return self.reroute()

    def view(self, profiles: tuple[str, ...]) -> View:
        """The (cached) view for one profile set, built here when missing (blocking)."""
        view = self._views.get(profiles)
        if view is None:
            routes = self.routes
            view = build_view(routes, profiles, self.config.name, tool_budget=has_tool_budget(profiles))
            if routes is self.routes:  # not outdated by a change while it was built
                self._views[profiles] = view
        return view

    def cached_view(self, profiles: tuple[str, ...]) -> View | None:
        """The view for ``profiles`` when it is built and current, without building it."""
        return self._views.get(profiles)

    async def view_async(self, profiles: tuple[str, ...]) -> View:
        """:meth:`view` with the building in a worker thread, one build per profile set at a
        time, the loop free meanwhile."""
        view = self._views.get(profiles)
        if view is not None:
            return view
        lock = self._building.setdefault(profiles, anyio.Lock())
        async with lock:
            return await anyio.to_thread.run_sync(self.view, profiles)

    def profiles_for_query(self, client: str | None, profile: str | None) -> tuple[str, ...]:
        """The profile set for a client named ``client`` (``clientInfo.name``, or ``?client=``
        on a stateless URL) and a ``?profile=`` asked for; ``--profile`` wins over both."""
        from mcpkit.compat import PROFILES

        forced = self.forced if self.forced != "auto" else (profile if profile in PROFILES else None)
        key = (client, forced)
        known = self._by_client.get(key)
        if known is None:
            if len(self._by_client) >= 1024:  # names come from clients: keep the memo bounded
                self._by_client.clear()
            known = self._by_client[key] = profiles_for(client, forced)
            logger.info("client %r gets profiles %s", client, "+".join(known))
        return known

    def name_map(self) -> dict[str, dict[str, str]]:
        """Public name -> {server, tool}: what ``mcpkit gateway names --json`` prints."""
        return {
            public: {"server": r.server, "tool": r.tool} for public, (r, _) in sorted(self.routes.items())
        }
