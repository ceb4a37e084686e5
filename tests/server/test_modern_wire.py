"""Toolkit servers on the 2026-07-28 wire: ``server/discover`` names both eras, caching hints say
what the server knows of its lists, and a server whose tools change tells 2026 clients on their
``subscriptions/listen`` streams and 2025 clients by notification. Clients are the SDK's own."""

from __future__ import annotations

import socket
from typing import Any

import anyio
import mcp
import mcp_types
import pytest

from mcpkit.server import (
    HttpRefusal,
    PromptSpec,
    ResourceSpec,
    ServerOptions,
    ToolDefinitionError,
    build_server,
)
from mcpkit.tools import ToolSpec
from mcpkit.tools import params as p

pytestmark = pytest.mark.anyio


async def _ok(args: dict[str, Any]) -> str:
    return "ok"


def tool(name: str) -> ToolSpec:
    return ToolSpec(
        name=name, description="Say ok.", input_schema=p.object_schema(), handler=_ok, read_only=True
    )


async def _text() -> str:
    return "text"


async def _prompt(args: dict[str, Any]) -> str:
    return "hello"


async def _let_in(headers: Any, claims: Any) -> HttpRefusal | None:
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


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


async def test_a_fixed_server_over_http_names_both_eras_and_lets_clients_keep_its_lists() -> None:
    port = _free_port()
    server = build_server(
        "fixed",
        "1",
        [tool("one")],
        resources=[ResourceSpec(uri="note://a", name="a", description="A note.", read=_text)],
        prompts=[PromptSpec(name="greet", description="Greet.", render=_prompt)],
        options=ServerOptions().with_http(port=port, stateless=True),
    )
    url = f"http://127.0.0.1:{port}/mcp"
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.run_http)
        await _wait_listening(port)
        async with mcp.Client(url, mode="auto", cache=None) as modern:
            assert modern.protocol_version == "2026-07-28"
            found = modern.session.discover_result
            assert found is not None
            assert {"2026-07-28", "2025-11-25"} <= set(found.supported_versions)
            caps = modern.server_capabilities
            assert caps.tools is not None and caps.tools.list_changed is False
            assert caps.resources is not None and not caps.resources.subscribe
            for listed in (
                await modern.list_tools(),
                await modern.list_prompts(),
                await modern.list_resources(),
                found,
            ):
                assert listed.ttl_ms > 0 and listed.cache_scope == "public", listed
        async with mcp.Client(url, mode="legacy") as legacy:
            assert legacy.protocol_version == "2025-11-25"
            assert [t.name for t in (await legacy.list_tools()).tools] == ["one"]
        tg.cancel_scope.cancel()


async def test_a_server_that_tells_callers_apart_keeps_its_lists_private() -> None:
    server = build_server("keyed", "1", [tool("one")], options=ServerOptions().with_http(authorize=_let_in))
    async with mcp.Client(server.lowlevel, mode="auto", cache=None) as modern:
        listed = await modern.list_tools()
        assert listed.ttl_ms > 0 and listed.cache_scope == "private"
    declared = build_server("mine", "1", [tool("one")], options=ServerOptions(lists_per_caller=True))
    async with mcp.Client(declared.lowlevel, mode="auto", cache=None) as modern:
        assert (await modern.list_tools()).cache_scope == "private"


async def test_a_fixed_server_refuses_to_change_its_tools() -> None:
    server = build_server("fixed", "1", [tool("one")], options=ServerOptions())
    with pytest.raises(ToolDefinitionError, match="tools_change=True"):
        await server.set_tools([tool("two")])


async def test_changed_tools_reach_2026_listeners_and_2025_sessions() -> None:
    server = build_server("live", "1", [tool("one")], options=ServerOptions(), tools_change=True)
    heard = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, mcp_types.ToolListChangedNotification):
            heard.set()

    async with mcp.Client(server.lowlevel, mode="auto", cache=None) as modern:
        caps = modern.server_capabilities
        assert caps.tools is not None and caps.tools.list_changed is True
        listed = await modern.list_tools()
        assert listed.ttl_ms == 0, "a list that changes is not kept by clients that do not listen"
        async with modern.listen(tools_list_changed=True) as changes:
            await server.set_tools([tool("one"), tool("two")])
            with anyio.fail_after(30):
                async for _event in changes:
                    break
        assert [t.name for t in (await modern.list_tools()).tools] == ["one", "two"]

    async with mcp.Client(server.lowlevel, mode="legacy", message_handler=on_message) as legacy:
        caps = legacy.server_capabilities
        assert caps.tools is not None and caps.tools.list_changed is True
        await legacy.list_tools()
        await server.set_tools([tool("three")])
        with anyio.fail_after(30):
            await heard.wait()
        assert [t.name for t in (await legacy.list_tools()).tools] == ["three"]
        called = await legacy.call_tool("one", {})
        assert called.is_error and "Unknown tool" in str(called.content[0])


async def test_duplicate_names_in_a_change_are_refused_and_change_nothing() -> None:
    server = build_server("live", "1", [tool("one")], options=ServerOptions(), tools_change=True)
    with pytest.raises(ToolDefinitionError, match="duplicate"):
        await server.set_tools([tool("two"), tool("two")])
    assert [t.name for t in server.tools] == ["one"]
