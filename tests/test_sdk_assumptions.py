"""Each assumption in mcpkit._sdk, checked against the SDK itself.

The gateway's fast paths copy rules of the SDK's streamable HTTP app and its JSON writer;
these tests run the SDK's own app in-process (ASGI, no sockets) and its own models, so an SDK
release that changes one of them fails the test named after it, instead of the fast path
quietly answering what the SDK would refuse, or writing different bytes. The client's
assumptions (which -32001 and -32000 are the SDK's own) are checked on the SDK's own client.
"""

from __future__ import annotations

import inspect
import io
import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, cast

import anyio
import httpx2
import httpx2._sse
import mcp
import mcp.client.streamable_http
import mcp_types
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.server.connection import Connection
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from mcp.shared.memory import create_client_server_memory_streams

from mcpkit import _sdk as sdk

pytestmark = pytest.mark.anyio

SEEN: list[object] = []
OUTBOUND: list[tuple[object, object]] = []
"""Each call's request-scoped channel beside its connection's standalone one."""


async def _call_tool(ctx: Any, params: mcp_types.CallToolRequestParams) -> mcp_types.CallToolResult:
    SEEN.append(sdk.connection_of(ctx))
    OUTBOUND.append((sdk.request_outbound_of(ctx.session), sdk.connection_of(ctx).outbound))
    return mcp_types.CallToolResult(content=[mcp_types.TextContent(type="text", text="hi é")])


@asynccontextmanager
async def sdk_app(host: str = "127.0.0.1") -> AsyncIterator[httpx2.AsyncClient]:
    """The SDK's own stateless streamable HTTP app for a bind on ``host``, served in-process."""
    server: Server[Any] = Server("probe", on_call_tool=_call_tool)
    app = server.streamable_http_app(stateless_http=True, host=host)
    async with app.router.lifespan_context(app):
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000") as client:
            yield client


def _request(method: str = "ping", **params: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": method}
    if params:
        body["params"] = params
    return body


async def _post(client: httpx2.AsyncClient, body: bytes, **headers: str) -> httpx2.Response:
    sent = {"content-type": "application/json", "accept": "application/json, text/event-stream", **headers}
    return await client.post("/mcp", content=body, headers=sent)


@pytest.mark.parametrize(
    "accept",
    [
        "application/json, text/event-stream",
        "*/*",
        "application/*, text/*",
        "application/json;q=0.9, text/event-stream;q=0.1",
        "APPLICATION/JSON, TEXT/EVENT-STREAM",
        "application/json",
        "text/event-stream",
        "text/html",
        "",
    ],
)
async def test_the_accept_rule_is_the_sdks(accept: str) -> None:
    async with sdk_app() as client:
        got = await _post(client, json.dumps(_request()).encode(), accept=accept)
    assert (got.status_code != 406) == sdk.accepts_json_and_events(accept), got.status_code


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1:8000",
        "localhost:8000",
        "[::1]:8000",
        "localhost",
        "127.0.0.1",
        "LOCALHOST:8000",
        "evil.example:8000",
        "evil.example",
    ],
)
async def test_the_host_check_is_the_sdks(host: str) -> None:
    """A fast path answers only what the SDK's DNS-rebinding check lets through."""
    async with sdk_app() as client:
        got = await _post(client, json.dumps(_request()).encode(), host=host)
    refused = got.status_code in (400, 421)
    assert refused == (not sdk.is_local_host(host)), (host, got.status_code)


async def test_the_body_limit_is_the_sdks() -> None:
    async with sdk_app() as client:
        over = await _post(client, b" " * (sdk.SDK_MAX_REQUEST_BODY + 1))
        at = await _post(client, json.dumps(_request()).encode().ljust(sdk.SDK_MAX_REQUEST_BODY))
    assert over.status_code == 413
    assert at.status_code != 413


