"""Coercers for parameters that arrive as strings.

Clients crash or reject on ``type`` arrays (Claude Desktop did, on ``["number", "string"]``), so a parameter that accepts
"a number or a word like current" is declared as a string and coerced here, in the handler.
Every coercer raises :class:`mcpkit.errors.ValidationError` with a message that names the
bad value and what would have been accepted, so the model can correct itself.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Sequence
from typing import Any, overload

from mcpkit.errors import ValidationError

_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")
_TRUE = frozenset({"true", "t", "yes", "y", "on", "1"})
_FALSE = frozenset({"false", "f", "no", "n", "off", "0"})
_MAX_SHOWN = 60


def _show(value: Any) -> str:
    """A short, single-line rendering of a bad value for an error message."""
    text = repr(value)
    text = text.replace("\n", "\\n").replace("\r", "\\r")
    return text if len(text) <= _MAX_SHOWN else text[: _MAX_SHOWN - 3] + "..."


def _allowed(allow: Sequence[str]) -> str:
    return ", ".join(repr(a) for a in allow)


def _whole_or_float(num: float) -> int | float:
    """``12.0`` -> ``12``, ``1.5`` -> ``1.5``: whole numbers come back as ``int``."""
    if num.is_integer() and abs(num) < 2**63:
        return int(num)
    return num


@overload
def as_number_or_special(value: Any) -> int | float: ...
@overload
def as_number_or_special(value: Any, allow: Sequence[str]) -> int | float | str: ...
def as_number_or_special(value: Any, allow: Sequence[str] = ()) -> int | float | str:
    """Return ``value`` as a number (``int`` when whole), or unchanged if it is an allowed special.

    The Redmine server that crashed Claude Desktop with a type array fixed it with this rule
    (its ``asNumberOrSpecial``): strings listed in ``allow`` (such as
    ``"current"`` or ``"me"``) pass through exactly; anything else must be a finite number,
    given as a JSON number or as text (surrounding spaces ignored). Unlike JavaScript's
    ``Number``, an empty string, a boolean, ``null``, NaN and infinities are refused.
    Without ``allow`` the result is always a number.

    >>> as_number_or_special("current", allow=["current"])
    'current'
    >>> as_number_or_special(" 42 "), as_number_or_special("2.50")
    (42, 2.5)
    """
    if isinstance(value, str) and value in allow:
        return value
    num: float | None = None
    if isinstance(value, bool) or value is None:
        num = None
    elif isinstance(value, int):
        return value
    elif isinstance(value, float):
        num = value
    elif isinstance(value, str) and _NUMBER.match(value.strip()):
        stripped = value.strip()
        if re.fullmatch(r"[+-]?\d+", stripped):
            return int(stripped)
        num = float(stripped)
    if num is None or not math.isfinite(num):
        if allow:
            raise ValidationError(
                f"Invalid value {_show(value)}: must be a number or one of {_allowed(allow)}"
            )
        raise ValidationError(f"Invalid value {_show(value)}: must be a number")
    return _whole_or_float(num)


@overload
def as_id(value: Any) -> int: ...
@overload
def as_id(value: Any, allow: Sequence[str]) -> int | str: ...
def as_id(value: Any, allow: Sequence[str] = ()) -> int | str:
    """A positive integer id, or one of the ``allow`` words (``"current"``, ``"me"``).

    Without ``allow`` the result is always an ``int``.

    >>> as_id("7"), as_id("me", allow=["me"])
    (7, 'me')
    """
    words = f" or one of {_allowed(allow)}" if allow else ""
    problem = ValidationError(f"Invalid id {_show(value)}: must be a positive whole number{words}")
    try:
        number = as_number_or_special(value, allow)
    except ValidationError:
        raise problem from None
    if isinstance(number, str):
        return number
    if not isinstance(number, int) or number < 1 or number > 2**63 - 1:
        raise problem
    return number


def as_id_or_key(value: Any, *, key_pattern: str = r"^[a-z][a-z0-9_-]{0,99}$") -> int | str:
    """A positive integer id, or a text key such as a Redmine project identifier."""
    if isinstance(value, str) and re.match(key_pattern, value.strip()) and not value.strip().isdigit():
        return value.strip()
    try:
        return as_id(value)
    except ValidationError:
        raise ValidationError(
            f"Invalid id {_show(value)}: must be a positive whole number or an identifier "
            "of lowercase letters, digits, dashes and underscores starting with a letter"
        ) from None


def as_int(value: Any, *, minimum: int | None = None, maximum: int | None = None) -> int:
    """A whole number given as a number or as text, within optional inclusive bounds."""
    number = as_number_or_special(value)
    if not isinstance(number, int):
        raise ValidationError(f"Invalid value {_show(value)}: must be a whole number")
    out = number
    if minimum is not None and out < minimum:
        raise ValidationError(f"Invalid value {_show(value)}: must be at least {minimum}")
    if maximum is not None and out > maximum:
        raise ValidationError(f"Invalid value {_show(value)}: must be at most {maximum}")
    return out


def as_bool(value: Any) -> bool:
    """A boolean given as JSON true/false or as text: true/false, t/f, yes/no, y/n, on/off, 1/0.

    >>> as_bool("Yes"), as_bool(0)
    (True, False)
    """
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        word = value.strip().lower()
        if word in _TRUE:
            return True
        if word in _FALSE:
            return False
    raise ValidationError(f"Invalid value {_show(value)}: must be true or false")


def as_date(value: Any) -> dt.date:
    """An ISO calendar date ``YYYY-MM-DD`` (a ``date`` object passes through).

    >>> as_date("2025-01-09")
    datetime.date(2025, 1, 9)
    """
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if isinstance(value, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", value.strip()):
        try:
            return dt.date.fromisoformat(value.strip())
        except ValueError:
            pass
    raise ValidationError(f"Invalid date {_show(value)}: must be a calendar date like 2025-01-31")


def as_datetime(value: Any) -> dt.datetime:
    """An ISO 8601 date-time; a bare date means its midnight. Naive values stay naive."""
    if isinstance(value, dt.datetime):
        return value
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day)
    if isinstance(value, str):
        text = value.strip()
        if text.endswith(("Z", "z")):
            text = text[:-1] + "+00:00"
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?([+-]\d{2}:\d{2})?)?", text):
            try:
                return dt.datetime.fromisoformat(text)
            except ValueError:
                pass
    raise ValidationError(
        f"Invalid date and time {_show(value)}: must look like 2025-01-31 or 2025-01-31T09:30:00"
    )
