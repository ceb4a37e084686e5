"""Verify after write: Redmine ignores what it will not apply and still answers 204.

``update_issue status_id=99`` used to answer "Updated issue 9." with the status unchanged,
a Reporter's forbidden close looked the same, and ``create_issue tracker_id=99`` made a Bug.
So every write reads the object back and compares each field that was asked for; a field
Redmine did not apply makes the answer ``isError`` with one line naming the field, the value
asked for, the value kept and the likely reason, and saying what did change.

Redmine also changes fields nobody asked for: a move to a project without the issue's tracker
switches the tracker (Support became Bug), an assignee who is no member there is dropped. Where
the caller read the object before the write, every such change is named in the answer too
("Redmine also changed tracker Support -> Bug because project 7 has no Support tracker"): not an
error, but never a plain success. The comparison allows for Redmine's own spellings, so a stored
write is never reported as failed: line ends (a lone CR is stored as CRLF), surrounding blanks,
``1.0`` for ``1``.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import mcp_types

from mcpkit.redmine.api import RedmineError
from mcpkit.redmine.tools.base import RedmineContext
from mcpkit.results import error_result

# Fields a read-back cannot show: they act once (notes) or are secret (password).
WRITE_ONLY = frozenset(
    {
        "notes",
        "private_notes",
        "uploads",
        "password",
        "generate_password",
        "send_information",
        "must_change_passwd",
        "watcher_user_ids",
        "comments_for_page",
        "parent_title",
        "identifier_for_copy",
    }
)
# Where a ``*_id`` field shows up in Redmine's answer when the name differs.
REFERENCE_OF = {"parent_issue_id": "parent", "fixed_version_id": "fixed_version", "parent_id": "parent"}
LIST_OF = {"tracker_ids": "trackers", "role_ids": "roles", "user_ids": "users"}
# Reference lists that tell an unknown id from a known one, for the likely reason.
REFERENCE_LISTS = {
    "status_id": ("issue_statuses.json", "issue_statuses", "status", "list issue statuses"),
    "tracker_id": ("trackers.json", "trackers", "tracker", "list trackers"),
    "priority_id": (
        "enumerations/issue_priorities.json",
        "issue_priorities",
        "priority",
        "list issue priorities",
    ),
    "activity_id": (
        "enumerations/time_entry_activities.json",
        "time_entry_activities",
        "activity",
        "list time entry activities",
    ),
}
_ABSENT = object()
_DECIMAL = re.compile(r"[-+]?\d+(\.\d+)?")  # "1.5" is Redmine's 1.5; "nan" stays text


@dataclass(frozen=True)
class Mismatch:
    """A field Redmine did not apply."""

    field: str
    asked: Any
    kept: Any
    kept_name: str | None = None


def kept_value(got: Mapping[str, Any], field: str) -> Any:
    """The value of ``field`` as Redmine shows it in the entity read back (``_ABSENT`` if not shown)."""
    if field in LIST_OF:
        items = got.get(LIST_OF[field])
        if not isinstance(items, list):
            return _ABSENT
        return [i.get("id") for i in items if isinstance(i, Mapping)]
    if field == "enabled_module_names":
        mods = got.get("enabled_modules")
        return [m.get("name") for m in mods if isinstance(m, Mapping)] if isinstance(mods, list) else _ABSENT
    if field.endswith("_id"):
        ref = got.get(REFERENCE_OF.get(field, field[:-3]))
        if isinstance(ref, Mapping):
            return ref.get("id")
        if field in got:
            return got[field]
        return None  # Redmine leaves an unset reference out
    return got.get(field, _ABSENT)


def kept_name(got: Mapping[str, Any], field: str) -> str | None:
    """The name Redmine shows for a kept reference (``1`` is ``New``), for the message."""
    if not field.endswith("_id"):
        return None
    ref = got.get(REFERENCE_OF.get(field, field[:-3]))
    name = ref.get("name") if isinstance(ref, Mapping) else None
    return str(name) if name is not None else None


def _norm(value: Any) -> Any:
    if value is None or value == "" or value == []:
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return round(float(value), 6)
    if isinstance(value, str):
        text = value.replace("\r\n", "\n").replace("\r", "\n").strip()
        return round(float(text), 6) if _DECIMAL.fullmatch(text) else text
    if isinstance(value, list | tuple):
        return sorted(str(_norm(v)) for v in value)
    return value


def same(asked: Any, kept: Any) -> bool:
    """Whether Redmine kept what was asked, allowing for its own spellings (1.0 for 1, ``\\r\\n``)."""
    return bool(_norm(asked) == _norm(kept))


def compare(
    asked: Mapping[str, Any], got: Mapping[str, Any], write_only: frozenset[str] = WRITE_ONLY
) -> tuple[list[str], list[Mismatch]]:
    """The asked fields Redmine applied, and the ones it did not (``write_only`` ones are skipped)."""
    applied: list[str] = []
    missed: list[Mismatch] = []
    for field, value in asked.items():
        if field in write_only:
            continue
        if field == "custom_fields":
            shown = {
                c.get("id"): c.get("value") for c in got.get("custom_fields") or [] if isinstance(c, Mapping)
            }
            for cf in value:
                name = f"custom field {cf['id']}"
                kept = shown.get(cf["id"])
                (
                    applied.append(name)
                    if same(cf["value"], kept)
                    else missed.append(Mismatch(name, cf["value"], kept))
                )
            continue
        kept = kept_value(got, field)
        if kept is _ABSENT:
            continue  # this answer does not show the field; nothing to compare
        if same(value, kept):
            applied.append(field)
        else:
            missed.append(Mismatch(field, value, kept, kept_name(got, field)))
    return applied, missed


async def _known_ids(rc: RedmineContext, path: str, key: str) -> set[Any]:
    cache = rc.client.reference_cache
    if path not in cache:
        body = await rc.client.get(path, what=f"the {key.replace('_', ' ')}")
        cache[path] = {i.get("id") for i in body.get(key) or [] if isinstance(i, Mapping)}
    known = cache[path]
    return known if isinstance(known, set) else set()


DERIVED_REASON = (
    "it is derived from its subtasks: the issue has subtasks and Redmine sets its {what} from theirs "
    "(unless an administrator makes it independent in Administration, Settings, Issue tracking); "
    "change the subtasks instead"
)
DERIVED_WHAT = {
    "priority_id": "priority",
    "start_date": "dates",
    "due_date": "dates",
    "done_ratio": "done ratio",
}


async def likely_reason(rc: RedmineContext, miss: Mismatch, derived: frozenset[str] = frozenset()) -> str:
    """Why Redmine probably ignored ``miss``: derived from subtasks, an unknown id, the workflow, or permissions.

    ``derived`` names the fields the issue takes from its subtasks (it has some, see issues)."""
    if miss.field in derived:
        return DERIVED_REASON.format(what=DERIVED_WHAT.get(miss.field, miss.field))
    listed = REFERENCE_LISTS.get(miss.field)
    if listed is not None:
        path, key, noun, tool = listed
        try:
            known = await _known_ids(rc, path, key)
        except RedmineError:  # the reason is a hint; never let it hide the real answer
            known = set()
        if known and miss.asked not in known:
            return f"no {noun} {miss.asked} exists, see {tool}"
        if miss.field == "status_id":
            return "the workflow does not allow this status change for the role of the key's user"
        if miss.field == "tracker_id":
            return "the tracker is not enabled in the project or the role may not use it"
    if miss.field.startswith("custom field"):
        return "the value is not one of its possible values, or the field is not enabled for this tracker or project"
    if miss.field.endswith("_id") or miss.field in LIST_OF:
        return "an unknown id, or one that cannot be used here, or the role of the key's user may not set it"
    return (
        "the field is read-only for the role of the key's user in this workflow, or it lacks the permission"
    )


def _show(value: Any) -> str:
    if value is None or value == "":
        return "nothing"
    text = ", ".join(str(v) for v in value) if isinstance(value, list | tuple) else str(value)
    text = " ".join(text.split())
    return text if len(text) <= 60 else text[:57] + "..."


# Fields that change with every write, or follow from another field, or are lists read apart.
NOT_SIDE_EFFECTS = frozenset(
    {
        "updated_on",
        "closed_on",
        "passwd_changed_on",
        "last_login_on",
        "spent_hours",
        "total_spent_hours",
        "total_estimated_hours",
        "journals",
        "watchers",
        "attachments",
        "relations",
        "children",
        "changesets",
        "allowed_statuses",
    }
)


@dataclass(frozen=True)
class Change:
    """A field Redmine changed without being asked: its name, the value before and after."""

    field: str
    before: Any
    after: Any


def field_key(field: str) -> str:
    """Where an asked field shows in Redmine's answer (``tracker_id`` is ``tracker``)."""
    if field in LIST_OF:
        return LIST_OF[field]
    if field.endswith("_id"):
        return REFERENCE_OF.get(field, field[:-3])
    return field