async def test_a_requests_connection_is_the_sdks_private_connection() -> None:
    SEEN.clear()
    async with sdk_app() as client:
        got = await _post(client, json.dumps(_request("tools/call", name="x", arguments={})).encode())
    assert got.status_code == 200
    assert len(SEEN) == 1 and isinstance(SEEN[0], Connection)


async def test_a_sessions_request_channel_is_the_sdks_private_request_outbound() -> None:
    """The gateway asks a 2025 session client mid-call on the request's own stream
    (``request_outbound_of``): it must be a channel that can send requests, and not the
    connection's standalone one (which needs a GET stream the client may never open)."""
    OUTBOUND.clear()
    async with sdk_app() as client:
        got = await _post(client, json.dumps(_request("tools/call", name="x", arguments={})).encode())
    assert got.status_code == 200
    [(request_channel, standalone)] = OUTBOUND
    assert request_channel is not standalone
    assert hasattr(request_channel, "send_raw_request") and hasattr(request_channel, "can_send_request")


def test_the_handshake_versions_are_the_sdks() -> None:
    assert sdk.SDK_DEFAULT_VERSION in sdk.SDK_HANDSHAKE_VERSIONS
    assert "2025-11-25" in sdk.SDK_HANDSHAKE_VERSIONS


async def test_a_call_result_is_written_as_the_sdks_server_writes_it() -> None:
    async with sdk_app() as client:
        got = await _post(
            client,
            json.dumps(_request("tools/call", name="x", arguments={})).encode(),
            **{"mcp-protocol-version": sdk.SDK_DEFAULT_VERSION},
        )
    lines = [line[6:] for line in got.text.splitlines() if line.startswith("data: ") and line[6:].strip()]
    message = json.loads(lines[-1]) if lines else got.json()
    mine = sdk.call_result_wire({"content": [{"type": "text", "text": "hi é"}]}, sdk.SDK_DEFAULT_VERSION)
    assert message["result"] == mine


_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False)
    | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(
    result=st.dictionaries(st.text(max_size=8), _json, max_size=5),
    request_id=st.integers(0, 2**53) | st.text(),
)
def test_the_json_writer_writes_the_sdks_bytes(result: dict[str, Any], request_id: int | str) -> None:
    """Byte-equal to the SDK's own writer (its models' JSON dump): float spelling, escapes,
    non-ASCII text, key order."""
    theirs = mcp_types.JSONRPCResponse(jsonrpc="2.0", id=request_id, result=result).model_dump_json(
        by_alias=True, exclude_unset=True
    )
    assert sdk.message_bytes({"jsonrpc": "2.0", "id": request_id, "result": result}) == theirs.encode()


# -- the client's: which -32001 and -32000 are the SDK's own ------------------------------------


async def _never_answers(ctx: Any, params: mcp_types.CallToolRequestParams) -> mcp_types.CallToolResult:
    await anyio.sleep_forever()
    raise AssertionError("unreachable")


async def test_the_sdk_words_its_own_timeout_as_is_sdk_timeout_reads() -> None:
    # Over streams, as mcpkit's Session talks to every server: the SDK's JSON-RPC dispatcher.
    # (Its in-process Client uses another dispatcher, with another text; mcpkit does not.)
    server: Server[Any] = Server("probe", on_call_tool=_never_answers)
    with anyio.fail_after(60):  # a guard against a hang only
        async with (
            create_client_server_memory_streams() as (client_streams, server_streams),
            anyio.create_task_group() as tg,
        ):
            tg.start_soon(lambda: server.run(*server_streams, server.create_initialization_options()))
            async with ClientSession(*client_streams) as session:
                await session.initialize()
                with pytest.raises(MCPError) as raised:
                    await session.call_tool("x", {}, read_timeout_seconds=0.05)
            tg.cancel_scope.cancel()
    assert sdk.is_sdk_timeout(raised.value)
    assert not sdk.is_sdk_closed(raised.value)
    # A server's own -32001 answer is a server error, not a timeout of ours.
    assert not sdk.is_sdk_timeout(MCPError(code=mcp_types.REQUEST_TIMEOUT, message="upstream timed out"))


