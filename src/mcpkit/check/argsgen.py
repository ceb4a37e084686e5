"""Arguments generated from a tool's input schema, for ``mcpkit check --probe``.

The goal is the smallest valid call: required properties only, each the simplest value its
schema accepts (``const``, then the first ``enum`` value, ``default``, ``examples``, then a
value of the declared type that respects min/max bounds). This is not a fuzzer: a probe
must not surprise a read-only tool with odd but valid input.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

_FORMATS = {
    "date": "2024-01-01",
    "date-time": "2024-01-01T00:00:00Z",
    "time": "00:00:00Z",
    "email": "user@example.com",
    "uri": "https://example.com/",
    "url": "https://example.com/",
    "uuid": "00000000-0000-4000-8000-000000000000",
    "ipv4": "127.0.0.1",
    "hostname": "example.com",
}
_MAX_DEPTH = 8


def example_arguments(schema: Mapping[str, Any] | None) -> dict[str, Any]:
    """A minimal argument object for ``schema`` (always a dict)."""
    value = example_value(schema or {}, schema or {}, 0)
    return value if isinstance(value, dict) else {}


def example_value(schema: Any, root: Mapping[str, Any], depth: int) -> Any:
    """The simplest value ``schema`` accepts (best effort; ``None`` when nothing fits)."""
    if not isinstance(schema, Mapping) or depth > _MAX_DEPTH:
        return None
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        target: Any = root
        for part in ref[2:].split("/"):
            target = (
                target.get(part.replace("~1", "/").replace("~0", "~"))
                if isinstance(target, Mapping)
                else None
            )
        return example_value(target, root, depth + 1)
    for key in ("const",):
        if key in schema:
            return schema[key]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    if "default" in schema:
        return schema["default"]
    if isinstance(schema.get("examples"), list) and schema["examples"]:
        return schema["examples"][0]
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list) and schema[key]:
            return example_value(schema[key][0], root, depth + 1)
    if isinstance(schema.get("allOf"), list) and schema["allOf"]:
        merged: dict[str, Any] = {}
        for part in schema["allOf"]:
            if isinstance(part, Mapping):
                merged.update(part)
        return example_value({**merged, **{k: v for k, v in schema.items() if k != "allOf"}}, root, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), kind[0] if kind else None)
    if kind is None:
        kind = "object" if "properties" in schema else "string"
    return _typed(kind, schema, root, depth)


def _typed(kind: str, schema: Mapping[str, Any], root: Mapping[str, Any], depth: int) -> Any:
    if kind == "string":
        fmt = schema.get("format")
        text = _FORMATS.get(fmt, "example") if isinstance(fmt, str) else "example"
        low = schema.get("minLength")
        high = schema.get("maxLength")
        if isinstance(low, int) and len(text) < low:
            text = text + "x" * (low - len(text))
        if isinstance(high, int) and len(text) > high:
            text = text[:high]
        return text
    if kind in ("integer", "number"):
        low = schema.get("minimum", schema.get("exclusiveMinimum"))
        high = schema.get("maximum", schema.get("exclusiveMaximum"))
        value: float = 1
        if isinstance(low, int | float):
            value = low + (1 if "exclusiveMinimum" in schema and "minimum" not in schema else 0)
        if isinstance(high, int | float) and value > high:
            value = high
        return int(value) if kind == "integer" else value
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    if kind == "array":
        count = schema.get("minItems", 0)
        count = count if isinstance(count, int) else 0
        item = example_value(schema.get("items", {}), root, depth + 1)
        return [item for _ in range(count)]
    if kind == "object":
        props = schema.get("properties")
        props = props if isinstance(props, Mapping) else {}
        required = schema.get("required")
        names = [n for n in required if isinstance(n, str)] if isinstance(required, list) else []
        return {name: example_value(props.get(name, {}), root, depth + 1) for name in names}
    return None
