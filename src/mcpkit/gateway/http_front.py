"""The gateway's HTTP hot path: plain tool calls answered without the SDK's per-request server.

On stateless HTTP the SDK builds a transport, a server session and a task group for every
POST, and answers as an SSE stream: over a millisecond per call, more than the relayed call
itself costs. A gateway's traffic is almost all ``tools/call``, so this layer, sitting between
the access checks and the SDK app, answers the requests it fully understands itself, with a
JSON body (which the streamable HTTP spec lets a server choose for any request):

* ``tools/call`` without a progress token, and ``ping``;
* a single JSON-RPC request, ``Content-Type: application/json``, an ``Accept`` that takes
  JSON, no protocol version header or one the SDK's handshake era knows, a local ``Host``
  when the SDK would check it (DNS rebinding), a body within the SDK's size limit.

Everything else (initialize, lists, prompts, resources, calls asking for progress, anything
malformed) goes to the SDK app unchanged, with the body replayed, so errors and edge cases
keep the SDK's exact behaviour. A client that disconnects mid-call cancels the downstream call.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, MutableMapping
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs

import anyio

from mcpkit.gateway import answers
from mcpkit.log import continue_trace
from mcpkit.server import is_local_host
from mcpkit.server.relay import (
    SDK_DEFAULT_VERSION,
    SDK_HANDSHAKE_VERSIONS,
    SDK_MAX_REQUEST_BODY,
    accepts_json_and_events,
    answer_line,
    plain_request,
    response,
)
from mcpkit.telemetry import PROMETHEUS_CONTENT_TYPE

if TYPE_CHECKING:
    from mcpkit.gateway.core import Gateway

logger = logging.getLogger("mcpkit.gateway")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


def fast_calls(app: App, gateway: Gateway, *, path: str, check_host: bool) -> App:
    """``app`` (the SDK's streamable HTTP app) with the gateway's hot path in front of it.

    ``check_host``: refuse nothing here but leave to the SDK (which refuses) any request whose
    ``Host`` is not local, as the SDK does for a local bind.
    """

    async def front(scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") != "http" or scope.get("method") != "POST" or scope.get("path") != path:
            if scope.get("path") == METRICS_PATH and scope.get("method") == "GET":
                await _metrics(gateway, send)
                return
            await app(scope, receive, send)
            return
        headers = _headers(scope)
        if not _eligible_headers(headers, check_host):
            await app(scope, receive, send)
            return
        body, complete = await _read_body(receive)
        message = plain_request(body) if complete else None
        if message is None:
            await app(scope, _replaying(body, complete, receive), send)
            return
        version = headers.get("mcp-protocol-version", SDK_DEFAULT_VERSION)
        await _answer(gateway, scope, message, version, receive, send)

    return front


METRICS_PATH = "/metrics"
"""The gateway's call counts in Prometheus's text format (:class:`mcpkit.telemetry.CallCounts`)."""


async def _metrics(gateway: Gateway, send: Send) -> None:
    body = gateway.pipeline.counts.exposition().encode()
    headers = [(b"content-type", PROMETHEUS_CONTENT_TYPE.encode()), (b"content-length", b"%d" % len(body))]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _headers(scope: Scope) -> dict[str, str]:
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}


def _eligible_headers(headers: dict[str, str], check_host: bool) -> bool:
    ctype = headers.get("content-type", "").split(";")[0].strip().lower()
    version = headers.get("mcp-protocol-version")
    if ctype != "application/json" or "mcp-session-id" in headers:
        return False
    if not accepts_json_and_events(headers.get("accept", "")):
        return False  # the SDK's 406
    if version is not None and version not in SDK_HANDSHAKE_VERSIONS:
        return False
    if check_host and not is_local_host(headers.get("host", "")):
        return False  # the SDK refuses it (DNS rebinding): let it
    return _declared_length(headers) <= SDK_MAX_REQUEST_BODY


def _declared_length(headers: dict[str, str]) -> int:
    value = headers.get("content-length", "")
    return int(value) if value.isdigit() else 0


async def _read_body(receive: Receive) -> tuple[bytes, bool]:
    """The request body, and whether it was read whole within the size limit."""
    parts: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message.get("type") != "http.request":
            return b"".join(parts), False  # a disconnect: let the SDK app see it
        chunk = message.get("body", b"")
        parts.append(chunk)
        size += len(chunk)
        if size > SDK_MAX_REQUEST_BODY:
            return b"".join(parts), False
        if not message.get("more_body", False):
            return b"".join(parts), True


def _replaying(body: bytes, complete: bool, receive: Receive) -> Receive:
    """A ``receive`` that hands over the body already read, then the real one's messages."""
    pending: list[Message] = [{"type": "http.request", "body": body, "more_body": not complete}]

    async def replay() -> Message:
        if pending:
            return pending.pop()
        return await receive()

    return replay


async def _answer(
    gateway: Gateway, scope: Scope, message: dict[str, Any], version: str, receive: Receive, send: Send
) -> None:
    params = message.get("params") or {}
    result: dict[str, Any] = {}
    if message["method"] == "tools/call":
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        profiles = gateway.profiles_for_query(_first(query, "client"), _first(query, "profile"))
        name, arguments = params["name"], dict(params.get("arguments") or {})
        answered = False
        async with anyio.create_task_group() as tg:
            tg.start_soon(_cancel_on_disconnect, receive, tg.cancel_scope)
            try:
                view = await gateway.routing.view_async(profiles)
                with continue_trace(params.get("_meta")):  # the downstream call: a child span of the client's
                    result = await gateway.pipeline.call(view, name, arguments)
            except Exception as exc:  # never a traceback to the client: one line, logged in full
                logger.exception("tools/call %s failed inside the gateway", name)
                result = answers.gateway_failure(name, exc)
            answered = True
            tg.cancel_scope.cancel()
        if not answered:
            return  # the client went away (its call was cancelled downstream): nobody to answer
        body = answer_line(message["id"], result, version, name)
    else:
        body = response(message["id"], result)
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def _cancel_on_disconnect(receive: Receive, scope: anyio.CancelScope) -> None:
    while True:
        message = await receive()
        if message.get("type") == "http.disconnect":
            scope.cancel()
            return


def _first(query: dict[str, list[str]], key: str) -> str | None:
    values = query.get(key)
    return values[0] if values and values[0] else None