async def test_the_sdk_words_a_closed_connection_as_is_sdk_closed_reads() -> None:
    # A real child that reads the initialize request and exits without answering it.
    child = StdioServerParameters(command=sys.executable, args=["-c", "import sys; sys.stdin.readline()"])
    with anyio.fail_after(60):
        async with stdio_client(child) as (read, write), ClientSession(read, write) as session:
            with pytest.raises(MCPError) as raised:
                await session.initialize()
    assert sdk.is_sdk_closed(raised.value)
    assert not sdk.is_sdk_timeout(raised.value)
    assert not sdk.is_sdk_closed(MCPError(code=mcp_types.CONNECTION_CLOSED, message="Internal server error"))


def test_the_sdk_http_client_texts_are_the_ones_the_client_looks_for() -> None:
    # Read off the SDK's (and its HTTP library's) own source: provoking either over a socket
    # needs a misbehaving HTTP server, which tests/client/test_http.py runs for the behaviour.
    http_client = inspect.getsource(mcp.client.streamable_http)
    assert 'f"Failed to parse JSON response: {exc}"' in http_client
    assert sdk.SDK_JSON_PARSE_PREFIX == "Failed to parse JSON response: "
    assert f'SSEError(f"{sdk.SDK_SSE_TOO_LARGE} the' in inspect.getsource(httpx2._sse)


def test_results_for_the_plain_versions_have_the_2025_11_25_surface() -> None:
    result = {"content": [{"type": "text", "text": "a"}], "structuredContent": {"n": 1}, "isError": True}
    latest = sdk.call_result_wire(result, "2025-11-25")
    for version in sdk.PLAIN_RESULT_VERSIONS:
        assert list(sdk.call_result_wire(result, version).items()) == list(latest.items()), version


@pytest.mark.parametrize(
    "line",
    [
        b"{not json\n",
        b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"q":"\\ud800"}}\n',
        b"[" * 1000 + b"]" * 1000 + b"\n",
        b'{"jsonrpc":"2.0","id":1,"method":"ping","params":[]}\n',
        b"[1]\n",
    ],
)
async def test_the_sdks_stdio_transport_drops_the_lines_stdio_line_refused_answers(line: bytes) -> None:
    """Assumption 10: the SDK's stdio reader turns each such line into an exception item (which
    its dispatcher logs and drops, answering nothing), and passes every other line on."""

    async def lines() -> AsyncIterator[str]:
        yield line.decode()
        yield '{"jsonrpc":"2.0","id":2,"method":"ping"}\n'

    assert sdk.stdio_line_refused(line) is not None
    from mcp.server.stdio import stdio_server

    stdout: Any = anyio.wrap_file(io.StringIO())
    async with stdio_server(stdin=cast(Any, lines()), stdout=stdout) as (read, write):
        first = await read.receive()
        second = await read.receive()
        await write.aclose()
    assert isinstance(first, Exception)
    assert not isinstance(second, Exception) and second.message.id == 2  # type: ignore[union-attr]
    assert sdk.stdio_line_refused('{"jsonrpc":"2.0","id":2,"method":"ping"}\n') is None


async def _tools(ctx: Any, params: Any) -> mcp_types.ListToolsResult:
    return mcp_types.ListToolsResult(tools=[])


