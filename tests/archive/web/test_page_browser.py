"""The page in Debian's Chromium: long posts clamped, hostile Unicode contained, emoji drawn,
a phone shows results first, and the new pages (a month, the media grid) pass axe.

The archive is tests/archive/web/test_page.py's (the sample plus a 50,000-character post, a
right-to-left override, stacked combining marks, emoji, mentions and hashtags).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.archive.web.test_app import Served, serve
from tests.archive.web.test_browser import AXE, Page, launched
from tests.archive.web.test_page import LONG_END, SPOOF, build_page_archive
from tests.support.env import require

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    with launched() as browser:
        yield browser


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    db, export = build_page_archive(tmp_path_factory.mktemp("web-page-browser"))
    with serve(db) as (_, port):
        yield Served(f"http://127.0.0.1:{port}", db, export)


@pytest.fixture
def tab(chromium: Any, site: Served) -> Iterator[Page]:
    page = Page(chromium, site.base, viewport={"width": 1200, "height": 900})
    yield page
    page.close()


def test_a_long_post_is_clamped_until_show_more(tab: Page) -> None:
    page = tab.goto("/?q=begins")
    card = page.locator("article[data-id='4001']")
    assert card.evaluate("e => e.getBoundingClientRect().height") < 600
    assert not page.get_by_text(LONG_END).is_visible()
    card.get_by_text("Show more").click()
    page.get_by_text(LONG_END).wait_for(state="visible")


def test_a_right_to_left_override_stays_in_its_post(tab: Page) -> None:
    page = tab.goto("/?q=gnp")
    card = page.locator("article[data-id='4002']")
    who = card.locator(".who").evaluate("e => e.getBoundingClientRect().right")
    badge = card.locator(".badge.platform").evaluate("e => e.getBoundingClientRect().left")
    assert who <= badge  # the author's name cannot carry the badges to its left
    page = tab.goto("/post/4002")
    heading = page.locator("h1")
    assert heading.inner_text().startswith("Post by ")
    # "Post by" stays at the left of the name, whatever the name's override does
    spans = heading.evaluate(
        """h => { const r = document.createRange(); r.setStart(h.firstChild, 0); r.setEnd(h.firstChild, 4);
        return [r.getBoundingClientRect().left, h.querySelector('bdi').getBoundingClientRect().left]; }"""
    )
    assert spans[0] < spans[1]
    assert SPOOF in page.locator("article .text").first.inner_text()


def test_combining_marks_do_not_draw_over_the_header(tab: Page) -> None:
    shots = []
    for post in ("4003", "4004"):  # stacked marks, then a plain post by the same author
        page = tab.goto(f"/post/{post}")
        page.evaluate("document.fonts.ready")
        box = page.locator("h1").bounding_box()
        assert box is not None
        clip = {"x": 0, "y": 0, "width": 1200, "height": box["y"] + box["height"]}
        shots.append(page.screenshot(clip=clip))
    assert shots[0] == shots[1]


def test_emoji_are_drawn_in_colour(tab: Page) -> None:
    page = tab.goto("/?q=time")
    family = page.locator("article[data-id='4004'] .text").evaluate("e => getComputedStyle(e).fontFamily")
    page.evaluate("document.fonts.load('48px \"Archive Emoji\"', '\\u{1F600}')")
    coloured = page.evaluate(
        """f => { const c = document.createElement('canvas'); c.width = 64; c.height = 64;
        const g = c.getContext('2d'); g.font = '48px ' + f; g.fillStyle = '#000'; g.fillText('\\u{1F600}', 4, 52);
        const d = g.getImageData(0, 0, 64, 64).data; let n = 0;
        for (let i = 0; i < d.length; i += 4) if (d[i + 3] && (d[i] !== d[i + 1] || d[i + 1] !== d[i + 2])) n++;
        return n; }""",
        family,
    )
    assert coloured > 100, "emoji are drawn as boxes: is fonts-noto-color-emoji installed (make browser)?"
    tab.shot("emoji")


def test_a_phone_shows_results_first_and_filters_behind_a_button(chromium: Any, site: Served) -> None:
    tab = Page(chromium, site.base, viewport={"width": 390, "height": 844}, is_mobile=True)
    try:
        page = tab.goto("/?q=coffee")
        first = page.locator("#results article").first
        assert first.evaluate("e => e.getBoundingClientRect().top") < 844
        assert not page.locator("#facet-platform").is_visible()
        page.get_by_role("button", name="Filters").click()
        page.locator("#facet-platform").wait_for(state="visible")
        tab.shot("phone-filters")
        page.get_by_role("button", name="Show results").click()
        page.locator("#facet-platform").wait_for(state="hidden")
        overflow = page.evaluate("document.scrollingElement.scrollWidth - window.innerWidth")
        assert overflow <= 0
    finally:
        tab.close()


def test_previous_next_month_and_media_pages(tab: Page) -> None:
    page = tab.goto("/post/4004")
    page.get_by_role("link", name="Older post").click()
    page.wait_for_url("**/post/4003")
    page.get_by_role("link", name="Read 2024-01 in order").click()
    page.wait_for_url("**/month/2024-01")
    texts = page.locator(".results article").evaluate_all("els => els.map(e => e.dataset.id)")
    assert texts[:2] == ["4001", "4002"]
    page = tab.goto("/media")
    image = page.get_by_role("img", name="Red torii gates in the rain")
    image.wait_for()
    assert image.evaluate("img => img.complete && img.naturalWidth") == 240
    tab.shot("media-grid")


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_on_the_new_pages(chromium: Any, site: Served, scheme: str) -> None:
    require(AXE.exists(), "axe-core is not installed (make browser)")
    for viewport in ({"width": 1200, "height": 900}, {"width": 390, "height": 844}):
        tab = Page(chromium, site.base, bypass_csp=True, color_scheme=scheme, viewport=viewport)
        try:
            for path in ("/?q=coffee", "/month/2024-01", "/media", "/post/4004"):
                page = tab.goto(path)
                page.add_script_tag(path=str(AXE))
                result = page.evaluate(
                    "axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21aa']}})"
                )
                serious = [
                    (v["id"], v["help"], [n["target"] for n in v["nodes"]][:3])
                    for v in result["violations"]
                    if v["impact"] in ("serious", "critical")
                ]
                assert serious == [], f"{path} ({scheme}, {viewport['width']}px): {serious}"
        finally:
            tab.close()
