"""Issue 40 point 7, the web app: every page's own words (the ``lang`` attribute, navigation,
labels, headings, counts, "no good match", facet names, month names) in English by default and
in Japanese by ``mcpkit archive web --lang ja`` or a Japanese locale; the JSON mirror under
``/api`` is the same in both.

The archive and the server of tests/archive/web/test_app.py (a real SQLite archive, the real app
under uvicorn on a loopback port); the CLI's flag and locale through a real child process.
"""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

import pytest

from mcpkit.archive import messages as m
from mcpkit.archive.api import ArchiveAPI
from mcpkit.archive.web.access import WebAccess
from mcpkit.archive.web.app import build_app
from tests.archive.web.test_app import TODAY, RunningApp, Served, build_archive, free_port

PAGES = (
    "/",
    "/?q=coffee",
    "/?q=coffee&media=1&platform=x",
    "/?q=a+rainy+walk+home&mode=semantic",
    "/?q=zzqqxxnothing",
    "/timeline",
    "/on-this-day",
    "/media",
    "/month/2024-01",
    "/post/nowhere-404",
)
ATTRIBUTES = ("aria-label", "title", "alt")


class Words(HTMLParser):
    """The page's own words: text and labelling attributes, leaving out what posts say (their
    text, names in ``<bdi>``, ``<code>`` examples) and the ``<title>``, which names the query."""

    def __init__(self) -> None:
        super().__init__()
        self.chunks: list[str] = []
        self.lang = ""
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "html":
            self.lang = found.get("lang") or ""
        if (
            self._skip
            or tag in ("bdi", "code", "title", "time")
            or "text" in (found.get("class") or "").split()
        ):
            self._skip += 1
            return
        self.chunks += [value.strip() for name, value in attrs if name in ATTRIBUTES and value]

    def handle_endtag(self, tag: str) -> None:
        if self._skip:
            self._skip -= 1

    def handle_data(self, data: str) -> None:
        if not self._skip and data.strip():
            self.chunks.append(data.strip())


def words_of(html: str) -> Words:
    parser = Words()
    parser.feed(html)
    return parser


def fixed_messages() -> dict[str, m.Message]:
    """The web app's messages that take no field (the ones a page shows word for word)."""
    return {
        name: message
        for name, message in m.catalogue().items()
        if name.startswith("WEB_") and not message.fields()["en"]
    }


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_archive(tmp_path_factory.mktemp("web-lang"))[0]


@pytest.fixture(scope="module")
def pages(archive: Path) -> Iterator[dict[str, Served]]:
    api = ArchiveAPI.open(archive)
    served: dict[str, Served] = {}
    try:
        with (
            RunningApp(_app(api, "en", port_en := free_port()), "127.0.0.1", port_en),
            RunningApp(_app(api, "ja", port_ja := free_port()), "127.0.0.1", port_ja),
        ):
            served["en"] = Served(f"http://127.0.0.1:{port_en}", archive, archive)
            served["ja"] = Served(f"http://127.0.0.1:{port_ja}", archive, archive)
            yield served
    finally:
        api.close()


def _app(api: ArchiveAPI, lang: m.Lang, port: int) -> object:
    access = WebAccess.for_bind("127.0.0.1", port, None)
    return build_app(api, access, today=lambda: dt.date.fromisoformat(TODAY), lang=lang)


def _page(served: Served, path: str) -> str:
    status, _, body = served.get(path)
    assert status in (200, 404), (path, status)
    return body.decode()


@pytest.mark.parametrize("path", PAGES)
def test_every_page_says_its_own_words_in_the_chosen_language(pages: dict[str, Served], path: str) -> None:
    english, japanese = words_of(_page(pages["en"], path)), words_of(_page(pages["ja"], path))
    assert (english.lang, japanese.lang) == ("en", "ja")
    shown = [message for message in fixed_messages().values() if message.en in english.chunks]
    assert len(shown) >= 5, english.chunks  # the header and footer at least
    for message in shown:
        assert message.ja in japanese.chunks, (path, message)
    leftover = [chunk for chunk in japanese.chunks if chunk in {msg.en for msg in fixed_messages().values()}]
    assert not leftover, (path, leftover)


