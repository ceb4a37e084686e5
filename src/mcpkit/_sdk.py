"""Every assumption mcpkit makes about the MCP SDK's internals, in one place.

The gateway answers plain tool calls without the SDK's per-request machinery (see
:mod:`mcpkit.server._plain_calls`), so it must behave exactly as the SDK would have: refuse
what the SDK refuses, write the bytes the SDK writes. The client tells the SDK's own
timeouts and closed connections from a server's error answers with the same codes, which the
SDK marks only in its message texts. Each such rule is written here from the SDK (pinned in
pyproject.toml), never elsewhere, and tests/test_sdk_assumptions.py checks each one against
the SDK itself, so an SDK upgrade that changes one fails a test that names it instead of
making mcpkit quietly answer differently from the SDK (or call a server's own -32001 a
timeout). The module sits below ``server/``, ``client/`` and ``results/`` so all three read
the same copy.

1. :func:`connection_of`: a request's connection is the private ``ServerSession._connection``
   (the SDK makes a ``ServerSession`` per request; the connection is the only object that
   lives as long as the client does).
2. :func:`accepts_json_and_events`: the streamable HTTP transport's ``Accept`` rule.
3. :func:`is_local_host` and :data:`SDK_LOCAL_HOSTS`: the Host names its DNS-rebinding check
   allows for a local bind.
4. :data:`SDK_MAX_REQUEST_BODY`: its request body limit.
5. :data:`SDK_HANDSHAKE_VERSIONS`, :data:`SDK_DEFAULT_VERSION`: protocol versions its handshake era
   knows, and the one it assumes without an ``MCP-Protocol-Version`` header.
6. :func:`message_bytes`: its JSON writer (pydantic's: compact UTF-8, its float spelling,
   non-finite numbers as null), byte for byte.
7. :func:`call_result_wire`: a ``tools/call`` result as its server writes it: through the
   ``CallToolResult`` model, then the per-version field sieve; :data:`PLAIN_RESULT_VERSIONS`:
   the versions whose result surface is the 2025-11-25 ``CallToolResult`` (what
   :func:`mcpkit.results.plain_text_wire` relies on).
8. :func:`is_sdk_timeout` and :func:`is_sdk_closed`: the SDK's dispatcher reports its own
   timeout as -32001 and a closed connection as -32000, the codes servers use for their own
   errors too; only the message texts tell them apart.
9. :data:`SDK_JSON_PARSE_PREFIX` and :data:`SDK_SSE_TOO_LARGE`: the texts its HTTP client puts
   on a response it could not parse and on a server-sent event over its size limit.
10. :func:`stdio_line_refused`: its stdio transport reads each line through
    ``mcp_types.jsonrpc_message_adapter`` and drops, without an answer, every line that adapter
    refuses (invalid JSON, a lone surrogate, nesting past its decoder's limit, JSON that is no
    JSON-RPC message): the client waited out its timeout. mcpkit answers those lines itself.
11. :data:`SERVED_VERSIONS`: one endpoint built on the SDK serves both eras, the stateless
    revisions (``server/discover``) and every handshake revision (``initialize``), on stdio and
    HTTP alike; the SDK's own ``server/discover`` lists only the stateless ones, so mcpkit answers
    discover itself (the SDK lets a server replace that handler with ``add_request_handler``).
12. :func:`cache_hints`: ``Server(cache_hints=...)`` fills ``ttlMs``/``cacheScope`` on results
    whose handler left them unset, and the per-version sieve drops them on handshake-era answers.
13. :func:`listen_handler` and :func:`list_changed_event`: the SDK's ``subscriptions/listen``
    handler serves each stream from a bus of typed events, and ``close`` ends every stream with
    its final result; a list-changed notification sent on a stateless-era connection's
    ``outbound`` is dropped (its clients hear it only through a listen stream), so notifying
    every connection a server has seen reaches handshake-era clients and harms no other.
14. :func:`authenticated_user`: the SDK's streamable HTTP session manager reads a request's
    principal from ``scope["user"]`` when it is the SDK's ``AuthenticatedUser`` (and binds a
    session to the client id, issuer and subject it finds there), so mcpkit's own OAuth check
    puts one there for each accepted token.
15. :func:`request_state_boundary`: the SDK's ``RequestStateBoundary`` middleware seals the
    ``requestState`` of every ``InputRequiredResult`` a handler returns and, on the retry, hands
    the handler's context the plaintext it minted in ``ctx.params["requestState"]`` (refusing
    any other echo with -32602 before the handler runs); the handler's ``ctx.params`` is the
    mapping the middleware passed on.
16. :func:`stamp_request` and :func:`declaring_session`: a ``ClientSession`` stamps each request it sends
    with ``_stamp(data, opts)``, which after ``adopt`` of a 2026 ``DiscoverResult`` puts the
    ``_meta`` envelope (version, client info, capabilities) and the HTTP headers on it, and it
    derives the capabilities it declares on that wire from ``_build_capabilities(version)``. The
    client sends raw requests beside the SDK's typed ones, so it borrows the stamp, and it
    declares only what its handlers answer (see :mod:`mcpkit.client._session`). The SDK's era
    negotiation (``mcp.client._probe.negotiate_auto``) probes with ``send_discover`` and falls back
    on the session's ``initialize()``, which this subclass routes to the client's own handshake.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, cast

import mcp_types
import pydantic_core
from mcp_types import DEFAULT_NEGOTIATED_VERSION
from mcp_types.methods import serialize_server_result
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

if TYPE_CHECKING:
    from mcp.server.caching import CacheHint
    from mcp.server.connection import Connection
    from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ServerEvent

    SDK_MAX_REQUEST_BODY: int
    """Bytes of a request body the SDK's HTTP transport reads before it answers 413."""


