"""The archive's MCP lists follow the toolkit's lossless list contract: an answer over the size
cap is shortened at a post boundary, says what it showed and which offset comes next, and
stepping by that offset visits every post exactly once."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from mcpkit.archive.api import ArchiveAPI
from mcpkit.archive.embedding import embed_missing
from mcpkit.archive.importers import import_csv
from mcpkit.archive.mcp import build_archive_mcp
from mcpkit.archive.store import Store
from tests.archive.helpers import HashEmbedder, row, write_csv

pytestmark = pytest.mark.anyio

NEXT = re.compile(r"offset=(\d+)")


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[Any]:
    db = tmp_path / "a.db"
    store = Store(db)
    posts = [
        row(
            i,
            f"user{i % 7}",
            f"needle post {i} " + "長い本文" * 120,
            f"2024-01-01 {i // 60 % 24:02d}:{i % 60:02d}:00",
        )
        for i in range(1, 301)
    ]
    import_csv(write_csv(tmp_path / "e.csv", posts), store)
    embedder = HashEmbedder()
    embed_missing(store, "content", embedder)
    store.close()
    api = ArchiveAPI.open(db, embedder=embedder)
    yield build_archive_mcp(api)
    await api.aclose()


async def _walk(server: Any, tool: str, args: dict[str, Any]) -> tuple[list[int], int]:
    """Every entry number seen, following the next offset until there is none."""
    seen: list[int] = []
    pages = 0
    offset: int | None = 0
    while offset is not None:
        result = await server.call(tool, {**args, "offset": offset})
        assert not result.is_error, result.content[0].text
        text = result.content[0].text
        assert len(text) <= 50_000
        pages += 1
        seen += [int(n) for n in re.findall(r"^(\d+)\. ", text, re.MULTILINE)]
        found = NEXT.findall(text.rsplit("\n", 1)[-1])
        offset = int(found[0]) if found else None
    return seen, pages


async def test_text_search_pages_visit_every_post_once(server: Any) -> None:
    seen, pages = await _walk(server, "search_posts_by_text", {"search_term": "needle", "limit": 1000})
    assert seen == list(range(1, 301)) and pages > 3
    first = (
        (await server.call("search_posts_by_text", {"search_term": "needle", "limit": 1000})).content[0].text
    )
    assert first.startswith('📝 Text search results: 300 (terms: "needle")')
    assert (
        "Shortened to items 1 to" in first
        and "search_posts_by_text with the same arguments and offset=" in first
    )


async def test_search_similar_pages(server: Any) -> None:
    seen, pages = await _walk(server, "search_similar", {"query": "needle", "top_k": 100})
    assert seen == list(range(1, 301)) and pages > 3  # the ranking goes on past top_k, page by page


async def test_short_lists_keep_upstreams_text(server: Any) -> None:
    text = (await server.call("get_user_stats", {"limit": 3})).content[0].text
    assert text.startswith("👥 Posts per user (top 3)\n\n1. user")
    assert "offset=3" in text  # a full page: there may be more
    text = (await server.call("get_user_stats", {"limit": 3, "offset": 6})).content[0].text
    assert text.startswith("👥 Posts per user (top 1)\n\n7. user") and "offset=" not in text
    text = await server.call("search_posts_by_text", {"search_term": "needle", "limit": 2, "offset": 299})
    assert (
        text.content[0].text.startswith("📝 Text search results: 1 ")
        and "offset=" not in text.content[0].text
    )
