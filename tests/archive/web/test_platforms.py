"""Every platform's posts open in the web app: a Mastodon archive (tar.gz, as people download it)
and a Bluesky repository (CAR) imported by the real importers, served by the real app.

A Mastodon or Bluesky post's own id is a URI; the web face names posts by strings in every
route (the archive's key as written in a permalink, or the platform's own id or URL), and
opening one must never depend on reading an id as a number.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcpkit.archive.importers.detect import open_reader
from mcpkit.archive.importers.flow import import_export
from mcpkit.archive.store import Store
from tests.archive.web.test_app import Served, png_bytes, serve
from tests.export_fixtures import bluesky, mastodon

PICTURE = "media_attachments/files/110/000/002/original/cat.png"


def mastodon_export(root: Path) -> Path:
    """A Mastodon archive: a self-thread (1 <- 4), a picture on 2, a quote of 1, a boost."""
    items = [
        mastodon.note(1, mastodon.mastodon_html("first of a thread"), published="2023-05-01T10:00:00Z"),
        mastodon.note(
            2,
            mastodon.mastodon_html("a picture of the cat"),
            published="2023-05-01T11:00:00Z",
            attachments=[
                {"type": "Document", "mediaType": "image/png", "url": PICTURE, "name": "a grey cat asleep"}
            ],
        ),
        mastodon.note(
            4,
            mastodon.mastodon_html("second of the thread"),
            published="2023-05-01T12:00:00Z",
            in_reply_to=mastodon.status_uri(1),
        ),
        mastodon.note(
            5,
            mastodon.mastodon_html("quoting myself"),
            published="2023-05-02T09:00:00Z",
            quote=mastodon.status_uri(1),
        ),
        mastodon.announce(6, mastodon.BOOSTED),
    ]
    archive = mastodon.Archive(items, likes=list(mastodon.LIKED), media={PICTURE: png_bytes(64, 48)})
    return mastodon.write_archive(root / "archive-alice.tar.gz", archive, "tar.gz")


def bluesky_export(root: Path) -> Path:
    repository, _, _ = bluesky.sample_repository()
    return bluesky.write_car(root / "repo.car", repository)


def build_platform_archive(root: Path) -> Path:
    db = root / "archive.db"
    store = Store(db)
    try:
        for export in (mastodon_export(root), bluesky_export(root)):
            import_export(open_reader(export), export, store)
    finally:
        store.close()
    return db


@pytest.fixture(scope="module")
def platforms(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("web-platforms")
    db = build_platform_archive(root)
    with serve(db) as (_, port):
        yield Served(f"http://127.0.0.1:{port}", db, root)


def by_source(site: Served) -> dict[str, dict[str, object]]:
    results = site.json("/api/search?kind=all")["results"]
    return {str(p["source_id"]): p for p in results}


def test_every_post_of_every_platform_opens(platforms: Served) -> None:
    posts = by_source(platforms)
    assert {p["platform"] for p in posts.values()} == {"mastodon", "bluesky"}
    for source, post in posts.items():
        permalink = str(post["permalink"])
        status, _, body = platforms.get(permalink, {"Accept": "text/html"})
        assert status == 200, (source, status, body[:300])
        data = platforms.json("/api" + permalink)
        assert data["post"]["id"] == post["id"] and data["post"]["source_id"] == source
        assert post["id"] in [p["id"] for p in data["thread"]]
        assert all(isinstance(p["id"], str) for p in data["thread"])


def test_mastodon_thread_quote_and_picture(platforms: Served) -> None:
    posts = by_source(platforms)
    reply = posts[mastodon.status_uri(4)]
    data = platforms.json(f"/api/post/{reply['id']}")
    assert [p["source_id"] for p in data["thread"]] == [mastodon.status_uri(1), mastodon.status_uri(4)]
    quote = platforms.json(f"/api/post/{posts[mastodon.status_uri(5)]['id']}")
    assert quote["quoted"]["source_id"] == mastodon.status_uri(1)
    picture = platforms.json(f"/api/post/{posts[mastodon.status_uri(2)]['id']}")["post"]["media"][0]
    assert picture["alt"] == "a grey cat asleep" and picture["local"]
    status, headers, body = platforms.get(picture["local"])
    assert status == 200 and headers["content-type"] == "image/png" and body == png_bytes(64, 48)


def test_bluesky_thread_and_pictures(platforms: Served) -> None:
    posts = by_source(platforms)
    reply = posts[bluesky.post_uri("3kpost000000c")]
    data = platforms.json(f"/api/post/{reply['id']}")
    own = [bluesky.post_uri("3kpost000000b"), bluesky.post_uri("3kpost000000c")]
    thread = {p["source_id"]: p for p in data["thread"]}  # both written at 12:00 UTC
    assert sorted(thread) == own  # a self-reply: one thread
    picture = thread[own[0]]["media"][0]
    assert picture["alt"] == "a grey cat asleep" and picture["local"] == ""
    assert picture["online"].startswith(f"https://cdn.bsky.app/img/feed_fullsize/plain/{bluesky.DID}/")
    quote = platforms.json(f"/api/post/{posts[bluesky.post_uri('3kpost000000d')]['id']}")
    assert quote["quoted"] is None and quote["post"]["quote_of"] == bluesky.QUOTED  # not archived
    page = platforms.html(f"/post/{reply['id']}")
    assert "a grey cat asleep" in page  # a picture the CAR does not hold is named by its alt text


def test_a_post_opens_by_its_platform_id(platforms: Served) -> None:
    for source in (mastodon.status_uri(4), bluesky.post_uri("3kpost000000c")):
        data = platforms.json("/api/post/" + urllib.parse.quote(source, safe=""))
        assert data["post"]["source_id"] == source
    status, _, _ = platforms.get("/api/post/" + urllib.parse.quote("https://nowhere.example/1", safe=""))
    assert status == 404
    for odd in ("abc", "-", "99999999999999999999999999", "%00"):
        assert platforms.get(f"/api/post/{odd}")[0] in (400, 404)
        assert platforms.get(f"/media/{odd}/0")[0] == 404
        assert platforms.get(f"/media/1/{odd}")[0] == 404


@pytest.mark.browser
def test_mastodon_and_bluesky_post_pages_in_chromium(platforms: Served) -> None:
    from tests.archive.web.test_browser import Page, launched

    posts = by_source(platforms)
    with launched() as chromium:
        tab = Page(chromium, platforms.base, viewport={"width": 1000, "height": 800})
        try:
            page = tab.goto(f"/post/{posts[mastodon.status_uri(2)]['id']}")
            image = page.get_by_role("img", name="a grey cat asleep")
            image.wait_for()
            assert image.evaluate("img => img.complete && img.naturalWidth") == 64
            page = tab.goto(f"/post/{posts[mastodon.status_uri(4)]['id']}")
            assert page.locator(".thread article").count() == 2
            assert page.locator(".thread article[aria-current='true'] .text").inner_text() == (
                "second of the thread"
            )
            page = tab.goto(f"/post/{posts[mastodon.status_uri(5)]['id']}")
            assert "first of a thread" in page.locator(".quoted article .text").inner_text()
            page = tab.goto(f"/post/{posts[bluesky.post_uri('3kpost000000c')]['id']}")
            assert page.locator(".thread article").count() == 2
            assert page.get_by_text("a grey cat asleep").count() == 1
            tab.shot("post-bluesky")
        finally:
            tab.close()


def test_a_post_deep_in_a_long_thread_opens(tmp_path: Path) -> None:
    from mcpkit.archive.web.views import THREAD_MAX
    from tests.archive.web.test_app import tweet

    count = THREAD_MAX + 60
    posts = [
        tweet(
            5000 + i,
            f"2023-01-01 {i // 60:02d}:{i % 60:02d}:00",
            f"part {i}",
            "reply" if i else "post",
            reply_to=str(5000 + i - 1) if i else "",
            thread_root="5000",
        )
        for i in range(count)
    ]
    db = tmp_path / "archive.db"
    store = Store(db)
    try:
        with store.transaction() as conn:
            store.upsert_posts(conn, posts, account="@alice")
    finally:
        store.close()
    with serve(db) as (_, port):
        site = Served(f"http://127.0.0.1:{port}", db, tmp_path)
        last = site.json(f"/api/post/{5000 + count - 1}")
        assert last["post"]["content"] == f"part {count - 1}"
        assert last["thread_total"] == count and len(last["thread"]) == THREAD_MAX
        assert str(5000 + count - 1) in [p["id"] for p in last["thread"]]
