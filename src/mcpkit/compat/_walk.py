"""Walking JSON Schemas by keyword, with the JSON pointer of every subschema.

The walk follows *keywords*, never property names: a parameter called ``description`` or
``type`` is a name under ``properties``, not a keyword, and must not be linted or rewritten
as one. Schemas in the 2020-12 and draft-07 shapes are both understood.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
"""Keywords whose value maps names to subschemas."""

SCHEMA_SINGLE = (
    "additionalProperties",
    "additionalItems",
    "unevaluatedProperties",
    "unevaluatedItems",
    "contains",
    "propertyNames",
    "not",
    "if",
    "then",
    "else",
    "contentSchema",
)
"""Keywords whose value is one subschema."""

SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
"""Keywords whose value is a list of subschemas."""

TOOL_SCHEMAS = ("inputSchema", "outputSchema")


def escape(token: str) -> str:
    """One JSON pointer reference token (RFC 6901): ``~`` -> ``~0``, ``/`` -> ``~1``."""
    return token.replace("~", "~0").replace("/", "~1")


def unescape(token: str) -> str:
    """The inverse of :func:`escape`."""
    return token.replace("~1", "/").replace("~0", "~")


def join(pointer: str, *tokens: str | int) -> str:
    """``join("/a", "b/c", 0)`` -> ``"/a/b~1c/0"``."""
    return pointer + "".join("/" + escape(str(t)) for t in tokens)


def children(node: dict[str, Any], pointer: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """The direct subschemas of ``node`` that are objects (boolean schemas have nothing to lint)."""
    for key in SCHEMA_MAPS:
        value = node.get(key)
        if isinstance(value, dict):
            for name, sub in value.items():
                if isinstance(sub, dict):
                    yield join(pointer, key, name), sub
    for key in SCHEMA_SINGLE:
        sub = node.get(key)
        if isinstance(sub, dict):
            yield join(pointer, key), sub
    for key in SCHEMA_LISTS:
        value = node.get(key)
        if isinstance(value, list):
            for i, sub in enumerate(value):
                if isinstance(sub, dict):
                    yield join(pointer, key, i), sub
    items = node.get("items")
    if isinstance(items, dict):
        yield join(pointer, "items"), items
    elif isinstance(items, list):
        for i, sub in enumerate(items):
            if isinstance(sub, dict):
                yield join(pointer, "items", i), sub
    deps = node.get("dependencies")
    if isinstance(deps, dict):
        for name, sub in deps.items():
            if isinstance(sub, dict):
                yield join(pointer, "dependencies", name), sub


def subschemas(schema: Any, pointer: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every object subschema of ``schema`` (itself first), depth first, with its pointer.

    Iterative, so a deeply nested schema cannot exhaust the recursion limit.
    """
    if not isinstance(schema, dict):
        return
    stack: list[tuple[str, dict[str, Any]]] = [(pointer, schema)]
    while stack:
        ptr, node = stack.pop()
        yield ptr, node
        stack.extend(reversed(list(children(node, ptr))))


def tool_schemas(
    definition: dict[str, Any], which: tuple[str, ...] = TOOL_SCHEMAS
) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every subschema of the tool's input (and output) schema, pointers from the tool root."""
    for key in which:
        yield from subschemas(definition.get(key), "/" + key)


def descriptions(
    definition: dict[str, Any], which: tuple[str, ...] = TOOL_SCHEMAS
) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """Every description text of a tool: its own and every schema node's.

    Yields ``(pointer, text, holder)`` where ``holder["description"] is text``, so a fixer
    can rewrite it in place.
    """
    own = definition.get("description")
    if isinstance(own, str):
        yield "/description", own, definition
    for ptr, node in tool_schemas(definition, which):
        text = node.get("description")
        if isinstance(text, str):
            yield join(ptr, "description"), text, node


def depth_of(pointer: str) -> int:
    """How many ``properties``/``items`` levels deep a schema pointer is (for nesting limits)."""
    tokens = pointer.split("/")[2:]
    return sum(1 for t in tokens if t in ("properties", "items", "prefixItems", "additionalProperties"))