def __getattr__(name: str) -> Any:
    # The body limit lives in the SDK's server package; read it when asked, so that importing
    # this module (results/ does, for PLAIN_RESULT_VERSIONS) never loads the SDK itself: the
    # archive's CLI imports results/ and must start without it.
    if name == "SDK_MAX_REQUEST_BODY":
        from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE

        return DEFAULT_MAX_REQUEST_BODY_SIZE
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


SDK_HANDSHAKE_VERSIONS: frozenset[str] = frozenset(HANDSHAKE_PROTOCOL_VERSIONS)
SDK_DEFAULT_VERSION: str = DEFAULT_NEGOTIATED_VERSION
SDK_MODERN_VERSIONS: frozenset[str] = frozenset(MODERN_PROTOCOL_VERSIONS)

SERVED_VERSIONS: tuple[str, ...] = (
    *reversed(MODERN_PROTOCOL_VERSIONS),
    *reversed(HANDSHAKE_PROTOCOL_VERSIONS),
)
"""Every revision one SDK endpoint serves, newest first: what ``server/discover`` lists."""

LISTS = ("tools", "prompts", "resources")
"""The lists whose changes a server may announce (``notifications/<list>/list_changed``)."""

LIST_METHODS: dict[str, tuple[str, ...]] = {
    "tools": ("tools/list",),
    "prompts": ("prompts/list",),
    "resources": ("resources/list", "resources/templates/list"),
}
"""The cacheable list methods of each list."""


def cache_hints(hints: dict[str, tuple[int, str]]) -> dict[Any, CacheHint]:
    """``{method: (ttl_ms, scope)}`` as the SDK's ``Server(cache_hints=...)`` takes it (the SDK
    refuses a method whose results are not cacheable when the server is built)."""
    from mcp.server.caching import CacheHint

    return {method: CacheHint(ttl_ms=ttl, scope=cast(Any, scope)) for method, (ttl, scope) in hints.items()}


def listen_handler() -> tuple[InMemorySubscriptionBus, ListenHandler]:
    """A bus to publish list changes on and the SDK's ``subscriptions/listen`` handler serving it."""
    from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler

    bus = InMemorySubscriptionBus()
    return bus, ListenHandler(bus)


def list_changed_event(kind: str) -> ServerEvent:
    """The SDK's event for a change of the ``kind`` list (one of :data:`LISTS`)."""
    from mcp.server.subscriptions import PromptsListChanged, ResourcesListChanged, ToolsListChanged

    events: dict[str, Callable[[], ServerEvent]] = {
        "tools": ToolsListChanged,
        "prompts": PromptsListChanged,
        "resources": ResourcesListChanged,
    }
    return events[kind]()


SDK_LOCAL_HOSTS = ("127.0.0.1", "localhost", "[::1]")
"""The hosts the SDK's DNS-rebinding protection allows on a local bind, each with a port
(its patterns ``127.0.0.1:*``, ``localhost:*``, ``[::1]:*``, matched case-sensitively)."""


def connection_of(ctx: Any) -> Connection:
    """The connection behind a request context (private in the SDK)."""
    connection: Connection = ctx.session._connection
    return connection


