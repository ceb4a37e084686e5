"""What the pages' facets select: one declaration shared by the API and the web face.

The web face writes a page's facets into its URL and hands them to the archive API as these
params; the API reads them back with :meth:`Filters.from_params` (so a facet's name and its
check are written once), and the engine's page queries select posts by them.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mcpkit.archive.posts import AUTHORED_KINDS, KINDS
from mcpkit.errors import ValidationError

__all__ = ["FACETS", "FILTER_PARAMS", "Filters", "parse_day", "parse_month"]

FACETS = ("kind", "platform", "account", "lang")
"""Categorical facets (besides year/month and has-media), in the order the page lists them."""
FILTER_PARAMS = ("kind", "platform", "account", "lang", "has_media", "month")
"""The API params a page's facets are sent as (each optional)."""
_MONTH = re.compile(r"^(\d{4})(?:-(\d{1,2}))?$")
_DAY = re.compile(r"^(\d{1,2})-(\d{1,2})$")


def parse_month(raw: Any) -> tuple[int, int]:
    """``YYYY-MM`` as ``(year, month)``; ``ValidationError`` naming the parameter otherwise."""
    found = _MONTH.match(raw.strip()) if isinstance(raw, str) else None
    if found is None or found.group(2) is None or not 1 <= int(found.group(2)) <= 12:
        raise ValidationError(f"month must be YYYY-MM, got {raw!r}")
    return int(found.group(1)), int(found.group(2))


def parse_day(raw: Any) -> tuple[int, int]:
    """``MM-DD`` (a day of some year: 02-29 is one) as ``(month, day)``; ``ValidationError``
    naming the parameter otherwise."""
    found = _DAY.match(raw.strip()) if isinstance(raw, str) else None
    try:
        if found is None:
            raise ValueError(raw)
        dt.date(2024, int(found.group(1)), int(found.group(2)))  # a leap year: 02-29 is a day people post on
    except ValueError:
        raise ValidationError(f"day must be MM-DD, got {raw!r}") from None
    return int(found.group(1)), int(found.group(2))


@dataclass(frozen=True, slots=True)
class Filters:
    """What the facets select (empty = no restriction); the text query is separate."""

    kinds: tuple[str, ...] = tuple(sorted(AUTHORED_KINDS))
    platforms: tuple[str, ...] = ()
    accounts: tuple[str, ...] = ()
    langs: tuple[str, ...] = ()
    media: bool | None = None
    year: int | None = None
    month: int | None = None  # 1..12, with year

    def values(self, facet: str) -> tuple[str, ...]:
        return {"kind": self.kinds, "platform": self.platforms, "account": self.accounts, "lang": self.langs}[
            facet
        ]

    @property
    def all_kinds(self) -> bool:
        return set(self.kinds) >= set(KINDS)

    def params(self) -> dict[str, Any]:
        """These filters as the API's params (what :meth:`from_params` reads back)."""
        out: dict[str, Any] = {"kind": "all" if self.all_kinds else list(self.kinds)}
        for name, values in (("platform", self.platforms), ("account", self.accounts), ("lang", self.langs)):
            if values:
                out[name] = list(values)
        if self.media is not None:
            out["has_media"] = self.media
        if self.year is not None:
            out["month"] = f"{self.year:04d}" + (f"-{self.month:02d}" if self.month else "")
        return out

    @classmethod
    def from_params(cls, args: Mapping[str, Any]) -> Filters:
        """The filters an API call names; ``ValidationError`` naming the param otherwise."""
        kinds = _names(args, "kind")
        if "all" in kinds:
            kinds = tuple(KINDS)
        elif not kinds:
            kinds = tuple(k for k in KINDS if k in AUTHORED_KINDS)
        unknown = [k for k in kinds if k not in KINDS]
        if unknown:
            raise ValidationError(f"kind must be 'all' or among {', '.join(KINDS)}, got {unknown[0]!r}")
        media = args.get("has_media")
        if isinstance(media, str) and media.strip().lower() in ("1", "0", "true", "false"):
            media = media.strip().lower() in ("1", "true")
        if media is not None and not isinstance(media, bool):
            raise ValidationError(f"has_media must be true or false, got {media!r}")
        year = month = None
        raw_month = args.get("month")
        if raw_month not in (None, ""):
            found = _MONTH.match(str(raw_month).strip()) if isinstance(raw_month, str) else None
            if found is None or not 1 <= int(found.group(2) or 1) <= 12:
                raise ValidationError(f"month must be YYYY or YYYY-MM, got {raw_month!r}")
            year = int(found.group(1))
            month = int(found.group(2)) if found.group(2) else None
        return cls(
            kinds=kinds,
            platforms=_names(args, "platform"),
            accounts=_names(args, "account"),
            langs=_names(args, "lang"),
            media=media,
            year=year,
            month=month,
        )


def _names(args: Mapping[str, Any], name: str) -> tuple[str, ...]:
    """A list param (a list, or one string, commas splitting it), duplicates dropped."""
    raw = args.get(name)
    if raw is None:
        return ()
    items = [raw] if isinstance(raw, str) else raw
    if not isinstance(items, list) or not all(isinstance(v, str) for v in items):
        raise ValidationError(f"{name} must be a string or a list of strings, got {raw!r}")
    out: list[str] = []
    for item in items:
        out.extend(v.strip() for v in item.split(",") if v.strip())
    return tuple(dict.fromkeys(out))
