"""Required custom fields on a create: filled from their defaults, said in the answer, or refused.

Redmine gives a new issue or time entry the default value of each custom field the request
leaves out, and says nothing about it: a model that created "a bug" never learns that it is now
filed as *minor*. And a required field without a default makes Redmine refuse the create with
"X cannot be blank", by name only.

So, before a create, where the key may read the field definitions (``/custom_fields.json``, for
administrators): every required field of the project and tracker the caller left out is filled
with its ``default_value`` in the request itself, and a required field without a default is
refused before anything is sent, naming its id, its name and the values it takes. After the
create, for any key, the answer names each custom field that has a value the caller did not give
(on a new record only a default can put it there), with the value. A key that may not read the
definitions still gets Redmine's refusal with the hint of
:func:`~mcpkit.redmine.tools.custom_fields.create_failure_hint`.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any, Literal

from mcpkit.errors import ValidationError
from mcpkit.redmine.api import seg
from mcpkit.redmine.tools.base import RedmineContext
from mcpkit.redmine.tools.custom_fields import field_definitions
from mcpkit.redmine.tools.results import entity_of

Kind = Literal["issue", "time_entry"]
REMEMBER_SECONDS = 60.0
"""How long the field definitions read for a create are used again, as the roles read for a write."""


def _blank(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, str):
        return not value.strip()
    if isinstance(value, list | tuple):
        return not any(not _blank(v) for v in value)
    return False


def given_ids(fields: Mapping[str, Any]) -> frozenset[int]:
    """The custom fields the request gives a value."""
    return frozenset(
        item["id"]
        for item in fields.get("custom_fields") or []
        if isinstance(item, Mapping) and isinstance(item.get("id"), int) and not _blank(item.get("value"))
    )


async def _on_the_issue(
    rc: RedmineContext, wanted: list[dict[str, Any]], fields: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """The issue fields of ``wanted`` that are on the project and tracker of the issue to create."""
    project = fields.get("project_id")
    if project is None or not wanted:
        return []
    body = await rc.client.get(
        f"projects/{seg(project)}.json",
        what=f"project {project}",
        params={"include": "trackers,issue_custom_fields"},
    )
    proj = entity_of(body, "project")
    tracker = fields.get("tracker_id")
    if tracker is None:  # Redmine's default tracker is the project's first
        trackers = [t.get("id") for t in proj.get("trackers") or [] if isinstance(t, Mapping)]
        tracker = trackers[0] if trackers else None
    enabled = {f.get("id") for f in proj.get("issue_custom_fields") or [] if isinstance(f, Mapping)}
    return [
        f
        for f in wanted
        if (f.get("is_for_all") or f["id"] in enabled)
        and any(isinstance(t, Mapping) and t.get("id") == tracker for t in f.get("trackers") or [])
    ]


def _values(field: Mapping[str, Any]) -> list[str]:
    return [str(v.get("value")) for v in field.get("possible_values") or [] if isinstance(v, Mapping)]


async def prefill(rc: RedmineContext, kind: Kind, fields: dict[str, Any]) -> frozenset[int]:
    """Fill the required custom fields ``fields`` leaves out from their defaults (in place).

    Returns the ids the caller gave, for :func:`said`. Raises :class:`ValidationError`, with
    nothing sent, naming each required field that has no default."""
    return await prefill_with(rc, kind, fields, await definitions(rc, kind))


async def definitions(rc: RedmineContext, kind: Kind) -> Mapping[int, dict[str, Any]] | None:
    """The custom field definitions of ``kind`` as :func:`field_definitions` reads them,
    remembered for :data:`REMEMBER_SECONDS` per key (``None`` too: a key that may not read them
    does not ask again on every create)."""
    cache = rc.client.reference_cache.setdefault("custom_field_definitions", {})
    found = cache.get(kind)
    if found is not None and time.monotonic() < found[0]:
        known: Mapping[int, dict[str, Any]] | None = found[1]
        return known
    read = await field_definitions(rc, kind)
    cache[kind] = (time.monotonic() + REMEMBER_SECONDS, read)
    return read


async def prefill_with(
    rc: RedmineContext, kind: Kind, fields: dict[str, Any], known: Mapping[int, dict[str, Any]] | None
) -> frozenset[int]:
    """:func:`prefill` with the definitions already read (``None``: the key may not read them),
    for a caller that creates many records."""
    given = given_ids(fields)
    if not known:
        return given
    wanted = [f for f in known.values() if f.get("is_required") and f["id"] not in given]
    if kind == "issue":
        wanted = await _on_the_issue(rc, wanted, fields)
    missing = [f for f in wanted if _blank(f.get("default_value"))]
    if missing:
        named = "; ".join(
            f"{f['id']} {f.get('name')}" + (f", one of {', '.join(_values(f)[:10])}" if _values(f) else "")
            for f in missing
        )
        what = "an issue" if kind == "issue" else "a time entry"
        raise ValidationError(
            f"Nothing was created: {what} here needs these custom fields, which have no default: {named}; "
            "send them as custom_fields with id and value"
        )
    if wanted:
        items = [i for i in fields.get("custom_fields") or [] if i.get("id") not in {f["id"] for f in wanted}]
        for f in wanted:
            default = f.get("default_value")
            items.append({"id": f["id"], "value": [default] if f.get("multiple") else default})
        fields["custom_fields"] = items
    return given


def said(given: frozenset[int], created: Mapping[str, Any]) -> str:
    """`` Filled from their defaults: ...`` naming each custom field of a new record that has a
    value its caller did not give, or ``""``."""
    filled = [
        f"{c.get('name')} = {', '.join(map(str, c['value'])) if isinstance(c.get('value'), list) else c.get('value')}"
        for c in created.get("custom_fields") or []
        if isinstance(c, Mapping) and c.get("id") not in given and not _blank(c.get("value"))
    ]
    return f" Custom fields filled from their defaults: {'; '.join(filled)}." if filled else ""
