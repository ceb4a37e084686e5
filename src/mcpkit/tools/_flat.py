"""An exact validity check for the flat schemas most tools declare, fifty times cheaper.

jsonschema walks a schema keyword by keyword, about ten microseconds per property of even the
simplest object: on a relayed call that answers at once, checking the arguments and the
structured result with it costs more than the relay itself. Most tool schemas are flat: an
object of typed properties, some required, with string enums, bounds, and arrays of scalars.
For exactly that subset :func:`flat_validator` compiles a plain-Python check that gives the
same verdict as jsonschema (draft 6 and later; a property test holds the two equal), and
returns None for any schema outside it, so callers keep jsonschema for those.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

Check = Callable[[Any], bool]

_ANNOTATIONS = frozenset(
    {
        "title",
        "description",
        "$comment",
        "examples",
        "default",
        "deprecated",
        "readOnly",
        "writeOnly",
        "format",
    }
)
"""Keywords that never change validity (``format`` only asserts with a format checker, which
neither the toolkit nor the gateway passes)."""
_DRAFTS = frozenset(
    {
        "http://json-schema.org/draft-06/schema#",
        "http://json-schema.org/draft-06/schema",
        "http://json-schema.org/draft-07/schema#",
        "http://json-schema.org/draft-07/schema",
        "https://json-schema.org/draft/2019-09/schema",
        "https://json-schema.org/draft/2020-12/schema",
    }
)
"""Drafts whose ``type`` and bound keywords mean what this module checks (draft 4 differs:
``1.0`` is not an integer there, and exclusive bounds are booleans)."""
_TYPES = frozenset({"string", "integer", "number", "boolean", "null", "array", "object"})
_NUMERIC_BOUNDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
_COUNT_BOUNDS = ("minLength", "maxLength", "minItems", "maxItems")


def flat_validator(schema: Any) -> Check | None:
    """A function telling whether a value is valid against ``schema``, or None when the schema
    is not flat (then only a full validator can judge it)."""
    if not isinstance(schema, Mapping) or schema.get("type") != "object":
        return None
    if "$schema" in schema and schema["$schema"] not in _DRAFTS:
        return None
    if set(schema) - _ANNOTATIONS - {"$schema", "type", "properties", "required", "additionalProperties"}:
        return None
    props = schema.get("properties", {})
    required = schema.get("required", [])
    extra = schema.get("additionalProperties", True)
    if not isinstance(props, Mapping) or not isinstance(extra, bool):
        return None
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        return None
    checks: dict[str, Check] = {}
    for key, sub in props.items():
        check = _value_check(sub, nested=True)
        if check is None:
            return None
        checks[key] = check
    needed = tuple(dict.fromkeys(required))
    closed = not extra

    def valid(value: Any) -> bool:
        if not isinstance(value, dict):
            return False
        for key in needed:
            if key not in value:
                return False
        for key, item in value.items():
            check = checks.get(key)
            if check is None:
                if closed:
                    return False
            elif not check(item):
                return False
        return True

    return valid


def _value_check(schema: Any, *, nested: bool) -> Check | None:
    """The check of one property (or array item) schema; None when it is not flat."""
    if schema is True or (isinstance(schema, Mapping) and not set(schema) - _ANNOTATIONS):
        return _anything
    if not isinstance(schema, Mapping):
        return None
    allowed = {"type", "enum", *_NUMERIC_BOUNDS, *_COUNT_BOUNDS} | ({"items"} if nested else set())
    if set(schema) - _ANNOTATIONS - allowed:
        return None
    parts: list[Check] = []
    if "type" in schema:
        names = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not names or not all(isinstance(n, str) and n in _TYPES for n in names):
            return None
        parts.append(_type_check(frozenset(names)))
    if "enum" in schema:
        enum = schema["enum"]
        if not isinstance(enum, list) or not enum or not all(isinstance(e, str) for e in enum):
            return None  # only string enums: JSON equality of mixed scalars differs from Python's
        strings = frozenset(enum)
        parts.append(lambda v: isinstance(v, str) and v in strings)
    for bound in _NUMERIC_BOUNDS:
        if bound in schema:
            limit = schema[bound]
            if isinstance(limit, bool) or not isinstance(limit, int | float) or not math.isfinite(limit):
                return None
            parts.append(_numeric_bound(bound, limit))
    for bound in _COUNT_BOUNDS:
        if bound in schema:
            limit = schema[bound]
            if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
                return None
            parts.append(_count_bound(bound, limit))
    if "items" in schema:
        items = _value_check(schema["items"], nested=False)
        if items is None:
            return None
        parts.append(lambda v: not isinstance(v, list) or all(items(i) for i in v))
    if len(parts) == 1:
        return parts[0]
    return lambda v: all(p(v) for p in parts)


def _anything(value: Any) -> bool:
    return True


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _type_check(names: frozenset[str]) -> Check:
    def fits(value: Any) -> bool:
        if isinstance(value, bool):
            return "boolean" in names
        if isinstance(value, int):
            return "integer" in names or "number" in names
        if isinstance(value, float):
            return "number" in names or ("integer" in names and value.is_integer())
        if isinstance(value, str):
            return "string" in names
        if value is None:
            return "null" in names
        if isinstance(value, list):
            return "array" in names
        if isinstance(value, dict):
            return "object" in names
        return False

    return fits


def _numeric_bound(bound: str, limit: float) -> Check:
    # jsonschema's own comparisons, so NaN (which json.loads accepts) fares the same
    if bound == "minimum":
        return lambda v: not (_is_number(v) and v < limit)
    if bound == "maximum":
        return lambda v: not (_is_number(v) and v > limit)
    if bound == "exclusiveMinimum":
        return lambda v: not (_is_number(v) and v <= limit)
    return lambda v: not (_is_number(v) and v >= limit)


def _count_bound(bound: str, limit: int) -> Check:
    if bound == "minLength":
        return lambda v: not isinstance(v, str) or len(v) >= limit
    if bound == "maxLength":
        return lambda v: not isinstance(v, str) or len(v) <= limit
    if bound == "minItems":
        return lambda v: not isinstance(v, list) or len(v) >= limit
    return lambda v: not isinstance(v, list) or len(v) <= limit
