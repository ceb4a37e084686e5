"""The archive's MCP App: the ``ui://`` resource, the tools' link to it, the data the view gets,
and the view itself rendering a tool result in a real browser (the host played by the test)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from html.parser import HTMLParser
from pathlib import Path

import pytest
from mcp import Client

from mcpkit.archive.api import ArchiveAPI
from mcpkit.archive.mcp import ArchiveTools, build_archive_mcp
from mcpkit.archive.web.mcp_app import APP_URI, MIME_TYPE, VIEW_KEY, view_html
from tests.archive.web.test_app import HOSTILE, build_archive
from tests.archive.web.test_browser import CHROMIUM, _browser_ready


@pytest.fixture
async def api(tmp_path: Path) -> AsyncIterator[ArchiveAPI]:
    db, _ = build_archive(tmp_path)
    opened = ArchiveAPI.open(db)
    yield opened
    await opened.aclose()


class _Document(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.refs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.refs += [v or "" for k, v in attrs if k in ("src", "href")]


@pytest.mark.anyio
async def test_the_view_resource_is_listed_linked_and_served(api: ArchiveAPI) -> None:
    async with Client(build_archive_mcp(api).lowlevel) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        for name in ("search_similar", "search_posts_by_text"):
            assert tools[name].meta == {"ui": {"resourceUri": APP_URI}}
        assert all(
            t.meta is None for n, t in tools.items() if n not in ("search_similar", "search_posts_by_text")
        )
        listed = {str(r.uri): r for r in (await client.list_resources()).resources}
        assert listed[APP_URI].mime_type == MIME_TYPE
        read = await client.read_resource(APP_URI)
    (content,) = read.contents
    assert str(content.uri) == APP_URI and content.mime_type == MIME_TYPE
    text = getattr(content, "text", "")
    assert text.lower().startswith("<!doctype html>") and text == view_html()
    parsed = _Document()
    parsed.feed(text)
    assert {"html", "head", "body", "script", "style", "main"} <= set(parsed.tags)
    assert parsed.refs == []  # self-contained: nothing fetched, as the host's default CSP requires


@pytest.mark.anyio
async def test_a_search_keeps_todays_text_and_adds_the_posts_for_the_view(api: ArchiveAPI) -> None:
    plain = next(s for s in ArchiveTools(api).specs() if s.name == "search_posts_by_text")
    today = await plain.handler({"search_term": "coffee", "limit": 5}, None)  # type: ignore[call-arg]
    async with Client(build_archive_mcp(api).lowlevel) as client:
        result = await client.call_tool("search_posts_by_text", {"search_term": "coffee", "limit": 5})
        semantic = await client.call_tool("search_similar", {"query": "coffee", "top_k": 3})
    assert not result.is_error
    assert [c.text for c in result.content] == [c.text for c in today.content]  # type: ignore[union-attr]
    assert result.structured_content is None
    view = result.meta[VIEW_KEY]
    assert view["tool"] == "search_posts_by_text" and view["query"] == "coffee"
    assert len(view["results"]) == 5 and all("coffee" in p["content"] for p in view["results"])
    assert all(isinstance(p["id"], str) for p in view["results"])
    if not semantic.is_error:  # an archive without vectors answers the search's own error
        assert [p["score"] for p in semantic.meta[VIEW_KEY]["results"]]


HOST = """
window.hostSaw = [];
window.addEventListener('message', event => {
  const msg = event.data;
  if (!msg || !msg.method) return;
  window.hostSaw.push(msg.method);
  if (msg.method === 'ui/initialize') {
    window.postMessage({jsonrpc: '2.0', id: msg.id, result: {protocolVersion: '2026-01-26',
      hostCapabilities: {}, hostInfo: {name: 'test host', version: '1'}, hostContext: {}}}, '*');
  }
  if (msg.method === 'ui/notifications/initialized') {
    window.postMessage({jsonrpc: '2.0', method: 'ui/notifications/tool-input',
      params: {arguments: {search_term: 'coffee'}}}, '*');
    window.postMessage({jsonrpc: '2.0', method: 'ui/notifications/tool-result', params: window.toolResult}, '*');
  }
});
"""
"""The host's side, installed before the view's script runs: answers ``ui/initialize``, then
sends the tool's input and result as a host does."""


def test_the_view_renders_a_tool_result_as_text(tmp_path: Path) -> None:
    _browser_ready()
    from playwright.sync_api import sync_playwright

    result = {
        "content": [{"type": "text", "text": "2 posts"}],
        "_meta": {
            VIEW_KEY: {
                "tool": "search_posts_by_text",
                "query": "coffee",
                "results": [
                    {
                        "id": "1",
                        "user": "alice",
                        "timestamp": "2024-01-01 00:00:00",
                        "url": "https://x.com/a/status/1",
                        "content": "coffee time",
                    },
                    {
                        "id": "2",
                        "user": "mallory",
                        "timestamp": "2024-01-02 00:00:00",
                        "url": "javascript:alert(1)",
                        "content": HOSTILE,
                    },
                ],
            }
        },
    }
    page_file = tmp_path / "view.html"
    page_file.write_text(view_html(), encoding="utf-8")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        try:
            page = browser.new_page()
            dialogs: list[str] = []
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            page.add_init_script(f"window.toolResult = {json.dumps(result)};\n{HOST}")
            page.goto(page_file.as_uri())
            page.wait_for_function("() => document.querySelectorAll('#results article').length === 2")
            texts = page.locator("#results .text").all_inner_texts()
            assert texts == ["coffee time", HOSTILE]
            assert page.locator("#results script, #results img").count() == 0
            assert page.locator("#status").inner_text() == "2 posts for “coffee”"
            page.get_by_role("button", name="Show post").nth(1).click()
            assert page.locator("#post-body .text").inner_text() == HOSTILE
            assert dialogs == []
            saw = page.evaluate("() => window.hostSaw")
            assert saw[:2] == ["ui/initialize", "ui/notifications/initialized"]
            assert "ui/notifications/size-changed" in saw
        finally:
            browser.close()
