"""Builders for JSON Schema fragments, so tool modules stay short and uniform.

Each helper returns a plain dict. They only emit keywords every client profile accepts
(type, description, enum, minimum/maximum, min/maxLength, pattern, items, properties,
required, default), never a ``type`` array: a parameter that takes several kinds of value
is a :func:`string` coerced in the handler (see :mod:`mcpkit.tools.coerce`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

Schema = dict[str, Any]


def _base(kind: str, description: str, default: Any = None) -> Schema:
    out: Schema = {"type": kind}
    if description:
        out["description"] = description
    if default is not None:
        out["default"] = default
    return out


def string(
    description: str = "",
    *,
    min_length: int | None = None,
    max_length: int | None = None,
    pattern: str | None = None,
    format: str | None = None,
    default: str | None = None,
) -> Schema:
    """A string parameter."""
    out = _base("string", description, default)
    if min_length is not None:
        out["minLength"] = min_length
    if max_length is not None:
        out["maxLength"] = max_length
    if pattern is not None:
        out["pattern"] = pattern
    if format is not None:
        out["format"] = format
    return out


def integer(
    description: str = "",
    *,
    minimum: int | None = None,
    maximum: int | None = None,
    default: int | None = None,
) -> Schema:
    """An integer parameter with optional inclusive bounds."""
    out = _base("integer", description, default)
    if minimum is not None:
        out["minimum"] = minimum
    if maximum is not None:
        out["maximum"] = maximum
    return out


def number(
    description: str = "",
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    default: float | None = None,
) -> Schema:
    """A number parameter with optional inclusive bounds."""
    out = _base("number", description, default)
    if minimum is not None:
        out["minimum"] = minimum
    if maximum is not None:
        out["maximum"] = maximum
    return out


def boolean(description: str = "", *, default: bool | None = None) -> Schema:
    """A boolean parameter."""
    return _base("boolean", description, default)


def enum(description: str, values: Iterable[str], *, default: str | None = None) -> Schema:
    """A string restricted to ``values`` (strings only: Gemini rejects other enum types)."""
    vals = [str(v) for v in values]
    if not vals:
        raise ValueError("enum needs at least one value")
    if default is not None and default not in vals:
        raise ValueError(f"enum default {default!r} is not one of {vals}")
    out = _base("string", description, default)
    out["enum"] = vals
    return out


def array(
    items: Mapping[str, Any],
    description: str = "",
    *,
    min_items: int | None = None,
    max_items: int | None = None,
) -> Schema:
    """An array whose elements all match ``items``."""
    out = _base("array", description)
    out["items"] = dict(items)
    if min_items is not None:
        out["minItems"] = min_items
    if max_items is not None:
        out["maxItems"] = max_items
    return out


def obj(
    properties: Mapping[str, Mapping[str, Any]],
    description: str = "",
    *,
    required: Sequence[str] = (),
    additional: bool = False,
) -> Schema:
    """A nested object; ``properties`` is always present (OpenAI rejects objects without it)."""
    unknown = [name for name in required if name not in properties]
    if unknown:
        raise ValueError(f"required names not among the properties: {unknown}")
    out = _base("object", description)
    out["properties"] = {k: dict(v) for k, v in properties.items()}
    if required:
        out["required"] = list(required)
    out["additionalProperties"] = additional
    return out


def object_schema(
    properties: Mapping[str, Mapping[str, Any]] | None = None,
    *,
    required: Sequence[str] = (),
    additional: bool = False,
) -> Schema:
    """A tool's root input schema: ``type: object`` with its properties.

    Unknown arguments are refused by default (``additionalProperties: false``), so a typo in
    an argument name is an error the model can see rather than a silently ignored value.
    """
    return obj(properties or {}, required=required, additional=additional)
