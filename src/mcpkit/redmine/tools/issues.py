"""Issue tools: list (filters and saved queries), show with paged journals, create, update,
copy, move, delete, watchers.

Every write is verified: the issue is read back and each field asked for is compared, so a
status the workflow forbids or an unknown tracker is an error, never a silent success.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from functools import partial
from typing import Any

import mcp_types

from mcpkit.errors import ValidationError
from mcpkit.redmine.api import RedmineError
from mcpkit.redmine.permissions import Need, require
from mcpkit.redmine.tools import autofill
from mcpkit.redmine.tools.args import (
    as_given,
    as_hours,
    as_text,
    custom_fields,
    date_text,
    ids,
    includes,
    paging,
    present,
    project_ref,
    require_some,
)
from mcpkit.redmine.tools.base import RedmineContext, redmine_tool
from mcpkit.redmine.tools.custom_fields import create_failure_hint
from mcpkit.redmine.tools.fields import SCHEMA as FIELDS_SCHEMA
from mcpkit.redmine.tools.fields import chosen, only
from mcpkit.redmine.tools.names import PRIORITY, STATUS, TRACKER, USER, lookup_ref, ref, resolved
from mcpkit.redmine.tools.projects import project_id
from mcpkit.redmine.tools.resource import Count, Resource, delete_tool, list_tool, read
from mcpkit.redmine.tools.results import (
    answer_budget,
    done,
    entity_element,
    entity_of,
    fitted_result,
    page_element,
    reads_with,
)
from mcpkit.redmine.tools.schemas import (
    CUSTOM_FIELDS,
    DATE,
    NUMBER_OR_NAME,
    PROJECT,
    USER_OR_ME,
    as_in_create,
    hours_schema,
    ident,
)
from mcpkit.redmine.tools.verify import WRITE_ONLY, Change, describe_changes, side_effects, verified
from mcpkit.results import Window, error_result
from mcpkit.tools import current_context
from mcpkit.tools import params as p

CATEGORY = "issues"
LIST_INCLUDES = ("attachments", "relations")
SHOW_INCLUDES = (
    "journals",
    "children",
    "relations",
    "watchers",
    "attachments",
    "changesets",
    "allowed_statuses",
)
DEFAULT_SHOW = ("journals", "children", "relations", "watchers", "attachments")
JOURNAL_KINDS = ("all", "notes", "private")
_DATE = r"\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2})?Z?)?"
_DATE_FILTER = re.compile(
    rf"^(>=|<=|=)?{_DATE}$|^><{_DATE}\|{_DATE}$|^(!\*|\*|t|ld|w|lw|l2w|m|lm|y)$|^[<>]t[-+]?\d+$"
)
_SORT = re.compile(r"^[a-z0-9_.]+(:(asc|desc))?(,[a-z0-9_.]+(:(asc|desc))?)*$")

ISSUE = Resource(
    "issue",
    "issues",
    "issues/{id}",
    "issues",
    paged=True,
    shown=("subject", "project", "status"),
    counts=(
        Count("subtasks", "issues.json", "issues", lambda r: {"parent_id": r["id"], "status_id": "*"}),
        Count("time_entries", "time_entries.json", "time_entries", lambda r: {"issue_id": r["id"]}),
    ),
    id_schema=ident("Issue number"),
    fields=(
        "id",
        "project",
        "tracker",
        "status",
        "priority",
        "author",
        "assigned_to",
        "category",
        "fixed_version",
        "parent",
        "subject",
        "description",
        "start_date",
        "due_date",
        "done_ratio",
        "is_private",
        "estimated_hours",
        "total_estimated_hours",
        "spent_hours",
        "total_spent_hours",
        "custom_fields",
        "created_on",
        "updated_on",
        "closed_on",
    ),
    includes=LIST_INCLUDES,
    brief=("id", "subject", "status", "assigned_to", "updated_on"),
)


def _date_filter(value: Any, name: str) -> str:
    text = value.strip() if isinstance(value, str) else ""
    if not _DATE_FILTER.match(text):
        raise ValidationError(
            f"{name}: {str(value)[:40]!r} is not a date filter; use a date like 2025-01-31 with an optional "
            "operator >=, <= or =, or ><2025-01-01|2025-01-31 for a range"
        )
    return text


QUERY_IGNORES = (
    "status",
    "tracker",
    "assigned_to",
    "author",
    "priority",
    "parent",
    "version",
    "category",
    "subject",
    "created",
    "updated",
    "custom_fields",
)


def issue_filters(args: Mapping[str, Any]) -> dict[str, Any]:
    """Tool arguments to Redmine's ``/issues.json`` query parameters (pure, for tests)."""
    q: dict[str, Any] = {}
    if args.get("project") is not None:
        q["project_id"] = project_ref(args["project"])
    if args.get("query_id") is not None:
        q["query_id"] = args["query_id"]
        # Redmine runs a saved query as saved and silently ignores filters sent with it.
        ignored = sorted(k for k in QUERY_IGNORES if args.get(k) not in (None, "", []))
        if ignored:
            raise ValidationError(
                f"query_id runs the saved query as saved and Redmine ignores {', '.join(ignored)} with it: "
                "drop them, or filter without query_id"
            )
    if args.get("status") is not None:
        # Redmine's own words first: a filter "closed" means every closed status.
        q["status_id"] = ref(args["status"], STATUS, "status", words=("open", "closed", "*"))
    for arg, field in (
        ("parent", "parent_id"),
        ("version", "fixed_version_id"),
        ("category", "category_id"),
    ):
        if args.get(arg) is not None:
            q[field] = args[arg]
    for arg, field, kind in (("tracker", "tracker_id", TRACKER), ("priority", "priority_id", PRIORITY)):
        if args.get(arg) is not None:
            q[field] = ref(args[arg], kind, arg)
    for arg, field in (("assigned_to", "assigned_to_id"), ("author", "author_id")):
        if args.get(arg) is not None:
            q[field] = ref(args[arg], USER, arg, words=("me",))
    for arg, field in (("created", "created_on"), ("updated", "updated_on")):
        if args.get(arg) is not None:
            q[field] = _date_filter(args[arg], arg)
    if args.get("subject"):
        q["subject"] = "~" + str(args["subject"])
    for cf in custom_fields(args) or []:
        value = cf["value"]
        q[f"cf_{cf['id']}"] = "|".join(value) if isinstance(value, list) else value
    if args.get("sort") is not None:
        sort = str(args["sort"]).strip()
        if not _SORT.match(sort):
            raise ValidationError("sort must look like id:desc or priority:desc,id")
        q["sort"] = sort
    include = includes(args.get("include"))
    if include:
        q["include"] = ",".join(include)
    return q


