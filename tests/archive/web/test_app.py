"""The archive web app over HTTP: pages, the JSON mirror, access rules, hostile text, media.

A real archive (SQLite, written through the store as an import writes it, with an export
directory holding a real PNG) served by the real app under uvicorn on a free loopback port;
requests are plain HTTP from the standard library. Browser tests are in
tests/archive/web/test_browser.py and use the same archive.
"""

from __future__ import annotations

import json
import re
import socket
import struct
import threading
import urllib.error
import urllib.parse
import urllib.request
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpkit.archive.api import ArchiveAPI
from mcpkit.archive.posts import Media, Post, log_type_of_kind, post_key
from mcpkit.archive.rpc.security import SecurityConfigError
from mcpkit.archive.store import Store
from mcpkit.archive.web.access import WebAccess
from mcpkit.archive.web.app import build_app
from mcpkit.archive.web.render import match_spans, post_html

HOSTILE = '<script>alert("pwned")</script> <a href="javascript:alert(1)">click</a> <img src=x onerror=alert(2)> javascript:alert(3)'
TODAY = "2024-05-04"


def png_bytes(width: int = 240, height: int = 135) -> bytes:
    """A real PNG (red pixels), small enough to write by hand."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    raw = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )


def masto(n: int) -> str:
    return f"https://example.social/users/kenji/statuses/{n}"


def tweet(
    post_id: int, timestamp: str, content: str, kind: str = "post", user: str = "alice", **fields: Any
) -> Post:
    """A record of @alice's X archive: her posts, or a post of ``user``'s she liked."""
    return Post(
        post_id,
        user,
        timestamp,
        f"https://x.com/{user}/status/{post_id}",
        content,
        log_type_of_kind(kind),
        platform="x",
        kind=kind,
        source_id=str(post_id),
        account="@alice",
        **fields,
    )


def sample_posts() -> list[Post]:
    """An X account and a Mastodon account: posts over three years, a self-thread with a
    picture, a quote, likes, hostile text and Japanese."""
    posts = [
        tweet(
            1000 + i,
            f"{2022 + i % 3}-{1 + i % 12:02d}-{1 + i % 27:02d} 10:{i:02d}:00",
            f"coffee note number {i}" if i % 2 else f"green tea diary {i}",
            lang="en",
        )
        for i in range(40)
    ]
    picture = Media("image", "data/tweets_media/2001-kyoto.png", "", "Red torii gates in the rain")
    posts += [
        tweet(
            2001,
            "2023-07-01 09:00:00",
            "A walk in Kyoto, part 1 of 3",
            thread_root="2001",
            lang="en",
            media=(picture,),
        ),
        tweet(
            2002,
            "2023-07-01 09:05:00",
            "part 2: the moss garden",
            "reply",
            reply_to="2001",
            thread_root="2001",
            lang="en",
        ),
        tweet(
            2003,
            "2023-07-01 09:10:00",
            "part 3: matcha to finish",
            "reply",
            reply_to="2002",
            thread_root="2001",
            lang="en",
        ),
        tweet(2004, "2023-08-02 12:00:00", "This thread still holds up", "quote", quote_of="2001", lang="en"),
        tweet(2005, TODAY + " 08:00:00", HOSTILE),
        tweet(3001, "2023-03-03 03:03:03", "liked: coffee beans from Kenya", "like", user="bob"),
    ]
    for i in range(6):
        source = masto(100 + i)
        posts.append(
            Post(
                post_key("mastodon", source),
                "kenji@example.social",
                f"2021-05-04 0{i}:00:00",
                source,
                f"東京で猫を見た {i} 🐈" if i % 2 else f"コーヒーを飲んだ {i} ☕",
                1,
                platform="mastodon",
                kind="post",
                source_id=source,
                account="@kenji@example.social",
                lang="ja",
            )
        )
    return posts


@dataclass
class Served:
    base: str
    db: Path
    export: Path

    def get(self, path: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
        request = urllib.request.Request(self.base + path, headers=headers or {})
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, {k.lower(): v for k, v in response.headers.items()}, response.read()
        except urllib.error.HTTPError as exc:
            return exc.code, {k.lower(): v for k, v in exc.headers.items()}, exc.read()

    def json(self, path: str, headers: dict[str, str] | None = None) -> Any:
        status, _, body = self.get(path, headers)
        assert status == 200, body
        return json.loads(body)

    def html(self, path: str) -> str:
        status, _, body = self.get(path, {"Accept": "text/html"})
        assert status == 200, body
        return body.decode()


def build_archive(root: Path) -> tuple[Path, Path]:
    """The sample archive at ``root/archive.db`` and its X export directory (with the PNG)."""
    export = root / "x-export"
    (export / "data" / "tweets_media").mkdir(parents=True)
    (export / "data" / "tweets_media" / "2001-kyoto.png").write_bytes(png_bytes())
    db = root / "archive.db"
    store = Store(db)
    try:
        posts = sample_posts()
        with store.transaction() as conn:
            store.upsert_posts(conn, [p for p in posts if p.platform == "x"], account="@alice")
            store.record_export(conn, format="x-archive", account="@alice", path=export, summary={})
        with store.transaction() as conn:
            store.upsert_posts(conn, [p for p in posts if p.platform == "mastodon"])
    finally:
        store.close()
    return db, export


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class RunningApp:
    """The app under uvicorn in a thread; ``started`` is uvicorn's own flag, waited on."""

    def __init__(self, app: Any, host: str, port: int) -> None:
        import uvicorn

        self.server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.ready = threading.Event()

    def __enter__(self) -> RunningApp:
        original = self.server.startup

        async def startup(*args: Any, **kwargs: Any) -> None:
            await original(*args, **kwargs)
            self.ready.set()

        self.server.startup = startup  # type: ignore[method-assign]
        self.thread.start()
        assert self.ready.wait(60), "the web app did not start"
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(30)