def request_outbound_of(session: Any) -> Any:
    """The channel of the request a server session is scoped to (private in the SDK): a request
    sent on it reaches the client on that request's own stream (streamable HTTP with a session),
    where the connection's channel would need a GET stream the client may never open."""
    return session._request_outbound


def accepts_json_and_events(accept: str) -> bool:
    """The SDK's ``Accept`` rule for a POST (RFC 7231 wildcards): a client must accept both
    JSON and event streams; one that does not gets the SDK's 406."""
    types = {t.split(";")[0].strip().lower() for t in accept.split(",")}
    if "*/*" in types:
        return True
    return bool(types & {"application/json", "application/*"}) and bool(
        types & {"text/event-stream", "text/*"}
    )


def is_local_host(host_header: str) -> bool:
    """Whether the SDK's check lets a ``Host`` header through on a local bind. Its rule, not
    the URL's: ``localhost`` without a port, or ``LOCALHOST:80``, is refused (a copy that
    parsed the header as a URL answered those where the SDK refuses them)."""
    return any(host_header.startswith(base + ":") for base in SDK_LOCAL_HOSTS)


def message_bytes(message: dict[str, Any]) -> bytes:
    """A JSON-RPC message exactly as the SDK writes one (its models dump through pydantic's
    JSON writer). Raises ``ValueError`` for text no UTF-8 writer can send (a lone surrogate)."""
    return pydantic_core.to_json(message, inf_nan_mode="null")


def call_result_wire(result: dict[str, Any], version: str) -> dict[str, Any]:
    """A ``tools/call`` result as the SDK's server sends it for a handshake-era ``version``:
    through the ``CallToolResult`` model (which spells out defaults such as ``isError: false``),
    then the per-version field sieve. Raises pydantic's ``ValidationError`` for a result the
    model refuses."""
    dumped = mcp_types.CallToolResult.model_validate(result).model_dump(
        by_alias=True, mode="json", exclude_none=True
    )
    return serialize_server_result("tools/call", version, dumped)


PLAIN_RESULT_VERSIONS = frozenset({"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"})
"""Versions whose ``tools/call`` result surface is the SDK's 2025-11-25 ``CallToolResult``."""

SDK_JSON_PARSE_PREFIX = "Failed to parse JSON response: "
"""How the SDK's HTTP client begins the -32700 it reports for a response body it could not parse
(mcpkit's body limit, raised inside that parse, arrives wrapped in it)."""

SDK_SSE_TOO_LARGE = "Server-sent event exceeded"
"""The start of the SDK's -32000 text for one server-sent event over its size limit."""

_SDK_TIMEOUT_TEXT = re.compile(r"Request .* timed out")


def is_sdk_timeout(exc: Any) -> bool:
    """The SDK's own timeout (``Request 'tools/call' timed out``, -32001), not a server's error
    answer that happens to use code -32001."""
    return (
        getattr(exc, "code", None) == mcp_types.REQUEST_TIMEOUT
        and _SDK_TIMEOUT_TEXT.fullmatch(str(getattr(exc, "message", ""))) is not None
    )


def is_sdk_closed(exc: Any) -> bool:
    """The SDK's word that the connection ended (or an HTTP answer stream broke off), not a
    server's error answer with code -32000, the code servers use most for their own errors."""
    message = str(getattr(exc, "message", ""))
    return getattr(exc, "code", None) == mcp_types.CONNECTION_CLOSED and (
        message == "Connection closed" or message.startswith("SSE stream ")
    )


def stdio_line_refused(line: str | bytes) -> tuple[str | int | None, int, str] | None:
    """``(id, code, message)`` answering a stdio line the SDK would drop, else ``None`` (the
    SDK handles the line, or it is blank: no request at all).

    -32700 for text its decoder refuses, -32600 for JSON that is no JSON-RPC message (-32602
    when only its params are not an object, the SDK's code and the WebSocket face's). The id is
    the request's when Python's more lenient decoder can still read one (a lone surrogate
    elsewhere in the line, nesting between the two decoders' limits), so the client's pending
    request ends at once; otherwise null, as JSON-RPC 2.0 asks.
    """
    try:
        mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except pydantic_core.ValidationError as exc:
        errors = exc.errors(include_url=False, include_input=False)
        if isinstance(line, bytes):
            line = line.decode("utf-8", "replace")
        if not line.strip(JSON_WHITESPACE):
            return None  # no request at all
        if errors and errors[0]["type"] == "json_invalid":
            detail = _one_line(str(errors[0].get("ctx", {}).get("error", "")) or "not JSON")
            request_id = _readable_id(line)
            if "hex escape" in detail and _LONE_SURROGATE.search(line):
                detail = f"a \\u escape of half a surrogate pair is no character ({detail})"
            return request_id, mcp_types.PARSE_ERROR, f"Parse error: {detail}"
        try:
            data = json.loads(line)
        except (ValueError, RecursionError):
            data = None
        wrong = _what_is_wrong(data)
        if wrong == _PARAMS_NOT_OBJECT:  # the request is whole but for its params: as the SDK says
            return _id_of(data), mcp_types.INVALID_PARAMS, f"Invalid params: {wrong}"
        return _id_of(data), mcp_types.INVALID_REQUEST, f"Invalid Request: {wrong}"
    return None


