"""Threads: a post in its conversation, in the engine, over JSON-RPC, on the command line, over MCP.

The archives are written directly through the store with posts of X, Mastodon and Bluesky, so
nothing here depends on an export reader. A thread is the author's chain of self-replies
(walked both ways through ``reply_to``), in time order, plus the post the chain answers when
the archive has it; others' replies are not part of it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpkit.archive.api import ArchiveAPI
from mcpkit.archive.mcp import build_archive_mcp
from mcpkit.archive.posts import Post, log_type_of_kind, post_key
from mcpkit.archive.store import Store
from mcpkit.archive.threads import MAX_THREAD_POSTS, candidate_keys
from mcpkit.jsonrpc import JsonRpcError
from tests.archive.helpers import HashEmbedder
from tests.archive_faces.conftest import cli

X = 1_790_000_000_000_000_000  # above 2**53: ids must travel as strings


def x_post(n: int, user: str, minute: int, kind: str = "post", reply_to: int | None = None) -> Post:
    source_id = str(X + n)
    return Post(
        post_id=X + n,
        user=user,
        timestamp=f"2024-05-01 10:{minute:02d}:00",
        url=f"https://x.com/{user}/status/{source_id}",
        content=f"x post {n} by {user}",
        log_type=log_type_of_kind(kind),
        kind=kind,
        source_id=source_id,
        account="@alice",
        reply_to="" if reply_to is None else str(X + reply_to),
    )


def other_post(platform: str, n: int, user: str, minute: int, reply_to: str = "") -> Post:
    if platform == "mastodon":
        source_id = f"https://social.example/users/{user}/statuses/{n}"
        url = f"https://social.example/@{user}/{n}"
        account = "@alice@social.example"
    else:
        source_id = f"at://did:plc:{user}/app.bsky.feed.post/r{n}"
        url = f"https://bsky.app/profile/did:plc:{user}/post/r{n}"
        account = "alice.bsky.social"
    return Post(
        post_id=post_key(platform, source_id),
        user=user,
        timestamp=f"2024-06-01 10:{minute:02d}:00",
        url=url,
        content=f"{platform} post {n}",
        log_type=1,
        platform=platform,
        kind="reply" if reply_to else "post",
        source_id=source_id,
        account=account,
        reply_to=reply_to,
    )


# X: bob's post P (alice liked it) <- A <- B <- C, and E answers A too (a branch), all alice's;
# carol's reply F to B (alice bookmarked it); G answers a post the archive lacks; K and L
# answer each other (malformed data must not loop).
P, A, B, E, C, F, G, K, L, SOLO = 1, 2, 3, 4, 5, 6, 7, 8, 9, 10
X_POSTS = [
    x_post(P, "bob", 0, "like"),
    x_post(A, "alice", 1, "reply", P),
    x_post(B, "alice", 2, "reply", A),
    x_post(E, "alice", 3, "reply", A),
    x_post(C, "alice", 4, "reply", B),
    x_post(F, "carol", 5, "bookmark", B),
    x_post(G, "alice", 6, "reply", 999),
    x_post(K, "alice", 7, "reply", L),
    x_post(L, "alice", 8, "reply", K),
    x_post(SOLO, "alice", 9),
]
M1 = other_post("mastodon", 1, "alice", 0)
M2 = other_post("mastodon", 2, "alice", 1, M1.source_id)
B1 = other_post("bluesky", 1, "alice", 0)
B2 = other_post("bluesky", 2, "alice", 1, B1.source_id)
LONG = [x_post(100, "alice", 0)] + [
    x_post(100 + i, "alice", 0, "reply", 100 + i - 1) for i in range(1, 120)
]  # 120 posts, one a reply to the one before


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("thread") / "t.db"
    store = Store(db)
    try:
        with store.transaction() as conn:
            store.upsert_posts(conn, [*X_POSTS, M1, M2, B1, B2, *LONG])
    finally:
        store.close()
    return db


@pytest.fixture(scope="module")
def api(archive: Path) -> Iterator[ArchiveAPI]:
    opened = ArchiveAPI.open(archive, embedder=HashEmbedder())
    yield opened
    opened.close()


def thread(api: ArchiveAPI, ref: Any, **params: Any) -> dict[str, Any]:
    result: dict[str, Any] = anyio.run(api.call, "get_thread", {"id": ref, **params})
    return result


def ids(result: dict[str, Any]) -> list[str]:
    return [p["id"] for p in result["posts"]]


def xid(n: int) -> str:
    return str(X + n)


def test_a_self_reply_chain_in_time_order_with_the_post_it_answers(api: ArchiveAPI) -> None:
    for focus in (A, B, E, C):
        result = thread(api, xid(focus))
        assert ids(result) == [xid(A), xid(B), xid(E), xid(C)]  # the branch E by time, carol's F left out
        assert result["id"] == xid(focus)
        assert result["posts"][result["focus_offset"]]["id"] == xid(focus)
        assert result["in_reply_to"]["id"] == xid(P) and result["in_reply_to"]["kind"] == "like"
        assert result["in_reply_to_id"] == xid(P)
        assert (result["total_count"], result["returned"], result["offset"]) == (4, 4, 0)
        assert "next_offset" not in result
        assert all(isinstance(p["id"], str) and p["kind"] == "reply" for p in result["posts"])


def test_others_posts_are_alone_and_point_at_what_they_answer(api: ArchiveAPI) -> None:
    result = thread(api, xid(F))  # carol's reply to B, bookmarked
    assert ids(result) == [xid(F)] and result["in_reply_to"]["id"] == xid(B)
    result = thread(api, xid(P))  # the liked post itself
    assert ids(result) == [xid(P)] and result["in_reply_to"] is None and result["in_reply_to_id"] == ""


def test_a_reply_to_a_post_not_archived_names_it(api: ArchiveAPI) -> None:
    result = thread(api, xid(G))
    assert ids(result) == [xid(G)] and result["in_reply_to"] is None and result["in_reply_to_id"] == xid(999)
    solo = thread(api, xid(SOLO))
    assert ids(solo) == [xid(SOLO)] and solo["in_reply_to_id"] == ""


def test_a_reply_cycle_ends(api: ArchiveAPI) -> None:
    assert sorted(ids(thread(api, xid(K)))) == sorted([xid(K), xid(L)])


@pytest.mark.parametrize(
    "ref",
    [
        xid(B),
        f"  {xid(B)} ",
        f"https://x.com/alice/status/{xid(B)}",
        f"https://twitter.com/alice/status/{xid(B)}?s=20",
        f"https://mobile.twitter.com/alice/status/{xid(B)}",
        X + B,  # a number in JSON (exact here; a JavaScript client would have rounded it)
    ],
)
def test_x_posts_by_id_or_link(api: ArchiveAPI, ref: Any) -> None:
    assert thread(api, ref)["id"] == xid(B)


@pytest.mark.parametrize(
    ("ref", "want"),
    [
        (M2.source_id, [M1.source_id, M2.source_id]),
        (M2.url, [M1.source_id, M2.source_id]),
        (M1.source_id, [M1.source_id, M2.source_id]),
        (B2.source_id, [B1.source_id, B2.source_id]),
        (B2.url, [B1.source_id, B2.source_id]),
        (str(B2.post_id), [B1.source_id, B2.source_id]),
    ],
)
def test_mastodon_and_bluesky_threads_by_uri_or_link(api: ArchiveAPI, ref: str, want: list[str]) -> None:
    assert ids(thread(api, ref)) == want


def test_long_threads_page_by_next_offset(api: ArchiveAPI) -> None:
    seen: list[str] = []
    offset: int | None = 0
    pages = 0
    while offset is not None:
        page = thread(api, xid(150), limit=50, offset=offset)
        assert page["total_count"] == 120 and page["limit"] == 50
        seen += ids(page)
        offset = page.get("next_offset")
        pages += 1
    assert pages == 3 and seen == [xid(100 + i) for i in range(120)]
    assert thread(api, xid(150), limit=50)["focus_offset"] == 50


def test_unknown_posts_and_empty_ids_are_one_line_errors(api: ArchiveAPI) -> None:
    with pytest.raises(JsonRpcError) as info:
        thread(api, "https://x.com/nobody/status/5")
    assert info.value.code == -32603 and str(info.value).endswith(
        "no post https://x.com/nobody/status/5 in the archive"
    )
    for bad, code in (("", -32602), (None, -32602), ("a\x00b", -32602)):
        with pytest.raises(JsonRpcError) as info:
            thread(api, bad)
        assert info.value.code == code and "\n" not in str(info.value)
    with pytest.raises(JsonRpcError) as info:
        thread(api, xid(B), limit=0)
    assert info.value.code == -32602


@given(st.text(max_size=60))
def test_any_reference_text_gives_keys_without_failing(text: str) -> None:
    keys = candidate_keys(text)
    assert all(-(2**63) <= k < 2**63 for k in keys)


def test_thread_walks_are_bounded() -> None:
    assert MAX_THREAD_POSTS >= 1000


# -- the faces ------------------------------------------------------------------------------------


def test_cli_thread_json_and_text(archive: Path) -> None:
    done = cli("thread", f"https://x.com/alice/status/{xid(C)}", "--db", str(archive), "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert [p["id"] for p in result["posts"]] == [xid(A), xid(B), xid(E), xid(C)]
    done = cli("thread", xid(B), "--db", str(archive))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f'🧵 Thread: 4 posts (ID: "{xid(B)}")\nIn reply to: @bob')
    done = cli("thread", xid(B), "--db", str(archive), "--lang", "ja")
    assert done.stdout.startswith(f'🧵 スレッド: 4件 (ID: "{xid(B)}")\n返信先: @bob')
    assert f"2. ▶ @alice (2024-05-01 10:02:00) https://x.com/alice/status/{xid(B)} [reply]" in done.stdout
    done = cli("thread", xid(150), "--limit", "50", "--db", str(archive))
    assert done.stdout.rstrip().endswith("-- 50 of 120: --offset 50 for more")
    done = cli("thread", "nothing-like-this", "--db", str(archive))
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == "error: no post nothing-like-this in the archive"


@pytest.mark.anyio
async def test_mcp_get_thread_pages_and_takes_sloppy_arguments(archive: Path) -> None:
    api = ArchiveAPI.open(archive, embedder=HashEmbedder())
    try:
        server = build_archive_mcp(api, lang="ja")  # upstream's Japanese texts
        result = await server.call("get_thread", {"id": xid(150), "limit": "50", "offset": " 50 "})
        text = result.content[0].text
        assert not result.is_error, text
        assert text.startswith(f'🧵 スレッド: 120件 (ID: "{xid(150)}")')
        assert re.search(r"^51\. ▶ @alice", text, re.MULTILINE)
        assert "offset=100" in text.rsplit("\n", 1)[-1]
        result = await server.call("get_thread", {"id": X + G})  # a number for the string id
        assert (
            not result.is_error and f"返信先: {xid(999)} (アーカイブにありません)" in result.content[0].text
        )
        result = await server.call("get_thread", {"id": "https://x.com/nobody/status/5"})
        assert result.is_error and result.content[0].text == (
            "エラー: スレッド取得に失敗: サーバーエラー: no post https://x.com/nobody/status/5 in the archive"
        )
    finally:
        await api.aclose()
