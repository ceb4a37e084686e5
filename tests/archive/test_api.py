"""ArchiveAPI: method table, upstream's param errors and codes, shapes, streaming chunks."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from pathlib import Path

import numpy as np
import pytest

from mcpkit.archive import api as api_module
from mcpkit.archive import safetensors_io
from mcpkit.archive.api import ArchiveAPI, chunk_pairs
from mcpkit.archive.embedding import embed_missing
from mcpkit.archive.importers import import_csv
from mcpkit.archive.location import default_db_path
from mcpkit.jsonrpc import JsonRpcError

from .helpers import HashEmbedder, row, write_csv

pytestmark = pytest.mark.anyio


@pytest.fixture
async def api(tmp_path: Path) -> AsyncIterator[ArchiveAPI]:
    embedder = HashEmbedder()
    opened = ArchiveAPI.open(tmp_path / "a.db", embedder=embedder)
    rows = [
        row(i, "alice" if i % 2 else "bob", f"post {i} about things", f"2024-01-{i:02d} 00:00:00")
        for i in range(1, 21)
    ]
    import_csv(write_csv(tmp_path / "e.csv", rows), opened.engine.store)
    embed_missing(opened.engine.store, "content", embedder)
    yield opened
    opened.close()


async def _error(api: ArchiveAPI, method: str, params: object) -> JsonRpcError:
    with pytest.raises(JsonRpcError) as info:
        await api.call(method, params)  # type: ignore[arg-type]
    return info.value


def test_method_table() -> None:
    api = ArchiveAPI.__new__(ArchiveAPI)
    ArchiveAPI.__init__(api, engine=None)  # type: ignore[arg-type]
    assert set(api.methods()) == {
        "search_similar",
        "vector_search",
        "search_posts_by_text",
        "get_user_stats",
        "get_database_stats",
        "get_status",
        "embed_text",
        "get_user_list",
        "check_init",
        "get_thread",
        # the pages' methods (the web app's, for every face)
        "browse_search",
        "get_facets",
        "get_timeline",
        "get_on_this_day",
        "get_month",
        "get_media_grid",
        "get_post",
        "get_media_file",
    }
    assert api.is_streaming("vector_search") and not api.is_streaming("search_similar")
    assert not api.is_streaming("nope")


@pytest.mark.parametrize(
    ("method", "params", "code", "message"),
    [
        ("nope", {}, -32601, "Method not found: nope"),
        ("search_similar", {}, -32602, "Invalid params: query is required"),
        ("search_similar", None, -32602, "Invalid params: query is required"),
        ("search_similar", {"query": ""}, -32602, "Invalid params: query is required"),
        (
            "search_similar",
            {"query": "x", "settings": {"top_k": 0}},
            -32602,
            "top_k must be between 1 and 100, got 0",
        ),
        (
            "search_similar",
            {"query": "x", "settings": {"top_k": 101}},
            -32602,
            "top_k must be between 1 and 100, got 101",
        ),
        ("search_similar", {"query": "x", "top_k": 500}, -32602, "top_k must be between 1 and 100, got 500"),
        (
            "search_similar",
            {"query": "x", "mode": "best"},
            -32602,
            "mode must be one of content, reasoning, summary, average, maximum, minimum, hybrid, got 'best'",
        ),
        (
            "search_similar",
            {"query": "x", "mode": "average", "weights": [1, 2]},
            -32602,
            "weights must be a list of 3 numbers, got [1, 2]",
        ),
        (
            "search_similar",
            {"query": "x", "mode": "average", "weights": [0, 0, 0]},
            -32602,
            "weights must be non-negative with a positive sum, got [0, 0, 0]",
        ),
        ("search_posts_by_text", {}, -32602, "Invalid params: search_term is required"),
        (
            "search_posts_by_text",
            {"search_term": "a", "limit": 0},
            -32602,
            "limit must be between 1 and 1000, got 0",
        ),
        (
            "search_posts_by_text",
            {"search_term": "a", "limit": 1001},
            -32602,
            "limit must be between 1 and 1000, got 1001",
        ),
        (
            "search_posts_by_text",
            {"search_term": "a", "source": "tags"},
            -32602,
            "source must be one of content, reasoning, summary, got 'tags'",
        ),
        ("get_user_stats", {"limit": 0}, -32602, "limit must be between 1 and 1000, got 0"),
        ("get_user_stats", {"offset": -1}, -32602, "offset must be between 0 and 100000, got -1"),
        ("embed_text", {}, -32602, "Invalid params: text is required"),
        ("get_user_stats", "nonsense", -32602, "Invalid params: params must be an object or an array"),
        (
            "get_user_stats",
            [1, 2, 3],
            -32602,
            "Invalid params: get_user_stats takes at most 2 positional params",
        ),
        (
            "search_similar",
            {"query": "x", "mode": "average"},
            -32603,
            "no reasoning vectors yet: run `mcpkit archive embed --space reasoning` or import them with `mcpkit archive import-twilog-search`",
        ),
    ],
)
async def test_errors_have_codes_and_upstream_messages(
    api: ArchiveAPI, method, params, code, message
) -> None:
    error = await _error(api, method, params)
    assert (error.code, error.message) == (code, message)


async def test_result_shapes(api: ArchiveAPI) -> None:
    results = await api.call("search_similar", {"query": "post 3 about things", "settings": {"top_k": 3}})
    assert [r["rank"] for r in results] == [1, 2, 3]
    assert results[0]["post"]["post_id"] == 3 and results[0]["score"] == pytest.approx(1.0, abs=1e-5)
    assert set(results[0]["post"]) == {"post_id", "content", "timestamp", "url", "user"}
    flat = await api.call(
        "search_similar", {"query": "post 3 about things", "top_k": 2, "user_filter": {"includes": ["bob"]}}
    )
    assert [r["post"]["user"] for r in flat] == ["bob", "bob"]
    positional = await api.call("search_posts_by_text", ["post 1", 5])
    assert [p["post_id"] for p in positional] == [19, 18, 17, 16, 15]
    assert await api.call("get_user_stats", {"limit": 1}) == [{"user": "alice", "post_count": 10}]
    assert await api.call("get_database_stats", None) == {
        "total_posts": 20,
        "total_users": 2,
        "date_range": {"earliest": "2024-01-01 00:00:00", "latest": "2024-01-20 00:00:00"},
        "enrichment": {"total_posts": 20, "enriched": 0, "failed": 0},
    }
    status = await api.call("get_status", {})
    assert status["data_stats"] == {
        "total_posts": 20,
        "total_users": 2,
        "total_summaries": 0,
        "total_tags": 0,
    }
    assert await api.call("get_user_list", None) == ["alice", "bob"]


async def test_embed_text_is_base64_safetensors(api: ArchiveAPI) -> None:
    result = await api.call("embed_text", {"text": "hello"})
    tensors = safetensors_io.loads(base64.b64decode(result["vector"]))
    assert tensors["vector"].shape == (1, 16) and tensors["vector"].dtype == np.float32
    assert np.allclose(tensors["vector"][0], HashEmbedder().vector("hello"))


async def test_vector_search_streams_upstream_chunks(
    api: ArchiveAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(api_module, "STREAM_CHUNK_SIZE", 8)
    chunks = [c async for c in api.stream("vector_search", {"query": "post 3 about things"})]
    assert [(c["chunk"], c["total_chunks"], c["start_rank"], len(c["data"])) for c in chunks] == [
        (1, 3, 1, 8),
        (2, 3, 9, 8),
        (3, 3, 17, 4),
    ]
    assert chunks[0]["data"][0][0] == 3
    whole = await api.call("vector_search", {"query": "post 3 about things", "top_k": 2})
    assert list(whole) == ["streaming"] and len(whole["streaming"][0]["data"]) == 2


def test_chunk_pairs_always_yields_one_chunk() -> None:
    assert chunk_pairs([]) == [{"data": [], "chunk": 1, "total_chunks": 1, "start_rank": 1}]


def test_default_db_path(tmp_path: Path) -> None:
    """From the environment the CLI passes: the variable, then the XDG data dir, then home."""
    assert default_db_path({"MCPKIT_ARCHIVE_DB": str(tmp_path / "x.db")}) == tmp_path / "x.db"
    assert (
        default_db_path({"XDG_DATA_HOME": str(tmp_path / "xdg")})
        == tmp_path / "xdg" / "mcpkit" / "archive.db"
    )
    assert default_db_path({}) == Path.home() / ".local" / "share" / "mcpkit" / "archive.db"


async def test_weights_are_ignored_outside_the_average_mode(api: ArchiveAPI) -> None:
    plain = await api.call("search_similar", {"query": "post", "weights": [1]})
    assert [r["post"]["post_id"] for r in plain] == [
        r["post"]["post_id"] for r in await api.call("search_similar", {"query": "post"})
    ]
