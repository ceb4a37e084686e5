"""Tool arguments typed on a command line: ``--args JSON`` or ``key=value`` words.

A value is kept as a string when the tool's schema says the property is a string (so
``id=007`` stays ``"007"``); otherwise it is read as JSON when it parses (``n=5``,
``flag=true``, ``tags=["a","b"]``) and as a string when it does not.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from mcpkit.errors import ValidationError


def parse_json_args(text: str) -> dict[str, Any]:
    """``--args`` must be a JSON object."""
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise ValidationError(f"--args is not valid JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise ValidationError(f"--args must be a JSON object, not {type(value).__name__}")
    return value


def parse_pairs(pairs: Sequence[str], schema: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """``["a=1", "b=x"]`` -> ``{"a": 1, "b": "x"}``, typed by the tool's input schema where it can."""
    props = (schema or {}).get("properties")
    props = props if isinstance(props, Mapping) else {}
    out: dict[str, Any] = {}
    for pair in pairs:
        key, found, value = pair.partition("=")
        if not found or not key:
            raise ValidationError(f"expected key=value, got {pair!r}")
        if key in out:
            raise ValidationError(f"argument {key!r} given twice")
        prop = props.get(key)
        declared = prop.get("type") if isinstance(prop, Mapping) else None
        out[key] = value if declared == "string" else _json_or_text(value)
    return out


def _json_or_text(value: str) -> Any:
    try:
        return json.loads(value)
    except ValueError:
        return value