def issue_fields(args: Mapping[str, Any], *, me: int | None = None) -> dict[str, Any]:
    """Tool arguments to the body of ``{"issue": ...}`` for create and update (pure)."""
    fields = present(
        args,
        {
            "subject": as_text,
            "description": as_text,
            "category_id": as_given,
            "fixed_version_id": as_given,
            "parent_issue_id": as_given,
            "start_date": date_text,
            "due_date": date_text,
            "estimated_hours": as_hours,
            "is_private": as_given,
            "notes": as_text,
            "private_notes": as_given,
        },
    )
    if args.get("done_ratio") is not None:
        fields["done_ratio"] = args["done_ratio"]
    for name, kind in (("tracker_id", TRACKER), ("status_id", STATUS), ("priority_id", PRIORITY)):
        if args.get(name) is not None:
            fields[name] = ref(args[name], kind, name)
    if args.get("assigned_to") is not None:
        who = ref(args["assigned_to"], USER, "assigned_to", words=("me",))
        if who == "me":
            if me is None:
                raise ValidationError("assigned_to me needs the key owner, which is unknown")
            fields["assigned_to_id"] = me
        else:
            fields["assigned_to_id"] = who
    if args.get("project") is not None:
        fields["project_id"] = project_ref(args["project"])
    watchers = ids(args, "watcher_user_ids")
    if watchers is not None:
        fields["watcher_user_ids"] = watchers
    cfs = custom_fields(args)
    if cfs is not None:
        fields["custom_fields"] = cfs
    return fields


async def my_id(rc: RedmineContext) -> int | None:
    """The number of the key's user."""
    uid = (await rc.client.check_key()).get("id")
    return uid if isinstance(uid, int) else None


