"""Hours as Redmine reads them: ``1.5``, ``1,5``, ``2h``, ``1:30``, ``1h30``, ``1h 30m``, ``90m``.

Redmine parses an hours value given as text itself (``String#to_hours`` in Redmine's
``lib/redmine/core_ext/string/conversions.rb``, the same in Redmine 4, 5 and 6), and a person
or a model writes time the way the Redmine form taught them. This module reads the same forms
the same way, so a value is known, checked and shown before anything is sent:

* a number with a decimal point or comma, optionally followed by ``h``: ``1.5``, ``1,5``, ``2h``;
* hours and minutes with a colon: ``1:30`` (the minutes may exceed 59, as in Redmine);
* hours and/or minutes with units, any case, spaces allowed: ``1h30``, ``1h 30m``, ``2 hours``,
  ``90m``, ``45 min``;
* otherwise a plain decimal number as Ruby's ``Float()`` reads it (``.5``, ``1e1``, ``1_000``).

Two things Redmine's parser takes are refused on purpose, in one line: a negative number (Redmine
stores it and then rejects the record) and Ruby's hexadecimal floats (``0x1A``). The test suite
compares this reading with Redmine's own parser wherever Redmine is installed.
"""

from __future__ import annotations

import math
import re
from typing import Any

from mcpkit.errors import ValidationError

EXAMPLES = "1.5, 1,5, 1:30, 1h30, 1h 30m or 90m"
"""Said in the schema and in every refusal."""

_PLAIN = re.compile(r"(\d+(?:[.,]\d+)?)h?", re.ASCII)
_CLOCK = re.compile(r"(\d+):(\d+)", re.ASCII)
_UNITS = re.compile(r"(?:(\d+)\s*(?:h|hours?))?\s*(?:(\d+)\s*(?:m|min)?)?", re.ASCII | re.IGNORECASE)
_DIGITS = r"\d+(?:_\d+)*"
_FLOAT = re.compile(rf"\s*[+-]?(?:{_DIGITS}(?:\.{_DIGITS})?|\.{_DIGITS})(?:[eE][+-]?{_DIGITS})?\s*", re.ASCII)
_STRIPPED = " \t\n\v\f\r\0"


def _reading(text: str) -> float | None:
    """The hours Redmine would read from ``text``, or ``None`` where it reads none."""
    s = text.strip(_STRIPPED)
    if "\n" in s:
        return None  # Redmine's anchors are per line; a value on several lines is no hours value
    plain = _PLAIN.fullmatch(s)
    if plain:
        s = plain[1]
    else:
        try:
            clock = _CLOCK.fullmatch(s)
            if clock:
                s = repr(int(clock[1]) + int(clock[2]) / 60.0)
            units = _UNITS.fullmatch(s)
            if units and (units[1] is not None or units[2] is not None):
                s = repr(int(units[1] or 0) + int(units[2] or 0) / 60.0)
        except (OverflowError, ValueError):  # more digits than any float holds
            return None
    s = s.replace(",", ".")
    if not _FLOAT.fullmatch(s):
        return None
    value = float(s.replace("_", ""))
    return value if math.isfinite(value) else None


def hours(value: Any, name: str = "hours") -> float:
    """``value`` (a number, or text in any form Redmine reads) as hours, or one line saying why not."""
    if isinstance(value, bool):
        number: float | None = None
    elif isinstance(value, int | float):
        number = float(value)
    else:
        number = _reading(str(value))
    if number is None or not math.isfinite(number):
        shown = " ".join(str(value).split())[:40]
        raise ValidationError(f"{name}: {shown!r} is not a number of hours; write it like {EXAMPLES}")
    if number < 0:
        raise ValidationError(f"{name}: {number:g} is negative; hours are 0 or more, such as {EXAMPLES}")
    return number
