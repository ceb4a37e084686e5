"""Each assumption in mcpkit.server._sdk_assumptions, checked against the SDK itself.

The gateway's fast paths copy rules of the SDK's streamable HTTP app and its JSON writer;
these tests run the SDK's own app in-process (ASGI, no sockets) and its own models, so an SDK
release that changes one of them fails the test named after it, instead of the fast path
quietly answering what the SDK would refuse, or writing different bytes.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2
import mcp_types
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp.server.connection import Connection
from mcp.server.lowlevel import Server

from mcpkit.server import _sdk_assumptions as sdk

pytestmark = pytest.mark.anyio

SEEN: list[object] = []


async def _call_tool(ctx: Any, params: mcp_types.CallToolRequestParams) -> mcp_types.CallToolResult:
    SEEN.append(sdk.connection_of(ctx))
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