async def body_fields(rc: RedmineContext, args: Mapping[str, Any], *, project: Any = None) -> dict[str, Any]:
    """``issue_fields`` with ``me``, names and project identifiers resolved to numbers.

    ``project`` is where the issue is (for an update), so a member who may not list users finds
    an assignee by name among the project's members."""
    me = await my_id(rc) if str(args.get("assigned_to", "")).strip().lower() == "me" else None
    fields = issue_fields(args, me=me)
    if isinstance(fields.get("project_id"), str):
        # Identifiers work for creation but not everywhere in Redmine: send the number.
        fields["project_id"] = await project_id(rc.client, fields["project_id"])
    return await resolved(rc, fields, fields.get("project_id") or project)


PRIVATE_NOTE = Need(
    "private_notes", ("set_notes_private",), "store the note as public, readable by everyone on the project"
)
NOTE = Need("notes", ("add_issue_notes",), "drop the note")
WATCHERS = Need("watcher_user_ids", ("add_issue_watchers",), "create the issue without these watchers")


def private_issue(own: bool) -> Need:
    """Setting the private flag: any issue, or also the user's own issues (its creations)."""
    perms = ("set_issues_private", "set_own_issues_private") if own else ("set_issues_private",)
    return Need("is_private", perms, "ignore the private flag, leaving the issue visible to the project")


# What Redmine lets only a role with edit_issues (or edit_own_issues, on the user's own issue) set
# on an existing issue (Issue#attributes_editable?); it drops them from an update that also holds a
# note the role may add, and stores the note alone.
EDITED = frozenset(
    {
        "project_id",
        "tracker_id",
        "status_id",
        "category_id",
        "assigned_to_id",
        "priority_id",
        "fixed_version_id",
        "subject",
        "description",
        "start_date",
        "due_date",
        "done_ratio",
        "estimated_hours",
        "custom_fields",
        "parent_issue_id",
    }
)
# What a parent issue takes from its subtasks under Redmine's default settings (Administration,
# Settings, Issue tracking: "Parent tasks attributes", each derived or independent).
DERIVED = frozenset({"priority_id", "start_date", "due_date", "done_ratio"})
PARENT_FIELDS = ("priority", "start_date", "due_date", "done_ratio")


def edits(fields: Mapping[str, Any], *, own: bool) -> Need | None:
    """Fields of an update that need the permission to edit the issue, as one need."""
    named = [f for f in fields if f in EDITED]
    if not named:
        return None
    perms = ("edit_issues", "edit_own_issues") if own else ("edit_issues",)
    what = ", ".join(named)
    harm = f"store the note but not {what}" if fields.get("notes") else f"ignore {what}"
    return Need(what, perms, harm, strict=False)


SUBTASKS = Need("parent_issue_id", ("manage_subtasks",), "ignore the parent issue", strict=False)


def guarded(fields: Mapping[str, Any], *, own: bool, new: bool) -> list[Need]:
    """The fields of an issue write whose silent drop would expose or lose something, or half-apply it."""
    needs: list[Need] = []
    edited = None if new else edits(fields, own=own)
    if edited is not None:
        needs.append(edited)
    if fields.get("parent_issue_id"):
        needs.append(SUBTASKS)
    if fields.get("notes"):
        needs.append(NOTE)
        if fields.get("private_notes") is True:
            needs.append(PRIVATE_NOTE)
    if "is_private" in fields:
        needs.append(private_issue(own))
    if new and fields.get("watcher_user_ids"):
        needs.append(WATCHERS)
    return needs


async def check_allowed(rc: RedmineContext, project: object, needs: list[Need]) -> None:
    """Refuse the write before it is sent when a guarded field would be dropped (see permissions)."""
    if needs:
        await require(rc.client, project, needs)


def check_status(issue: Mapping[str, Any], fields: Mapping[str, Any], asked: object) -> None:
    """Refuse, before anything is sent, a status the workflow does not let the key's user set.

    ``issue`` was read with ``allowed_statuses``: what Redmine itself offers this user for this
    issue (its role's workflow, a parent with open subtasks not closable). With a new tracker or
    project the statuses Redmine would offer differ, and the check after the write decides."""
    status = fields.get("status_id")
    allowed = issue.get("allowed_statuses")
    if status is None or "tracker_id" in fields or "project_id" in fields or not isinstance(allowed, list):
        return
    now = issue.get("status")
    now = now if isinstance(now, Mapping) else {}
    if status == now.get("id"):
        return
    offered = [s for s in allowed if isinstance(s, Mapping) and s.get("id") != now.get("id")]
    if any(s.get("id") == status for s in offered):
        return
    where = f"issue {issue.get('id')}, now {now.get('name')}"
    if not offered:
        choices = "it offers no other status to the key's user"
    else:
        choices = "it offers only " + ", ".join(f"{s.get('name')} ({s.get('id')})" for s in offered)
    if issue.get("children"):
        choices += " (an issue whose subtasks are open cannot be closed)"
    raise RedmineError(
        f"Nothing was sent: Redmine's workflow does not let the key's user set status {asked} on {where}; "
        f"{choices}; leave out status_id or choose one of those",
        status=403,
    )


