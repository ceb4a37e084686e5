"""``Session.list_tools()`` is fresh: a change notice the session delivered, or a result's
``ttlMs``, ends the cached list.

A toolkit server built with ``tools_change=True`` withdraws a tool with ``set_tools`` and tells
its clients (``notifications/tools/list_changed`` on the handshake, an event on a 2026
``subscriptions/listen`` stream); on the 2026 wire its ``tools/list`` says ``ttlMs: 0``
(immediately stale). Served in this process over the client's in-memory transport.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from mcpkit.client import SessionOptions, connect
from mcpkit.server import build_server
from mcpkit.tools import ToolSpec
from mcpkit.tools import params as p

pytestmark = pytest.mark.anyio


async def _echo(args: dict[str, Any]) -> str:
    return str(args.get("text"))


TEXT = p.object_schema({"text": p.string()}, required=["text"])
KEPT = ToolSpec("kept", "Return the text.", TEXT, _echo)
WITHDRAWN = ToolSpec("withdrawn", "Return the text too.", TEXT, _echo)


class Heard:
    """Notifications the session delivered, with a way to wait for one."""

    def __init__(self) -> None:
        self.methods: list[str] = []
        self._event = anyio.Event()

    async def __call__(self, method: str, params: dict[str, Any]) -> None:
        self.methods.append(method)
        self._event.set()
        self._event = anyio.Event()

    async def wait_for(self, method: str) -> None:
        with anyio.fail_after(30):
            while method not in self.methods:
                await self._event.wait()


async def _names(session: Any) -> set[str]:
    return {t["name"] for t in await session.list_tools()}


@pytest.mark.parametrize("protocol", ["2025-11-25", "2026-07-28"])
async def test_a_change_notice_ends_the_cached_list(protocol: str) -> None:
    server = build_server("changing", "1", [KEPT, WITHDRAWN], tools_change=True)
    heard = Heard()
    options = SessionOptions(timeout=30, on_notification=heard, protocol=protocol, listen=True)  # type: ignore[arg-type]
    async with connect(server, options) as session:
        assert await _names(session) == {"kept", "withdrawn"}
        if protocol == "2026-07-28":
            with anyio.fail_after(30):  # the listen stream is open: the change will be heard
                while not session.listening:
                    await anyio.sleep(0.01)
        await server.set_tools([KEPT])
        await heard.wait_for("notifications/tools/list_changed")
        assert await _names(session) == {"kept"}


async def test_ttl_ms_0_is_never_served_from_the_cache() -> None:
    """No listen stream, so no notice: only ``ttlMs: 0`` says the list is stale at once."""
    server = build_server("changing", "1", [KEPT, WITHDRAWN], tools_change=True)
    async with connect(server, SessionOptions(timeout=30, protocol="2026-07-28")) as session:
        first = await session.request("tools/list")
        assert first.get("ttlMs") == 0
        assert await _names(session) == {"kept", "withdrawn"}
        await server.set_tools([KEPT])
        assert await _names(session) == {"kept"}
