"""Partial edits of long texts: replace one passage of an issue description or a wiki page.

Sending a whole 30-page description back to change one sentence costs the model the full text
twice and invites a silent loss: a model that read an excerpt, or read before a colleague saved,
writes back a text that drops what it did not see. Here the edit names the passage to replace,
which must occur exactly once, and the version it read (the issue's ``updated_on``, the wiki
page's ``version``); a newer version is refused, saying so, and nothing is written.

Wiki pages are safe against a save in between too: the version read goes with the write and
Redmine refuses it (409) when the page moved on. Redmine's REST API does not expose the issue's
lock version, so for an issue the check is the ``updated_on`` read just before the write.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

import mcp_types

from mcpkit.errors import ValidationError
from mcpkit.redmine.api import RedmineError, seg
from mcpkit.redmine.tools.args import project_ref, uncut
from mcpkit.redmine.tools.base import RedmineContext, redmine_tool
from mcpkit.redmine.tools.results import done, entity_of
from mcpkit.redmine.tools.verify import verified
from mcpkit.redmine.tools.wiki import page_title
from mcpkit.results import Element
from mcpkit.tools import params as p

CATEGORY = "edits"


def occurrences(text: str, passage: str) -> list[int]:
    """Every start of ``passage`` in ``text``, overlapping ones included (``aa`` is twice in ``aaa``)."""
    found: list[int] = []
    start = text.find(passage)
    while start >= 0:
        found.append(start)
        start = text.find(passage, start + 1)
    return found


def line_endings_like(text: str, passage: str) -> str:
    """``passage`` with the line endings ``text`` uses: Redmine stores ``\\r\\n`` from browsers,
    and a model copies ``\\n`` from an answer, since XML reads every line end as ``\\n``."""
    plain = passage.replace("\r\n", "\n")
    return plain.replace("\n", "\r\n") if "\r\n" in text else plain


def replace_once(text: str, old: str, new: str, where: str) -> str:
    """``text`` with its one occurrence of ``old`` replaced by ``new``; none or several is an error."""
    if not old:
        raise ValidationError("old must be the passage to replace, copied exactly; it was empty")
    variants = list(dict.fromkeys([old, line_endings_like(text, old)]))
    hits = [(variant, at) for variant in variants for at in occurrences(text, variant)]
    if not hits:
        raise ValidationError(
            f"old was not found in {where}; copy the passage exactly as it is now, spaces and line breaks included"
        )
    if len(hits) > 1:
        raise ValidationError(
            f"old occurs {len(hits)} times in {where}; include more of the text around it so it occurs once"
        )
    variant, at = hits[0]
    return text[:at] + line_endings_like(text, new) + text[at + len(variant) :]


def moment(value: Any, name: str) -> datetime:
    try:
        return datetime.fromisoformat(str(value).strip().replace("Z", "+00:00"))
    except ValueError:
        raise ValidationError(
            f"{name} must be the time as the answer showed it, such as 2025-01-31T09:30:00Z"
        ) from None


async def edit_text(args: dict[str, Any], rc: RedmineContext) -> mcp_types.CallToolResult:
    issue_id, project, title = args.get("issue_id"), args.get("project"), args.get("title")
    wiki = project is not None or title is not None
    if (issue_id is not None and wiki) or (issue_id is None and not (project and title)):
        raise ValidationError("give issue_id, or project and title of a wiki page; not both")
    old, new = str(args["old"]), uncut(str(args["new"]), "new")
    if issue_id is not None:
        return await edit_description(rc, int(issue_id), old, new, args)
    return await edit_wiki_text(rc, project, title, old, new, args)


async def edit_description(
    rc: RedmineContext, issue_id: int, old: str, new: str, args: Mapping[str, Any]
) -> mcp_types.CallToolResult:
    if not args.get("updated_on"):
        raise ValidationError("updated_on is needed: give the updated_on of the issue as you read it")
    read = moment(args["updated_on"], "updated_on")
    what = f"issue {issue_id}"
    path = f"issues/{issue_id}.json"
    issue = entity_of(await rc.client.get(path, what=what), "issue")
    now = issue.get("updated_on")
    if now and moment(now, "updated_on") != read:
        raise ValidationError(
            f"{what} was updated at {now}, after the version you read ({args['updated_on']}); "
            "read it again with get_issue and edit that text. Nothing was changed"
        )
    text = replace_once(str(issue.get("description") or ""), old, new, f"the description of {what}")
    update: dict[str, Any] = {"description": text}
    if args.get("notes"):
        update["notes"] = str(args["notes"])
    await rc.client.put(path, what=what, json={"issue": update})
    saved = entity_of(await rc.client.get(path, what=what), "issue")
    message = f"Replaced one passage in the description of {what}."
    out = Element("issue", {"id": issue_id})
    out.child("updated_on", None, saved.get("updated_on"))
    return await verified(rc, {"description": text}, saved, message=message, success=done(message, out))


async def edit_wiki_text(
    rc: RedmineContext, project: Any, title: Any, old: str, new: str, args: Mapping[str, Any]
) -> mcp_types.CallToolResult:
    if args.get("version") is None:
        raise ValidationError("version is needed: give the version of the wiki page as you read it")
    ref, name = project_ref(project), page_title(title)
    path, what = f"projects/{seg(ref)}/wiki/{seg(name)}.json", f"wiki page {name} of project {ref}"
    page = entity_of(await rc.client.get(path, what=what), "wiki_page")
    version = page.get("version")
    if version != args["version"]:
        raise ValidationError(
            f"{what} is at version {version}, newer than version {args['version']} you read; "
            "read it again with get_wiki_page and edit that text. Nothing was changed"
        )
    text = replace_once(str(page.get("text") or ""), old, new, f"the text of {what}")
    body: dict[str, Any] = {"text": text, "version": version}
    if args.get("notes"):
        body["comments"] = str(args["notes"])
    try:
        await rc.client.put(path, what=what, json={"wiki_page": body})
    except RedmineError as exc:
        if exc.status == 409:
            raise ValidationError(
                f"{what} was saved by someone else while this edit was made; read it again. Nothing was changed"
            ) from None
        raise
    saved = entity_of(await rc.client.get(path, what=what), "wiki_page")
    message = f"Replaced one passage in {what}."
    out = Element("wiki_page", {"title": saved.get("title")})
    out.child("version", None, saved.get("version"))
    return await verified(rc, {"text": text}, saved, message=message, success=done(message, out))


TOOLS = (
    redmine_tool(
        "edit_text",
        "Replace one passage, occurring once, of an issue description or wiki page.\n"
        "Give the updated on or version read; a newer one is refused.",
        {
            "issue_id": p.integer(minimum=1),
            "project": p.string(),
            "title": p.string(),
            "old": p.string("Exact passage"),
            "new": p.string(),
            "updated_on": p.string(),
            "version": p.integer(minimum=1),
            "notes": p.string("History note"),
        },
        edit_text,
        CATEGORY,
        ("old", "new"),
        "idempotent",
    ),
)
