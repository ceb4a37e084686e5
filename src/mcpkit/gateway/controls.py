"""Team controls: which tools of each server are served, the descriptions and annotations a team
gives them, and how many calls each caller may make.

Declared in the config (``gateway.servers.NAME.tools`` and ``gateway.rate_limit``, parsed and
checked here, one line naming the field for anything wrong) and applied in one place each:

* :class:`ToolRules` by the routing table, before names are given: an excluded tool has no
  public name, so it is neither listed nor callable (a call gets the unknown-tool answer); an
  override replaces the server's text before the definition is adapted and linted for each
  client, exactly as the server's own text would be;
* :class:`Limiter` by the fronts: a token bucket per caller, refilled at ``calls`` per ``per``
  seconds, read from a clock it is given (``time.monotonic`` unless a test drives it).
"""

from __future__ import annotations

import fnmatch
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mcpkit.gateway.errors import GatewayConfigError

ANNOTATION_HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")
"""The boolean hints of a tool's ``annotations`` (MCP 2025-03-26 and later); ``title`` is text."""

OVERRIDE_KEYS = ("description", "title", "annotations")
"""What an override may replace in a tool's definition."""

MAX_CALLERS = 10_000
"""Buckets kept at most; beyond that, full buckets (callers at rest) are forgotten first."""


@dataclass(frozen=True)
class ToolRules:
    """``gateway.servers.NAME.tools``: which of a server's tools are served, and overrides."""

    include: tuple[str, ...] = ()
    """Names or globs (``get_*``); when given, only matching tools are served."""
    exclude: tuple[str, ...] = ()
    """Names or globs never served (applied after ``include``)."""
    overrides: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """Server tool name -> the ``description``, ``title`` and ``annotations`` to serve."""

    def serves(self, tool: str) -> bool:
        if self.include and not any(fnmatch.fnmatchcase(tool, p) for p in self.include):
            return False
        return not any(fnmatch.fnmatchcase(tool, p) for p in self.exclude)

    def apply(self, definition: dict[str, Any]) -> dict[str, Any]:
        """``definition`` with this server's override for it (the same object when none)."""
        override = self.overrides.get(str(definition.get("name")))
        if not override:
            return definition
        changed = {**definition}
        for key, value in override.items():
            if key == "annotations":
                base = definition.get("annotations")
                changed[key] = {**(base if isinstance(base, Mapping) else {}), **value}
            else:
                changed[key] = value
        return changed


NO_RULES = ToolRules()


@dataclass(frozen=True)
class RateLimit:
    """``gateway.rate_limit``: at most ``calls`` tool calls per ``per`` seconds for each caller."""

    calls: int
    per: float

    def describe(self) -> str:
        return f"{self.calls} calls per {_seconds(self.per)}"


class Limiter:
    """Per-caller token buckets; :meth:`take` says whether a call may go now."""

    def __init__(self, limit: RateLimit | None, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}  # caller -> (tokens, at)
        self.limit = limit

    @property
    def limit(self) -> RateLimit | None:
        return self._limit

    @limit.setter
    def limit(self, limit: RateLimit | None) -> None:
        """A new limit (a reload) starts every caller with a full bucket."""
        self._limit = limit
        self._buckets.clear()

    @property
    def active(self) -> bool:
        return self._limit is not None

    def take(self, caller: str) -> float | None:
        """None when ``caller`` may call now (the call is counted); else the seconds until it may."""
        limit = self._limit
        if limit is None:
            return None
        now = self._clock()
        rate = limit.calls / limit.per
        tokens, at = self._buckets.get(caller, (float(limit.calls), now))
        tokens = min(float(limit.calls), tokens + (now - at) * rate)
        if tokens >= 1.0 - 1e-9:  # a caller back exactly when told is let in despite rounding
            self._remember(caller, max(0.0, tokens - 1.0), now)
            return None
        self._remember(caller, tokens, now)
        return (1.0 - tokens) / rate

    def refusal(self, wait: float) -> str:
        """The one line a refused caller reads."""
        limit = self._limit
        allowed = limit.describe() if limit is not None else "the rate limit"
        return f"Rate limit reached: this gateway allows {allowed} per caller; try again in {retry_after(wait)} s."

    def _remember(self, caller: str, tokens: float, now: float) -> None:
        if caller not in self._buckets and len(self._buckets) >= MAX_CALLERS:
            limit = self._limit
            assert limit is not None
            rate = limit.calls / limit.per
            for known, (held, at) in list(self._buckets.items()):
                if held + (now - at) * rate >= limit.calls:
                    del self._buckets[known]
            if len(self._buckets) >= MAX_CALLERS:  # every caller is busy: the oldest goes
                del self._buckets[next(iter(self._buckets))]
        self._buckets[caller] = (tokens, now)