async def parents_of(rc: RedmineContext, ids: list[Any]) -> dict[int, dict[str, Any]]:
    """The parent issues a write may change, as they are before it (an unreadable one is left out)."""
    out: dict[int, dict[str, Any]] = {}
    for pid in dict.fromkeys(i for i in ids if isinstance(i, int)):
        try:
            out[pid] = await read(rc, ISSUE, pid)
        except RedmineError:
            continue
    return out


async def parent_changes(rc: RedmineContext, before: Mapping[int, Mapping[str, Any]]) -> str:
    """`` Redmine also changed parent issue 7: priority Normal -> Urgent ...`` for what its subtask did."""
    said = []
    for pid, was in before.items():
        try:
            now = await read(rc, ISSUE, pid)
        except RedmineError:
            continue
        changed = side_effects(
            {k: was.get(k) for k in PARENT_FIELDS}, {k: now.get(k) for k in PARENT_FIELDS}, {}
        )
        if changed:
            said.append(f"parent issue {pid}: {await describe_changes(changed)}")
    if not said:
        return ""
    return f" Redmine also changed {'; '.join(said)}, which a parent takes from its subtasks."


# -- reading -------------------------------------------------------------------------------------


def journal_kind(journal: Mapping[str, Any], kind: str) -> bool:
    """Whether a journal belongs in the view: every change, those with a note, or private notes."""
    has_note = bool(journal.get("notes"))
    if kind == "notes":
        return has_note
    if kind == "private":
        return has_note and bool(journal.get("private_notes"))
    return True


def issue_element(rc: RedmineContext, issue: Mapping[str, Any], args: Mapping[str, Any]) -> Any:
    """The issue in full, its journals paged (newest last) and its watchers as a full list."""
    issue_id = issue.get("id")
    fields = {k: v for k, v in issue.items() if k not in ("journals", "watchers")}
    element = entity_element(rc, "issue", fields)
    if "journals" in issue:
        kind = str(args.get("journals") or "all")
        journals = [
            j for j in issue.get("journals") or [] if isinstance(j, Mapping) and journal_kind(j, kind)
        ]
        offset, limit = paging(args, "journals_")
        window = Window(offset, limit, len(journals))
        extra = "" if kind == "all" else f", journals={kind}"
        page = page_element(
            RedmineContext(rc.client, rc.fmt.full()),
            "journals",
            journals[offset : offset + limit],
            window,
            next_call=f"get_issue with id={issue_id}{extra} and journals_offset={{offset}}",
        )
        for journal in page.children:
            jid = next((c.text for c in journal.children if c.tag == "id"), None)
            for notes in (c for c in journal.children if c.tag == "notes"):
                reads_with(notes, f"issue {issue_id} journal {jid}")
        element.add(page)
    if "watchers" in issue:
        watchers = list(issue.get("watchers") or [])
        element.add(
            page_element(
                rc,
                "watchers",
                watchers,
                Window(0, max(1, len(watchers)), len(watchers)),
                next_call=f"get_issue with id={issue_id} and include watchers only",
                item_tag="user",
            )
        )
    return element


async def get_issue(args: dict[str, Any], rc: RedmineContext) -> mcp_types.CallToolResult:
    """One issue with its fields in full and its journals paged."""
    issue_id: int = args["id"]
    keep = chosen(args, noun="an issue", known=(*ISSUE.fields, *SHOW_INCLUDES))
    paged = args.get("journals_offset") is not None or args.get("journals") is not None
    if keep is not None and paged:
        keep = keep | {"journals"}
    # With fields, the extra data read is what they name, unless include says otherwise.
    default = DEFAULT_SHOW if keep is None else tuple(i for i in SHOW_INCLUDES if i in keep)
    include = includes(args.get("include"), default)
    if paged:
        include = list(dict.fromkeys([*include, "journals"]))
    issue = await read(rc, ISSUE, issue_id, include)
    return fitted_result(issue_element(rc, only(issue, keep), args), answer_budget(rc))


