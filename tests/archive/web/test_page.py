"""The page beside what people choose today: long posts clamped, hostile Unicode contained,
previous/next, a month to read in order, a media grid, mentions and hashtags, a throttled login.

Over HTTP against the real app under uvicorn (the browser's view of the same is in
tests/archive/web/test_page_browser.py).
"""

from __future__ import annotations

import dataclasses
import html
import json
import re
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpkit.archive.api import ArchiveAPI
from mcpkit.archive.pages.browse import TALK_TOP, talk_counts
from mcpkit.archive.posts import Post
from mcpkit.archive.store import Store
from mcpkit.archive.web.access import LoginThrottle, WebAccess
from mcpkit.archive.web.app import build_app
from mcpkit.archive.web.render import CLAMP_CHARS, CLAMP_LINES, clamp_point, post_html_parts
from tests.archive.web.test_app import RunningApp, Served, build_archive, free_port, serve, tweet

LONG_END = "the very end of it all"
LONG = "A long post begins here. " + "word " * 10_000 + LONG_END
SPOOF = "evil\u202egnp.exe"
ZALGO = "Z" + "\u0301\u0302\u0303\u0304\u0306\u0307\u0308\u030a" * 40 + "algo"
EMOJI = "Coffee time \u2615\U0001f600\U0001f389"


VISIBILITY = "visibility" in {f.name for f in dataclasses.fields(Post)}
"""Whether this release's posts carry a visibility (the page marks followers-only posts)."""


def page_posts() -> list[Post]:
    followers = [tweet(4007, "2024-01-16 10:00:00", "only for my followers", visibility="followers")]
    return [
        *(followers if VISIBILITY else []),
        tweet(4001, "2024-01-10 10:00:00", LONG, lang="en"),
        tweet(4002, "2024-01-11 10:00:00", f"open {SPOOF} now", user=SPOOF),
        tweet(4003, "2024-01-12 10:00:00", ZALGO),
        tweet(4004, "2024-01-13 10:00:00", EMOJI, lang="en"),
        tweet(4005, "2024-01-14 10:00:00", "@bob and @carol on #coffee and #Tea", lang="en"),
        tweet(4006, "2024-01-15 10:00:00", "again @bob, more #coffee", lang="en"),
    ]


def build_page_archive(root: Path) -> tuple[Path, Path]:
    db, export = build_archive(root)
    store = Store(db)
    try:
        with store.transaction() as conn:
            store.upsert_posts(conn, page_posts(), account="@alice")
    finally:
        store.close()
    return db, export


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    db, export = build_page_archive(tmp_path_factory.mktemp("web-page"))
    with serve(db) as (_, port):
        yield Served(f"http://127.0.0.1:{port}", db, export)


def test_a_long_post_is_clamped_in_lists_and_whole_on_its_page(site: Served) -> None:
    page = site.html("/?q=" + urllib.parse.quote("long post"))
    card = page[page.index('data-id="4001"') :]
    card = card[: card.index("</article>")]
    assert "Show more" in card and LONG_END in card  # clamped, nothing dropped
    head = card[: card.index("Show more")]
    assert LONG_END not in head and len(head) < 3_000
    whole = site.html("/post/4001")
    assert "Show more" not in whole and LONG_END in whole


def test_every_user_string_is_isolated(site: Served) -> None:
    page = site.html("/?q=" + urllib.parse.quote(SPOOF))
    assert f"<bdi>{SPOOF}</bdi>" in page  # the author, the query in the count line
    assert "“<bdi>" in page
    post = site.html("/post/4002")
    assert f"Post by <bdi>{SPOOF}</bdi>" in post
    assert 'class="text" dir="auto"' in post


def test_previous_and_next_in_time(site: Served) -> None:
    data = site.json("/api/post/4004")
    assert data["older"]["id"] == "4003" and data["newer"]["id"] == "4005"
    assert site.json("/api/post/4005")["older"]["id"] == "4004"
    page = site.html("/post/4004")
    assert 'href="/post/4003"' in page and 'href="/post/4005"' in page
    newest = site.json("/api/search")["results"][0]["id"]
    assert site.json(f"/api/post/{newest}")["newer"] is None


def test_a_month_reads_in_order(site: Served) -> None:
    data = site.json("/api/month/2023-07")
    stamps = [p["timestamp"] for p in data["results"]]
    assert stamps == sorted(stamps) and stamps and all(s.startswith("2023-07") for s in stamps)
    assert [p["id"] for p in data["results"]][:3] == ["2001", "2002", "2003"]
    assert data["total"] == site.json("/api/search?month=2023-07")["total"]
    assert data["previous_month"] and data["next_month"]
    page = site.html("/month/2023-07")
    assert "part 2: the moss garden" in page and f'href="/month/{data["next_month"]}"' in page
    assert 'href="/month/2023-07"' in site.html("/timeline")
    status, _, body = site.get("/api/month/2023-13")
    assert status == 400 and json.loads(body)["error"].startswith("month must be")


