"""The web app is a face over the archive API: each page's JSON mirror against the API method
the page is built from, that method asked over the real WebSocket JSON-RPC face.

The sample archive of tests/archive/web/test_app.py (SQLite written as an import writes it, an export
folder with a real PNG) is served by the real app under uvicorn; the same archive is opened by
a second API behind a real :class:`RpcServer` on a loopback port, asked by :class:`RpcClient`.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpkit.archive.api import ArchiveAPI
from mcpkit.archive.rpc import RpcServer, RpcServerOptions
from mcpkit.archive.rpc.client import RpcClient
from mcpkit.jsonrpc import INVALID_PARAMS, JsonRpcError
from tests.archive.web.test_app import TODAY, Served, build_archive, serve

WEB = Path(__file__).resolve().parents[3] / "src" / "mcpkit" / "archive" / "web"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    db, export = build_archive(tmp_path_factory.mktemp("webapi"))
    with serve(db) as (_, port):
        yield Served(f"http://127.0.0.1:{port}", db, export)


def ask(db: Path, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    """The answers of ``calls`` from the API of ``db`` over the JSON-RPC face (real sockets;
    a refusal is its ``(code, message)``)."""

    async def run() -> list[Any]:
        api = ArchiveAPI.open(db)
        try:
            async with RpcServer(api, RpcServerOptions(port=0)) as server:
                client = RpcClient(server.url, connect_timeout=30)
                answers: list[Any] = []
                for method, params in calls:
                    try:
                        answers.append(await client.call(method, params))
                    except JsonRpcError as exc:
                        answers.append((exc.code, exc.message))
                return answers
        finally:
            api.close()

    return anyio.run(run)


def ids(posts: list[dict[str, Any]]) -> list[str]:
    return [str(p["id"]) for p in posts]


def test_each_page_is_the_api_methods_answer(served: Served) -> None:
    pages = {
        "search": served.json("/api/search?q=coffee&lang=en"),
        "all": served.json("/api/search?offset=5"),
        "short": served.json("/api/search?q=%E7%8C%AB&kind=all"),
        "timeline": served.json("/api/timeline?platform=x"),
        "day": served.json("/api/on-this-day?day=05-04&kind=all"),
        "month": served.json("/api/month/2023-07"),
        "media": served.json("/api/media"),
        "post": served.json("/api/post/2002"),
    }
    authored = ["post", "quote", "reply"]
    (search, every, short, timeline, day, month, media, post) = ask(
        served.db,
        [
            ("browse_search", {"q": "coffee", "lang": ["en"], "kind": authored}),
            ("browse_search", {"offset": 5}),
            ("browse_search", {"q": "猫", "kind": "all"}),
            ("get_timeline", {"platform": ["x"]}),
            ("get_on_this_day", {"day": "05-04", "kind": "all"}),
            ("get_month", {"month": "2023-07"}),
            ("get_media_grid", {}),
            ("get_post", {"id": "2002"}),
        ],
    )
    for page, answer in ((pages["search"], search), (pages["all"], every), (pages["short"], short)):
        assert ids(page["results"]) == ids(answer["results"]) and page["results"]
        assert (page["total"], page["next_offset"], page["approximate"]) == (
            answer["total"],
            answer["next_offset"],
            answer["approximate"],
        )
        assert page["facets"] == answer["facets"]
    assert {k: v for k, v in pages["timeline"].items() if k != "state"} == timeline
    assert ids(pages["day"]["results"]) == ids(day["results"]) and day["total"] == pages["day"]["total"] > 0
    assert [p["timestamp"][5:10] for p in day["results"]] == ["05-04"] * day["total"]
    assert ids(pages["month"]["results"]) == ids(month["results"])
    assert (pages["month"]["previous_month"], pages["month"]["next_month"]) == (
        month["previous_month"],
        month["next_month"],
    )
    assert ids(pages["media"]["results"]) == ids(media["results"]) == ["2001"]
    assert [m["position"] for m in pages["media"]["results"][0]["media"]] == [
        m["position"] for m in media["results"][0]["media"]
    ]
    assert ids(pages["post"]["thread"]) == ids(post["thread"]) == ["2001", "2002", "2003"]
    for place in ("post", "newer", "older", "in_reply_to", "quoted", "reposted"):
        assert (pages["post"][place] or {}).get("id") == (post[place] or {}).get("id"), place
    # the page's text is the API's: the same posts, only a link and the media's URLs added
    shown = {k: v for k, v in pages["post"]["post"].items() if k not in ("permalink", "media")}
    assert shown == {k: v for k, v in post["post"].items() if k != "media"}


def test_the_picture_served_is_the_one_the_api_points_to(served: Served) -> None:
    status, _, body = served.get("/media/2001/0")
    (where, missing, bad) = ask(
        served.db,
        [
            ("get_media_file", {"id": "2001", "position": 0}),
            ("get_media_file", {"id": "2001", "position": 7}),
            ("get_media_file", {"id": "2001", "position": -1}),
        ],
    )
    assert status == 200 and body == (Path(where["export"]) / where["path"]).read_bytes()
    assert missing is None and served.get("/media/2001/7")[0] == 404
    assert bad == (INVALID_PARAMS, "position must be between 0 and 1000, got -1")


def test_page_methods_refuse_bad_params_in_one_line(served: Served) -> None:
    answers = ask(
        served.db,
        [
            ("get_month", {"month": "2023-13"}),
            ("get_on_this_day", {"day": "02-30"}),
            ("browse_search", {"kind": ["shout"]}),
            ("browse_search", {"limit": 0}),
            ("get_facets", {"ids": ["1", "x"]}),
            ("get_timeline", {"has_media": "sometimes"}),
        ],
    )
    assert [code for code, _ in answers] == [INVALID_PARAMS] * len(answers)
    for _, message in answers:
        assert "\n" not in message and message
    assert answers[0][1] == "month must be YYYY-MM, got '2023-13'"
    assert answers[1][1] == "day must be MM-DD, got '02-30'"
    assert answers[3][1] == "limit must be between 1 and 1000, got 0"
    # the page refuses the same values with the same line
    status, _, body = served.get("/api/on-this-day?day=02-30")
    assert (status, json.loads(body)) == (400, {"error": "day must be MM-DD, got '02-30'"})


def test_the_day_page_opens_on_today(served: Served) -> None:
    assert served.json("/api/on-this-day")["day"] == TODAY[5:]


def test_the_web_face_imports_no_store_engine_or_sql() -> None:
    """``archive/web`` reaches the archive through the API only (the import-linter contract
    says the same for what imports run; this also reads imports inside functions)."""
    forbidden = ("mcpkit.archive.store", "mcpkit.archive.engine", "mcpkit.archive.pages", "sqlite3")
    found = []
    for path in sorted(WEB.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            found += [f"{path.name}: {n}" for n in names if n.startswith(forbidden)]
    assert found == []