# -- writing -------------------------------------------------------------------------------------


async def create_issue(args: dict[str, Any], rc: RedmineContext) -> mcp_types.CallToolResult:
    """Create, then compare Redmine's answer (and its watchers, when some were asked) with what was asked."""
    fields = await body_fields(rc, args)
    given = await autofill.prefill(rc, "issue", fields)
    if isinstance(fields.get("project_id"), int):
        await check_allowed(rc, fields["project_id"], guarded(fields, own=True, new=True))
    parents = await parents_of(rc, [fields.get("parent_issue_id")])
    try:
        body = await rc.client.post("issues.json", what="the new issue", json={"issue": fields})
    except RedmineError as exc:
        if exc.status != 422:
            raise
        # Redmine names a missing required custom field by name only; the hint gives its id and values.
        hint = await create_failure_hint(rc, fields.get("project_id"), fields.get("tracker_id"), str(exc))
        if not hint:
            raise
        raise RedmineError(f"{str(exc).rstrip('.')}. {hint}", status=exc.status) from None
    issue = entity_of(body, "issue")
    got = dict(issue)
    if fields.get("watcher_user_ids") and isinstance(issue.get("id"), int):
        got["watchers"] = await watchers_of(rc, issue["id"])
        got["watcher_user_ids"] = [w.get("id") for w in got["watchers"] if isinstance(w, Mapping)]
    message = f"Created issue {issue.get('id')}.{autofill.said(given, issue)}"
    return await verified(
        rc,
        fields,
        got,
        message=message,
        success=issue_done(rc, message, issue),
        write_only=WRITE_ONLY - {"watcher_user_ids"},
        rebuild=lambda text: issue_done(rc, text, issue),
        also=await parent_changes(rc, parents),
    )


def issue_done(
    rc: RedmineContext, message: str, issue: Mapping[str, Any], args: Mapping[str, Any] | None = None
) -> mcp_types.CallToolResult:
    """A successful issue write with the issue as Redmine now has it (``args`` page its journals)."""
    element = issue_element(rc, issue, args) if args is not None else entity_element(rc, "issue", issue)
    return done(message, element, limit=answer_budget(rc))


async def update_issue(args: dict[str, Any], rc: RedmineContext) -> mcp_types.CallToolResult:
    """Change the given fields; Redmine answers 204, so read the issue back and compare.

    The issue is read before the write too: for the permissions of guarded fields (a private
    note) and to name every field Redmine changed on its own (a move that switched the tracker).
    """
    issue_id: int = args["id"]
    require_some(issue_fields(args, me=0), f"issue {issue_id}")
    # What the checks before the write need: the statuses Redmine offers, whether it has subtasks.
    extra = [
        name
        for name, why in (("allowed_statuses", {"status_id"}), ("children", DERIVED | {"status_id"}))
        if args.keys() & why
    ]
    before = await read(rc, ISSUE, issue_id, extra or None)
    fields = await body_fields(rc, args, project=(before.get("project") or {}).get("id"))
    if guarded(fields, own=False, new=False):
        own = (before.get("author") or {}).get("id") == await my_id(rc)
        project = fields.get("project_id") or (before.get("project") or {}).get("id")
        await check_allowed(rc, project, guarded(fields, own=own, new=False))
    check_status(before, fields, args.get("status_id"))
    derived = DERIVED & fields.keys() if before.get("children") else frozenset()
    parent = (before.get("parent") or {}).get("id")
    touched = fields.keys() & (DERIVED | {"status_id", "parent_issue_id"})
    parents = await parents_of(rc, [parent, fields.get("parent_issue_id")]) if touched else {}
    await rc.client.put(f"issues/{issue_id}.json", what=f"issue {issue_id}", json={"issue": fields})
    noted = "notes" in fields
    issue = await read(rc, ISSUE, issue_id, ["journals"] if noted else None)
    message = f"Updated issue {issue_id}."
    # With a note, the answer shows the newest journal entry: the one just added.
    newest = {"journals_offset": max(0, len(issue.get("journals") or []) - 1), "journals_limit": 1}
    got = dict(issue)
    write_only = WRITE_ONLY
    if noted:
        last = (issue.get("journals") or [{}])[-1]
        got["note"] = last.get("notes") if isinstance(last, Mapping) else None
        fields = {**fields, "note": fields["notes"]}
        if "private_notes" in fields and isinstance(last, Mapping):
            got["private_notes"] = bool(last.get("private_notes"))
            write_only = WRITE_ONLY - {"private_notes"}
    return await verified(
        rc,
        fields,
        got,
        message=message,
        success=issue_done(rc, message, issue, newest),
        write_only=write_only,
        before=before,
        explain=partial(explain_change, rc, after=issue),
        rebuild=lambda text: issue_done(rc, text, issue, newest),
        derived=frozenset(derived),
        also=await parent_changes(rc, parents),
    )