def _comparable(value: Any) -> Any:
    if isinstance(value, Mapping):
        if "id" in value:
            return ("ref", value.get("id"))
        return sorted((str(k), str(_comparable(v))) for k, v in value.items())
    if isinstance(value, list):
        return sorted(str(_comparable(v)) for v in value)
    return _norm(value)


def shown(value: Any) -> str:
    """A value as a person reads it: a reference by its name, nothing as ``nothing``."""
    if isinstance(value, Mapping):
        return _show(value.get("name", value.get("id")))
    if isinstance(value, list):
        return _show([v.get("name", v.get("id")) if isinstance(v, Mapping) else v for v in value])
    return _show(value)


def side_effects(
    before: Mapping[str, Any], after: Mapping[str, Any], asked: Mapping[str, Any]
) -> list[Change]:
    """The fields Redmine changed between ``before`` and ``after`` that ``asked`` did not name."""
    named = {field_key(f) for f in asked}
    out: list[Change] = []
    for key in dict.fromkeys([*before, *after]):
        if key in named or key in NOT_SIDE_EFFECTS:
            continue
        if key == "custom_fields":
            was = {c.get("id"): c for c in before.get(key) or [] if isinstance(c, Mapping)}
            now = {c.get("id"): c for c in after.get(key) or [] if isinstance(c, Mapping)}
            for cid in dict.fromkeys([*was, *now]):
                old, new = (was.get(cid) or {}).get("value"), (now.get(cid) or {}).get("value")
                if _comparable(old) != _comparable(new):
                    name = (now.get(cid) or was.get(cid) or {}).get("name") or cid
                    out.append(Change(f"custom field {name}", old, new))
            continue
        old, new = before.get(key), after.get(key)
        if _comparable(old) != _comparable(new):
            out.append(Change(key, old, new))
    return out


