"""The MCP face over real stdio with the SDK client: every tool, every upstream error text
(with ``--lang ja``, upstream's Japanese word for word; English is tests/archive_faces/test_stats_and_language.py's)."""

from __future__ import annotations

import asyncio
import re
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from mcpkit.archive.rpc import RpcServer, RpcServerOptions
from tests.archive_faces.conftest import free_port

pytestmark = pytest.mark.anyio

TOOLS = {
    "search_similar",
    "get_status",
    "get_user_stats",
    "get_database_stats",
    "search_posts_by_text",
    "embed_text",
    "get_thread",
}


@asynccontextmanager
async def mcp_session(*args: str) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(command=sys.executable, args=["-m", "mcpkit.archive.cli", "mcp", *args])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


async def call_text(session: ClientSession, name: str, args: dict[str, object]) -> tuple[str, bool]:
    result = await session.call_tool(name, args)
    assert len(result.content) == 1
    return result.content[0].text, bool(result.is_error)  # type: ignore[union-attr]


@asynccontextmanager
async def real_server(db: Path, port: int = 0) -> AsyncIterator[RpcServer]:
    from mcpkit.archive.api import ArchiveAPI

    api = ArchiveAPI.open(db)
    try:
        async with RpcServer(api, RpcServerOptions(port=port)) as server:
            yield server
    finally:
        api.close()


def test_descriptions_pass_the_strict_profile() -> None:
    from mcpkit.archive.mcp import build_archive_mcp
    from mcpkit.archive.rpc import RpcClient
    from mcpkit.compat import lint

    server = build_archive_mcp(RpcClient("ws://127.0.0.1:9"), websocket_url="ws://127.0.0.1:9")
    assert {t.name for t in server.tools} == TOOLS
    assert [f for f in lint(server.tools, ["claude-desktop-2025", "mcp-spec"]) if f.severity == "error"] == []
    for tool in server.tools:
        assert "_" not in tool.description and "(" not in tool.description
        assert len(tool.description.splitlines()) <= 4
    schema = next(t for t in server.tools if t.name == "search_similar").input_schema
    assert schema["properties"]["top_k"] == {
        "type": "integer", "description": "How many posts to return, 10 when omitted.", "minimum": 1, "maximum": 100,
    }  # fmt: skip
    assert schema["properties"]["mode"]["enum"] == [
        "content",
        "reasoning",
        "summary",
        "average",
        "maximum",
        "minimum",
        "hybrid",
    ]
    assert schema["properties"]["user_filter"]["type"] == "object"


async def _check_all_tools(session: ClientSession) -> None:
    tools = await session.list_tools()
    assert {t.name for t in tools.tools} == TOOLS
    text, err = await call_text(session, "search_similar", {"query": "猫が寝ている", "top_k": 2})
    assert not err and text.startswith('🔍 検索結果: 2件 (クエリ: "猫が寝ている")\n\n1. [0.')
    assert "\n   " in text and "\n\n\n" not in text
    text, err = await call_text(
        session, "search_similar", {"query": "猫", "user_filter": {"includes": ["alice_reads"]}, "top_k": 5}
    )
    authors = set(re.findall(r"^\d+\. \[[\d.]+\] @(\S+)", text, re.MULTILINE))
    assert not err and authors == {"alice_reads"}
    text, err = await call_text(session, "search_posts_by_text", {"search_term": "コーヒー", "limit": 2})
    assert not err and text.startswith('📝 テキスト検索結果: 2件 (検索語: "コーヒー")')
    text, err = await call_text(session, "search_posts_by_text", {"search_term": "存在しない言葉xyz"})
    # no post holds the words, and the answer says whether any comes close in meaning: none does
    assert not err and text == (
        '検索結果が見つかりませんでした (検索語: "存在しない言葉xyz")\n⚠️ 良い一致なし: 意味の近い投稿もありません。'
    )
    text, err = await call_text(session, "get_user_stats", {"limit": 2})
    # the MCP face counts what the accounts wrote (posts, replies, quotes), not likes or bookmarks
    assert not err and text.startswith("👥 ユーザー別投稿統計 (上位2人)\n\n1. bob_codes: 89投稿")
    text, err = await call_text(session, "get_database_stats", {})
    assert text == (
        "📊 データベース統計\n\n総投稿数: 330件\n総ユーザー数: 4人\n"
        "データ期間: 2024-01-02 14:48:00 ～ 2024-10-16 03:18:00\n"
        "種類別: post 330, like 36, bookmark 37\nプラットフォーム別: x 330\nアカウント別: (不明) 330\n"
    )
    # a filter no post passes: the answer says there is no date range, not " ～ "
    text, err = await call_text(session, "get_database_stats", {"kind": "all", "account": "@nobody"})
    assert not err and "総投稿数: 0件\n総ユーザー数: 0人\nデータ期間: なし\n" in text
    text, err = await call_text(session, "get_status", {})
    assert not err and text.startswith(
        "🟢 Twilog Server Status\n\n状態: 稼働中\nサーバータイプ: TwilogServer\n"
    )
    assert "📊 データ統計:\n・投稿数: 330件\n・ユーザー数: 4人\n" in text
    text, err = await call_text(session, "embed_text", {"text": "こんにちは"})
    assert not err and text.startswith('ベクトル化成功:\n入力テキスト: "こんにちは"\nBase64データ長: ')
    # upstream's own validation messages
    for name, args, message in [
        ("search_similar", {"query": ""}, "エラー: 検索クエリが指定されていません"),
        ("search_posts_by_text", {"search_term": ""}, "エラー: 検索文字列が指定されていません"),
        ("embed_text", {"text": ""}, "エラー: ベクトル化するテキストが指定されていません"),
    ]:
        assert await call_text(session, name, args) == (message, True)
    # an error from the API: the reasoning space was never embedded
    text, err = await call_text(session, "search_similar", {"query": "猫", "mode": "reasoning"})
    assert err and text.startswith("エラー: 検索に失敗: サーバーエラー: ")
    # the schema (top_k 1..100) is enforced before the tool runs
    text, err = await call_text(session, "search_similar", {"query": "猫", "top_k": 101})
    assert err


