"""Wiki tools: list, read, write and delete the wiki pages of a project."""

from __future__ import annotations

from typing import Any

from mcpkit.errors import ValidationError
from mcpkit.redmine.api import seg
from mcpkit.redmine.tools.base import (
    CONFIRM,
    PROJECT,
    Ctx,
    confirm_or_preview,
    define,
    done,
    entity_of,
    entity_result,
    list_result,
    num,
    project_ref,
)
from mcpkit.results import Element
from mcpkit.tools import ToolSpec
from mcpkit.tools import params as p

CATEGORY = "wiki"
TITLE = p.string("Page title as in its address, such as Wiki or Release notes", min_length=1, max_length=255)


def page_title(value: Any) -> str:
    """A wiki page title; Redmine stores spaces as underscores and forbids a few characters."""
    title = str(value).strip().replace(" ", "_") if isinstance(value, str) else ""
    if not title or any(ch in title for ch in ",./?;:|"):
        raise ValidationError("title must be non-empty and must not contain , . / ? ; : or |")
    return title


def tools(ctx: Ctx) -> list[ToolSpec]:
    """The wiki tools bound to ``ctx``."""
    client, fmt = ctx.client, ctx.fmt

    def base(args: dict[str, Any]) -> tuple[int | str, str, str]:
        ref = project_ref(args["project"])
        title = page_title(args["title"])
        return ref, title, f"projects/{seg(ref)}/wiki/{seg(title)}"

    async def read(path: str, what: str) -> dict[str, Any]:
        return entity_of(await client.get(f"{path}.json", what=what), "wiki_page")

    async def list_pages(args: dict[str, Any]) -> Any:
        ref = project_ref(args["project"])
        body = await client.get(f"projects/{seg(ref)}/wiki/index.json", what=f"the wiki of project {ref}")
        return list_result(ctx, "wiki_pages", list(body.get("wiki_pages") or []))

    async def get_page(args: dict[str, Any]) -> Any:
        ref, title, path = base(args)
        what = f"wiki page {title} of project {ref}"
        if args.get("version") is not None:
            version = num(args["version"])
            path, what = f"{path}/{version}", f"version {version} of {what}"
        return entity_result(ctx, "wiki_page", {"wiki_page": await read(path, what)})

    async def put_page(args: dict[str, Any]) -> Any:
        ref, title, path = base(args)
        page: dict[str, Any] = {"text": str(args["text"])}
        if args.get("comments"):
            page["comments"] = str(args["comments"])
        if args.get("parent_title"):
            page["parent_title"] = page_title(args["parent_title"])
        what = f"wiki page {title} of project {ref}"
        body = await client.put(f"{path}.json", what=what, json={"wiki_page": page})
        # 201 with the page when created, 204 with nothing when updated: read it back then.
        saved = entity_of(body, "wiki_page") or await read(path, what)
        verb = "Saved" if not body else "Created"
        return done(f"{verb} {what}.", fmt.entity("wiki_page", saved))

    async def delete_page(args: dict[str, Any]) -> Any:
        ref, title, path = base(args)
        what = f"wiki page {title} of project {ref}"

        async def preview() -> list[Element]:
            page = await read(path, what)
            out = Element("wiki_page", {"title": page.get("title", title)})
            out.child("version", None, page.get("version"))
            out.child("updated_on", None, page.get("updated_on"))
            return [out]

        async def delete() -> None:
            await client.delete(f"{path}.json", what=what)

        return await confirm_or_preview(
            args, what=f"{what} with its history and child pages", preview=preview, delete=delete
        )

    return [
        define(
            "list_wiki_pages",
            "List the wiki pages of a project with their titles and versions.",
            {"project": PROJECT},
            list_pages,
            category=CATEGORY,
            required=["project"],
            read_only=True,
        ),
        define(
            "get_wiki_page",
            "Show a wiki page with its text, optionally an older version.",
            {"project": PROJECT, "title": TITLE, "version": p.integer("Older version number", minimum=1)},
            get_page,
            category=CATEGORY,
            required=["project", "title"],
            read_only=True,
        ),
        define(
            "create_or_update_wiki_page",
            "Create a wiki page or replace the text of an existing one; the old text stays in its history.",
            {
                "project": PROJECT,
                "title": TITLE,
                "text": p.string("Full page text in the project text format"),
                "comments": p.string("Comment for the page history"),
                "parent_title": p.string("Title of the parent page"),
            },
            put_page,
            category=CATEGORY,
            required=["project", "title", "text"],
            idempotent=True,
        ),
        define(
            "delete_wiki_page",
            "Delete a wiki page with its history and child pages. Cannot be undone.\n"
            "Without confirm true it only shows what would be deleted.",
            {"project": PROJECT, "title": TITLE, "confirm": CONFIRM},
            delete_page,
            category=CATEGORY,
            required=["project", "title"],
            destructive=True,
        ),
    ]