Explain = Callable[[Change], Awaitable[str | None]]


async def describe_changes(changes: list[Change], explain: Explain | None = None) -> str:
    """``tracker Support -> Bug because ...; assigned_to Ann -> nothing`` for an answer."""
    parts = []
    for change in changes:
        reason = await explain(change) if explain is not None else None
        because = f" because {reason}" if reason else ""
        parts.append(f"{change.field} {shown(change.before)} -> {shown(change.after)}{because}")
    return "; ".join(parts)


async def verified(
    rc: RedmineContext,
    asked: Mapping[str, Any],
    got: Mapping[str, Any],
    *,
    message: str,
    success: mcp_types.CallToolResult,
    write_only: frozenset[str] = WRITE_ONLY,
    before: Mapping[str, Any] | None = None,
    explain: Explain | None = None,
    rebuild: Callable[[str], mcp_types.CallToolResult] | None = None,
    derived: frozenset[str] = frozenset(),
    also: str = "",
) -> mcp_types.CallToolResult:
    """``success`` when Redmine applied every asked field, else one ``isError`` line saying what not.

    With ``before`` (the object read before the write), the fields Redmine changed unasked are
    named: in the success message (``rebuild`` makes the result for the longer message) and in
    the error line; ``also`` is said after them (a parent changed by its subtask). ``derived``
    names the fields the written issue takes from its subtasks, the reason when one was not applied.

    A write applied in part says what was stored, so that a retry does not repeat it: a note
    (asked as ``note``, compared with the newest journal) is never to be sent again.
    """
    applied, missed = compare(asked, got, write_only)
    effects = side_effects(before, got, asked) if before is not None else []
    also = (f" Redmine also changed {await describe_changes(effects, explain)}." if effects else "") + also
    if not missed:
        if also and rebuild is not None:
            return rebuild(message + also)
        return success
    parts = []
    for miss in missed:
        reason = await likely_reason(rc, miss, derived)
        kept = _show(miss.kept) + (f" {miss.kept_name}" if miss.kept_name else "")
        parts.append(f"{miss.field} asked {_show(miss.asked)} but kept {kept}, likely {reason}")
    noted = "note" in applied
    fields = [f for f in applied if f != "note"]
    changed = f" It did apply: {', '.join(fields)}." if fields else " It applied no other field."
    if noted:
        changed += " The note was saved: do not send it again."
    sent = [f for f in asked if f in write_only and not (noted and f == "notes")]
    if sent:
        changed += f" Also sent, not checkable: {', '.join(sent)}."
    again = [m.field for m in missed if m.field not in derived]
    if applied and again:
        changed += f" To retry, send only {', '.join(again)}."
    return error_result(
        f"{message.rstrip('.')}, but Redmine did not apply: {'; '.join(parts)}.{changed}{also}"
    )