@contextmanager
def serve(db: Path, host: str = "127.0.0.1", token: str | None = None) -> Iterator[tuple[RunningApp, int]]:
    import datetime as dt

    api = ArchiveAPI.open(db)
    port = free_port()
    app = build_app(api, WebAccess.for_bind(host, port, token), today=lambda: dt.date.fromisoformat(TODAY))
    try:
        with RunningApp(app, host, port) as running:
            yield running, port
    finally:
        api.close()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    db, export = build_archive(tmp_path_factory.mktemp("web"))
    with serve(db) as (_, port):
        yield Served(f"http://127.0.0.1:{port}", db, export)


# -- pages and their JSON mirror -----------------------------------------------------------------


def ids_on_page(html: str) -> list[str]:
    return re.findall(r'<article class="post[^"]*"[^>]*data-id="(-?\d+)"', html)


def test_text_search_finds_and_highlights_and_mirrors(served: Served) -> None:
    data = served.json("/api/search?q=coffee")
    assert data["total"] == 20  # the like is not an authored kind: left out by default
    assert all("coffee" in p["content"] for p in data["results"])
    assert all(p["id"].isdigit() or p["id"].startswith("-") for p in data["results"])
    page = served.html("/?q=coffee")
    assert ids_on_page(page) == [p["id"] for p in data["results"]]
    assert "<mark>coffee</mark>" in page
    first = data["results"][0]
    assert first["permalink"] == f"/post/{first['id']}" and f'href="{first["permalink"]}"' in page
    assert f'href="{first["url"]}"' in page  # the original link


def test_facets_count_and_combine(served: Served) -> None:
    data = served.json("/api/search?q=coffee&kind=all")
    kinds = {v["value"]: v["count"] for v in data["facets"]["kind"]}
    assert kinds["post"] == 20 and kinds["like"] == 1
    assert data["total"] == 21
    platforms = {v["value"]: v["count"] for v in served.json("/api/search")["facets"]["platform"]}
    assert platforms == {"x": 45, "mastodon": 6}
    japanese = served.json("/api/search?lang=ja")
    assert japanese["total"] == 6 and {p["platform"] for p in japanese["results"]} == {"mastodon"}
    one_month = served.json("/api/search?month=2023-07")
    assert {p["id"] for p in one_month["results"]} >= {"2001", "2002", "2003"}
    months = {(m["year"], m["month"]): m["count"] for m in one_month["facets"]["months"]}
    assert months[(2023, 7)] == one_month["total"]  # the month facet ignores its own filter
    media = served.json("/api/search?media=1")
    assert [p["id"] for p in media["results"]] == ["2001"]


def test_japanese_text_search_of_two_characters(served: Served) -> None:
    data = served.json("/api/search?q=" + urllib.parse.quote("猫"))
    assert data["total"] == 3 and all("猫" in p["content"] for p in data["results"])


def test_no_match_is_said(served: Served) -> None:
    data = served.json("/api/search?q=zzzqqq")
    assert data["total"] == 0 and data["results"] == []
    assert "No post contains" in served.html("/?q=zzzqqq")


def test_bad_parameters_get_one_line(served: Served) -> None:
    status, _, body = served.get("/api/search?month=2023-13")
    assert status == 400 and json.loads(body) == {"error": "month must be YYYY or YYYY-MM, got '2023-13'"}
    status, _, body = served.get("/?kind=nonsense", {"Accept": "text/html"})
    assert status == 400 and b"kind must be" in body


def test_pages_fetch_only_what_is_shown(served: Served) -> None:
    first = served.json("/api/search")
    assert first["returned"] == first["limit"] == 30 and first["next_offset"] == 30
    second = served.json("/api/search?offset=30")
    assert second["next_offset"] is None
    seen = [p["id"] for p in first["results"] + second["results"]]
    assert len(seen) == len(set(seen)) == first["total"]


def test_timeline_counts_and_links(served: Served) -> None:
    data = served.json("/api/timeline")
    july = next(y for y in data["years"] if y["year"] == 2023)["months"][6]
    assert july == served.json("/api/search?month=2023-07")["total"]
    page = served.html("/timeline")
    assert 'href="/?month=2023-07"' in page