def test_counts_facets_months_and_no_good_match_follow_the_language(pages: dict[str, Served]) -> None:
    english, japanese = _page(pages["en"], "/?q=coffee"), _page(pages["ja"], "/?q=coffee")
    total = pages["en"].json("/api/search?q=coffee")["total"]
    before, after = m.WEB_POSTS_FOR("ja", count=total, query="\x1f").split("\x1f")
    assert f"{before}<bdi>coffee</bdi>{after}" in japanese
    before, after = m.WEB_POSTS_FOR("en", count=total, query="\x1f").split("\x1f")
    assert f"{before}<bdi>coffee</bdi>{after}" in english
    for title in ("WEB_FACET_PLATFORM", "WEB_FACET_ACCOUNT"):
        assert f"<legend>{m.catalogue()[title]('ja')}</legend>" in japanese
    timeline = _page(pages["ja"], "/timeline")
    assert all(f">{month}<" in timeline for month in m.Worded("ja").months())
    assert ">Jan<" not in timeline and ">Jan<" in _page(pages["en"], "/timeline")
    nothing = words_of(_page(pages["ja"], "/?q=zzqqxxnothing&mode=semantic"))
    if m.WEB_NO_GOOD_MATCH("en") in words_of(_page(pages["en"], "/?q=zzqqxxnothing&mode=semantic")).chunks:
        assert m.WEB_NO_GOOD_MATCH("ja") in nothing.chunks


def test_the_search_notes_follow_the_language_and_the_json_keeps_english(pages: dict[str, Served]) -> None:
    path = "/?q=zzqqxxnothing"
    note = m.WEB_NO_POST_CONTAINS
    assert pages["en"].json("/api/search?q=zzqqxxnothing")["message"] == note("en", query="'zzqqxxnothing'")
    for lang in ("en", "ja"):
        assert note(lang, query="'zzqqxxnothing'") in words_of(_page(pages[lang], path)).chunks


def test_the_json_mirror_is_the_same_in_every_language(pages: dict[str, Served]) -> None:
    for path in ("/api/search?q=coffee", "/api/timeline", "/api/month/2024-01"):
        assert pages["en"].json(path) == pages["ja"].json(path), path


# -- the CLI: --lang and the locale reach the pages ------------------------------------------------


def _served_lang(archive: Path, args: list[str], env: dict[str, str]) -> str:
    """The ``lang`` of the first page of ``mcpkit archive web`` run as a child process."""
    port = free_port()
    child = subprocess.Popen(
        [sys.executable, "-m", "mcpkit.archive.cli", "web", "--db", str(archive), "--port", str(port), *args],
        env={**os.environ, "LC_ALL": "", "LC_MESSAGES": "", **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 120
        while True:  # until the child answers (or exits, or a loaded machine's generous bound passes)
            assert child.poll() is None, child.stderr.read() if child.stderr else ""
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/timeline", timeout=30) as response:
                    return words_of(response.read().decode()).lang
            except (urllib.error.URLError, ConnectionError):
                assert time.monotonic() < deadline, "the web app did not answer"
                time.sleep(0.1)
    finally:
        child.terminate()
        child.wait(30)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "env", "lang"),
    [
        ([], {"LANG": "C.UTF-8"}, "en"),
        (["--lang", "ja"], {"LANG": "C.UTF-8"}, "ja"),
        ([], {"LANG": "ja_JP.UTF-8"}, "ja"),
        (["--lang", "en"], {"LANG": "ja_JP.UTF-8"}, "en"),
    ],
)
def test_the_web_command_serves_pages_in_the_chosen_language(
    archive: Path, args: list[str], env: dict[str, str], lang: str
) -> None:
    assert _served_lang(archive, args, env) == lang