async def test_in_process_every_tool(sample_db: Path) -> None:
    async with mcp_session("--db", str(sample_db), "--lang", "ja") as session:
        await _check_all_tools(session)


async def test_websocket_wrapper_every_tool(sample_db: Path) -> None:
    async with real_server(sample_db) as server, mcp_session("--url", server.url, "--lang", "ja") as session:
        await _check_all_tools(session)


async def test_server_down_and_reconnect(sample_db: Path) -> None:
    port = free_port()
    url = f"ws://127.0.0.1:{port}"
    async with mcp_session("--url", url, "--lang", "ja") as session:
        expected = {
            "search_similar": ({"query": "猫"}, "エラー: 検索に失敗: サーバーが起動していません"),
            "get_user_stats": ({}, "エラー: ユーザー統計取得に失敗: サーバーが起動していません"),
            "get_database_stats": ({}, "エラー: データベース統計取得に失敗: サーバーが起動していません"),
            "search_posts_by_text": (
                {"search_term": "猫"},
                "エラー: テキスト検索に失敗: サーバーが起動していません",
            ),
            "embed_text": ({"text": "猫"}, "エラー: ベクトル化に失敗: サーバーが起動していません"),
            "get_status": ({}, "Twilog Serverに接続できません: サーバーが起動していません"),
        }
        for name, (args, message) in expected.items():
            assert await call_text(session, name, args) == (message, True), name
        async with real_server(sample_db, port):
            text, err = await call_text(session, "get_database_stats", {})
            assert not err and "総投稿数: 330件" in text
        # the server went away and comes back: the same MCP process reconnects by itself
        assert (await call_text(session, "get_database_stats", {}))[1] is True
        async with real_server(sample_db, port):
            text, err = await call_text(session, "get_database_stats", {})
            assert not err and "総投稿数: 330件" in text


async def test_get_status_takes_a_websocket_url(sample_db: Path) -> None:
    async with real_server(sample_db) as server, mcp_session("--url", "ws://127.0.0.1:9") as session:
        text, err = await call_text(session, "get_status", {"websocket_url": server.url})
        assert not err and text.startswith("🟢 Archive Server Status")


async def test_connect_timeout_after_five_seconds() -> None:
    """A peer that accepts TCP but never completes the WebSocket handshake."""
    silent = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
    port = silent.sockets[0].getsockname()[1]
    try:
        # the old spelling of --url still works: client configs written with it keep running
        async with mcp_session("--websocket", f"ws://127.0.0.1:{port}", "--lang", "ja") as session:
            text, err = await call_text(session, "get_database_stats", {})
            assert (text, err) == (
                "エラー: データベース統計取得に失敗: サーバーへの接続がタイムアウトしました",
                True,
            )
    finally:
        silent.close()
