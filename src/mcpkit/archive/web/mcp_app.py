"""The archive's search and post views as an MCP App (the ``io.modelcontextprotocol/ui``
extension, SEP-1865, stable 2026-01-26).

What this follows of the specification:

* one UI resource, ``ui://mcpkit-archive/search``, of MIME type ``text/html;profile=mcp-app``,
  listed by ``resources/list`` and served by ``resources/read`` as one self-contained HTML5
  document (its style and script inline, nothing fetched: the host's default CSP allows no
  connection and no remote resource, and this view needs none);
* the two search tools name it in their definition's ``_meta.ui.resourceUri`` (visible to
  model and app, the default); a host without the extension ignores ``_meta`` and shows
  exactly today's text;
* a tool result keeps today's text ``content`` (what the model reads and text-only hosts show)
  and adds the posts as data in the result's ``_meta`` under ``mcpkit/archive-view``, which
  hosts pass to the view in ``ui/notifications/tool-result`` and never put in the model's
  context (``structuredContent`` would be, by some clients, in place of the text);
* the view speaks JSON-RPC over ``postMessage``: ``ui/initialize`` then
  ``ui/notifications/initialized``; it renders ``tool-input`` and ``tool-result``
  notifications, asks the host for ``tools/call`` when the person searches again inside it,
  ``ui/open-link`` for a post's original, and reports its height with
  ``ui/notifications/size-changed``. Post text is set as text, never as markup.
"""

from __future__ import annotations

import contextvars
import dataclasses
from collections.abc import Mapping, Sequence
from importlib import resources
from typing import TYPE_CHECKING, Any

from mcpkit.archive.rpc.api_protocol import ArchiveAPIProtocol
from mcpkit.tools import ToolContext, ToolSpec

if TYPE_CHECKING:
    from mcpkit.server import ResourceSpec

__all__ = ["APP_URI", "MIME_TYPE", "VIEW_KEY", "AppView", "view_html"]

APP_URI = "ui://mcpkit-archive/search"
MIME_TYPE = "text/html;profile=mcp-app"
VIEW_KEY = "mcpkit/archive-view"
"""The result ``_meta`` key holding the posts the view shows."""
_TOOLS = ("search_similar", "search_posts_by_text")
_answers: contextvars.ContextVar[dict[str, Any] | None] = contextvars.ContextVar("archive_view", default=None)


def view_html() -> str:
    """The view: one HTML5 document shipped in the package."""
    return (resources.files("mcpkit.archive.web") / "templates" / "mcp_app.html").read_text(encoding="utf-8")


def _item(post: Mapping[str, Any], score: float | None = None) -> dict[str, Any]:
    item = {
        "id": str(post.get("post_id", "")),
        "user": post.get("user", ""),
        "timestamp": post.get("timestamp", ""),
        "url": post.get("url", ""),
        "content": post.get("content", ""),
    }
    if score is not None:
        item["score"] = round(float(score), 4)
    return item


def view_data(tool: str, args: Mapping[str, Any], answer: Any) -> dict[str, Any]:
    """What the view shows of one search's API answer."""
    if tool == "search_similar":
        items = [_item(hit.get("post", {}), hit.get("score")) for hit in answer or []]
        query = str(args.get("query", ""))
    else:
        items = [_item(post) for post in answer or []]
        query = str(args.get("search_term", ""))
    return {"tool": tool, "query": query, "results": items}


class _RecordingAPI:
    """The API as the tools see it: every answer is also kept for the running tool call, so
    the view gets the posts the text was made from without a second search."""

    def __init__(self, api: ArchiveAPIProtocol) -> None:
        self._api = api

    async def call(self, method: str, params: Any) -> Any:
        answer = await self._api.call(method, params)
        box = _answers.get()
        if box is not None:
            box[method] = answer
        return answer

    def __getattr__(self, name: str) -> Any:
        return getattr(self._api, name)


class AppView:
    """Adds the view to the archive's MCP server: the API the tools call, the tools' UI link
    and results' data, and the resource."""

    def __init__(self, api: ArchiveAPIProtocol) -> None:
        self.api: ArchiveAPIProtocol = _RecordingAPI(api)

    def tools(self, specs: Sequence[ToolSpec]) -> list[ToolSpec]:
        return [self._with_view(spec) if spec.name in _TOOLS else spec for spec in specs]

    @staticmethod
    def _with_view(spec: ToolSpec) -> ToolSpec:
        original: Any = spec.handler  # the archive's search tools take their ToolContext

        async def handler(args: dict[str, Any], ctx: ToolContext) -> Any:
            box: dict[str, Any] = {}
            token = _answers.set(box)
            try:
                result = await original(args, ctx)
            finally:
                _answers.reset(token)
            if spec.name not in box or isinstance(result, str) or getattr(result, "is_error", False):
                return result
            meta = {**(result.meta or {}), VIEW_KEY: view_data(spec.name, args, box[spec.name])}
            return result.model_copy(update={"meta": meta})

        meta = {**spec.meta, "ui": {"resourceUri": APP_URI}}
        return dataclasses.replace(spec, handler=handler, meta=meta)

    @staticmethod
    def resources() -> list[ResourceSpec]:
        from mcpkit.server import ResourceSpec

        async def read() -> str:
            return view_html()

        return [
            ResourceSpec(
                uri=APP_URI,
                name="archive_search_view",
                read=read,
                description="Search results and posts of the archive as a page.",
                mime_type=MIME_TYPE,
            )
        ]
