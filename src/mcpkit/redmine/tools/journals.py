"""Journal note tools: edit or delete the note of one journal entry (Redmine 5.0 and later).

Redmine has no ``GET /journals/:id``, so these tools take the issue number too: the note is
read from the issue before a change (the delete preview shows it) and after (the check).
Deleting a note is ``PUT`` with an empty note; Redmine then removes the journal entirely when
it records no field changes, and keeps the field changes otherwise.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import mcp_types

from mcpkit.errors import ValidationError
from mcpkit.redmine.api import RedmineError
from mcpkit.redmine.permissions import require
from mcpkit.redmine.tools.args import confirmed, uncut
from mcpkit.redmine.tools.base import RedmineContext, redmine_tool
from mcpkit.redmine.tools.issues import ISSUE, PRIVATE_NOTE
from mcpkit.redmine.tools.resource import read
from mcpkit.redmine.tools.results import done, entity_element, preview_result
from mcpkit.redmine.tools.schemas import CONFIRM, ident
from mcpkit.redmine.tools.verify import verified
from mcpkit.tools import params as p

CATEGORY = "issues"


async def find_journal(rc: RedmineContext, issue_id: int, journal_id: int) -> dict[str, Any] | None:
    """The journal entry ``journal_id`` of issue ``issue_id``, or ``None`` when it is gone."""
    return (await issue_and_journal(rc, issue_id, journal_id))[1]


async def issue_and_journal(
    rc: RedmineContext, issue_id: int, journal_id: int
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The issue with its journals, and its entry ``journal_id`` (``None`` when it is gone)."""
    issue = await read(rc, ISSUE, issue_id, ["journals"])
    for journal in issue.get("journals") or []:
        if isinstance(journal, Mapping) and journal.get("id") == journal_id:
            return issue, dict(journal)
    return issue, None


async def journal_of(rc: RedmineContext, issue_id: int, journal_id: int) -> dict[str, Any]:
    found = await find_journal(rc, issue_id, journal_id)
    return _found(found, issue_id, journal_id)


def _found(found: dict[str, Any] | None, issue_id: int, journal_id: int) -> dict[str, Any]:
    if found is None:
        raise RedmineError(
            f"Issue {issue_id} has no journal {journal_id} the key's user can see: check both numbers in get issue",
            status=404,
        )
    return found


async def update_journal_note(args: dict[str, Any], rc: RedmineContext) -> mcp_types.CallToolResult:
    """Replace the note of a journal entry, optionally making it private or public."""
    issue_id: int = args["issue_id"]
    journal_id: int = args["id"]
    issue, journal = await issue_and_journal(rc, issue_id, journal_id)
    _found(journal, issue_id, journal_id)
    change: dict[str, Any] = {"notes": uncut(str(args["notes"]), "notes")}
    private = args.get("private_notes")
    if private is not None:
        change["private_notes"] = private
    if private is True:
        project = (issue.get("project") or {}).get("id")
        await require(rc.client, project, [PRIVATE_NOTE])
    if not change["notes"].strip():
        raise ValidationError("notes is empty: use delete journal note to remove a note")
    await rc.client.put(f"journals/{journal_id}.json", what=f"journal {journal_id}", json={"journal": change})
    after = await journal_of(rc, issue_id, journal_id)
    message = f"Updated the note of journal {journal_id} on issue {issue_id}."
    success = done(message, entity_element(rc, "journal", after))
    return await verified(rc, change, after, message=message, success=success, write_only=frozenset())


async def delete_journal_note(args: dict[str, Any], rc: RedmineContext) -> mcp_types.CallToolResult:
    """Preview the note; with confirm true, empty it so Redmine removes it."""
    issue_id: int = args["issue_id"]
    journal_id: int = args["id"]
    journal = await journal_of(rc, issue_id, journal_id)
    what = f"the note of journal {journal_id} on issue {issue_id}"
    if not confirmed(args):
        return preview_result(what, [entity_element(rc, "journal", journal)])
    await rc.client.put(
        f"journals/{journal_id}.json", what=f"journal {journal_id}", json={"journal": {"notes": ""}}
    )
    after = await find_journal(rc, issue_id, journal_id)
    if after is not None and after.get("notes"):
        raise RedmineError(f"Redmine kept {what}: the key's user may edit only its own notes, or none")
    kept = "; its field changes stay in the history" if after is not None else ""
    return done(f"Deleted {what}{kept}.")


TOOLS = (
    redmine_tool(
        "update_journal_note",
        "Replace the note of one journal entry of an issue, or make it private or public.\n"
        "Find journal numbers with get issue.",
        {
            "issue_id": ident("Issue number"),
            "id": ident("Journal number"),
            "notes": p.string("The new note text", min_length=1),
            "private_notes": p.boolean("True to make the note private, false to make it public"),
        },
        update_journal_note,
        CATEGORY,
        ("issue_id", "id", "notes"),
        "idempotent",
    ),
    redmine_tool(
        "delete_journal_note",
        "Delete the note of one journal entry of an issue; field changes it records stay.\n"
        "Without confirm true it only previews.",
        {"issue_id": ident("Issue number"), "id": ident("Journal number"), "confirm": CONFIRM},
        delete_journal_note,
        CATEGORY,
        ("issue_id", "id"),
        "destructive",
    ),
)