def test_on_this_day_across_years(served: Served) -> None:
    data = served.json("/api/on-this-day")
    assert data["day"] == "05-04"
    years = [y["year"] for y in data["years"]]
    assert years == sorted(years, reverse=True) and {"2024", "2021"} <= set(years)
    assert served.json("/api/on-this-day?day=07-01")["total"] >= 3


def test_post_page_thread_quote_and_picture(served: Served) -> None:
    data = served.json("/api/post/2002")
    assert [p["id"] for p in data["thread"]] == ["2001", "2002", "2003"]
    root = data["thread"][0]
    assert (
        root["media"][0]["alt"] == "Red torii gates in the rain"
        and root["media"][0]["local"] == "/media/2001/0"
    )
    page = served.html("/post/2002")
    assert 'alt="Red torii gates in the rain"' in page and 'aria-current="true"' in page
    status, headers, body = served.get("/media/2001/0")
    assert status == 200 and headers["content-type"] == "image/png" and body == png_bytes()
    quote = served.json("/api/post/2004")
    assert quote["quoted"]["id"] == "2001"
    page = served.html("/post/2004")
    section = page[page.index('aria-labelledby="quoted-title"') :]
    assert '<h2 id="quoted-title">Quoted post</h2>' in section and "A walk in Kyoto, part 1 of 3" in section
    assert "reposted-title" not in page  # a quote reposts nothing
    assert served.get("/api/post/999999")[0] == 404


def test_hostile_text_renders_as_text(served: Served) -> None:
    page = served.html("/post/2005")
    assert "<script>alert" not in page and 'href="javascript:' not in page and "<img src=x" not in page
    assert "&lt;script&gt;alert(&#34;pwned&#34;)&lt;/script&gt;" in page
    assert served.json("/api/post/2005")["post"]["content"] == HOSTILE


def test_security_headers_and_origin(served: Served) -> None:
    status, headers, _ = served.get("/")
    assert status == 200
    csp = headers["content-security-policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp and "default-src 'none'" in csp
    assert served.get("/", {"Origin": "https://evil.example"})[0] == 403
    assert served.get("/", {"Origin": served.base})[0] == 200
    assert served.get("/", {"Host": "evil.example:80"})[0] == 421  # DNS rebinding


def test_every_asset_is_local(served: Served) -> None:
    for path in ("/", "/timeline", "/on-this-day", "/post/2001"):
        page = served.html(path)
        for ref in re.findall(r'(?:src|href)="([^"]+)"', page):
            assert not ref.startswith("//") and not re.match(r"https?://(?!x\.com|example\.social)", ref), ref
    status, _, body = served.get("/static/htmx.min.js")
    assert status == 200 and b"htmx" in body


def test_non_loopback_bind_needs_a_token(tmp_path: Path) -> None:
    with pytest.raises(SecurityConfigError):
        WebAccess.for_bind("0.0.0.0", 8766, None)
    db, _ = build_archive(tmp_path)
    with serve(db, host="0.0.0.0", token="s3cret-token") as (_, port):
        site = Served(f"http://127.0.0.1:{port}", db, tmp_path)
        assert site.get("/api/search")[0] == 401
        status, _, body = site.get("/", {"Accept": "text/html"})
        assert status == 401 and b'<label for="token">Access token</label>' in body
        assert site.get("/api/search", {"Authorization": "Bearer wrong"})[0] == 401
        assert site.json("/api/search", {"Authorization": "Bearer s3cret-token"})["total"] > 0
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
        with opener.open(site.base + "/timeline?token=s3cret-token") as response:  # link, then cookie
            assert response.status == 200 and response.url == site.base + "/timeline"
        with opener.open(site.base + "/api/timeline") as response:
            assert json.loads(response.read())["total"] > 0


# -- text rendering ------------------------------------------------------------------------------


@given(st.text(max_size=80), st.lists(st.text(min_size=1, max_size=4), max_size=3))
def test_post_html_is_always_escaped_text(text: str, terms: list[str]) -> None:
    html = str(post_html(text, terms))
    without_tags = re.sub(r"</?mark>|<a href=\"[^\"]*\" rel=\"nofollow noopener noreferrer\">|</a>", "", html)
    assert "<" not in without_tags and ">" not in without_tags
    for href in re.findall(r'<a href="([^"]*)"', html):
        assert href.startswith(("http://", "https://", "HTTP://", "HTTPS://")) or href.lower().startswith(
            "http"
        )


@given(st.text(max_size=60), st.text(min_size=1, max_size=3))
def test_match_spans_cover_each_folded_match(text: str, term: str) -> None:
    spans = match_spans(text, [term])
    assert all(0 <= a < b <= len(text) for a, b in spans)
    assert all(spans[i][1] < spans[i + 1][0] for i in range(len(spans) - 1))
    if term.lower() in text.lower():
        assert spans
