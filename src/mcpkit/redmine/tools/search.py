"""Redmine's full-text search across issues, wiki pages, news, documents and more."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import mcp_types

from mcpkit.errors import ValidationError
from mcpkit.redmine.api import seg
from mcpkit.redmine.tools.args import paging, project_ref
from mcpkit.redmine.tools.base import RedmineContext, redmine_tool
from mcpkit.redmine.tools.results import page_result
from mcpkit.redmine.tools.schemas import PAGING, PROJECT
from mcpkit.results import Window
from mcpkit.tools import params as p

CATEGORY = "search"
KINDS = ("issues", "news", "documents", "changesets", "wiki_pages", "messages", "projects")
SCOPES = ("all", "my_projects", "subprojects")


def search_params(args: Mapping[str, Any]) -> dict[str, Any]:
    """Tool arguments to ``/search.json`` query parameters (pure)."""
    query = str(args.get("query", "")).strip()
    if not query:
        raise ValidationError("query must not be empty")
    q: dict[str, Any] = {"q": query}
    if args.get("scope"):
        q["scope"] = str(args["scope"])
    for flag in ("all_words", "titles_only", "open_issues"):
        if args.get(flag) is not None:
            q[flag] = "1" if args[flag] else "0"
    kinds = args.get("kinds") or []
    if any(k not in KINDS for k in kinds):
        raise ValidationError(f"kinds must be a list of: {', '.join(KINDS)}")
    for kind in kinds:
        q[kind] = "1"
    return q


async def search(args: dict[str, Any], rc: RedmineContext) -> mcp_types.CallToolResult:
    offset, limit = paging(args)
    path = "search.json"
    if args.get("project") is not None:
        path = f"projects/{seg(project_ref(args['project']))}/search.json"
    page = await rc.client.page(
        path, "results", what="the search", params=search_params(args), offset=offset, limit=limit
    )
    return page_result(rc, "results", page.items, Window(offset, limit, page.total_count), tool="search")


TOOLS = (
    redmine_tool(
        "search",
        "Full-text search across issues, wiki pages, news, documents, changesets, messages and projects.",
        {
            "query": p.string("Words to find", min_length=1),
            "project": PROJECT,
            "scope": p.enum("Where to search when no project is given", SCOPES),
            "kinds": p.array(p.enum("Kind of result", KINDS), "Only these kinds of results"),
            "all_words": p.boolean("Match all words rather than any, default true"),
            "titles_only": p.boolean("Search titles only"),
            "open_issues": p.boolean("Only open issues"),
            **PAGING,
        },
        search,
        CATEGORY,
        ("query",),
    ),
)