def test_a_followers_only_post_is_marked(site: Served) -> None:
    if not VISIBILITY:
        pytest.skip("posts carry no visibility in this release")
    assert "followers only" in site.html("/post/4007")
    assert "followers only" not in site.html("/post/4006")


def test_media_grid(site: Served) -> None:
    data = site.json("/api/media")
    assert [p["id"] for p in data["results"]] == ["2001"]
    assert data["results"][0]["media"][0]["local"] == "/media/2001/0"
    page = site.html("/media")
    assert 'src="/media/2001/0"' in page and 'href="/post/2001"' in page


def test_mentions_and_hashtags_facets(site: Served) -> None:
    facets = site.json("/api/search")["facets"]
    mentions = {v["value"]: v["count"] for v in facets["mention"]}
    hashtags = {v["value"]: v["count"] for v in facets["hashtag"]}
    assert mentions["@bob"] == 2 and mentions["@carol"] == 1
    assert hashtags["#coffee"] == 2 and hashtags["#tea"] == 1
    page = site.html("/")
    assert 'href="/?q=%40bob"' in page
    found = site.json("/api/search?q=%40bob")
    assert {p["id"] for p in found["results"]} == {"4005", "4006"}


def post_login(base: str, token: str) -> tuple[int, dict[str, str]]:
    body = urllib.parse.urlencode({"token": token, "next": "/"}).encode()
    request = urllib.request.Request(base + "/login", data=body, method="POST")
    opener = urllib.request.build_opener(NoRedirect)
    try:
        with opener.open(request, timeout=30) as response:
            return response.status, {k.lower(): v for k, v in response.headers.items()}
    except urllib.error.HTTPError as exc:
        return exc.code, {k.lower(): v for k, v in exc.headers.items()}


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


def test_login_is_throttled(tmp_path: Path) -> None:
    db, _ = build_archive(tmp_path)
    api = ArchiveAPI.open(db)
    port = free_port()
    # the clock stands still: the wait cannot run out while the test runs, however slow
    access = replace(WebAccess.for_bind("0.0.0.0", port, "s3cret-token"), throttle=LoginThrottle(lambda: 0.0))
    try:
        with RunningApp(build_app(api, access), "0.0.0.0", port):
            login_attempts(f"http://127.0.0.1:{port}", Served(f"http://127.0.0.1:{port}", db, tmp_path))
    finally:
        api.close()


def login_attempts(base: str, site: Served) -> None:
    """Wrong tokens until the throttle answers; then even the right one waits."""
    statuses = [post_login(base, "wrong")[0] for _ in range(LoginThrottle.FREE_FAILURES)]
    assert statuses == [401] * LoginThrottle.FREE_FAILURES
    status, headers = post_login(base, "wrong")
    assert status == 429 and int(headers["retry-after"]) >= 1
    assert post_login(base, "s3cret-token")[0] == 429  # even the right token waits
    status, headers, _ = site.get("/api/search", {"Authorization": "Bearer wrong"})
    assert status == 429 and int(headers["retry-after"]) >= 1


def test_throttle_waits_grow_and_end() -> None:
    now = [1000.0]
    throttle = LoginThrottle(clock=lambda: now[0])
    for _ in range(LoginThrottle.FREE_FAILURES):
        assert throttle.wait("10.0.0.1") == 0
        throttle.failed("10.0.0.1")
    first = throttle.wait("10.0.0.1")
    assert first >= 1 and throttle.wait("10.0.0.2") == 0  # one client's failures only
    now[0] += first
    assert throttle.wait("10.0.0.1") == 0
    throttle.failed("10.0.0.1")
    assert throttle.wait("10.0.0.1") > first  # each further failure waits longer
    throttle.succeeded("10.0.0.1")
    assert throttle.wait("10.0.0.1") == 0


@given(st.text(alphabet=st.sampled_from("ab \n\u202e\u0301https://x.io/"), max_size=3000))
def test_a_clamped_text_loses_nothing(text: str) -> None:
    head, rest = post_html_parts(text)
    shown = html.unescape(re.sub(r"<[^>]+>", "", str(head) + str(rest)))
    assert shown == text
    cut = clamp_point(text)
    assert cut == len(text) or (cut <= CLAMP_CHARS and text[:cut].count("\n") < CLAMP_LINES)


@given(st.lists(st.text(alphabet=st.sampled_from("@#ab_.é東 \n\u202e"), max_size=40), max_size=20))
def test_mentions_and_hashtags_come_from_the_texts(texts: list[str]) -> None:
    found = talk_counts(texts)
    for facet, sign in (("mention", "@"), ("hashtag", "#")):
        values = found[facet]
        assert len(values) <= TALK_TOP
        assert [v["count"] for v in values] == sorted((v["count"] for v in values), reverse=True)
        for v in values:
            assert v["value"].startswith(sign) and v["value"] == v["value"].lower()
            assert 1 <= v["count"] <= sum(v["value"] in t.lower() for t in texts)