def retry_after(wait: float) -> int:
    """Whole seconds for ``Retry-After`` (at least 1: 0 would invite an immediate retry)."""
    return max(1, math.ceil(wait - 1e-9))


def _seconds(value: float) -> str:
    whole = int(value) if value == int(value) else value
    return f"{whole} s"


# -- the config's words ----------------------------------------------------------------------


def parse_tool_rules(raw: Any, where: str) -> ToolRules:
    """``gateway.servers.NAME.tools``: ``include``, ``exclude``, ``overrides``."""
    if not isinstance(raw, Mapping):
        raise GatewayConfigError(f"{where}: must be a table with include, exclude or overrides")
    unknown = sorted(set(raw) - {"include", "exclude", "overrides"})
    if unknown:
        raise GatewayConfigError(
            f"{where}: unknown keys {_names(unknown)} (known: exclude, include, overrides)"
        )
    overrides = raw.get("overrides") or {}
    if not isinstance(overrides, Mapping):
        raise GatewayConfigError(f"{where}.overrides: must map a tool name to a table")
    return ToolRules(
        include=_patterns(raw.get("include"), f"{where}.include"),
        exclude=_patterns(raw.get("exclude"), f"{where}.exclude"),
        overrides={str(t): _override(o, f"{where}.overrides.{_names([t])}") for t, o in overrides.items()},
    )


def _names(keys: list[Any]) -> str:
    """Keys as the reader sees them: as written, or quoted with escapes when not printable."""
    return ", ".join(k if isinstance(k, str) and k.isprintable() else repr(k) for k in keys)


def _patterns(raw: Any, where: str) -> tuple[str, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(p, str) and p.strip() for p in raw):
        raise GatewayConfigError(f'{where}: must be a list of tool names or globs, for example ["get_*"]')
    return tuple(p.strip() for p in raw)


def _override(raw: Any, where: str) -> dict[str, Any]:
    if not isinstance(raw, Mapping) or not raw:
        raise GatewayConfigError(f"{where}: must be a table with {', '.join(OVERRIDE_KEYS)}")
    unknown = sorted(set(raw) - set(OVERRIDE_KEYS))
    if unknown:
        raise GatewayConfigError(
            f"{where}: unknown keys {_names(unknown)} (known: {', '.join(sorted(OVERRIDE_KEYS))})"
        )
    for key in ("description", "title"):
        if key in raw and (not isinstance(raw[key], str) or not raw[key].strip()):
            raise GatewayConfigError(f"{where}.{key}: must be a non-empty string")
    annotations = raw.get("annotations")
    if annotations is not None:
        if not isinstance(annotations, Mapping):
            raise GatewayConfigError(f"{where}.annotations: must be a table of hints")
        for key, value in annotations.items():
            if key == "title":
                if not isinstance(value, str):
                    raise GatewayConfigError(f"{where}.annotations.title: must be a string")
            elif key not in ANNOTATION_HINTS:
                raise GatewayConfigError(
                    f"{where}.annotations: unknown hint {key!r} (known: title, {', '.join(ANNOTATION_HINTS)})"
                )
            elif not isinstance(value, bool):
                raise GatewayConfigError(f"{where}.annotations.{key}: must be true or false")
    return dict(raw)


def parse_rate_limit(raw: Any, where: str) -> RateLimit | None:
    """``gateway.rate_limit``: ``{"calls": 60, "per": 60}`` (seconds); absent: no limit."""
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise GatewayConfigError(f'{where}: must be a table, for example {{"calls": 60, "per": 60}}')
    unknown = sorted(set(raw) - {"calls", "per"})
    if unknown:
        raise GatewayConfigError(f"{where}: unknown keys {_names(unknown)} (known: calls, per)")
    calls, per = raw.get("calls"), raw.get("per", 60)
    if isinstance(calls, bool) or not isinstance(calls, int) or calls <= 0:
        raise GatewayConfigError(f"{where}.calls: must be a positive whole number")
    if isinstance(per, bool) or not isinstance(per, int | float) or not math.isfinite(per) or per <= 0:
        raise GatewayConfigError(f"{where}.per: must be a positive number of seconds")
    return RateLimit(calls, float(per))
