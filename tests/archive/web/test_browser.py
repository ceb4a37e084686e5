"""The archive web app in a real browser: Debian's Chromium driven by Playwright for Python.

``make test`` installs chromium and axe-core (scripts/browser-up.sh); on a machine without
them these tests skip saying why, and in CI they fail. Screenshots are written to
build/test-artifacts/archive-web/ (ignored by git) for a person to look at.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.archive.web.test_app import Served, build_archive, serve
from tests.support.env import REPO, require

CHROMIUM = Path("/usr/bin/chromium")
AXE = REPO / ".third-party" / "axe-core" / "axe.min.js"
ARTIFACTS = REPO / "build" / "test-artifacts" / "archive-web"

pytestmark = pytest.mark.browser


def _browser_ready() -> None:
    require(CHROMIUM.exists() or shutil.which("chromium") is not None, "Debian's chromium is not installed")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        require(False, "Playwright for Python is not installed")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    _browser_ready()
    db, export = build_archive(tmp_path_factory.mktemp("web-browser"))
    with serve(db) as (_, port):
        yield Served(f"http://127.0.0.1:{port}", db, export)


@contextmanager
def launched() -> Iterator[Any]:
    """Debian's Chromium under Playwright (skips saying why when either is missing)."""
    _browser_ready()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with launched() as chromium:
        yield chromium


class Page:
    """One tab, recording CSP violations and script dialogs (a dialog = injected script ran)."""

    def __init__(self, browser: Any, base: str, **context: Any) -> None:
        self.context = browser.new_context(**context)
        self.page = self.context.new_page()
        self.base = base
        self.csp_errors: list[str] = []
        self.dialogs: list[str] = []
        self.page.on(
            "console",
            lambda msg: self.csp_errors.append(msg.text) if "Content Security Policy" in msg.text else None,
        )
        self.page.on("dialog", lambda dialog: (self.dialogs.append(dialog.message), dialog.dismiss()))

    def goto(self, path: str) -> Any:
        self.page.goto(self.base + path)
        self.page.wait_for_load_state("networkidle")
        return self.page

    def count_line(self) -> str:
        return str(self.page.locator("#results-title").inner_text()).strip()

    def shot(self, name: str) -> None:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)

    def close(self) -> None:
        assert self.csp_errors == [], self.csp_errors
        assert self.dialogs == [], self.dialogs
        self.context.close()


@pytest.fixture
def tab(browser: Any, site: Served) -> Iterator[Page]:
    page = Page(browser, site.base, viewport={"width": 1200, "height": 900})
    yield page
    page.close()


def wait_count(tab: Page, pattern: str) -> None:
    tab.page.wait_for_function(
        "p => new RegExp(p).test(document.querySelector('#results-title').innerText)", arg=pattern
    )


def test_search_as_you_type_highlights_and_updates_the_url(tab: Page) -> None:
    page = tab.goto("/")
    page.locator("#q").press_sequentially("coffee", delay=40)
    # "coffe" has the same 20 posts: on a busy machine its answer can be the one shown first
    wait_count(tab, "^20 posts for “coffee”")
    assert re.search(r"[?&]q=coffee\b", page.url)
    assert page.locator("#results mark").first.inner_text().lower() == "coffee"
    assert page.locator("#results article").count() == 20
    tab.shot("search")


def test_facets_with_counts_and_back_forward(tab: Page, site: Served) -> None:
    page = tab.goto("/")
    total = site.json("/api/search")["total"]
    wait_count(tab, f"^{total} posts")
    label = page.locator("label[for^='f-platform-']", has_text="mastodon")
    assert label.locator(".count").inner_text() == "6"
    label.click()
    wait_count(tab, "^6 posts")
    assert "platform=mastodon" in page.url
    assert page.locator("#results article .badge.platform").all_inner_texts() == ["mastodon"] * 6
    page.go_back()
    page.wait_for_load_state("networkidle")
    wait_count(tab, f"^{total} posts")
    assert "platform=" not in page.url
    page.go_forward()
    page.wait_for_load_state("networkidle")
    wait_count(tab, "^6 posts")
    page.reload()
    wait_count(tab, "^6 posts")  # the URL holds the whole state


