"""The client relay: everything between the gateway's clients and its servers but tool calls.

One job: who is asking (the profile set of each connection), and what travels besides calls:
progress both ways, a server's log messages and resource updates to the client, the client's
log level and roots changes to the servers, a server's sampling, elicitation and roots
requests to the client, and ``notifications/tools/list_changed`` when the routing changes.
Only a gateway on stdio has one client to relay to (``relay_client_requests``); over
stateless HTTP a request's connection ends with its answer.
"""

from __future__ import annotations

import itertools
import logging
import weakref
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import mcp_types
from mcp.server.connection import Connection
from mcp.server.context import ServerRequestContext
from mcp.server.session import ServerSession
from mcp.shared.exceptions import MCPError

from mcpkit.client import CallError
from mcpkit.gateway.downstream import Downstream
from mcpkit.gateway.routing import RoutingTable
from mcpkit.jsonrpc import JsonRpcError
from mcpkit.server.relay import connection_of

logger = logging.getLogger("mcpkit.gateway")

Ctx = ServerRequestContext[Any, Any]


class ClientRelay:
    """The gateway's clients as its servers see them, and the servers as the clients see them."""

    def __init__(self, routing: RoutingTable, downstreams: Mapping[str, Downstream]) -> None:
        self.relay_client_requests = False
        """Forward a server's sampling and elicitation requests to the client (stdio: one client)."""
        self.relays_logging = False
        """Whether the gateway declared logging (some server logs): its messages reach the client."""
        self._routing = routing
        self._downstreams = downstreams
        # Keyed by the SDK's per-connection object: a ServerSession is made anew for each request.
        self._clients: weakref.WeakKeyDictionary[Connection, tuple[str, ...]] = weakref.WeakKeyDictionary()
        self._progress: dict[str, ServerSession] = {}
        """Gateway token -> the session of the client request whose progress it stands for."""
        self._tokens = itertools.count(1)
        self._log_level: str | None = None

    # -- who is asking -----------------------------------------------------------------------

    def profiles_of(self, ctx: Ctx) -> tuple[str, ...]:
        """The profile set of the client behind ``ctx`` (chosen once per connection)."""
        connection = connection_of(ctx)
        known = self._clients.get(connection)
        if known is not None:
            return known
        name = _client_name(ctx)
        if name is None:
            name = _query(ctx, "client")  # stateless HTTP keeps no clientInfo between requests
        profiles = self._routing.profiles_for_query(name, _query(ctx, "profile"))
        self._clients[connection] = profiles
        return profiles

    def met(self, handler: Callable[[Ctx, Any], Awaitable[Any]]) -> Callable[[Ctx, Any], Awaitable[Any]]:
        """``handler`` with its client known from the request on (a stdio client whose first
        request was ``prompts/get`` used to be unknown, so its server's question was refused)."""

        async def run(ctx: Ctx, params: Any) -> Any:
            self.profiles_of(ctx)
            return await handler(ctx, params)

        return run

    async def list_changed(self) -> None:
        """Tell every connected client that its tool list changed."""
        for connection in list(self._clients):
            try:
                await connection.outbound.notify("notifications/tools/list_changed", None)
            except Exception as exc:  # a client that went away must not stop the others
                logger.debug("list_changed not delivered: %s", exc)

    # -- progress both ways ------------------------------------------------------------------

    def progress_token(self, ctx: Ctx | None) -> str | None:
        """A gateway-wide token standing for the client's own, when the client asked for progress."""
        if ctx is None or not _wants_progress(ctx):
            return None
        token = f"gw-{next(self._tokens)}"
        self._progress[token] = ctx.session
        return token

    def progress_to(self, token: str | None, ctx: Ctx) -> None:
        """``token``'s progress from now on to ``ctx``'s request (a parked call's retry: the
        request that started it has been answered), or nowhere when that one asked for none."""
        if token is None:
            return
        if _wants_progress(ctx):
            self._progress[token] = ctx.session
        else:
            self._progress.pop(token, None)

    def progress_done(self, token: str | None) -> None:
        if token is not None:
            self._progress.pop(token, None)

    async def notified(self, downstream: Downstream, method: str, params: dict[str, Any]) -> None:
        """A server's notification, passed on where it has somewhere to go."""
        if method == "notifications/message":
            await self._relay_log(downstream, params)
            return
        if method == "notifications/resources/updated":
            await self._to_client("notifications/resources/updated", params)
            return
        if method != "notifications/progress":
            return
        session = self._progress.get(str(params.get("progressToken")))
        if session is None:
            return
        progress = params.get("progress")
        if not isinstance(progress, int | float):
            return
        total = params.get("total")
        message = params.get("message")
        try:  # under the client's own token, on that request's own stream (either era's wire)
            await session.report_progress(
                float(progress),
                float(total) if isinstance(total, int | float) else None,
                message if isinstance(message, str) else None,
            )
        except Exception as exc:
            logger.debug("progress not delivered: %s", exc)

    # -- log messages -------------------------------------------------------------------------

    async def set_level(self, ctx: Ctx, params: mcp_types.SetLevelRequestParams) -> Any:
        """The client's ``logging/setLevel``, passed to every server that logs (and kept for the
        ones that restart); a server that refuses it is logged, the client still gets success."""
        self._log_level = str(params.level)
        for downstream in self._downstreams.values():
            if downstream.healthy and "logging" in downstream.capabilities:
                await self.apply_level(downstream)
        return mcp_types.EmptyResult()

    async def apply_level(self, downstream: Downstream) -> None:
        """The client's log level to one server (a restarted one logs at it again)."""
        if self._log_level is None:
            return
        try:
            await downstream.request("logging/setLevel", {"level": self._log_level})
        except CallError as exc:
            logger.warning("%s: logging/setLevel %s refused: %s", downstream.name, self._log_level, exc)

    async def _relay_log(self, downstream: Downstream, params: dict[str, Any]) -> None:
        """A server's log message to the gateway's one client (stdio), its logger prefixed with
        the server's name; over stateless HTTP there is no channel for it."""
        if not self.relays_logging:
            return
        inner = params.get("logger")
        named = {
            **params,
            "logger": f"{downstream.name}/{inner}" if isinstance(inner, str) else downstream.name,
        }
        await self._to_client("notifications/message", named)

    async def _to_client(self, method: str, params: dict[str, Any]) -> None:
        """A notification to the gateway's one client (stdio); none over stateless HTTP."""
        connections = list(self._clients)
        if not self.relay_client_requests or len(connections) != 1:
            return
        try:
            await connections[0].outbound.notify(method, params)
        except Exception as exc:  # a client that went away must not break the server's connection
            logger.debug("%s not delivered: %s", method, exc)

    # -- requests servers make of the client ------------------------------------------------

    def asker(self, method: str, capability: str) -> Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]:
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
            return await _ask(connection, method, params)

        return ask

    async def roots(self, params: dict[str, Any]) -> dict[str, Any]:
        """A server's ``roots/list``: the gateway's own client's roots when it can be asked
        (stdio, and the client declared roots), else none, as a client with no roots says."""
        connections = list(self._clients)
        if not self.relay_client_requests or len(connections) != 1:
            return {"roots": []}
        connection = connections[0]
        declared = connection.client_capabilities
        if declared is None or getattr(declared, "roots", None) is None:
            return {"roots": []}
        return await _ask(connection, "roots/list", params)

    async def roots_changed(self, ctx: Any, params: Any) -> None:
        """The client's roots changed: every server that is up hears it (they ask again)."""
        for downstream in self._downstreams.values():
            await downstream.notify("notifications/roots/list_changed")


async def _ask(connection: Connection, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """``method`` asked of the client; its refusal passed back unchanged, as mcpkit's error."""
    try:
        return await connection.outbound.send_raw_request(method, params, None)
    except MCPError as exc:
        raise JsonRpcError(exc.code, exc.message, exc.data) from None


def _wants_progress(ctx: Ctx) -> bool:
    """Whether the client gave ``ctx``'s request a progress token."""
    return isinstance((ctx.meta or {}).get("progress_token"), str | int)


def _client_name(ctx: Ctx) -> str | None:
    params = ctx.session.client_params
    info = getattr(params, "client_info", None)
    name = getattr(info, "name", None)
    return name if isinstance(name, str) else None


def _query(ctx: Ctx, key: str) -> str | None:
    """``?client=NAME`` or ``?profile=NAME`` on the gateway URL."""
    request = ctx.request
    query = getattr(request, "query_params", None)
    value = query.get(key) if query is not None else None
    return value if isinstance(value, str) and value else None