async def explain_change(rc: RedmineContext, change: Change, *, after: Mapping[str, Any]) -> str | None:
    """Why Redmine changed a field it was not asked to, when the target project tells."""
    project = after.get("project")
    project = project if isinstance(project, Mapping) else {}
    where = f"project {project.get('name') or project.get('id')}"
    if change.field == "tracker" and isinstance(change.before, Mapping):
        try:
            body = await rc.client.get(
                f"projects/{project.get('id')}.json", what=where, params={"include": "trackers"}
            )
        except RedmineError:
            return None
        names = {
            t.get("id") for t in entity_of(body, "project").get("trackers") or [] if isinstance(t, Mapping)
        }
        if change.before.get("id") not in names:
            return f"{where} has no {change.before.get('name')} tracker"
        return None
    if change.field in ("assigned_to", "fixed_version", "category", "parent") and change.after is None:
        return f"it cannot be used in {where}"
    if change.field == "status":
        return "the status is not allowed for the new tracker"
    return None


async def copy_issue(args: dict[str, Any], rc: RedmineContext) -> mcp_types.CallToolResult:
    """Redmine's own copy (``copy_from``), optionally with subtasks and attachments, linked back."""
    source: int = args["id"]
    fields = await body_fields(rc, {k: v for k, v in args.items() if k in ("project", "subject")})
    original = await read(rc, ISSUE, source)
    if "project_id" not in fields:
        fields["project_id"] = (original.get("project") or {}).get("id")
    params = {"copy_from": source}
    for flag in ("subtasks", "attachments", "watchers"):
        if args.get(flag, False):
            params[f"copy_{flag}"] = 1
    if args.get("link", True):
        params["link_copy"] = 1
    body = await rc.client.post(
        "issues.json", what=f"the copy of issue {source}", json={"issue": fields}, params=params
    )
    issue = entity_of(body, "issue")
    message = f"Copied issue {source} to issue {issue.get('id')}."
    # A copy differs from its original in what it is (id, dates, author): only fields it keeps count.
    kept = {
        k: v
        for k, v in original.items()
        if k not in ("id", "author", "created_on", "start_date", "status", "done_ratio")
    }
    return await verified(
        rc,
        fields,
        issue,
        message=message,
        success=issue_done(rc, message, issue),
        before=kept,
        explain=partial(explain_change, rc, after=issue),
        rebuild=lambda text: issue_done(rc, text, issue),
    )


async def move_issues(args: dict[str, Any], rc: RedmineContext) -> mcp_types.CallToolResult:
    """Move each issue to the project; one failure does not stop the others, and all are reported.

    Each issue is read before and after its move, so a field Redmine changed on its own (the
    tracker when the target project lacks it, an assignee who is no member there) is named.
    """
    targets = ids(args, "ids") or []
    if not targets:
        raise ValidationError("ids needs at least one issue number")
    pid = await project_id(rc.client, project_ref(args["project"]))
    change: dict[str, Any] = {"project_id": pid}
    if args.get("tracker_id") is not None:
        change["tracker_id"] = await lookup_ref(rc, ref(args["tracker_id"], TRACKER, "tracker_id"))
    moved: list[int] = []
    failed: list[str] = []
    effects: list[str] = []
    progress = current_context()  # a long move runs as a task: its poller sees how far it got
    for count, issue_id in enumerate(targets):
        await progress.progress(count, len(targets), f"moving issue {issue_id}")
        try:
            before = await read(rc, ISSUE, issue_id)
            await rc.client.put(f"issues/{issue_id}.json", what=f"issue {issue_id}", json={"issue": change})
            issue = await read(rc, ISSUE, issue_id)
        except RedmineError as exc:  # a refusal or a transport failure: reported per issue
            failed.append(f"issue {issue_id}: {exc}")
            continue
        if (issue.get("project") or {}).get("id") == pid:
            moved.append(issue_id)
            changed = side_effects(before, issue, change)
            if changed:
                said = await describe_changes(changed, partial(explain_change, rc, after=issue))
                effects.append(f"issue {issue_id}: {said}")
        else:
            failed.append(
                f"issue {issue_id}: Redmine kept it in project {(issue.get('project') or {}).get('name')}"
            )
    also = f" Redmine also changed {'; '.join(effects)}." if effects else ""
    if failed:
        done_part = f"Moved {', '.join(map(str, moved))}; " if moved else "Moved none; "
        return error_result(f"{done_part}not moved: {'; '.join(failed)}.{also}")
    noun = "issue" if len(moved) == 1 else "issues"
    return done(
        f"Moved {len(moved)} {noun} to project {args['project']}: {', '.join(map(str, moved))}.{also}"
    )


