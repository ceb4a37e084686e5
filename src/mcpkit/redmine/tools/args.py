"""Argument readers: from validated tool arguments to the values Redmine's REST API wants.

The server has already coerced the forms models send (``"12"`` for 12, ``"yes"`` for true,
``"1,2"`` for a list) and checked every type and bound the schema declares, so a handler reads
an integer parameter as the ``int`` it is, a boolean as the ``bool``. These readers only do what
a schema cannot say: a number *or* an identifier in one text parameter, dates, text
copied from a shortened answer, and Redmine's own spellings. (They used to check every type a
second time, with messages of their own that could disagree with the schema's.)
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from mcpkit.errors import ValidationError
from mcpkit.redmine.api import INT64_MAX
from mcpkit.redmine.tools.hours import hours
from mcpkit.tools import coerce

MAX_LIMIT = 100  # Redmine answers at most 100 records per request
DEFAULT_LIMIT = 25

Reader = Callable[[Mapping[str, Any], str], Any]
# The markers this server (and the toolkit's cap) put at the end of a shortened text. Text sent
# back with one in it was read from a shortened answer: writing it would save the cut version.
CUT_MARKER = re.compile(r"… \[(excerpt: the first \d+ of \d+ characters|cut \d+ of \d+ characters)")


def num(value: Any, name: str = "id") -> int:
    """An id read from a text parameter that also takes words (``assigned_to``: a number or me).

    Parameters that take only a number are declared integer, and the server has checked them."""
    number = coerce.as_id(value)
    if not isinstance(number, int) or number > INT64_MAX:
        raise ValidationError(
            f"Invalid {name} {str(value)[:30]!r}: must be a whole number from 1 to {INT64_MAX}"
        )
    return number


def project_ref(value: Any) -> int | str:
    """A project number or identifier, safe to put in a URL path."""
    ref = coerce.as_id_or_key(value)
    if isinstance(ref, int) and ref > INT64_MAX:
        raise ValidationError(f"Invalid project {ref}: a project number is at most {INT64_MAX}")
    return ref


def text(args: Mapping[str, Any], name: str) -> str | None:
    """An optional string argument, ``None`` when absent; never a shortened text sent back."""
    value = args.get(name)
    return None if value is None else uncut(value, name)


def uncut(value: str, name: str) -> str:
    """``value``, unless it carries a cut marker: then writing it would destroy the rest of the text."""
    if CUT_MARKER.search(value):
        raise ValidationError(
            f"{name} contains the marker of a shortened text, so it was copied from an excerpt: "
            "read the full text first, such as with get issue, then send your edit of that"
        )
    return value


def date_text(args: Mapping[str, Any], name: str) -> str | None:
    """An optional calendar date argument as Redmine wants it: ``YYYY-MM-DD``."""
    value = args.get(name)
    if value is None or value == "":
        return None
    return coerce.as_date(value).isoformat()


def paging(args: Mapping[str, Any], prefix: str = "") -> tuple[int, int]:
    """``offset`` and ``limit`` (or ``<prefix>offset``/``<prefix>limit``) with their defaults.

    The schemas bound ``limit`` (at least 1); ``offset`` is declared without a minimum in the
    published definitions, so a negative one is refused here, in one line.
    """
    offset = args.get(prefix + "offset") or 0
    if offset < 0:
        raise ValidationError(
            f"{prefix}offset: got {offset}; expected 0 or more, for example {prefix}offset=0"
        )
    limit = args.get(prefix + "limit") or DEFAULT_LIMIT
    return offset, min(limit, MAX_LIMIT)


def includes(value: list[str] | None, default: tuple[str, ...] = ()) -> list[str]:
    """The include names asked for (the schema's enum allows only known ones), each once, in order."""
    return list(dict.fromkeys(default if value is None else value))


def custom_fields(args: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """``custom_fields`` as ``{id, value}``: ``values`` (a list) for a field that takes several.

    The schema has made each item an object with a whole-number ``id``; what is left is
    Redmine's spelling, one ``value`` that is a string or a list of strings.
    """
    raw = args.get("custom_fields")
    if raw is None:
        return None
    out: list[dict[str, Any]] = []
    for item in raw:
        values = item.get("values")
        out.append({"id": item["id"], "value": values if values is not None else item.get("value", "")})
    return out


def present(args: Mapping[str, Any], readers: Mapping[str, Reader]) -> dict[str, Any]:
    """The fields the caller actually gave, each read by its reader; absent ones are left out."""
    out: dict[str, Any] = {}
    for name, read in readers.items():
        if name in args:
            value = read(args, name)
            if value is not None:
                out[name] = value
    return out


def as_text(args: Mapping[str, Any], name: str) -> str | None:
    """Reader for free text fields."""
    return text(args, name)


def as_given(args: Mapping[str, Any], name: str) -> Any:
    """Reader for a field the schema fully checks (a whole number, a flag): the value as validated."""
    return args.get(name)


def as_hours(args: Mapping[str, Any], name: str) -> float | None:
    """Reader for hours in any form Redmine reads (``1.5``, ``1:30``, ``1h30``, ``90m``), as a float."""
    value = args.get(name)
    return None if value is None else hours(value, name)


def ids(args: Mapping[str, Any], name: str) -> list[int] | None:
    """An optional list of ids (the schema has made a single id a list of one)."""
    value = args.get(name)
    return None if value is None else list(value)


def require_some(fields: Mapping[str, Any], what: str) -> None:
    """Refuse an update that would change nothing."""
    if not fields:
        raise ValidationError(f"Nothing to update for {what}: give at least one field to change")


def confirmed(args: Mapping[str, Any]) -> bool:
    """Whether a destructive call carries ``confirm: true`` (``"yes"`` and friends were coerced)."""
    return args.get("confirm") is True