def test_timeline_click_filters_by_month(tab: Page, site: Served) -> None:
    page = tab.goto("/timeline")
    july = site.json("/api/search?month=2023-07")["total"]
    link = page.get_by_role("link", name=f"Jul 2023: {july} posts")
    tab.shot("timeline")
    link.click()
    page.wait_for_load_state("networkidle")
    assert page.url.endswith("/?month=2023-07")
    wait_count(tab, f"^{july} posts")


def test_post_page_shows_thread_and_picture(tab: Page) -> None:
    page = tab.goto("/post/2002")
    assert page.get_by_text("not in this archive").count() == 0  # its parent is the thread's root
    thread = page.locator(".thread article")
    assert thread.count() == 3
    assert page.locator(".thread article[aria-current='true']").get_attribute("data-id") == "2002"
    image = page.get_by_role("img", name="Red torii gates in the rain")
    image.wait_for()
    assert image.evaluate("img => img.complete && img.naturalWidth") == 240
    tab.shot("post")


def test_hostile_post_text_is_shown_as_text(tab: Page) -> None:
    page = tab.goto("/post/2005")
    text = page.locator("article .text").first.inner_text()
    assert '<script>alert("pwned")</script>' in text and 'href="javascript:alert(1)"' in text
    assert (
        page.locator("article .text script, article .text img, article .text a[href^='javascript']").count()
        == 0
    )


def test_keyboard_only_find_and_open_a_post(tab: Page) -> None:
    page = tab.goto("/")
    page.keyboard.press("/")
    assert page.evaluate("document.activeElement.id") == "q"
    page.keyboard.type("moss")
    wait_count(tab, "^1 post for")
    for _ in range(60):  # Tab forward to the first result's own link
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.classList.contains('permalink')"):
            break
    else:
        pytest.fail("Tab never reached a result's link")
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline != "none"  # focus is visible
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"/post/2002$"))
    page.get_by_role("img", name="Red torii gates in the rain").wait_for(state="visible")


def test_infinite_scroll_fetches_the_next_page(tab: Page) -> None:
    page = tab.goto("/?kind=all")
    assert page.locator("#results > li > article").count() == 30
    page.locator("#more a").scroll_into_view_if_needed()
    page.wait_for_function("() => document.querySelectorAll('#results > li > article').length > 30")
    ids = page.locator("#results article").evaluate_all("els => els.map(e => e.dataset.id)")
    assert len(ids) == len(set(ids))


def test_json_mirror_equals_the_page(tab: Page) -> None:
    page = tab.goto("/?q=tea&month=2023")
    shown = page.locator("#results article").evaluate_all("els => els.map(e => e.dataset.id)")
    mirror = json.loads(page.locator("footer.bottom a").evaluate("a => fetch(a.href).then(r => r.text())"))
    assert shown == [p["id"] for p in mirror["results"]]
    assert tab.count_line().startswith(f"{mirror['total']} post")


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_finds_no_serious_violations(browser: Any, site: Served, scheme: str) -> None:
    require(AXE.exists(), "axe-core is not installed (make browser)")
    # axe is injected as a script the page's own CSP would refuse: this context bypasses the CSP
    tab = Page(browser, site.base, bypass_csp=True, color_scheme=scheme)
    try:
        for path in ("/?q=coffee", "/timeline", "/on-this-day", "/post/2002"):
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
            assert serious == [], f"{path} ({scheme}): {serious}"
    finally:
        tab.close()


def test_phone_width_layout(browser: Any, site: Served) -> None:
    tab = Page(
        browser, site.base, viewport={"width": 390, "height": 844}, is_mobile=True, color_scheme="dark"
    )
    try:
        for path in ("/?q=coffee", "/timeline", "/post/2002"):
            page = tab.goto(path)
            overflow = page.evaluate("document.scrollingElement.scrollWidth - window.innerWidth")
            assert overflow <= 0, f"{path} scrolls sideways by {overflow}px"
        page = tab.goto("/?lang=ja")
        tab.shot("phone-dark-japanese")
        family = page.locator("article .text[lang='ja']").first.evaluate(
            "e => getComputedStyle(e).fontFamily"
        )
        assert "Noto Sans CJK JP" in family
    finally:
        tab.close()
