"""ToolContext through the official SDK client: progress, log messages, cancellation, HTTP headers."""

from __future__ import annotations

import socket
import threading
from typing import Any

import anyio
import httpx2 as httpx
import pytest
from mcp import Client

from mcpkit.server import ServerOptions, build_server
from mcpkit.tools import ToolContext, ToolSpec
from mcpkit.tools import params as p

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore:The logging capability is deprecated")]


async def _slow(args: dict[str, Any], ctx: ToolContext) -> str:
    steps = int(args["steps"])
    for step in range(1, steps + 1):
        await ctx.progress(step, steps, f"step {step}")
    await ctx.log("info", "all steps done")
    await ctx.log("debug", "below the level the client set")
    return f"{steps} steps by {ctx.client_name}"


started = threading.Event()
seen_cancel: list[threading.Event] = []


async def _hang(args: dict[str, Any], ctx: ToolContext) -> str:
    seen_cancel.append(ctx.cancelled)
    started.set()
    await anyio.sleep(60)
    return "never"


async def _headers(args: dict[str, Any], ctx: ToolContext) -> str:
    return ctx.request_headers.get("x-redmine-api-key", "none")


async def _plain(args: dict[str, Any]) -> str:
    return "one-argument handlers keep working"


def _server(**options: Any) -> Any:
    tools = [
        ToolSpec("slow", "Count steps.", p.object_schema({"steps": p.integer()}, required=["steps"]), _slow),
        ToolSpec("hang", "Wait for ever.", p.object_schema({}), _hang),
        ToolSpec("headers", "Show one request header.", p.object_schema({}), _headers),
        ToolSpec("plain", "Answer.", p.object_schema({}), _plain),
    ]
    return build_server("ctx", "1", tools, **options)


async def test_progress_reaches_the_client_that_asked_for_it() -> None:
    updates: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        updates.append((progress, total, message))

    async with Client(_server().lowlevel) as client:
        result = await client.call_tool("slow", {"steps": "3"}, progress_callback=on_progress)
        assert not result.is_error
        plain = await client.call_tool("plain", {})
        assert plain.content[0].text == "one-argument handlers keep working"  # type: ignore[union-attr]
    assert updates == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]


async def test_log_messages_need_the_capability_and_respect_the_level() -> None:
    received: list[tuple[str, Any]] = []

    async def on_log(params: Any) -> None:
        received.append((str(params.level), params.data))

    server = _server(client_logging=True)
    assert "logging" in server.capabilities()
    async with Client(server.lowlevel, logging_callback=on_log, log_level="info") as client:
        await client.call_tool("slow", {"steps": 1})
    assert received == [("info", "all steps done")]

    quiet: list[Any] = []

    async def on_quiet(params: Any) -> None:
        quiet.append(params)

    plain = _server()
    assert "logging" not in plain.capabilities(), "no logging capability unless asked for"
    async with Client(plain.lowlevel, logging_callback=on_quiet, log_level="debug") as client:
        await client.call_tool("slow", {"steps": 1})
    assert quiet == []


async def test_cancellation_sets_the_flag_a_worker_thread_can_poll() -> None:
    seen_cancel.clear()
    started.clear()
    async with Client(_server().lowlevel) as client:
        with anyio.move_on_after(0.5):
            await client.call_tool("hang", {})
        with anyio.fail_after(5):
            while not (seen_cancel and seen_cancel[0].is_set()):
                await anyio.sleep(0.01)
    assert started.is_set()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def _post(url: str, headers: dict[str, str]) -> httpx.Response:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    base = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    async with httpx.AsyncClient(timeout=10) as http:
        return await http.post(url, json=body, headers={**base, **headers})


async def _wait_listening(port: int) -> None:
    with anyio.fail_after(20):
        while True:
            try:
                stream = await anyio.connect_tcp("127.0.0.1", port)
            except OSError:
                await anyio.sleep(0.05)
                continue
            await stream.aclose()
            return


async def test_http_headers_reach_the_handler_and_foreign_origins_are_refused() -> None:
    port = _free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    server = _server(options=ServerOptions().with_http(port=port, stateless=True, bearer_token="s3cret"))
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.run_http)
        await _wait_listening(port)

        refused = await _post(url, {"origin": "https://evil.example", "authorization": "Bearer s3cret"})
        assert refused.status_code == 403 and "evil.example" in refused.text
        no_token = await _post(url, {})
        assert no_token.status_code == 401
        local = await _post(url, {"origin": f"http://localhost:{port}", "authorization": "Bearer s3cret"})
        assert local.status_code == 200

        from mcp.client.session import ClientSession
        from mcp.client.streamable_http import streamable_http_client

        http = httpx.AsyncClient(headers={"authorization": "Bearer s3cret", "x-redmine-api-key": "k-123"})
        async with http, streamable_http_client(url, http_client=http) as (read, write, *_):  # noqa: SIM117
            async with ClientSession(read, write) as session:
                await session.initialize()
                result = await session.call_tool("headers", {})
                assert result.content[0].text == "k-123"  # type: ignore[union-attr]
        tg.cancel_scope.cancel()


async def test_a_server_check_of_its_own_refuses_before_the_transport() -> None:
    from mcpkit.server import HttpOptions, HttpRefusal
    from mcpkit.server._http import guard

    reached: list[bool] = []

    async def inner(scope: Any, receive: Any, send: Any) -> None:
        reached.append(True)
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    async def authorize(headers: Any, claims: Any) -> HttpRefusal | None:
        return (
            None
            if headers.get("x-user") == "ada"
            else HttpRefusal(401, "Say who you are.", 'Bearer realm="t"')
        )

    app = guard(inner, HttpOptions(authorize=authorize))
    sent: list[dict[str, Any]] = []

    async def send(message: Any) -> None:
        sent.append(dict(message))

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b""}

    await app({"type": "http", "headers": []}, receive, send)
    assert sent[0]["status"] == 401 and (b"www-authenticate", b'Bearer realm="t"') in sent[0]["headers"]
    assert not reached
    sent.clear()
    await app({"type": "http", "headers": [(b"x-user", b"ada")]}, receive, send)
    assert sent[0]["status"] == 200 and reached