async def test_one_sdk_endpoint_serves_both_eras_and_its_discover_can_be_replaced() -> None:
    """Assumption 11: the SDK serves the 2026 wire and the handshake on one server, names only
    the stateless revisions in its own discover, and lets ``server/discover`` be replaced."""
    server: Server[Any] = Server("probe", on_list_tools=_tools)
    async with mcp.Client(server, mode="auto") as modern:
        assert modern.protocol_version in sdk.SDK_MODERN_VERSIONS
        found = modern.session.discover_result
        assert found is not None and set(found.supported_versions) == sdk.SDK_MODERN_VERSIONS
    async with mcp.Client(server, mode="legacy") as legacy:
        assert legacy.protocol_version in sdk.SDK_HANDSHAKE_VERSIONS

    async def discover(ctx: Any, params: Any) -> mcp_types.DiscoverResult:
        return mcp_types.DiscoverResult(
            supported_versions=list(sdk.SERVED_VERSIONS), capabilities=mcp_types.ServerCapabilities()
        )

    server.add_request_handler("server/discover", mcp_types.RequestParams, discover)
    async with mcp.Client(server, mode="auto") as modern:
        found = modern.session.discover_result
        assert found is not None and found.supported_versions == list(sdk.SERVED_VERSIONS)
    assert sdk.SERVED_VERSIONS[0] in sdk.SDK_MODERN_VERSIONS
    assert set(sdk.SERVED_VERSIONS) == sdk.SDK_MODERN_VERSIONS | sdk.SDK_HANDSHAKE_VERSIONS


async def test_cache_hints_fill_2026_results_and_never_reach_the_handshake_wire() -> None:
    """Assumption 12: ``Server(cache_hints=...)`` fills ``ttlMs``/``cacheScope`` the handler left
    unset; a handshake-era answer carries neither (the per-version sieve)."""
    hints = sdk.cache_hints({"tools/list": (5000, "public")})
    server: Server[Any] = Server("probe", on_list_tools=_tools, cache_hints=hints)
    async with mcp.Client(server, mode="2026-07-28", cache=None) as modern:
        listed = await modern.list_tools()
        assert (listed.ttl_ms, listed.cache_scope) == (5000, "public")
    app = server.streamable_http_app(stateless_http=True)
    async with app.router.lifespan_context(app):
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000") as client:
            got = await _post(
                client, json.dumps(_request("tools/list")).encode(), **{"mcp-protocol-version": "2025-11-25"}
            )
    text = got.text
    payload = json.loads(text[text.index("{") :].splitlines()[0]) if "data:" in text else got.json()
    assert payload["result"] == {"tools": []}


async def test_the_sdks_listen_handler_delivers_published_changes_and_closes_gracefully() -> None:
    """Assumption 13: a change published on the bus reaches a listen stream as the SDK's event;
    ``close`` ends the stream with its result (the client's loop ends, nothing is lost); a
    list-changed notification on a 2026 connection's ``outbound`` is dropped, not sent or raised."""
    bus, handler = sdk.listen_handler()
    dropped: list[Any] = []

    async def call(ctx: Any, params: mcp_types.CallToolRequestParams) -> mcp_types.CallToolResult:
        await sdk.connection_of(ctx).outbound.notify("notifications/tools/list_changed", None)
        return mcp_types.CallToolResult(content=[])

    async def seen(message: Any) -> None:
        dropped.append(message)

    server: Server[Any] = Server(
        "probe", on_list_tools=_tools, on_call_tool=call, on_subscriptions_listen=handler
    )
    events: list[Any] = []
    async with mcp.Client(server, mode="2026-07-28", message_handler=seen) as modern:  # noqa: SIM117
        async with modern.listen(tools_list_changed=True) as changes:
            await modern.call_tool("x")
            await bus.publish(sdk.list_changed_event("tools"))
            with anyio.fail_after(30):
                async for event in changes:
                    events.append(event)
                    handler.close()
    assert [type(e).__name__ for e in events] == ["ToolsListChanged"]
    # The listen stream's own frames carry its subscription id; the outbound one would not.
    assert not [m for m in dropped if "list_changed" in repr(m) and "subscriptionId" not in repr(m)]
    assert [m for m in dropped if "list_changed" in repr(m)], "the message handler sees the listen frames"
    await Connection.from_envelope("2026-07-28", None, None).outbound.notify(
        "notifications/tools/list_changed", None
    )


