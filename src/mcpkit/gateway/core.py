"""The gateway: supervised downstreams, one routing table, a view per client kind, one server.

``build_server`` serves a static tool list; a gateway's list depends on who asks (the profile
chosen from ``clientInfo.name`` at ``initialize``) and on which downstreams are up, so this
part builds its serving side directly on the SDK's low-level ``Server``, with the same
honesty rules: a capability exists only when a downstream serves it, every call ends in a
valid result, errors are one line.
"""

from __future__ import annotations

import itertools
import json
import logging
import weakref
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import anyio
import anyio.abc
import anyio.to_thread
import mcp_types
from mcp.server.connection import Connection
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.server.session import ServerSession
from mcp.shared.exceptions import MCPError

from mcpkit import __version__
from mcpkit.client import CallError, CallTimeoutError, ClientHandlers
from mcpkit.gateway import answers, metatools, overflow
from mcpkit.gateway.clients import has_tool_budget, profiles_for
from mcpkit.gateway.config import GatewayConfig
from mcpkit.gateway.downstream import Downstream
from mcpkit.gateway.errors import DownstreamUnavailableError, GatewayConfigError
from mcpkit.gateway.naming import NameMap, Route
from mcpkit.gateway.overflow import Overflow
from mcpkit.gateway.views import Entry, View, build_view
from mcpkit.jsonrpc import JsonRpcError
from mcpkit.server import SdkServer

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
    ) -> None:
        """``spawned``: stdio servers already started (see :func:`spawn_stdio`), by name."""
        self.config = config
        self.forced = profile
        self.names = NameMap(config.servers, config.name, config.names)
        self.relay_client_requests = False
        """Forward a server's sampling and elicitation requests to the client (stdio: one client)."""
        handlers = ClientHandlers(
            sampling=self._asker("sampling/createMessage", "sampling"),
            elicitation=self._asker("elicitation/create", "elicitation"),
            roots_from=self._roots,
        )
        self.downstreams: dict[str, Downstream] = {
            name: Downstream(
                server,
                config,
                on_change=self._downstream_changed,
                on_notification=self._relay,
                handlers=handlers,
                process=(spawned or {}).get(name),
            )
            for name, server in config.servers.items()
        }
        self.routes: dict[str, tuple[Route, dict[str, Any]]] = {}
        self._views: dict[tuple[str, ...], View] = {}
        self._building: dict[tuple[str, ...], anyio.Lock] = {}
        # Keyed by the SDK's per-connection object: a ServerSession is made anew for each request.
        self._clients: weakref.WeakKeyDictionary[Connection, tuple[str, ...]] = weakref.WeakKeyDictionary()
        self._by_client: dict[tuple[str | None, str | None], tuple[str, ...]] = {}
        self._progress: dict[str, tuple[ServerSession, str | int, Any]] = {}
        self._tokens = itertools.count(1)
        self._prompts: dict[str, Route] = {}
        self._resources: dict[str, str] = {}
        self._templates: dict[str, str] = {}
        self._subscribed: dict[str, str] = {}
        """Resource URI -> the server it was subscribed on (renewed when that server restarts)."""
        self._offered: set[str] = set()
        self._log_level: str | None = None
        self._in_flight = 0
        self._idle = anyio.Event()
        self._idle.set()
        try:
            self.overflow = (
                Overflow(config.output_cap, directory=config.overflow_dir) if config.output_cap else None
            )
        except OSError as exc:
            raise GatewayConfigError(f"overflow_dir {config.overflow_dir}: {exc.strerror or exc}") from None

    # -- lifecycle ---------------------------------------------------------------------------

    async def start(self, tg: anyio.abc.TaskGroup) -> None:
        """Start every downstream at once; return when each has answered or failed."""
        for downstream in self.downstreams.values():
            tg.start_soon(downstream.run)
        for downstream in self.downstreams.values():
            await downstream.wait_settled()
        self._reroute()
        for capability in ("prompts", "resources"):
            for downstream in self._serving(capability):
                if await self._all_pages(downstream, f"{capability}/list", capability):
                    self._offered.add(capability)
                    break
        if self._serving("logging"):
            self._offered.add("logging")
        if self._offered & {"prompts", "resources"} and self._serving("completions"):
            self._offered.add("completions")
        if "resources" in self._offered and any(_subscribes(d) for d in self._serving("resources")):
            self._offered.add("subscribe")
        up = sum(1 for d in self.downstreams.values() if d.healthy)
        logger.info(
            "gateway %s ready: %d of %d servers up, %d tools",
            self.config.name,
            up,
            len(self.downstreams),
            len(self.routes),
        )

    def stop(self) -> None:
        for downstream in self.downstreams.values():
            downstream.stop()

    # -- routing table and views -------------------------------------------------------------

    def _reroute(self) -> bool:
        """Rebuild public name -> route from the listed downstreams; True when it changed."""
        listed = {d.name: d for d in self.downstreams.values() if d.listed}
        names = self.names.assign(
            {
                name: [str(t.get("name")) for t in d.tools if isinstance(t.get("name"), str)]
                for name, d in listed.items()
            }
        )
        by_route = {(d.name, str(t.get("name"))): t for d in listed.values() for t in d.tools}
        routes = {public: (route, by_route[(route.server, route.tool)]) for public, route in names.items()}
        changed = routes != self.routes
        self.routes = routes
        if changed:
            self._views.clear()
        return changed

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
        """:meth:`view` with the building in a worker thread (adapting 100 tools for seven
        profiles takes seconds), one build per profile set at a time, the loop free meanwhile."""
        view = self._views.get(profiles)
        if view is not None:
            return view
        lock = self._building.setdefault(profiles, anyio.Lock())
        async with lock:
            return await anyio.to_thread.run_sync(self.view, profiles)

    async def _downstream_changed(self, downstream: Downstream) -> None:
        logger.info("%s is %s with %d tools", downstream.name, downstream.state, len(downstream.tools))
        if downstream.healthy and "logging" in downstream.capabilities and self._log_level is not None:
            await self._apply_level(downstream)  # a restarted server logs at the client's level
        if downstream.healthy:  # a restarted server has forgotten its subscriptions
            for uri in [u for u, owner in self._subscribed.items() if owner == downstream.name]:
                try:
                    await downstream.request("resources/subscribe", {"uri": uri})
                except CallError as exc:
                    logger.warning(
                        "%s: renewing the subscription to %s failed: %s", downstream.name, uri, exc
                    )
        if self._reroute():
            await self._broadcast_list_changed()

    async def _broadcast_list_changed(self) -> None:
        for connection in list(self._clients):
            try:
                await connection.outbound.notify("notifications/tools/list_changed", None)
            except Exception as exc:  # a client that went away must not stop the others
                logger.debug("list_changed not delivered: %s", exc)

    # -- who is asking -----------------------------------------------------------------------

    def profiles_of(self, ctx: Ctx) -> tuple[str, ...]:
        """The profile set of the client behind ``ctx`` (chosen once per connection)."""
        connection = _connection(ctx)
        known = self._clients.get(connection)
        if known is not None:
            return known
        name = _client_name(ctx)
        if name is None:
            name = _query_client(ctx)
        profiles = self.profiles_for_query(name, _query_profile(ctx))
        self._clients[connection] = profiles
        return profiles

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

    # -- tools -------------------------------------------------------------------------------

    async def list_tools(self, ctx: Ctx, params: mcp_types.PaginatedRequestParams | None) -> Any:
        view = await self.view_async(self.profiles_of(ctx))
        listed = view.listed()
        if self.overflow is not None:
            listed += metatools.adapted([overflow.DEFINITION], view.profiles)
        return mcp_types.ListToolsResult(tools=[mcp_types.Tool.model_validate(t) for t in listed])

    async def call_tool(self, ctx: Ctx, params: mcp_types.CallToolRequestParams) -> Any:
        view = await self.view_async(self.profiles_of(ctx))
        raw = await self.call(view, params.name, dict(params.arguments or {}), ctx)
        return mcp_types.CallToolResult.model_validate(raw)

    def routed(self, view: View, name: str) -> Entry | None:
        """The downstream tool a plain call of ``name`` goes to; None for a meta-tool,
        ``readmore``, or a name this client does not have (:meth:`call` answers those)."""
        if view.meta and name in metatools.NAMES:
            return None
        if self.overflow is not None and name == overflow.TOOL:
            return None
        return view.entries.get(name)

    def finished(self, entry: Entry, raw: Mapping[str, Any]) -> dict[str, Any]:
        """A downstream's ``tools/call`` result as the client gets it: validated, fitted to the
        adapted definition, capped with a pointer to the rest."""
        route = entry.route
        result = answers.checked(
            raw,
            server=route.server,
            tool=route.tool,
            protocol_version=_downstream_version(self.downstreams[route.server]),
            original=entry.original,
            adapted=entry.adapted,
        )
        return self.overflow.apply(result) if self.overflow is not None else result

    @staticmethod
    def failed(route: Route, exc: Exception) -> dict[str, Any]:
        """The one-line result for a call that got no result from its server."""
        if isinstance(exc, DownstreamUnavailableError):
            return answers.failure(f"{exc}; try again later or see mcpkit gateway status.")
        if isinstance(exc, CallTimeoutError):
            return answers.failure(f"Server {route.server} did not answer {route.tool} in time: {exc}")
        if isinstance(exc, JsonRpcError):
            return answers.failure(f"Server {route.server} refused {route.tool}: {exc.message} ({exc.code})")
        return answers.failure(f"Server {route.server} failed on {route.tool}: {exc}")

    async def call(self, view: View, name: str, arguments: dict[str, Any], ctx: Ctx | None) -> dict[str, Any]:
        """One ``tools/call`` as the client of ``view`` sent it; always a valid result (wire form)."""
        entry = self.routed(view, name)
        if entry is None:
            if view.meta and name in metatools.NAMES:
                return await self._meta_call(view, name, arguments, ctx)
            if self.overflow is not None and name == overflow.TOOL:
                text = self.overflow.read(str(arguments.get("id") or ""), _int(arguments.get("offset"), 0))
                if text is None:
                    return answers.failure("That cut answer is no longer kept; call the tool again.")
                return {"content": [{"type": "text", "text": text}]}
            if name in view.quarantined:
                return answers.failure(
                    f"Tool {name} is quarantined for this client: {view.quarantined[name]}"[:500]
                )
            return _unknown(view, name, "tools/list has the tools of this gateway")
        route = entry.route
        downstream = self.downstreams[route.server]
        request: dict[str, Any] = {"name": route.tool, "arguments": entry.restore(arguments)}
        token = self._progress_token(ctx)
        if token is not None:
            request["_meta"] = {"progressToken": token}
        try:
            raw = await downstream.request("tools/call", request)
        except CallError as exc:
            return self.failed(route, exc)
        finally:
            if token is not None:
                self._progress.pop(token, None)
        return self.finished(entry, raw)

    async def _meta_call(
        self, view: View, name: str, arguments: dict[str, Any], ctx: Ctx | None
    ) -> dict[str, Any]:
        if name == metatools.SEARCH:
            query = str(arguments.get("query") or "")
            limit = _int(arguments.get("limit"), 20)
            offset = _int(arguments.get("offset"), 0)
            text = metatools.search({k: e.adapted for k, e in view.entries.items()}, query, limit, offset)
            return {"content": [{"type": "text", "text": text}]}
        target = str(arguments.get("name") or "")
        entry = view.entries.get(target)
        if entry is None:
            why = view.quarantined.get(target)
            if why:
                return answers.failure(f"Tool {target} is quarantined for this client: {why}"[:500])
            return _unknown(view, target, "search tools lists the tools")
        if name == metatools.DESCRIBE:
            return {
                "content": [{"type": "text", "text": json.dumps(entry.adapted, ensure_ascii=False, indent=1)}]
            }
        raw_args = arguments.get("arguments")
        if raw_args is None or raw_args == "":
            args: Any = {}
        elif isinstance(raw_args, str):
            try:
                args = json.loads(raw_args)
            except ValueError as exc:
                return answers.failure(f"arguments is not a JSON object: {exc}")
        else:
            args = raw_args
        if not isinstance(args, dict):
            return answers.failure('arguments must be a JSON object, for example {"timezone": "UTC"}.')
        plain = View(view.profiles, view.entries, view.quarantined)
        return await self.call(plain, target, args, ctx)

    # -- progress both ways ------------------------------------------------------------------

    def _progress_token(self, ctx: Ctx | None) -> str | None:
        """A gateway-wide token standing for the client's own, when the client asked for progress."""
        meta: Mapping[str, Any] = (ctx.meta or {}) if ctx is not None else {}
        client_token = meta.get("progress_token")
        if ctx is None or not isinstance(client_token, str | int):
            return None
        token = f"gw-{next(self._tokens)}"
        self._progress[token] = (ctx.session, client_token, ctx.request_id)
        return token

    async def _relay(self, downstream: Downstream, method: str, params: dict[str, Any]) -> None:
        if method == "notifications/message":
            await self._relay_log(downstream, params)
            return
        if method == "notifications/resources/updated":
            await self._relay_to_client("notifications/resources/updated", params)
            return
        if method != "notifications/progress":
            return
        target = self._progress.get(str(params.get("progressToken")))
        if target is None:
            return
        session, client_token, request_id = target
        progress = params.get("progress")
        if not isinstance(progress, int | float):
            return
        total = params.get("total")
        message = params.get("message")
        try:
            await session.send_progress_notification(
                client_token,
                float(progress),
                float(total) if isinstance(total, int | float) else None,
                message if isinstance(message, str) else None,
                related_request_id=str(request_id) if request_id is not None else None,
            )
        except Exception as exc:
            logger.debug("progress not delivered: %s", exc)

    # -- log messages -------------------------------------------------------------------------

    async def set_level(self, ctx: Ctx, params: mcp_types.SetLevelRequestParams) -> Any:
        """The client's ``logging/setLevel``, passed to every server that logs (and kept for the
        ones that restart); a server that refuses it is logged, the client still gets success."""
        self._log_level = str(params.level)
        for downstream in self._serving("logging"):
            await self._apply_level(downstream)
        return mcp_types.EmptyResult()

    async def _apply_level(self, downstream: Downstream) -> None:
        if self._log_level is None:
            return
        try:
            await downstream.request("logging/setLevel", {"level": self._log_level})
        except CallError as exc:
            logger.warning("%s: logging/setLevel %s refused: %s", downstream.name, self._log_level, exc)

    async def _relay_log(self, downstream: Downstream, params: dict[str, Any]) -> None:
        """A server's log message to the gateway's one client (stdio), its logger prefixed with
        the server's name; over stateless HTTP there is no channel for it."""
        if not self.serves("logging"):
            return
        inner = params.get("logger")
        named = {
            **params,
            "logger": f"{downstream.name}/{inner}" if isinstance(inner, str) else downstream.name,
        }
        await self._relay_to_client("notifications/message", named)

    async def _relay_to_client(self, method: str, params: dict[str, Any]) -> None:
        """A notification to the gateway's one client (stdio); none over stateless HTTP."""
        connections = list(self._clients)
        if not self.relay_client_requests or len(connections) != 1:
            return
        try:
            await connections[0].outbound.notify(method, params)
        except Exception as exc:  # a client that went away must not break the server's connection
            logger.debug("%s not delivered: %s", method, exc)

    # -- requests servers make of the client ------------------------------------------------

    def _asker(self, method: str, capability: str) -> Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]:
        """A handler that puts a server's ``method`` request to the gateway's own client."""

        async def ask(params: dict[str, Any]) -> dict[str, Any]:
            connections = list(self._clients)
            if not self.relay_client_requests or len(connections) != 1:
                raise JsonRpcError(
                    mcp_types.INVALID_REQUEST,
                    f"the gateway cannot pass {capability} requests on here: only a gateway on stdio, "
                    "with its one client, does",
                )
            connection = connections[0]
            declared = connection.client_capabilities
            if declared is None or getattr(declared, capability, None) is None:
                raise JsonRpcError(
                    mcp_types.INVALID_REQUEST,
                    f"the client of this gateway does not accept {capability} requests",
                )
            try:
                return await connection.outbound.send_raw_request(method, params, None)
            except MCPError as exc:  # the client's own refusal, passed back unchanged
                raise JsonRpcError(exc.code, exc.message, exc.data) from None

        return ask

    async def _roots(self, params: dict[str, Any]) -> dict[str, Any]:
        """A server's ``roots/list``: the gateway's own client's roots when it can be asked
        (stdio, and the client declared roots), else none, as a client with no roots says."""
        connections = list(self._clients)
        if not self.relay_client_requests or len(connections) != 1:
            return {"roots": []}
        connection = connections[0]
        declared = connection.client_capabilities
        if declared is None or getattr(declared, "roots", None) is None:
            return {"roots": []}
        try:
            return await connection.outbound.send_raw_request("roots/list", params, None)
        except MCPError as exc:
            raise JsonRpcError(exc.code, exc.message, exc.data) from None

    async def roots_changed(self, ctx: Any, params: Any) -> None:
        """The client's roots changed: every server that is up hears it (they ask again)."""
        for downstream in self.downstreams.values():
            await downstream.notify("notifications/roots/list_changed")

    # -- resources and prompts (only when a downstream serves them) --------------------------

    def serves(self, capability: str) -> bool:
        """Whether to declare prompts or resources: a downstream declares them and had at least
        one when the gateway started (seed 003: no capability without something behind it)."""
        return capability in self._offered

    async def list_prompts(self, ctx: Ctx, params: mcp_types.PaginatedRequestParams | None) -> Any:
        prompts = []
        self._prompts = {}
        for downstream in self._serving("prompts"):
            for prompt in await self._all_pages(downstream, "prompts/list", "prompts"):
                public = self.names.name(downstream.name, str(prompt.get("name")))
                self._prompts[public] = Route(downstream.name, str(prompt.get("name")))
                prompts.append(mcp_types.Prompt.model_validate({**prompt, "name": public}))
        return mcp_types.ListPromptsResult(prompts=prompts)

    async def get_prompt(self, ctx: Ctx, params: mcp_types.GetPromptRequestParams) -> Any:
        if not self._prompts:
            await self.list_prompts(ctx, None)
        route = self._prompts.get(params.name)
        if route is None:
            raise MCPError(code=-32602, message=f"Unknown prompt: {params.name}")
        raw = await self._forward(
            route.server, "prompts/get", {"name": route.tool, "arguments": params.arguments or {}}
        )
        return mcp_types.GetPromptResult.model_validate(raw)

    async def list_resources(self, ctx: Ctx, params: mcp_types.PaginatedRequestParams | None) -> Any:
        resources = []
        self._resources = {}
        for downstream in self._serving("resources"):
            for resource in await self._all_pages(downstream, "resources/list", "resources"):
                uri = str(resource.get("uri"))
                self._resources.setdefault(uri, downstream.name)
                name = self.names.name(downstream.name, str(resource.get("name") or uri))
                resources.append(mcp_types.Resource.model_validate({**resource, "name": name}))
        return mcp_types.ListResourcesResult(resources=resources)

    async def list_resource_templates(self, ctx: Ctx, params: mcp_types.PaginatedRequestParams | None) -> Any:
        templates = []
        for downstream in self._serving("resources"):
            for template in await self._all_pages(
                downstream, "resources/templates/list", "resourceTemplates"
            ):
                name = self.names.name(
                    downstream.name, str(template.get("name") or template.get("uriTemplate"))
                )
                self._templates.setdefault(str(template.get("uriTemplate")), downstream.name)
                templates.append(mcp_types.ResourceTemplate.model_validate({**template, "name": name}))
        return mcp_types.ListResourceTemplatesResult(resource_templates=templates)

    async def read_resource(self, ctx: Ctx, params: mcp_types.ReadResourceRequestParams) -> Any:
        uri = str(params.uri)
        if uri not in self._resources:
            await self.list_resources(ctx, None)
        server = self._resources.get(uri)
        if server is not None:
            raw = await self._forward(server, "resources/read", {"uri": uri})
            return mcp_types.ReadResourceResult.model_validate(raw)
        for downstream in self._serving("resources"):  # a URI made from a template: whoever knows it
            try:
                raw = await downstream.request("resources/read", {"uri": uri})
            except CallError:
                continue
            self._resources[uri] = downstream.name
            return mcp_types.ReadResourceResult.model_validate(raw)
        raise MCPError(code=-32002, message=f"Resource not found: {uri}")

    async def subscribe(self, ctx: Ctx, params: mcp_types.SubscribeRequestParams) -> Any:
        """``resources/subscribe``: passed to the server that owns the resource; its
        ``notifications/resources/updated`` reach the client (stdio)."""
        uri = str(params.uri)
        server = await self._owner(ctx, uri)
        if not _subscribes(self.downstreams[server]):
            raise MCPError(code=-32601, message=f"{server} does not offer subscriptions to {uri}")
        await self._forward(server, "resources/subscribe", {"uri": uri})
        self._subscribed[uri] = server
        return mcp_types.EmptyResult()

    async def unsubscribe(self, ctx: Ctx, params: mcp_types.UnsubscribeRequestParams) -> Any:
        uri = str(params.uri)
        server = self._subscribed.pop(uri, None)
        if server is not None:
            await self._forward(server, "resources/unsubscribe", {"uri": uri})
        return mcp_types.EmptyResult()

    async def _owner(self, ctx: Ctx, uri: str) -> str:
        if uri not in self._resources:
            await self.list_resources(ctx, None)
        server = self._resources.get(uri)
        if server is None:
            raise MCPError(code=-32002, message=f"Resource not found: {uri}")
        return server

    async def complete(self, ctx: Ctx, params: mcp_types.CompleteRequestParams) -> Any:
        """``completion/complete`` for a prompt's or a resource template's argument, asked of
        the server that owns it (under its own name); one that does not complete gets none."""
        wire = params.model_dump(by_alias=True, mode="json", exclude_none=True)
        ref = dict(wire.get("ref") or {})
        if ref.get("type") == "ref/prompt":
            if str(ref.get("name")) not in self._prompts:
                await self.list_prompts(ctx, None)
            route = self._prompts.get(str(ref.get("name")))
            if route is None:
                raise MCPError(code=-32602, message=f"Unknown prompt: {ref.get('name')}")
            server, ref["name"] = route.server, route.tool
        else:
            uri = str(ref.get("uri"))
            if uri not in self._templates and uri not in self._resources:
                await self.list_resource_templates(ctx, None)
                await self.list_resources(ctx, None)
            found = self._templates.get(uri) or self._resources.get(uri)
            if found is None:
                raise MCPError(code=-32602, message=f"Unknown resource or template: {uri}")
            server = found
        if "completions" not in self.downstreams[server].capabilities:
            return mcp_types.CompleteResult.model_validate({"completion": {"values": [], "hasMore": False}})
        raw = await self._forward(server, "completion/complete", {**wire, "ref": ref})
        return mcp_types.CompleteResult.model_validate(raw)

    def _serving(self, capability: str) -> list[Downstream]:
        return [d for d in self.downstreams.values() if d.healthy and capability in d.capabilities]

    async def _all_pages(self, downstream: Downstream, method: str, key: str) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        cursor: str | None = None
        for _ in range(100):
            try:
                page = await downstream.request(method, {"cursor": cursor} if cursor else {})
            except CallError as exc:
                logger.warning("%s: %s failed: %s", downstream.name, method, exc)
                break
            items += [i for i in page.get(key) or [] if isinstance(i, dict)]
            cursor = page.get("nextCursor") if isinstance(page.get("nextCursor"), str) else None
            if not cursor:
                break
        return items

    async def _forward(self, server: str, method: str, params: Mapping[str, Any]) -> dict[str, Any]:
        try:
            return await self.downstreams[server].request(method, params)
        except JsonRpcError as exc:
            raise MCPError(code=exc.code, message=f"{server}: {exc.message}") from None
        except CallError as exc:
            raise MCPError(code=-32603, message=f"{server}: {exc}") from None

    # -- the SDK server ------------------------------------------------------------------------

    def lowlevel(self) -> Server[Any]:
        """The SDK server with exactly the handlers some downstream backs."""
        # Tools always: a downstream that failed to start may come back, and listChanged tells
        # the client when its tools arrive. Prompts and resources only when some are served.
        handlers: dict[str, Any] = {"on_list_tools": self.list_tools, "on_call_tool": self.call_tool}
        if self.serves("prompts"):
            handlers["on_list_prompts"] = self.list_prompts
            handlers["on_get_prompt"] = self.get_prompt
        if self.serves("resources"):
            handlers["on_list_resources"] = self.list_resources
            handlers["on_read_resource"] = self.read_resource
            handlers["on_list_resource_templates"] = self.list_resource_templates
        if self.serves("completions"):
            handlers["on_completion"] = self.complete
        if self.serves("subscribe"):
            handlers["on_subscribe_resource"] = self.subscribe
            handlers["on_unsubscribe_resource"] = self.unsubscribe
        handlers = {key: self._tracked(handler) for key, handler in handlers.items()}
        server = _GatewayServer(self.config.name, version=__version__, **handlers)
        # Not the constructor's on_roots_list_changed, which warns that roots leave the spec in
        # 2026-07-28: today's clients use them, and a server behind the gateway asks for them.
        server.add_notification_handler(
            "notifications/roots/list_changed", mcp_types.NotificationParams, self.roots_changed
        )
        if self.serves("logging"):  # likewise not on_set_logging_level; the SDK declares logging
            server.add_request_handler(
                "logging/setLevel", mcp_types.SetLevelRequestParams, self._tracked(self.set_level)
            )
        return server

    def _tracked(self, handler: Callable[[Ctx, Any], Awaitable[Any]]) -> Callable[[Ctx, Any], Awaitable[Any]]:
        """``handler`` counted while it runs, so the end of stdin can wait for its answer."""

        async def run(ctx: Ctx, params: Any) -> Any:
            self._in_flight += 1
            if self._in_flight == 1:
                self._idle = anyio.Event()
            try:
                return await handler(ctx, params)
            finally:
                self._in_flight -= 1
                if not self._in_flight:
                    self._idle.set()

        return run

    @property
    def busy(self) -> bool:
        return self._in_flight > 0

    async def wait_idle(self) -> None:
        """Until no request is being answered on the SDK's path."""
        while self._in_flight:
            await self._idle.wait()

    def status(self) -> dict[str, Any]:
        """Health, tools and quarantine per profile: what ``mcpkit gateway status`` prints."""
        from mcpkit.compat import PROFILES

        views = {p: self.view(profiles_for(None, p)).status() for p in PROFILES}
        return {
            "gateway": self.config.name,
            "config": self.config.source,
            "servers": [d.status() for d in self.downstreams.values()],
            "tools": len(self.routes),
            "profiles": views,
        }

    def name_map(self) -> dict[str, dict[str, str]]:
        """Public name -> {server, tool}: what ``mcpkit gateway names --json`` prints."""
        return {
            public: {"server": r.server, "tool": r.tool} for public, (r, _) in sorted(self.routes.items())
        }


