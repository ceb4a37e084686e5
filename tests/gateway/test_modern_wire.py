"""The gateway on the 2026-07-28 wire, through real HTTP and real downstream processes: what
``server/discover`` says, the caching hints of its lists, and a crash loop's withdrawn tools
reaching a 2026 client on its ``subscriptions/listen`` stream (which has no other way to hear it).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import anyio
import mcp
import pytest
from mcp.server.subscriptions import ToolsListChanged

from tests.client.procs import free_port
from tests.gateway.support import flaky, gateway_argv, wait_port, write_config

pytestmark = [pytest.mark.slow, pytest.mark.anyio]


@pytest.fixture
def die(tmp_path: Path) -> Path:
    return tmp_path / "die"


@pytest.fixture
def gateway_url(tmp_path: Path, die: Path) -> Iterator[str]:
    config = write_config(
        tmp_path / "gw.json",
        {"flaky": flaky("--die-file", str(die)), "steady": flaky()},
        {"restart": {"max_restarts": 2, "backoff": 0.05, "window": 60}},
    )
    port = free_port()
    proc = subprocess.Popen(
        gateway_argv(config, "--transport", "http", "--port", str(port)),
        env={**os.environ, "MCPKIT_LOG": "warning"},
        stdin=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wait_port(port)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise AssertionError("the gateway did not stop on SIGTERM") from None


async def _names(client: mcp.Client) -> set[str]:
    listed = await client.list_tools(cache_mode="bypass")
    return {t.name for t in listed.tools}


async def test_discover_lists_both_eras_and_the_tools_change(gateway_url: str) -> None:
    async with mcp.Client(gateway_url, mode="auto") as client:
        assert client.protocol_version == "2026-07-28"
        found = client.session.discover_result
        assert found is not None
        assert {"2026-07-28", "2025-11-25"} <= set(found.supported_versions)
        tools = client.server_capabilities.tools
        assert tools is not None and tools.list_changed is True
        listed = await client.list_tools(cache_mode="bypass")
        # Which tools a client sees depends on its profile and on which servers are up.
        assert (listed.ttl_ms, listed.cache_scope) == (0, "private")
    async with mcp.Client(gateway_url, mode="legacy") as legacy:
        assert legacy.protocol_version == "2025-11-25"


async def test_a_crash_loop_reaches_a_2026_client_on_its_listen_stream(gateway_url: str, die: Path) -> None:
    async with mcp.Client(gateway_url, mode="2026-07-28") as client:
        assert {"flaky_echo", "steady_echo"} <= await _names(client)
        async with client.listen(tools_list_changed=True) as changes:
            assert changes.honored.tools_list_changed is True
            die.write_text("x")
            crashed = await client.call_tool("flaky_crash")
            assert crashed.is_error
            with anyio.fail_after(60):
                async for event in changes:
                    assert isinstance(event, ToolsListChanged)
                    if "flaky_echo" not in await _names(client):
                        break
        after = await _names(client)
        assert "steady_echo" in after and not any(n.startswith("flaky_") for n in after)