async def watchers_of(rc: RedmineContext, issue_id: int) -> list[Any]:
    """The users watching an issue."""
    return list((await read(rc, ISSUE, issue_id, ["watchers"])).get("watchers") or [])


async def change_watcher(args: dict[str, Any], rc: RedmineContext, *, add: bool) -> mcp_types.CallToolResult:
    """Add or remove a watcher, then check the watcher list says so."""
    issue_id: int = args["issue_id"]
    who = ref(args["user_id"], USER, "user_id", words=("me",))
    user_id = await my_id(rc) if who == "me" else await lookup_ref(rc, who)
    if add:
        await rc.client.post(
            f"issues/{issue_id}/watchers.json",
            what=f"watchers of issue {issue_id}",
            json={"user_id": user_id},
        )
    else:
        await rc.client.delete(
            f"issues/{issue_id}/watchers/{user_id}.json", what=f"watcher {user_id} of issue {issue_id}"
        )
    watchers = await watchers_of(rc, issue_id)
    watching = any(w.get("id") == user_id for w in watchers if isinstance(w, Mapping))
    element = rc.fmt.array("watchers", watchers, item_tag="user")
    if watching != add:
        state = "does not watch" if add else "still watches"
        return error_result(
            f"Redmine answered but user {user_id} {state} issue {issue_id}: likely the user cannot see the "
            "issue or the key's user lacks the permission to manage watchers"
        )
    verb = "now watches" if add else "no longer watches"
    return done(f"User {user_id} {verb} issue {issue_id}.", element)


add_issue_watcher = partial(change_watcher, add=True)
remove_issue_watcher = partial(change_watcher, add=False)


# -- definitions ---------------------------------------------------------------------------------

FIELD_SCHEMAS: dict[str, dict[str, Any]] = {
    "subject": p.string("One-line summary", min_length=1),
    "description": p.string("Full description"),
    "tracker_id": p.string(NUMBER_OR_NAME),
    "status_id": p.string(NUMBER_OR_NAME),
    "priority_id": p.string(NUMBER_OR_NAME),
    "assigned_to": p.string(USER_OR_ME),
    "category_id": ident("Issue category number"),
    "fixed_version_id": ident("Target version number"),
    "parent_issue_id": ident("Parent issue number"),
    "start_date": p.string("Start date like 2025-01-31"),
    "due_date": p.string("Due " + DATE.lower()),
    "estimated_hours": hours_schema("Estimated hours"),
    "done_ratio": p.integer("Percent done from 0 to 100", minimum=0, maximum=100),
    "is_private": p.boolean("Private issue"),
    "custom_fields": CUSTOM_FIELDS,
}

LIST_PROPERTIES: dict[str, dict[str, Any]] = {
    "project": PROJECT,
    "query_id": ident("Saved query from list queries, run as saved; only project, sort and paging combine"),
    "status": p.string("open, closed, * for any, or a status number or name"),
    "tracker": p.string(NUMBER_OR_NAME),
    "assigned_to": p.string(USER_OR_ME),
    "author": p.string(USER_OR_ME),
    "priority": p.string(NUMBER_OR_NAME),
    "parent": ident("Parent issue number"),
    "version": ident("Target version number"),
    "category": ident("Issue category number"),
    "subject": p.string("Text the subject contains"),
    "created": p.string("Created date filter such as >=2025-01-01 or ><2025-01-01|2025-01-31"),
    "updated": p.string("Updated date filter, same form as created"),
    "custom_fields": p.array(
        p.obj(
            {"id": ident("Custom field number"), "value": p.string("Value to match")},
            required=["id", "value"],
        ),
        "Custom field filters, each a field number and the value to match",
    ),
    "sort": p.string("Sort order such as id:desc or priority:desc,id"),
    "include": p.array(p.enum("", LIST_INCLUDES), "Extra data"),
}

