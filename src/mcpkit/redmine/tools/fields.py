"""``fields`` and ``brief``: only the fields asked for, so a list costs what the model needs.

A page of 25 issues in full is about 33 KB as sent; most turns need the subject, status and
assignee. ``fields`` names the fields to keep (the id always stays: it is what the next call
takes), ``brief`` is the short form of a big list (for issues: id, subject, status, assignee,
updated). Names are taken as models write them: any case, spaces or dashes for underscores,
``assigned_to_id`` for ``assigned_to``, ``updated`` for ``updated_on``; a name that is no field
of the record is refused in one line listing the fields there are, so a typo is never an
answer silently missing what was asked.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from mcpkit.errors import ValidationError
from mcpkit.tools import params as p

SCHEMA = p.array(p.string(), "Only these fields")
_SAY = {"assigned_to": "assignee", "updated_on": "updated", "fixed_version": "version"}


def brief_schema(brief: Sequence[str]) -> dict[str, Any]:
    """The ``brief`` flag, saying which fields the brief form keeps."""
    words = [_SAY.get(f, f.replace("_", " ")) for f in brief]
    return p.boolean(f"Only {', '.join(words[:-1])} and {words[-1]}")


ALIASES = {
    "assignee": "assigned_to",
    "version": "fixed_version",
    "target_version": "fixed_version",
    "parent_issue": "parent",
    "updated": "updated_on",
    "created": "created_on",
    "closed": "closed_on",
    "private": "is_private",
    "public": "is_public",
    "notes": "journals",
    "percent_done": "done_ratio",
    "done": "done_ratio",
}
_SPACING = re.compile(r"[\s-]+")


def canonical(name: str, valid: Iterable[str]) -> str | None:
    """The field ``name`` means among ``valid``, or ``None``."""
    known = set(valid)
    text = _SPACING.sub("_", name.strip().lower())
    for guess in (text, ALIASES.get(text), text.removesuffix("_id"), text.removesuffix("_ids") + "s"):
        if guess is not None and guess in known:
            return guess
        alias = ALIASES.get(guess or "")
        if alias is not None and alias in known:
            return alias
    return None


def chosen(
    args: Mapping[str, Any],
    *,
    noun: str,
    known: Sequence[str] = (),
    seen: Iterable[Mapping[str, Any]] = (),
    brief: Sequence[str] = (),
) -> frozenset[str] | None:
    """The fields to keep (``None``: every field), from ``fields`` and ``brief`` in ``args``.

    ``known`` are the fields the record may have (Redmine leaves empty ones out of an answer);
    ``seen`` the records at hand, whose fields count as known too."""
    names = args.get("fields")
    short = bool(brief) and args.get("brief") is True
    if not names and not short:
        return None
    valid = dict.fromkeys([*known, *(k for record in seen for k in record)])
    keep = {"id", *(brief if short else ())}
    bad = []
    for name in names or ():
        field = canonical(str(name), valid) if valid else str(name).strip()  # nothing to check against
        if field is None:
            bad.append(str(name)[:40])
        else:
            keep.add(field)
    if bad:
        raise ValidationError(
            f"fields: {', '.join(repr(b) for b in bad)} {'is' if len(bad) == 1 else 'are'} no field of "
            f"{noun}; the fields are {', '.join(valid)}"
        )
    return frozenset(keep)


def only(record: Mapping[str, Any], keep: frozenset[str] | None) -> dict[str, Any]:
    """``record`` with only the ``keep`` fields (all of them for ``None``)."""
    return dict(record) if keep is None else {k: v for k, v in record.items() if k in keep}
