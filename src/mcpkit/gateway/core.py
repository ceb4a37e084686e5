"""The gateway: supervised downstreams behind one server, adapted for whichever client connects.

``build_server`` serves a static tool list; a gateway's list depends on who asks (the profile
chosen from ``clientInfo.name`` at ``initialize``) and on which downstreams are up, so this
part builds its serving side directly on the SDK's low-level ``Server``, with the same
honesty rules: a capability exists only when a downstream serves it, every call ends in a
valid result, errors are one line.

:class:`Gateway` only holds the parts together, one module per job:

* :class:`~mcpkit.gateway.downstream.Downstream`: one supervised server each;
* :class:`~mcpkit.gateway.routing.RoutingTable`: public names and the view per profile set;
* :class:`~mcpkit.gateway.pipeline.CallPipeline`: every ``tools/call``, from every front;
* :class:`~mcpkit.gateway.relay.ClientRelay`: who is asking, and all that is not a call;
* :class:`~mcpkit.gateway.asking.Asking`: a server's questions to a 2026 client's parked call;
* :class:`~mcpkit.gateway.router.ResourceRouter`: prompts, resources, completions;
* :func:`~mcpkit.gateway.assembly.assemble`: the SDK server with exactly those handlers.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Mapping
from typing import Any

import anyio
import anyio.abc
import mcp_types
from mcp.server.context import ServerRequestContext

from mcpkit.client import ClientHandlers
from mcpkit.gateway import answers, metatools, overflow
from mcpkit.gateway.asking import Asking
from mcpkit.gateway.assembly import assemble
from mcpkit.gateway.clients import profiles_for
from mcpkit.gateway.config import GatewayConfig
from mcpkit.gateway.controls import Limiter
from mcpkit.gateway.downstream import Downstream
from mcpkit.gateway.errors import GatewayConfigError
from mcpkit.gateway.overflow import Overflow
from mcpkit.gateway.pipeline import CallPipeline
from mcpkit.gateway.relay import ClientRelay
from mcpkit.gateway.router import ResourceRouter
from mcpkit.gateway.routing import RoutingTable
from mcpkit.gateway.sealing import Sealer
from mcpkit.gateway.views import View
from mcpkit.server.relay import InFlight, SdkServer

logger = logging.getLogger("mcpkit.gateway")

Ctx = ServerRequestContext[Any, Any]


class Gateway:
    """Downstreams from a config behind one MCP server, adapted for whichever client connects."""

    def __init__(
        self,
        config: GatewayConfig,
        *,
        profile: str = "auto",
        spawned: Mapping[str, anyio.abc.Process] | None = None,
        state_keys: tuple[bytes, ...] = (),
    ) -> None:
        """``spawned``: stdio servers already started (see :func:`spawn_stdio`), by name.
        ``state_keys``: the keys ``config.state_keys`` names (the first seals); none: task
        handles are the servers' own ids, good only on this process."""
        self.config = config
        self.sealer = Sealer(state_keys, config.name) if state_keys else None
        self.downstreams: dict[str, Downstream] = {}
        self.routing = RoutingTable(config, self.downstreams, profile)
        self.relay = ClientRelay(self.routing, self.downstreams)
        self.router = ResourceRouter(self.downstreams, self.routing.names)
        try:
            cap = Overflow(config.output_cap, directory=config.overflow_dir) if config.output_cap else None
        except OSError as exc:
            raise GatewayConfigError(f"overflow_dir {config.overflow_dir}: {exc.strerror or exc}") from None
        self.pipeline = CallPipeline(self.downstreams, cap)
        self.limiter = Limiter(config.rate_limit)
        self.local_caller: str | None = None
        """The one caller of a stdio gateway (its client process), whose calls the SDK's path
        counts; None over HTTP, where the front counts each caller's (and answers 429)."""
        self.asking = Asking(
            self.pipeline, self.downstreams, answer_seconds=config.call_timeout, relay=self.relay
        )
        self._in_flight = InFlight()
        self._servers: weakref.WeakSet[SdkServer] = weakref.WeakSet()
        sampling = self.relay.asker("sampling/createMessage", "sampling")
        elicitation = self.relay.asker("elicitation/create", "elicitation")
        for name, server in config.servers.items():
            # A server's questions go to the 2026 client whose call it serves, else as before.
            handlers = ClientHandlers(
                sampling=self.asking.handler(name, "sampling/createMessage", sampling),
                elicitation=self.asking.handler(name, "elicitation/create", elicitation),
                roots_from=self.asking.handler(name, "roots/list", self.relay.roots),
            )
            self.downstreams[name] = Downstream(
                server,
                config,
                on_change=self._downstream_changed,
                on_notification=self.relay.notified,
                handlers=handlers,
                process=(spawned or {}).get(name),
            )

    # -- lifecycle ---------------------------------------------------------------------------

    async def start(self, tg: anyio.abc.TaskGroup) -> None:
        """Start every downstream at once; return when each has answered or failed."""
        self.asking.start(tg)  # parked calls of 2026 clients outlive their requests, in tg
        for downstream in self.downstreams.values():
            tg.start_soon(downstream.run)
        for downstream in self.downstreams.values():
            await downstream.wait_settled()
        self.routing.reroute()
        await self.router.discover()
        self.relay.relays_logging = "logging" in self.router.offered and self.relay.relay_client_requests
        up = sum(1 for d in self.downstreams.values() if d.healthy)
        logger.info(
            "gateway %s ready: %d of %d servers up, %d tools",
            self.config.name,
            up,
            len(self.downstreams),
            len(self.routing.routes),
        )

    def stop(self) -> None:
        for downstream in self.downstreams.values():
            downstream.stop()

    async def _downstream_changed(self, downstream: Downstream) -> None:
        logger.info("%s is %s with %d tools", downstream.name, downstream.state, len(downstream.tools))
        if downstream.healthy and "logging" in downstream.capabilities:
            await self.relay.apply_level(downstream)  # a restarted server logs at the client's level
        if downstream.healthy:
            await self.router.renew(downstream)
        if self.routing.reroute():
            await self.tools_changed()

    async def tools_changed(self) -> None:
        """Tell every client its tool list changed."""
        await self.relay.list_changed()  # clients on the 2025 handshake, by notification
        for server in list(self._servers):  # clients on the 2026 wire, on their listen streams
            await server.publish("tools")

    # -- tools on the SDK's path (the fast paths call the pipeline themselves) ----------------

    async def list_tools(self, ctx: Ctx, params: mcp_types.PaginatedRequestParams | None) -> Any:
        view = await self.routing.view_async(self.relay.profiles_of(ctx))
        listed = view.listed()
        if self.overflow is not None:
            listed += metatools.adapted([overflow.DEFINITION], view.profiles)
        return mcp_types.ListToolsResult(tools=[mcp_types.Tool.model_validate(t) for t in listed])

    async def call_tool(self, ctx: Ctx, params: mcp_types.CallToolRequestParams) -> Any:
        if self.local_caller is not None and (wait := self.limiter.take(self.local_caller)) is not None:
            return mcp_types.CallToolResult.model_validate(answers.failure(self.limiter.refusal(wait)))
        view = await self.routing.view_async(self.relay.profiles_of(ctx))
        if self.asking.parks(ctx, params):  # a 2026 client that may be asked, or its retry
            outcome = await self.asking.call(ctx, view, params)
            if isinstance(outcome, mcp_types.InputRequiredResult):
                return outcome
            return mcp_types.CallToolResult.model_validate(outcome)
        token = self.relay.progress_token(ctx)
        try:
            with self.asking.direct(ctx, view, params):  # a session's client can be asked
                raw = await self.pipeline.call(view, params.name, dict(params.arguments or {}), token)
        finally:
            self.relay.progress_done(token)
        return mcp_types.CallToolResult.model_validate(raw)

    async def call(self, view: View, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """One ``tools/call`` for the client of ``view`` (see :class:`CallPipeline`)."""
        return await self.pipeline.call(view, name, arguments)

    # -- what the fronts and the CLI read ----------------------------------------------------

    @property
    def overflow(self) -> Overflow | None:
        return self.pipeline.overflow

    @property
    def relay_client_requests(self) -> bool:
        return self.relay.relay_client_requests

    @relay_client_requests.setter
    def relay_client_requests(self, value: bool) -> None:
        self.relay.relay_client_requests = value

    def profiles_for_query(self, client: str | None, profile: str | None) -> tuple[str, ...]:
        return self.routing.profiles_for_query(client, profile)

    def serves(self, capability: str) -> bool:
        """Whether the gateway declares ``capability`` (a server serves it, with something in it;
        for ``subscribe`` and ``logging``, also a client to send their notifications to)."""
        if capability in ("subscribe", "logging") and not self.relay.relay_client_requests:
            return False
        return capability in self.router.offered

    def lowlevel(self) -> SdkServer:
        """The SDK server with exactly the handlers some downstream backs."""
        server = assemble(self, self._in_flight)
        self._servers.add(server)
        return server

    @property
    def busy(self) -> bool:
        return self._in_flight.busy

    async def wait_idle(self) -> None:
        """Until no request is being answered on the SDK's path."""
        await self._in_flight.wait_idle()

    def status(self) -> dict[str, Any]:
        """Health, tools and quarantine per profile: what ``mcpkit gateway status`` prints."""
        from mcpkit.compat import PROFILES

        views = {p: self.routing.view(profiles_for(None, p)).status() for p in PROFILES}
        return {
            "gateway": self.config.name,
            "config": self.config.source,
            "servers": [d.status() for d in self.downstreams.values()],
            "tools": len(self.routing.routes),
            "parked": self.asking.parked,  # 2026 clients' calls waiting for their answers
            "profiles": views,
        }

    def name_map(self) -> dict[str, dict[str, str]]:
        """Public name -> {server, tool}: what ``mcpkit gateway names --json`` prints."""
        return self.routing.name_map()
