"""News tools: list, show, create, update, delete (create, update and delete need Redmine 5.0+).

Redmine answers a created news item with an empty 204, so the tool finds it again: the newest
item of the project with the same title by the key's user.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import mcp_types

from mcpkit.redmine.api import RedmineError, seg
from mcpkit.redmine.tools.args import as_text, present, project_ref
from mcpkit.redmine.tools.base import RedmineContext, redmine_tool
from mcpkit.redmine.tools.resource import (
    Listing,
    Resource,
    delete_tool,
    get_tool,
    list_records,
    read,
    update_record,
)
from mcpkit.redmine.tools.results import done_entity
from mcpkit.redmine.tools.schemas import PAGING, PROJECT, as_in_create, ident
from mcpkit.redmine.tools.verify import verified
from mcpkit.tools import params as p

CATEGORY = "news"
NEWS = Resource(
    "news",
    "news",
    "news/{id}",
    "news",
    paged=True,
    includes=("comments", "attachments"),
    shown=("title", "project", "author"),
    id_schema=ident("News number"),
)
PROJECT_NEWS = Resource("news", "news", "news/{id}", "projects/{project}/news", paged=True)


def news_fields(args: Mapping[str, Any]) -> dict[str, Any]:
    return present(args, {"title": as_text, "summary": as_text, "description": as_text})


async def list_news(args: dict[str, Any], rc: RedmineContext) -> mcp_types.CallToolResult:
    """News of one project, or of every project the key can see."""
    res = PROJECT_NEWS if args.get("project") is not None else NEWS
    return await list_records(Listing(res, "list_news", item_call="get_news with id={id}"), args, rc)


async def create_news(args: dict[str, Any], rc: RedmineContext) -> mcp_types.CallToolResult:
    ref = project_ref(args["project"])
    fields = news_fields(args)
    path = f"projects/{seg(ref)}/news.json"
    await rc.client.post(path, what=f"news of project {ref}", json={"news": fields})
    me = (await rc.client.check_key()).get("id")
    recent = await rc.client.page(path, "news", what=f"the news of project {ref}", limit=25)
    mine = [
        n
        for n in recent.items
        if n.get("title") == fields["title"] and (n.get("author") or {}).get("id") == me
    ]
    if not mine:
        raise RedmineError(
            f"Redmine accepted the news for project {ref} but does not list it; check the project news"
        )
    news = await read(rc, NEWS, max(int(n.get("id", 0)) for n in mine))
    message = f"Created news {news.get('id')} in project {ref}."
    return await verified(rc, fields, news, message=message, success=done_entity(rc, message, "news", news))


async def update_news(args: dict[str, Any], rc: RedmineContext) -> mcp_types.CallToolResult:
    return await update_record(rc, NEWS, args["id"], news_fields(args))


FIELDS: dict[str, dict[str, Any]] = {
    "title": p.string("Title", min_length=1),
    "summary": p.string("One-paragraph summary"),
    "description": p.string("Full text in the project text format"),
}

TOOLS = (
    redmine_tool(
        "list_news",
        "List news, newest first, of one project or of every project the key can see.",
        {"project": PROJECT, **PAGING},
        list_news,
        CATEGORY,
    ),
    get_tool(NEWS, "get_news", "Show one news item, optionally with its comments and attachments.", CATEGORY),
    redmine_tool(
        "create_news",
        "Publish news in a project.",
        {"project": PROJECT, **FIELDS},
        create_news,
        CATEGORY,
        ("project", "title", "description"),
        "write",
    ),
    redmine_tool(
        "update_news",
        "Change the title, summary or text of a news item; fields as in create news.",
        {"id": ident("News number"), **as_in_create(FIELDS)},
        update_news,
        CATEGORY,
        ("id",),
        "idempotent",
    ),
    delete_tool(
        NEWS,
        "delete_news",
        "Delete a news item with its comments.\nWithout confirm true it only previews.",
        CATEGORY,
    ),
)
