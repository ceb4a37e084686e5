"""Argument readers: from validated tool arguments to the values Redmine's REST API wants.

The server has already checked types and bounds against the schema (and coerced the forms
models send, such as ``"12"`` for 12), so these readers only do what a schema cannot say:
a number or an identifier, ``me``, dates, and Redmine's own spellings.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from mcpkit.errors import ValidationError
from mcpkit.redmine.api import INT64_MAX
from mcpkit.tools import coerce

MAX_LIMIT = 100  # Redmine answers at most 100 records per request
DEFAULT_LIMIT = 25

Reader = Callable[[Mapping[str, Any], str], Any]
# The markers this server (and the toolkit's cap) put at the end of a shortened text. Text sent
# back with one in it was read from a shortened answer: writing it would save the cut version.
CUT_MARKER = re.compile(r"… \[(excerpt: the first \d+ of \d+ characters|cut \d+ of \d+ characters)")


def num(value: Any, name: str = "id") -> int:
    """A positive whole-number id given as a number or text, at most a 64-bit integer."""
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
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValidationError(f"Invalid value for {name}: must be text")
    return uncut(value, name)


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


def int_or_none(args: Mapping[str, Any], name: str, *, minimum: int | None = None) -> int | None:
    """An optional whole number given as a number or text."""
    value = args.get(name)
    if value is None or value == "":
        return None
    try:
        return coerce.as_int(value, minimum=minimum, maximum=INT64_MAX)
    except ValidationError as exc:
        raise ValidationError(f"{name}: {exc}") from None


def paging(args: Mapping[str, Any], prefix: str = "") -> tuple[int, int]:
    """``offset`` and ``limit`` (or ``<prefix>offset``/``<prefix>limit``) with their defaults."""
    offset = int_or_none(args, prefix + "offset", minimum=0) or 0
    limit = int_or_none(args, prefix + "limit", minimum=1) or DEFAULT_LIMIT
    return offset, min(limit, MAX_LIMIT)


def includes(value: Any, allowed: tuple[str, ...], default: tuple[str, ...] = ()) -> list[str]:
    """A list of include names, each one of ``allowed``; duplicates dropped, order kept."""
    items = default if value is None else value
    if not isinstance(items, list | tuple) or any(i not in allowed for i in items):
        raise ValidationError(f"include must be a list of: {', '.join(allowed)}")
    return list(dict.fromkeys(str(i) for i in items))


def custom_fields(args: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """``custom_fields`` as ``{id, value}`` or ``{id, values}`` objects.

    ``values`` (a list) is for fields that take several values; ``value`` for one. A value
    that is a list is accepted too, since that is what Redmine itself sends back.
    """
    raw = args.get("custom_fields")
    if raw is None:
        return None
    if not isinstance(raw, list):
        raise ValidationError("custom_fields must be a list of objects with id and value or values")
    out: list[dict[str, Any]] = []
    for item in raw:
        if not isinstance(item, Mapping) or "id" not in item:
            raise ValidationError("each custom field needs an id and a value or values")
        value = item["values"] if item.get("values") is not None else item.get("value", "")
        if isinstance(value, list | tuple):
            value = [str(v) for v in value]
        elif value is not None:
            value = str(value)
        out.append({"id": num(item["id"], "custom field id"), "value": value})
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


def as_pos_int(args: Mapping[str, Any], name: str) -> int | None:
    """Reader for optional id fields."""
    value = args.get(name)
    return None if value is None or value == "" else num(value, name)


def as_flag(args: Mapping[str, Any], name: str) -> bool | None:
    """Reader for optional booleans."""
    value = args.get(name)
    return None if value is None else coerce.as_bool(value)


def as_hours(args: Mapping[str, Any], name: str) -> float | None:
    """Reader for hours: a number that is not negative."""
    value = args.get(name)
    if value is None or value == "":
        return None
    hours = float(coerce.as_number_or_special(value))
    if hours < 0:
        raise ValidationError(f"{name} must not be negative")
    return hours


def ids(args: Mapping[str, Any], name: str) -> list[int] | None:
    """An optional list of ids."""
    value = args.get(name)
    if value is None:
        return None
    items = value if isinstance(value, list | tuple) else [value]
    return [num(v, name) for v in items]


def user_or_me(value: Any, name: str) -> str:
    """A user number or ``me``, as Redmine's filters take them."""
    try:
        return str(coerce.as_number_or_special(value, allow=("me",)))
    except ValidationError as exc:
        raise ValidationError(f"{name}: {exc}") from None


def require_some(fields: Mapping[str, Any], what: str) -> None:
    """Refuse an update that would change nothing."""
    if not fields:
        raise ValidationError(f"Nothing to update for {what}: give at least one field to change")


def confirmed(args: Mapping[str, Any]) -> bool:
    """Whether a destructive call carries ``confirm: true``."""
    return coerce.as_bool(args.get("confirm", False))
