"""The resource and prompt router: prompts, resources, templates, subscriptions, completions.

One job: pass each of these requests to the server that owns the prompt or resource, under
the names the gateway gives them, and declare each capability only when some server serves it
(a declared capability with nothing behind it broke clients that listed it: they got errors
for a feature the server said it had). Errors are mcpkit's :class:`JsonRpcError`; the SDK
assembly converts them once (:func:`mcpkit.server.relay.sdk_errors`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import mcp_types
from mcp_types.methods import is_input_required
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from mcpkit.client import CallError
from mcpkit.gateway.downstream import Downstream
from mcpkit.gateway.naming import NameMap, Route
from mcpkit.gateway.pipeline import InputRelay, capabilities_of
from mcpkit.jsonrpc import JsonRpcError

logger = logging.getLogger("mcpkit.gateway")

RESOURCE_NOT_FOUND = -32002


class ResourceRouter:
    """Prompts and resources of every server, each request sent to the server that owns it."""

    def __init__(self, downstreams: Mapping[str, Downstream], names: NameMap) -> None:
        self._downstreams = downstreams
        self._names = names
        self._prompts: dict[str, Route] = {}
        self._resources: dict[str, str] = {}
        self._templates: dict[str, str] = {}
        self._subscribed: dict[str, str] = {}
        """Resource URI -> the server it was subscribed on (renewed when that server restarts)."""
        self.offered: set[str] = set()
        """What the gateway declares: prompts, resources, subscribe, completions, logging."""

    async def discover(self) -> None:
        """Once every server has started: which capabilities the gateway declares. A server
        must declare prompts or resources *and* have some (else none are declared)."""
        for capability in ("prompts", "resources"):
            for downstream in self.serving(capability):
                if await self._all_pages(downstream, f"{capability}/list", capability):
                    self.offered.add(capability)
                    break
        if self.serving("logging"):
            self.offered.add("logging")
        if self.offered & {"prompts", "resources"} and self.serving("completions"):
            self.offered.add("completions")
        if "resources" in self.offered and any(_subscribes(d) for d in self.serving("resources")):
            self.offered.add("subscribe")

    def serving(self, capability: str) -> list[Downstream]:
        return [d for d in self._downstreams.values() if d.healthy and capability in d.capabilities]

    async def renew(self, downstream: Downstream) -> None:
        """A restarted server has forgotten its subscriptions: subscribe again."""
        for uri in [u for u, owner in self._subscribed.items() if owner == downstream.name]:
            try:
                await downstream.request("resources/subscribe", {"uri": uri})
            except CallError as exc:
                logger.warning("%s: renewing the subscription to %s failed: %s", downstream.name, uri, exc)

    # -- prompts -----------------------------------------------------------------------------

    async def list_prompts(self, ctx: Any, params: mcp_types.PaginatedRequestParams | None) -> Any:
        prompts = []
        self._prompts = {}
        for downstream in self.serving("prompts"):
            for prompt in await self._all_pages(downstream, "prompts/list", "prompts"):
                public = self._names.name(downstream.name, str(prompt.get("name")))
                self._prompts[public] = Route(downstream.name, str(prompt.get("name")))
                prompts.append(mcp_types.Prompt.model_validate({**prompt, "name": public}))
        return mcp_types.ListPromptsResult(prompts=prompts)

    async def get_prompt(self, ctx: Any, params: mcp_types.GetPromptRequestParams) -> Any:
        if not self._prompts:
            await self.list_prompts(ctx, None)
        route = self._prompts.get(params.name)
        if route is None:
            raise JsonRpcError(mcp_types.INVALID_PARAMS, f"Unknown prompt: {params.name}")
        relay = _input_relay(ctx, params)
        raw = await self._forward(
            route.server, "prompts/get", {"name": route.tool, "arguments": params.arguments or {}}, relay
        )
        if is_input_required(raw):  # a 2026 server's question, for the 2026 client in front
            return InputRelay.question(raw)
        return mcp_types.GetPromptResult.model_validate(raw)

    # -- resources ---------------------------------------------------------------------------

    async def list_resources(self, ctx: Any, params: mcp_types.PaginatedRequestParams | None) -> Any:
        resources = []
        self._resources = {}
        for downstream in self.serving("resources"):
            for resource in await self._all_pages(downstream, "resources/list", "resources"):
                uri = str(resource.get("uri"))
                self._resources.setdefault(uri, downstream.name)
                name = self._names.name(downstream.name, str(resource.get("name") or uri))
                resources.append(mcp_types.Resource.model_validate({**resource, "name": name}))
        return mcp_types.ListResourcesResult(resources=resources)

    async def list_resource_templates(self, ctx: Any, params: mcp_types.PaginatedRequestParams | None) -> Any:
        templates = []
        for downstream in self.serving("resources"):
            for template in await self._all_pages(
                downstream, "resources/templates/list", "resourceTemplates"
            ):
                name = self._names.name(
                    downstream.name, str(template.get("name") or template.get("uriTemplate"))
                )
                self._templates.setdefault(str(template.get("uriTemplate")), downstream.name)
                templates.append(mcp_types.ResourceTemplate.model_validate({**template, "name": name}))
        return mcp_types.ListResourceTemplatesResult(resource_templates=templates)

    async def read_resource(self, ctx: Any, params: mcp_types.ReadResourceRequestParams) -> Any:
        uri = str(params.uri)
        if uri not in self._resources:
            await self.list_resources(ctx, None)
        server = self._resources.get(uri)
        if server is not None:
            raw = await self._forward(server, "resources/read", {"uri": uri}, _input_relay(ctx, params))
            if is_input_required(raw):  # a 2026 server's question, for the 2026 client in front
                return InputRelay.question(raw)
            return mcp_types.ReadResourceResult.model_validate(raw)
        for downstream in self.serving("resources"):  # a URI made from a template: whoever knows it
            try:
                raw = await downstream.request("resources/read", {"uri": uri})
            except CallError:
                continue
            self._resources[uri] = downstream.name
            return mcp_types.ReadResourceResult.model_validate(raw)
        raise JsonRpcError(RESOURCE_NOT_FOUND, f"Resource not found: {uri}")

    async def subscribe(self, ctx: Any, params: mcp_types.SubscribeRequestParams) -> Any:
        """``resources/subscribe``: passed to the server that owns the resource; its
        ``notifications/resources/updated`` reach the client (stdio)."""
        uri = str(params.uri)
        server = await self._owner(ctx, uri)
        if not _subscribes(self._downstreams[server]):
            raise JsonRpcError(mcp_types.METHOD_NOT_FOUND, f"{server} does not offer subscriptions to {uri}")
        await self._forward(server, "resources/subscribe", {"uri": uri})
        self._subscribed[uri] = server
        return mcp_types.EmptyResult()

    async def unsubscribe(self, ctx: Any, params: mcp_types.UnsubscribeRequestParams) -> Any:
        uri = str(params.uri)
        server = self._subscribed.pop(uri, None)
        if server is not None:
            await self._forward(server, "resources/unsubscribe", {"uri": uri})
        return mcp_types.EmptyResult()

    async def _owner(self, ctx: Any, uri: str) -> str:
        if uri not in self._resources:
            await self.list_resources(ctx, None)
        server = self._resources.get(uri)
        if server is None:
            raise JsonRpcError(RESOURCE_NOT_FOUND, f"Resource not found: {uri}")
        return server

    # -- completions -------------------------------------------------------------------------

    async def complete(self, ctx: Any, params: mcp_types.CompleteRequestParams) -> Any:
        """``completion/complete`` for a prompt's or a resource template's argument, asked of
        the server that owns it (under its own name); one that does not complete gets none."""
        wire = params.model_dump(by_alias=True, mode="json", exclude_none=True)
        ref = dict(wire.get("ref") or {})
        if ref.get("type") == "ref/prompt":
            if str(ref.get("name")) not in self._prompts:
                await self.list_prompts(ctx, None)
            route = self._prompts.get(str(ref.get("name")))
            if route is None:
                raise JsonRpcError(mcp_types.INVALID_PARAMS, f"Unknown prompt: {ref.get('name')}")
            server, ref["name"] = route.server, route.tool
        else:
            uri = str(ref.get("uri"))
            if uri not in self._templates and uri not in self._resources:
                await self.list_resource_templates(ctx, None)
                await self.list_resources(ctx, None)
            found = self._templates.get(uri) or self._resources.get(uri)
            if found is None:
                raise JsonRpcError(mcp_types.INVALID_PARAMS, f"Unknown resource or template: {uri}")
            server = found
        if "completions" not in self._downstreams[server].capabilities:
            return mcp_types.CompleteResult.model_validate({"completion": {"values": [], "hasMore": False}})
        raw = await self._forward(server, "completion/complete", {**wire, "ref": ref})
        return mcp_types.CompleteResult.model_validate(raw)

    # -- sending -----------------------------------------------------------------------------

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

    async def _forward(
        self, server: str, method: str, params: Mapping[str, Any], relay: InputRelay | None = None
    ) -> dict[str, Any]:
        """One request to ``server``; its failure as the client's JSON-RPC error, naming it.
        A 2026 server that asks first (``prompts/get``, ``resources/read``) has its
        ``InputRequiredResult`` returned as it came when ``relay`` says the client in front is on
        the 2026 wire and can answer every question (its retry's answers then go back to the
        server); else it is answered through its handlers: the gateway's one client on stdio,
        else a refusal in one line."""
        downstream = self._downstreams[server]
        request = {**params, **(relay.resume or {})} if relay is not None else dict(params)
        try:
            raw = await downstream.request(method, request)
            if is_input_required(raw):
                if relay is not None and relay.answers(raw):
                    return dict(raw)
                raw = await downstream.answer_input(method, request, raw)
            return raw
        except JsonRpcError as exc:
            raise JsonRpcError(exc.code, f"{server}: {exc.message}") from None
        except CallError as exc:
            raise JsonRpcError(mcp_types.INTERNAL_ERROR, f"{server}: {exc}") from None


def _input_relay(ctx: Any, params: Any) -> InputRelay | None:
    """A 2026 client's relay for a server's questions (None on the handshake: asked mid-request)."""
    if ctx is None or getattr(ctx, "protocol_version", None) not in MODERN_PROTOCOL_VERSIONS:
        return None
    declared = capabilities_of(ctx.session.client_capabilities)
    return InputRelay.of(declared, params.request_state, params.input_responses)


def _subscribes(downstream: Downstream) -> bool:
    resources = downstream.capabilities.get("resources")
    return isinstance(resources, dict) and resources.get("subscribe") is True