class _GatewayServer(SdkServer):
    """The honest low-level server, announcing ``tools.listChanged``: the gateway sends it."""

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        return super().create_initialization_options(
            notification_options or NotificationOptions(tools_changed=True),
            experimental_capabilities,
            extensions,
        )


def _connection(ctx: Ctx) -> Connection:
    """The connection behind a request (private in the SDK; the only per-connection object)."""
    connection: Connection = ctx.session._connection
    return connection


def _client_name(ctx: Ctx) -> str | None:
    params = ctx.session.client_params
    info = getattr(params, "client_info", None)
    name = getattr(info, "name", None)
    return name if isinstance(name, str) else None


def _query(ctx: Ctx, key: str) -> str | None:
    request = ctx.request
    query = getattr(request, "query_params", None)
    value = query.get(key) if query is not None else None
    return value if isinstance(value, str) and value else None


def _query_client(ctx: Ctx) -> str | None:
    """``?client=NAME`` on the gateway URL: stateless HTTP keeps no clientInfo between requests."""
    return _query(ctx, "client")


def _query_profile(ctx: Ctx) -> str | None:
    return _query(ctx, "profile")


def _subscribes(downstream: Downstream) -> bool:
    resources = downstream.capabilities.get("resources")
    return isinstance(resources, dict) and resources.get("subscribe") is True


def _unknown(view: View, name: str, where: str) -> dict[str, Any]:
    """The answer for a tool name this client does not have. A server's own name (its texts
    say "call get_x with offset=...") gets the name the tool has here."""
    same = [public for public, entry in view.entries.items() if entry.route.tool == name]
    if len(same) == 1:
        return answers.failure(f"Unknown tool {name!r}; on this gateway it is called {same[0]!r}.")
    return answers.failure(f"Unknown tool {name!r}; {where}.")


def _downstream_version(downstream: Downstream) -> str:
    return downstream.protocol_version or "2025-11-25"


def _int(value: Any, default: int) -> int:
    try:
        return max(0, int(value))
    except (TypeError, ValueError):
        return default
