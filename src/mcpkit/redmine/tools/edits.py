"""Partial edits of long texts: replace one passage of an issue description or a wiki page.

Sending a whole 30-page description back to change one sentence costs the model the full text
twice and invites a silent loss: a model that read an excerpt, or read before a colleague saved,
writes back a text that drops what it did not see. Here the edit names the passage to replace,
which must occur exactly once, and the hash of the text it read (``hash`` on the description in
``get_issue``, on the text in ``get_wiki_page``, in ``read_text``'s first line); a text whose hash
is no longer that is refused, saying so, and nothing is written.

The check used to be the issue's ``updated_on``, which has whole seconds: a save in the same
second as the read looked like no save. The hash changes with the text itself. Wiki pages are
also safe against a save between this server's read and its write: the version just read goes
with the write and Redmine refuses it (409) when the page moved on. Redmine's REST API does not
expose an issue's lock version, so for an issue that window is the time between two requests.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import mcp_types

from mcpkit.errors import ValidationError
from mcpkit.redmine.api import RedmineError, seg
from mcpkit.redmine.tools.args import project_ref, uncut
from mcpkit.redmine.tools.base import RedmineContext, redmine_tool
from mcpkit.redmine.tools.results import done, entity_of, text_hash
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


def checked(args: Mapping[str, Any], text: str, what: str, reader: str) -> None:
    """Refuse an edit whose ``hash`` is not the hash of ``text``, the text as it is now."""
    given = " ".join(str(args.get("hash") or "").split()).lower()
    if not given:
        raise ValidationError(f"hash is needed: give the hash {reader} showed on the text you read")
    now = text_hash(text)
    if given != now:
        raise ValidationError(
            f"{what} changed since you read it (its hash is now {now}, not {given}); "
            f"read it again with {reader} and edit that text. Nothing was changed"
        )


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
    what = f"issue {issue_id}"
    path = f"issues/{issue_id}.json"
    issue = entity_of(await rc.client.get(path, what=what), "issue")
    current = str(issue.get("description") or "")
    checked(args, current, f"the description of {what}", "get_issue")
    text = replace_once(current, old, new, f"the description of {what}")
    update: dict[str, Any] = {"description": text}
    if args.get("notes"):
        update["notes"] = str(args["notes"])
    await rc.client.put(path, what=what, json={"issue": update})
    saved = entity_of(await rc.client.get(path, what=what), "issue")
    message = f"Replaced one passage in the description of {what}."
    out = Element("issue", {"id": issue_id})
    out.child("hash", None, text_hash(str(saved.get("description") or "")))
    out.child("updated_on", None, saved.get("updated_on"))
    return await verified(rc, {"description": text}, saved, message=message, success=done(message, out))


async def edit_wiki_text(
    rc: RedmineContext, project: Any, title: Any, old: str, new: str, args: Mapping[str, Any]
) -> mcp_types.CallToolResult:
    ref, name = project_ref(project), page_title(title)
    path, what = f"projects/{seg(ref)}/wiki/{seg(name)}.json", f"wiki page {name} of project {ref}"
    page = entity_of(await rc.client.get(path, what=what), "wiki_page")
    current = str(page.get("text") or "")
    checked(args, current, what, "get_wiki_page")
    text = replace_once(current, old, new, f"the text of {what}")
    # The version just read goes with the write: Redmine refuses it (409) if a save came between.
    body: dict[str, Any] = {"text": text, "version": page.get("version")}
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
    out.child("hash", None, text_hash(str(saved.get("text") or "")))
    out.child("version", None, saved.get("version"))
    return await verified(rc, {"text": text}, saved, message=message, success=done(message, out))


TOOLS = (
    redmine_tool(
        "edit_text",
        "Replace one passage, occurring once, of an issue description or wiki page.\n"
        "Give the hash shown on the text you read; a text changed since is refused.",
        {
            "issue_id": p.integer(minimum=1),
            "project": p.string(),
            "title": p.string(),
            "old": p.string("Exact passage"),
            "new": p.string(),
            "hash": p.string("Hash shown on the text read", min_length=1),
            "notes": p.string("History note"),
        },
        edit_text,
        CATEGORY,
        ("old", "new", "hash"),
        "idempotent",
    ),
)
