"""Upstream parity of the query syntax and the post shape, through every face.

One small archive with enrichments (reasoning, summary, tags on two posts) and all three
vector spaces, searched in-process, over WebSocket with upstream's own client habits, through
the MCP server over stdio and through the CLI in a child process.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mcpkit.archive.api import ArchiveAPI
from mcpkit.archive.rpc import RpcServer, RpcServerOptions
from mcpkit.jsonrpc import JsonRpcError
from tests.archive_faces.conftest import cli
from tests.archive_faces.test_mcp import call_text, mcp_session
from tests.archive_faces.upstream_client import upstream_send_request

pytestmark = pytest.mark.anyio

POSTS = [
    (1, "alice", "AI news from Google today", "2024-01-05 10:00:00"),
    (2, "alice", "AI is everywhere", "2024-01-04 10:00:00"),
    (3, "bob", "Google search tips", "2024-01-03 10:00:00"),
    (4, "bob", "Deploying on Cloudflare Workers was easy", "2024-01-02 10:00:00"),
    (5, "carol", "workers of cloudflare unite", "2024-01-01 10:00:00"),
]
ENRICHED = {
    1: ("人工知能と検索の話題", "AIニュース", ["AI", "Google"]),
    4: ("サーバーレスの体験の話", "Workers体験", ["Cloudflare"]),
    5: ("労働と連帯の話", "団結", ["労働"]),
}


@pytest.fixture(scope="module")
def parity_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from mcpkit.archive.embedders import create_embedder
    from mcpkit.archive.embedding import embed_missing
    from mcpkit.archive.importers import import_csv
    from mcpkit.archive.store import Store
    from tests.archive.helpers import row, write_csv

    tmp = tmp_path_factory.mktemp("parity")
    db = tmp / "parity.db"
    store = Store(db)
    try:
        import_csv(write_csv(tmp / "p.csv", [row(*post) for post in POSTS]), store)
        with store.transaction() as conn:
            store.upsert_enrichments(
                conn, [(pid, r, s, json.dumps(t, ensure_ascii=False)) for pid, (r, s, t) in ENRICHED.items()]
            )
        embedder = create_embedder(None)
        for space in ("content", "reasoning", "summary"):
            embed_missing(store, space, embedder)
    finally:
        store.close()
    return db


@pytest.fixture
async def api(parity_db: Path) -> Any:
    opened = ArchiveAPI.open(parity_db)
    yield opened
    await opened.aclose()


def _ids(posts: list[dict[str, Any]]) -> list[int]:
    return [p["post_id"] for p in posts]


TEXT_CASES = [
    ("AI Google", "content", [1]),
    ("ai -google", "content", [2]),
    ('"Cloudflare Workers"', "content", [4]),
    ("cloudflare workers", "content", [4, 5]),
    ("-AI -Google", "content", [4, 5]),
    (r"\-", "content", []),
    ("AIニュース", "summary", [1]),
    ("話", "reasoning", [1, 4, 5]),
    ("話 -体験", "reasoning", [1, 5]),
    ("-体験", "summary", [1, 2, 3, 5]),  # posts without a summary match as an empty text
]


@pytest.mark.parametrize(("terms", "source", "want"), TEXT_CASES)
async def test_text_search_syntax_in_process(
    api: ArchiveAPI, terms: str, source: str, want: list[int]
) -> None:
    posts = await api.call("search_posts_by_text", {"search_term": terms, "source": source})
    assert _ids(posts) == want


async def test_text_results_carry_enrichments(api: ArchiveAPI) -> None:
    posts = await api.call("search_posts_by_text", {"search_term": "Google"})
    first = {p["post_id"]: p for p in posts}[1]
    assert first["summary"] == "AIニュース" and first["tags"] == ["AI", "Google"]
    assert "summary" not in {p["post_id"]: p for p in posts}[3]
    similar = await api.call("search_similar", {"query": "| Google"})
    assert similar[0]["post"]["reasoning"] == "人工知能と検索の話題"


@pytest.mark.parametrize(
    ("mode", "text", "want"),
    [
        ("content", "Workers", {4, 5}),
        ("summary", "Workers", {4}),  # the summary "Workers体験", not the content
        ("reasoning", "話 -体験", {1, 5}),
        ("average", "cloudflare", {4, 5}),  # hybrid modes filter on the content
    ],
)
async def test_v_bar_t_filters_on_the_modes_text(
    api: ArchiveAPI, mode: str, text: str, want: set[int]
) -> None:
    results = await api.call("search_similar", {"query": f"technology|{text}", "mode": mode, "top_k": 10})
    assert {r["post"]["post_id"] for r in results} == want
    only = await api.call("search_similar", {"query": f"| {text}", "mode": mode})
    assert {r["post"]["post_id"] for r in only} == want
    assert all(r["score"] == 1.0 for r in only)


async def test_vector_search_honours_the_text_part(api: ArchiveAPI) -> None:
    chunks = [c async for c in api.stream("vector_search", {"query": "news|Google"})]
    assert {pid for pid, _ in chunks[0]["data"]} == {1, 3}
    chunks = [c async for c in api.stream("vector_search", {"query": "news|Workers", "mode": "summary"})]
    assert [pid for pid, _ in chunks[0]["data"]] == [4]
    top = [c async for c in api.stream("vector_search", {"query": "news|-Google", "top_k": 2})]
    assert len(top[0]["data"]) == 2 and {pid for pid, _ in top[0]["data"]} <= {2, 4, 5}
    with pytest.raises(JsonRpcError) as info:
        await api.call("vector_search", {"query": "| Google"})
    assert info.value.code == -32602 and "Vector query is empty" in info.value.message


async def test_check_init_as_upstream(api: ArchiveAPI) -> None:
    assert await api.call("check_init", {}) == {"status": "init_completed"}


async def test_websocket_face_with_upstream_client(parity_db: Path) -> None:
    api = ArchiveAPI.open(parity_db)
    try:
        async with RpcServer(api, RpcServerOptions(port=0)) as server:
            posts = await upstream_send_request(
                server.url, "search_posts_by_text", {"search_term": "AI -Google"}
            )
            assert _ids(posts) == [2]
            posts = await upstream_send_request(
                server.url, "search_posts_by_text", {"search_term": "Workers体験", "source": "summary"}
            )
            assert _ids(posts) == [4] and posts[0]["tags"] == ["Cloudflare"]
            assert await upstream_send_request(server.url, "check_init") == {"status": "init_completed"}
            chunks = await upstream_send_request(server.url, "vector_search", {"query": "x|Google"})
            assert {pid for pid, _ in chunks[0]["data"]} == {1, 3}
    finally:
        await api.aclose()


@pytest.mark.slow
async def test_mcp_face(parity_db: Path) -> None:
    async with mcp_session("--db", str(parity_db)) as session:
        text, is_error = await call_text(
            session, "search_posts_by_text", {"search_term": '"Cloudflare Workers"'}
        )
        assert not is_error and "results: 1 " in text and "Deploying" in text and "unite" not in text
        text, _ = await call_text(
            session, "search_similar", {"query": "anything|Workers", "mode": "summary", "top_k": 5}
        )
        assert "results: 1 " in text and "Deploying" in text


@pytest.mark.slow
def test_cli_face(parity_db: Path) -> None:
    done = cli("text", "AI Google", "--db", str(parity_db), "--json")
    assert done.returncode == 0, done.stderr
    assert _ids(json.loads(done.stdout)) == [1]
    # a query starting with a minus follows ``--``, as for any command-line argument
    done = cli("text", "--source", "summary", "--limit", "2", "--db", str(parity_db), "--json", "--", "-体験")
    assert done.returncode == 0, done.stderr
    assert _ids(json.loads(done.stdout)) == [1, 2]


@pytest.mark.slow
def test_shell_face(parity_db: Path, tmp_path: Path) -> None:
    lines = ["/view list", "| AI -Google", "/mode summary", "anything | Workers", "/q"]
    done = cli(
        "shell",
        "--db",
        str(parity_db),
        input="\n".join(lines) + "\n",
        env={"MCPKIT_ARCHIVE_STATE": str(tmp_path)},
    )
    assert done.returncode == 0, done.stderr
    first, second = done.stdout.split("mode: summary")
    assert "AI is everywhere" in first and "Google" not in first.split("| AI -Google")[-1]
    assert "Deploying on Cloudflare" in second and "unite" not in second
