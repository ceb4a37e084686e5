"""Custom fields per project and tracker, as far as the key's user can see them.

Only administrators may read ``/custom_fields.json`` (formats, possible values, which fields are
required). Every user sees the fields a project enabled (``include=issue_custom_fields``, which
leaves out fields "for all projects") and the fields on an existing issue of a tracker (which
shows exactly the fields of that project and tracker). :func:`issue_fields` joins the three.

Whether a field is required stays unknown to a non-administrator until Redmine refuses a create
for its lack; :func:`create_failure_hint` then names the field's id and values (create_issue
appends it to its error) and remembers it, so the next ``list_issue_fields`` says it first.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import mcp_types

from mcpkit.redmine.api import RedmineError, seg
from mcpkit.redmine.tools.args import project_ref
from mcpkit.redmine.tools.base import RedmineContext, redmine_tool
from mcpkit.redmine.tools.results import entity_of
from mcpkit.redmine.tools.schemas import PROJECT
from mcpkit.results import Element, xml_result
from mcpkit.tools import params as p

CATEGORY = "fields"
_BLANK = re.compile(r"([^,;:]+?) cannot be blank")


@dataclass
class Field:
    """One custom field as far as it is known: ``required`` is ``None`` when nobody can tell yet."""

    id: int
    name: str
    required: bool | None = None
    format: str | None = None
    multiple: bool = False
    values: list[str] = field(default_factory=list)


def _learned(rc: RedmineContext) -> dict[Any, set[int]]:
    """Required fields learned from refused creates, per (project id, tracker id)."""
    found = rc.client.reference_cache.setdefault("required_custom_fields", {})
    return found if isinstance(found, dict) else {}


async def field_definitions(rc: RedmineContext, kind: str = "issue") -> dict[int, dict[str, Any]] | None:
    """Every custom field definition of ``kind`` (``issue``, ``time_entry``, ...) by id, or
    ``None`` for a key that may not read them."""
    try:
        body = await rc.client.get("custom_fields.json", what="the custom fields")
    except RedmineError as exc:
        if exc.status in (401, 403):
            return None
        raise
    return {
        f["id"]: dict(f)
        for f in body.get("custom_fields") or []
        if isinstance(f, Mapping) and f.get("customized_type") == kind and isinstance(f.get("id"), int)
    }


def _from(definition: Mapping[str, Any] | None, ident: int, name: str) -> Field:
    if definition is None:
        return Field(ident, name)
    values = [str(v.get("value")) for v in definition.get("possible_values") or [] if isinstance(v, Mapping)]
    return Field(
        ident,
        str(definition.get("name") or name),
        bool(definition.get("is_required")),
        definition.get("field_format"),
        bool(definition.get("multiple")),
        values,
    )


async def issue_fields(
    rc: RedmineContext, project: Any, tracker_id: int | None = None
) -> tuple[dict[str, Any], list[tuple[dict[str, Any], list[Field]]], bool]:
    """The project, each of its trackers (or the one asked) with its custom fields, and whether
    the definitions (required, values) could be read."""
    ref = project_ref(project)
    body = await rc.client.get(
        f"projects/{seg(ref)}.json", what=f"project {ref}", params={"include": "trackers,issue_custom_fields"}
    )
    proj = entity_of(body, "project")
    trackers = [t for t in proj.get("trackers") or [] if isinstance(t, Mapping)]
    if tracker_id is not None:
        trackers = [t for t in trackers if t.get("id") == tracker_id]
    enabled = {
        f["id"]: str(f.get("name")) for f in proj.get("issue_custom_fields") or [] if isinstance(f, Mapping)
    }
    definitions = await field_definitions(rc)
    learned = _learned(rc)
    out: list[tuple[dict[str, Any], list[Field]]] = []
    for tracker in trackers:
        tid = tracker.get("id")
        sample = await rc.client.page(
            "issues.json",
            "issues",
            what=f"an issue of tracker {tid}",
            params={"project_id": proj.get("id"), "tracker_id": tid, "status_id": "*", "subproject_id": "!*"},
            limit=1,
        )
        seen = {
            c["id"]: str(c.get("name"))
            for issue in sample.items
            for c in issue.get("custom_fields") or []
            if isinstance(c, Mapping) and isinstance(c.get("id"), int)
        }
        names = dict(seen)
        for ident, name in enabled.items():
            trackers_of = (definitions or {}).get(ident, {}).get("trackers")
            if trackers_of is None or any(t.get("id") == tid for t in trackers_of if isinstance(t, Mapping)):
                names.setdefault(ident, name)
        fields = [_from((definitions or {}).get(i), i, n) for i, n in sorted(names.items())]
        for f in fields:
            if f.id in learned.get((proj.get("id"), tid), set()):
                f.required = True
        out.append((dict(tracker), fields))
    return proj, out, definitions is not None


def field_element(f: Field) -> Element:
    required = "unknown" if f.required is None else str(f.required).lower()
    attrs: dict[str, object] = {"id": f.id, "name": f.name, "required": required}
    if f.format:
        attrs["format"] = f.format
    if f.multiple:
        attrs["multiple"] = "true"
    out = Element("custom_field", attrs)
    for value in f.values:
        out.child("possible_value", None, value)
    return out


async def list_issue_fields(args: dict[str, Any], rc: RedmineContext) -> mcp_types.CallToolResult:
    proj, trackers, complete = await issue_fields(rc, args["project"], args.get("tracker_id"))
    out = Element("issue_fields", {"project": proj.get("identifier") or proj.get("id")})
    for tracker, fields in trackers:
        box = out.child("tracker", {"id": tracker.get("id"), "name": tracker.get("name")})
        box.add(*(field_element(f) for f in fields))
    if not complete:
        out.child(
            "note",
            None,
            "Only administrators see which fields are required and their values; a field shows "
            "required true here once Redmine refused a create without it.",
        )
    return xml_result(out)


def _say(f: Field) -> str:
    values = f", one of {', '.join(f.values[:10])}" if f.values else ""
    return f"{f.id} {f.name}{values}"


async def create_failure_hint(rc: RedmineContext, project: Any, tracker_id: int | None, message: str) -> str:
    """A sentence naming the custom fields a refused create lacked, by id, or ``""``.

    For create_issue's error: Redmine says "Mcpkit-required cannot be blank", by name only; the
    model needs the id (and the values a list field takes) to send it. The fields found are
    remembered as required for this project and tracker, so ``list_issue_fields`` says so.
    """
    blank = {m.strip().lower() for m in _BLANK.findall(message)}
    if not blank:
        return ""
    try:
        proj, trackers, _ = await issue_fields(rc, project, tracker_id)
    except RedmineError:
        return ""  # a hint only: never hide the real error behind another
    if tracker_id is None and trackers:
        trackers = trackers[:1]  # Redmine's default tracker is the project's first
    hits: list[Field] = []
    for tracker, fields in trackers:
        for f in fields:
            if f.name.lower() in blank:
                f.required = True
                _learned(rc).setdefault((proj.get("id"), tracker.get("id")), set()).add(f.id)
                hits.append(f)
    if not hits:
        return ""
    shown = "; ".join(_say(f) for f in hits)
    return f"Required custom fields: {shown}; send them as custom_fields with id and value."


TOOLS = (
    redmine_tool(
        "list_issue_fields",
        "Custom fields of a project per tracker: which are required, their values.",
        {"project": PROJECT, "tracker_id": p.integer(minimum=1)},
        list_issue_fields,
        CATEGORY,
        ("project",),
    ),
)