async def test_the_session_manager_binds_a_session_to_the_user_in_the_scope() -> None:
    """Assumption 14: a stateful session opened with one ``scope["user"]`` (the SDK's
    ``AuthenticatedUser``, as mcpkit's OAuth check puts it there) is not found by a request
    carrying another principal's token, and is by the same principal."""
    from mcp.server.auth.provider import AccessToken

    server: Server[Any] = Server("probe", on_call_tool=_call_tool)
    inner = server.streamable_http_app(stateless_http=False, host="127.0.0.1")

    async def with_user(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            who = dict(scope["headers"]).get(b"x-who", b"").decode()
            access = AccessToken(token=who, client_id=who, scopes=[], claims={"iss": "https://as.example"})
            scope = {**scope, "user": sdk.authenticated_user(access)}
        await inner(scope, receive, send)

    opening = _request(
        "initialize", protocolVersion="2025-11-25", capabilities={}, clientInfo={"name": "t", "version": "1"}
    )
    async with inner.router.lifespan_context(inner):
        transport = httpx2.ASGITransport(app=with_user)
        async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000") as client:
            opened = await _post(client, json.dumps(opening).encode(), **{"x-who": "ada"})
            session = opened.headers["mcp-session-id"]
            listing = json.dumps(_request("tools/list")).encode()
            other = await _post(client, listing, **{"x-who": "bob", "mcp-session-id": session})
            same = await _post(client, listing, **{"x-who": "ada", "mcp-session-id": session})
    assert other.status_code == 404
    assert same.status_code == 200


async def test_the_request_state_boundary_seals_state_and_hands_the_handler_its_plaintext() -> None:
    """Assumption 15: what a handler puts in ``requestState`` leaves sealed and comes back as it was."""
    seen: list[object] = []

    async def call(ctx: Any, params: mcp_types.CallToolRequestParams) -> Any:
        seen.append((ctx.params or {}).get("requestState"))
        if params.request_state is None:
            return mcp_types.InputRequiredResult(request_state="plain")
        return mcp_types.CallToolResult(content=[mcp_types.TextContent(text="done")])

    async def listing(ctx: Any, params: Any) -> mcp_types.ListToolsResult:
        return mcp_types.ListToolsResult(tools=[mcp_types.Tool(name="t", input_schema={"type": "object"})])

    server = Server("boundary", on_call_tool=call, on_list_tools=listing)
    server.middleware.append(sdk.request_state_boundary("boundary"))
    async with mcp.Client(server, mode="2026-07-28") as client:
        first = await client.session.call_tool("t", {}, allow_input_required=True)
        assert isinstance(first, mcp_types.InputRequiredResult)
        assert first.request_state not in (None, "plain")
        await client.session.call_tool("t", {}, request_state=first.request_state, allow_input_required=True)
        with pytest.raises(MCPError) as refused:
            await client.session.call_tool("t", {}, request_state="plain", allow_input_required=True)
    assert seen == [None, "plain"] and refused.value.code == mcp_types.INVALID_PARAMS


async def test_a_declaring_session_stamps_raw_requests_with_its_own_capabilities() -> None:
    """Assumption 16: after adopting a discover result, ``_stamp`` puts the 2026 envelope on a raw
    request, declaring what ``_build_capabilities`` says."""
    declared = mcp_types.ClientCapabilities(roots=mcp_types.RootsCapability())
    async with create_client_server_memory_streams() as (client_streams, _):
        session = sdk.declaring_session()(*client_streams, declared=lambda version: declared)
        session.adopt(
            mcp_types.DiscoverResult(
                supported_versions=["2026-07-28"], capabilities=mcp_types.ServerCapabilities()
            )
        )
        opts: dict[str, Any] = {}
        params = {"name": "t", "_meta": {"x": 1}}
        stamped = sdk.stamp_request(session, "tools/call", params, opts)
    meta = stamped["_meta"]
    assert meta[mcp_types.PROTOCOL_VERSION_META_KEY] == "2026-07-28" and meta["x"] == 1
    assert meta["io.modelcontextprotocol/clientCapabilities"] == {"roots": {}}
    assert params == {"name": "t", "_meta": {"x": 1}}  # the caller's params are left alone
    assert opts["headers"]["mcp-protocol-version"] == "2026-07-28"