TOOLS = (
    list_tool(
        ISSUE,
        "list_issues",
        "List issues by filters or a saved query, newest first unless sort says otherwise.\n"
        "Status is open by default. Descriptions are excerpts; get issue shows one in full.",
        CATEGORY,
        filters=issue_filters,
        properties=LIST_PROPERTIES,
        item_call="get_issue with id={id}",
    ),
    redmine_tool(
        "get_issue",
        "Show one issue in full with journals, children, relations, watchers and attachments.\n"
        "Journals are paged oldest first.",
        {
            "id": ident("Issue number"),
            "include": p.array(p.enum("", SHOW_INCLUDES), "Extra data, default all but the last two"),
            "journals": p.enum(
                "Which journals: all, notes for those with a note, private for private notes", JOURNAL_KINDS
            ),
            "journals_offset": p.integer("Journals to skip", minimum=0),
            "journals_limit": p.integer("At most 100, default 25", minimum=1),
            "fields": FIELDS_SCHEMA,
        },
        get_issue,
        CATEGORY,
        ("id",),
    ),
    redmine_tool(
        "create_issue",
        "Create an issue in a project. Only project and subject are required.\n"
        "Find numbers with list trackers, list issue statuses and list issue priorities.",
        {"project": PROJECT, **FIELD_SCHEMAS, "watcher_user_ids": p.array(ident("User number"), "Watchers")},
        create_issue,
        CATEGORY,
        ("project", "subject"),
        "write",
    ),
    redmine_tool(
        "update_issue",
        "Change fields of an issue or add a note; fields as in create issue, only those given change.\n"
        "A field Redmine does not apply is an error naming it and the likely reason.",
        {
            "id": ident("Issue number"),
            "project": p.string("Move to this project, by number or identifier"),
            **as_in_create(FIELD_SCHEMAS),
            "notes": p.string("A note to add to the history"),
            "private_notes": p.boolean("Make the added note private"),
        },
        update_issue,
        CATEGORY,
        ("id",),
        "idempotent",
    ),
    redmine_tool(
        "copy_issue",
        "Copy an issue, optionally to another project, with its subtasks, attachments and watchers.\n"
        "The copy is linked to the original unless link is false.",
        {
            "id": ident("Issue number to copy"),
            "project": p.string("Target project number or identifier, default the same project"),
            "subject": p.string("Subject of the copy, default the original one"),
            "subtasks": p.boolean("Copy the subtasks too"),
            "attachments": p.boolean("Copy the attachments too"),
            "watchers": p.boolean("Copy the watchers too"),
            "link": p.boolean("Relate the copy to the original, default true"),
        },
        copy_issue,
        CATEGORY,
        ("id",),
        "write",
    ),
    replace(  # a bulk change: a task for clients that take tasks, progress per issue
        redmine_tool(
            "move_issues",
            "Move issues to another project, optionally changing their tracker.\n"
            "The answer names any issue that did not move and why.",
            {
                "ids": p.array(ident("Issue number"), "Issue numbers to move", min_items=1),
                "project": p.string("Target project number or identifier"),
                "tracker_id": p.string("Tracker to use in the target project, by number or name"),
            },
            move_issues,
            CATEGORY,
            ("ids", "project"),
            "idempotent",
        ),
        tasks=True,
    ),
    delete_tool(
        ISSUE,
        "delete_issue",
        "Delete an issue with its subtasks and time entries. Cannot be undone.\n"
        "Without confirm true it only previews.",
        CATEGORY,
    ),
    redmine_tool(
        "add_issue_watcher",
        "Add a user to the watchers of an issue.",
        {"issue_id": ident("Issue number"), "user_id": p.string(NUMBER_OR_NAME)},
        add_issue_watcher,
        CATEGORY,
        ("issue_id", "user_id"),
        "idempotent",
    ),
    redmine_tool(
        "remove_issue_watcher",
        "Remove a user from the watchers of an issue.",
        {"issue_id": ident("Issue number"), "user_id": p.string(NUMBER_OR_NAME)},
        remove_issue_watcher,
        CATEGORY,
        ("issue_id", "user_id"),
        "idempotent",
    ),
)
