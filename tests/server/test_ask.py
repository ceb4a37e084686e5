"""Asking the user: confirming() through the official SDK client and mcpkit's own client.

A client that answers ``elicitation/create`` decides each destructive call (its user's yes or
no wins over the model's confirm flag); a client that declares no elicitation, or cannot be
asked on its connection, keeps the contract of the flag: a preview, then confirm true.
"""

from __future__ import annotations

from typing import Any

import mcp_types
import pytest
from mcp import Client

from mcpkit.client import ClientHandlers, SessionOptions, connect
from mcpkit.server import build_server, confirming
from mcpkit.tools import ToolContext, ToolSpec
from mcpkit.tools import params as p

pytestmark = pytest.mark.anyio


class Store:
    def __init__(self) -> None:
        self.items = {"a", "b"}


def server_for(store: Store) -> Any:
    async def delete(args: dict[str, Any], ctx: ToolContext) -> mcp_types.CallToolResult | str:
        name = args["name"]
        if name not in store.items:
            return mcp_types.CallToolResult(
                content=[mcp_types.TextContent(text=f"no item {name}")], is_error=True
            )
        if args.get("confirm") is not True:
            return f"preview: would delete {name}"
        store.items.discard(name)
        return f"deleted {name}"

    tool = ToolSpec(
        "delete_item",
        "Delete an item. Without confirm true it only previews.",
        p.object_schema({"name": p.string(), "confirm": p.boolean()}, required=["name"]),
        delete,
        destructive=True,
    )
    return build_server("ask", "1", [confirming(tool)])


def answering(action: str, content: dict[str, Any] | None, asked: list[str]) -> Any:
    async def callback(context: Any, params: Any) -> mcp_types.ElicitResult:
        asked.append(params.message)
        return mcp_types.ElicitResult(action=action, content=content)

    return callback


def text(result: Any) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


async def test_the_users_yes_deletes_without_the_flag() -> None:
    store, asked = Store(), []
    callback = answering("accept", {"confirm": True}, asked)
    async with Client(server_for(store).lowlevel, mode="legacy", elicitation_callback=callback) as client:
        result = await client.call_tool("delete_item", {"name": "a"})
    assert text(result) == "deleted a" and store.items == {"b"}
    assert asked == ["Allow delete_item? It cannot be undone.\n\npreview: would delete a"]


@pytest.mark.parametrize(
    ("action", "content"), [("decline", None), ("cancel", None), ("accept", {"confirm": False})]
)
async def test_the_users_no_wins_over_the_models_confirm(action: str, content: dict[str, Any] | None) -> None:
    store, asked = Store(), []
    callback = answering(action, content, asked)
    async with Client(server_for(store).lowlevel, mode="legacy", elicitation_callback=callback) as client:
        result = await client.call_tool("delete_item", {"name": "a", "confirm": True})
    assert not result.is_error and "declined" in text(result)
    assert store.items == {"a", "b"} and len(asked) == 1


async def test_an_error_in_the_preview_is_returned_without_asking() -> None:
    store, asked = Store(), []
    callback = answering("accept", {"confirm": True}, asked)
    async with Client(server_for(store).lowlevel, mode="legacy", elicitation_callback=callback) as client:
        result = await client.call_tool("delete_item", {"name": "zzz"})
    assert result.is_error and text(result) == "no item zzz" and asked == []


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_client_that_cannot_be_asked_keeps_the_confirm_flag(mode: str) -> None:
    """No elicitation declared (legacy), or a 2026-07-28 connection with no way back to ask."""
    store = Store()
    callback = answering("accept", {"confirm": True}, []) if mode != "legacy" else None
    async with Client(server_for(store).lowlevel, mode=mode, elicitation_callback=callback) as client:
        preview = await client.call_tool("delete_item", {"name": "a"})
        assert text(preview) == "preview: would delete a" and store.items == {"a", "b"}
        done = await client.call_tool("delete_item", {"name": "a", "confirm": True})
    assert text(done) == "deleted a" and store.items == {"b"}


async def test_mcpkit_client_asks_through_its_handler_or_falls_back_to_the_flag() -> None:
    store, asked = Store(), []

    async def elicitation(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params["message"])
        return {"action": "accept", "content": {"confirm": True}}

    with_user = SessionOptions(handlers=ClientHandlers(elicitation=elicitation))
    async with connect(server_for(store), with_user) as session:
        assert (await session.call("delete_item", {"name": "a"})).text == "deleted a"
    assert len(asked) == 1 and store.items == {"b"}
    # Without a handler mcpkit's client still declares elicitation but refuses: the flag decides.
    async with connect(server_for(store)) as session:
        assert (await session.call("delete_item", {"name": "b"})).text == "preview: would delete b"
        assert (await session.call("delete_item", {"name": "b", "confirm": True})).text == "deleted b"
    assert store.items == set()


def test_tools_without_the_flag_are_left_as_they_are() -> None:
    async def handler(args: dict[str, Any]) -> str:
        return "ok"

    plain = ToolSpec("plain", "Answer.", p.object_schema({}), handler)
    assert confirming(plain) is plain