JSON_WHITESPACE = " \t\r\n"
"""What JSON counts as blank (``str.strip()`` also strips U+001C..U+001F, which are no JSON)."""

_LONE_SURROGATE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def _one_line(text: str) -> str:
    return " ".join(text.split())[:200]


def _readable_id(line: str) -> str | int | None:
    try:
        return _id_of(json.loads(line))
    except (ValueError, RecursionError):
        return None


def _id_of(data: Any) -> str | int | None:
    """A JSON-RPC id that can be sent back as the client sent it, else ``None``."""
    if not isinstance(data, dict):
        return None
    value = data.get("id")
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        return None
    if isinstance(value, str):
        try:
            value.encode()
        except UnicodeEncodeError:
            return None  # not Unicode: no UTF-8 writer can send it back
    return value


_PARAMS_NOT_OBJECT = "params must be an object"


def _what_is_wrong(data: Any) -> str:
    """The first rule of a JSON-RPC 2.0 message that ``data`` breaks, in words."""
    if isinstance(data, list):
        return "a batch (MCP takes one message at a time)"
    if not isinstance(data, dict):
        return "expected a JSON object"
    if data.get("jsonrpc") != "2.0":
        return 'jsonrpc must be "2.0"'
    if "id" in data and _id_of(data) is None:
        return "id must be a string or an integer"
    if "method" in data:
        if not isinstance(data["method"], str):
            return "method must be a string"
        if not isinstance(data.get("params", {}), dict):
            return _PARAMS_NOT_OBJECT
    elif "result" not in data and "error" not in data:
        return "missing method"
    return "not a JSON-RPC request, notification or response"


def authenticated_user(access: Any) -> Any:
    """The SDK's ``AuthenticatedUser`` for an accepted ``AccessToken``, for ``scope["user"]``."""
    from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser

    return AuthenticatedUser(access)


def request_state_boundary(audience: str) -> Any:
    """The SDK's ``requestState`` sealing middleware under a key made for this process (a state
    minted before a restart is refused with -32602, and the call must be made again)."""
    from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity

    return RequestStateBoundary(RequestStateSecurity.ephemeral(), default_audience=audience)


def stamp_request(session: Any, method: str, params: Any, opts: Any) -> dict[str, Any]:
    """``params`` (copied) with what ``session`` adds to each request on its negotiated wire;
    headers go into ``opts``."""
    copied = dict(params or {})
    if isinstance(copied.get("_meta"), dict):
        copied["_meta"] = dict(copied["_meta"])
    data: dict[str, Any] = {"method": method, "params": copied}
    session._stamp(data, opts)
    return cast(dict[str, Any], data["params"])


@functools.cache
def declaring_session() -> type[Any]:
    """The SDK's ``ClientSession``, taking ``declared=`` (version -> ``ClientCapabilities``): what
    it declares on the 2026 wire instead of what its callbacks imply; and ``handshake=``, the
    caller's own ``initialize`` for the SDK's era negotiation to fall back on. It keeps the raw
    ``server/discover`` answer in ``discovered``."""
    from mcp.client.session import ClientSession

    class DeclaringSession(ClientSession):
        def __init__(
            self,
            *args: Any,
            declared: Callable[[str], Any],
            handshake: Callable[[], Awaitable[Any]] | None = None,
            **kwargs: Any,
        ) -> None:
            super().__init__(*args, **kwargs)
            self._declared = declared
            self._handshake = handshake
            self.discovered: dict[str, Any] | None = None
            """The last ``server/discover`` answer exactly as received."""

        def _build_capabilities(self, version: str) -> Any:
            return self._declared(version)

        async def send_discover(self, version: str) -> dict[str, Any]:
            raw = await super().send_discover(version)
            self.discovered = dict(raw)
            return raw

        async def initialize(self) -> Any:
            if self._handshake is None:
                return await super().initialize()
            return await self._handshake()

    return DeclaringSession
