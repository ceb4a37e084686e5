"""Search settings: the ``settings`` object of ``search_similar`` and its validation.

Upstream's shape is kept on the wire (``{top_k, user_filter: {includes, excludes,
threshold_min, threshold_max}, date_filter: {from, to}}``); here it becomes frozen dataclasses
so the engine never sees an unchecked value. Its defaults and ranges are the ``settings``
parameter's in :mod:`mcpkit.archive.methods`, read from there when a search is parsed; so are the
choices and limits re-exported below.
"""

from __future__ import annotations

import calendar
import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mcpkit.archive.methods import LIMIT_MAX as LIMIT_MAX
from mcpkit.archive.methods import METHODS, Param, check_range
from mcpkit.archive.methods import MODES as MODES
from mcpkit.archive.methods import OFFSET_MAX as OFFSET_MAX
from mcpkit.archive.methods import SPACES as SPACES
from mcpkit.archive.methods import TOP_K_MAX as TOP_K_MAX
from mcpkit.archive.methods import UPSTREAM_MODES as UPSTREAM_MODES
from mcpkit.errors import ValidationError


def _declared(name: str) -> Param:
    """A member of ``search_similar``'s ``settings`` as :data:`~mcpkit.archive.methods.METHODS` declares it."""
    return METHODS["search_similar"].param(name)


@dataclass(frozen=True, slots=True)
class UserFilter:
    """``includes`` wins over ``excludes``; thresholds are inclusive bounds on a user's post count."""

    includes: frozenset[str] = frozenset()
    excludes: frozenset[str] = frozenset()
    threshold_min: int | None = None
    threshold_max: int | None = None

    @property
    def active(self) -> bool:
        return bool(self.includes or self.excludes) or (
            self.threshold_min is not None or self.threshold_max is not None
        )


@dataclass(frozen=True, slots=True)
class DateFilter:
    """Inclusive bounds in epoch seconds (UTC reading of the archive's local timestamps).

    ``end`` is exclusive internally: a ``to`` given as a bare date covers that whole day, a
    ``to`` with a time covers up to and including that second. (Upstream compared strings, so
    ``to: "2024-05-01"`` silently dropped every post of May 1st; that is fixed here.)
    """

    start: int | None = None
    end: int | None = None

    @property
    def active(self) -> bool:
        return self.start is not None or self.end is not None


@dataclass(frozen=True, slots=True)
class SearchSettings:
    top_k: int = _declared("top_k").default
    user_filter: UserFilter = field(default_factory=UserFilter)
    date_filter: DateFilter = field(default_factory=DateFilter)


def _names(value: Any, where: str) -> frozenset[str]:
    if value is None:
        return frozenset()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, Sequence) or not all(isinstance(v, str) for v in value):
        raise ValidationError(f"{where} must be a list of user names")
    return frozenset(v.lstrip("@") for v in value if v.strip())


def _threshold(value: Any, where: str) -> int | None:
    if value is None:
        return None
    low = _declared(where.rsplit(".", 1)[1]).minimum or 0
    if isinstance(value, bool) or not isinstance(value, int | float) or int(value) != value or value < low:
        raise ValidationError(f"{where} must be an integer >= {low}, got {value!r}")
    return int(value)


def parse_user_filter(raw: Any) -> UserFilter:
    if raw is None:
        return UserFilter()
    if not isinstance(raw, Mapping):
        raise ValidationError("user_filter must be an object")
    return UserFilter(
        includes=_names(raw.get("includes"), "user_filter.includes"),
        excludes=_names(raw.get("excludes"), "user_filter.excludes"),
        threshold_min=_threshold(raw.get("threshold_min"), "user_filter.threshold_min"),
        threshold_max=_threshold(raw.get("threshold_max"), "user_filter.threshold_max"),
    )


_DATE_FORMATS = ("%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M")


def parse_bound(text: Any, where: str, *, upper: bool) -> int | None:
    """Epoch seconds for a ``from`` (inclusive) or ``to`` bound (returned as exclusive end).

    A bare date as ``to`` means "through the end of that day".
    """
    if text is None or (isinstance(text, str) and not text.strip()):
        return None
    if not isinstance(text, str):
        raise ValidationError(f"{where} must be a date string like 2024-05-01 or 2024-05-01 12:00:00")
    value = text.strip()
    try:
        day = dt.datetime.strptime(value, "%Y-%m-%d")
    except ValueError:
        pass
    else:
        start = calendar.timegm(day.timetuple())
        return start + 86400 if upper else start
    for fmt in _DATE_FORMATS:
        try:
            moment = dt.datetime.strptime(value, fmt)
        except ValueError:
            continue
        seconds = calendar.timegm(moment.timetuple())
        if upper:
            return seconds + (60 if fmt.endswith("%M") else 1)
        return seconds
    raise ValidationError(f"{where} is not a date: {value!r} (use YYYY-MM-DD or YYYY-MM-DD HH:MM:SS)")


def parse_date_filter(raw: Any) -> DateFilter:
    if raw is None:
        return DateFilter()
    if not isinstance(raw, Mapping):
        raise ValidationError("date_filter must be an object")
    return DateFilter(
        start=parse_bound(raw.get("from"), "date_filter.from", upper=False),
        end=parse_bound(raw.get("to"), "date_filter.to", upper=True),
    )


def parse_settings(raw: Any) -> SearchSettings:
    """Upstream's ``SearchSettings.from_dict`` with validation; ``None`` gives the defaults."""
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        raise ValidationError("settings must be an object")
    top_k = _declared("top_k")
    return SearchSettings(
        top_k=top_k.default
        if raw.get("top_k") is None
        else check_range("top_k", raw["top_k"], *top_k.bounds),
        user_filter=parse_user_filter(raw.get("user_filter")),
        date_filter=parse_date_filter(raw.get("date_filter")),
    )


def parse_weights(raw: Any) -> tuple[float, float, float] | None:
    """Three non-negative weights (content, reasoning, summary), normalised to sum 1."""
    if raw is None:
        return None
    if (
        not isinstance(raw, Sequence)
        or isinstance(raw, str)
        or len(raw) != 3
        or not all(isinstance(w, int | float) and not isinstance(w, bool) for w in raw)
    ):
        raise ValidationError(f"weights must be a list of 3 numbers, got {raw!r}")
    values = [float(w) for w in raw]
    total = sum(values)
    if any(w < 0 or w != w for w in values) or not total > 0:
        raise ValidationError(f"weights must be non-negative with a positive sum, got {raw!r}")
    return (values[0] / total, values[1] / total, values[2] / total)
