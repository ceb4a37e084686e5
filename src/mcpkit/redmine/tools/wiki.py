"""Wiki tools: list, read, write, rename and delete the wiki pages of a project.

Redmine renames a page through the same ``PUT`` that saves it (``title`` in the body), but only
for a user with the Rename wiki pages permission; without it Redmine drops the new title and
still answers 204, so a rename is read back under its new title before it is reported done.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import mcp_types

from mcpkit.errors import ValidationError
from mcpkit.redmine.api import RedmineError, seg
from mcpkit.redmine.tools.args import confirmed, project_ref, uncut
from mcpkit.redmine.tools.base import RedmineContext, redmine_tool
from mcpkit.redmine.tools.resource import Resource, list_tool
from mcpkit.redmine.tools.results import done, done_entity, entity_of, entity_result, preview_result
from mcpkit.redmine.tools.schemas import CONFIRM, PROJECT
from mcpkit.redmine.tools.verify import verified
from mcpkit.results import Element
from mcpkit.tools import params as p

CATEGORY = "wiki"
TITLE = p.string("Page title such as Release notes", min_length=1)
WIKI_INDEX = Resource("wiki_page", "wiki_pages", "", "projects/{project}/wiki/index", what="wiki page")


def page_title(value: Any) -> str:
    """A wiki page title; Redmine stores spaces as underscores and forbids a few characters."""
    title = value.strip().replace(" ", "_") if isinstance(value, str) else ""
    if not title or any(ch in title for ch in ",./?;:|"):
        raise ValidationError("title must be non-empty and must not contain , . / ? ; : or |")
    return title


def page_path(args: Mapping[str, Any]) -> tuple[str, str]:
    """The page's path without ``.json`` and the words that name it in messages."""
    ref = project_ref(args["project"])
    title = page_title(args["title"])
    return f"projects/{seg(ref)}/wiki/{seg(title)}", f"wiki page {title} of project {ref}"


async def read_page(rc: RedmineContext, path: str, what: str) -> dict[str, Any]:
    return entity_of(await rc.client.get(f"{path}.json", what=what), "wiki_page")


def text_source(
    project: Any, page: Mapping[str, Any], title: str, version: int | None = None
) -> dict[str, str]:
    """The read_text source of a page's text: a long page is cut with a pointer to the rest, never whole
    past the answer budget (a wiki page does not say its project, so the caller names it)."""
    source = f"wiki {project_ref(project)} {page.get('title') or title}"
    return {"text": source + (f" version {version}" if version is not None else "")}


async def get_wiki_page(args: dict[str, Any], rc: RedmineContext) -> mcp_types.CallToolResult:
    path, what = page_path(args)
    version = args.get("version")
    if version is not None:
        path, what = f"{path}/{version}", f"version {version} of {what}"
    page = await read_page(rc, path, what)
    title = page_title(args["title"])
    return entity_result(rc, "wiki_page", page, text_source(args["project"], page, title, version))


async def create_or_update_wiki_page(args: dict[str, Any], rc: RedmineContext) -> mcp_types.CallToolResult:
    path, what = page_path(args)
    page: dict[str, Any] = {"text": uncut(str(args["text"]), "text")}
    if args.get("comments"):
        page["comments"] = str(args["comments"])
    if args.get("parent_title"):
        page["parent_title"] = page_title(args["parent_title"])
    body = await rc.client.put(f"{path}.json", what=what, json={"wiki_page": page})
    # 201 with the page when created, 204 with nothing when updated: read it back either way.
    saved = await read_page(rc, path, what)
    message = f"{'Created' if body else 'Saved'} {what}."
    asked = {"text": page["text"]}
    return await verified(
        rc,
        asked,
        saved,
        message=message,
        success=done_entity(
            rc, message, "wiki_page", saved, text_source(args["project"], saved, page_title(args["title"]))
        ),
    )


async def delete_wiki_page(args: dict[str, Any], rc: RedmineContext) -> mcp_types.CallToolResult:
    path, what = page_path(args)
    page = await read_page(rc, path, what)
    out = Element("wiki_page", {"title": page.get("title")})
    out.child("version", None, page.get("version"))
    out.child("updated_on", None, page.get("updated_on"))
    whole = f"{what} with its history and child pages"
    if not confirmed(args):
        return preview_result(whole, [out])
    await rc.client.delete(f"{path}.json", what=what)
    return done(f"Deleted {whole}.")


async def rename_wiki_page(args: dict[str, Any], rc: RedmineContext) -> mcp_types.CallToolResult:
    path, what = page_path(args)
    new_title = page_title(args["new_title"])
    page = await read_page(rc, path, what)
    body: dict[str, Any] = {
        "title": new_title,
        "text": page.get("text") or "",
        "version": page.get("version"),
        "redirect_existing_links": "0" if args.get("redirect") is False else "1",
    }
    await rc.client.put(f"{path}.json", what=what, json={"wiki_page": body})
    ref = project_ref(args["project"])
    moved_to, moved_what = (
        f"projects/{seg(ref)}/wiki/{seg(new_title)}",
        f"wiki page {new_title} of project {ref}",
    )
    try:
        saved = await read_page(rc, moved_to, moved_what)
    except RedmineError as exc:
        if exc.status != 404:
            raise
        saved = {}
    if saved.get("title") != new_title:
        raise ValidationError(
            f"Redmine answered but did not rename {what} to {new_title}: the key's user likely lacks "
            "the Rename wiki pages permission, or the title is taken"
        )
    return done_entity(
        rc,
        f"Renamed {what} to {new_title}.",
        "wiki_page",
        saved,
        text_source(args["project"], saved, new_title),
    )


TOOLS = (
    list_tool(
        WIKI_INDEX,
        "list_wiki_pages",
        "List the wiki pages of a project with their titles and versions.",
        CATEGORY,
    ),
    redmine_tool(
        "get_wiki_page",
        "Show a wiki page with its text, optionally an older version.",
        {"project": PROJECT, "title": TITLE, "version": p.integer("Older version number", minimum=1)},
        get_wiki_page,
        CATEGORY,
        ("project", "title"),
    ),
    redmine_tool(
        "create_or_update_wiki_page",
        "Create a wiki page or replace the text of an existing one; the old text stays in its history.",
        {
            "project": PROJECT,
            "title": TITLE,
            "text": p.string("Full page text in the project text format"),
            "comments": p.string("Comment for the page history"),
            "parent_title": p.string("Title of the parent page"),
        },
        create_or_update_wiki_page,
        CATEGORY,
        ("project", "title", "text"),
        "idempotent",
    ),
    redmine_tool(
        "rename_wiki_page",
        "Rename a wiki page; the old title redirects to it unless redirect is false.",
        {"project": PROJECT, "title": TITLE, "new_title": p.string(min_length=1), "redirect": p.boolean()},
        rename_wiki_page,
        CATEGORY,
        ("project", "title", "new_title"),
        "idempotent",
    ),
    redmine_tool(
        "delete_wiki_page",
        "Delete a wiki page with its history and child pages. Cannot be undone.\n"
        "Without confirm true it only previews.",
        {"project": PROJECT, "title": TITLE, "confirm": CONFIRM},
        delete_wiki_page,
        CATEGORY,
        ("project", "title"),
        "destructive",
    ),
)
