"""Rules for Gemini's function ``parameters``: an OpenAPI 3.0 subset of JSON Schema.

Gemini answers "Unknown name ..." for any keyword outside its subset and rejects the whole
request, so these rules walk the input schema by keyword and the fixers rewrite it into the
subset: references inlined, ``oneOf`` read as ``anyOf``, ``const`` as a one-value ``enum``,
exclusive bounds as inclusive ones, everything else dropped. Each rewrite accepts at least
what the original accepted; the server keeps validating calls against its own schema.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from mcpkit.compat import _refs as refs
from mcpkit.compat._model import CheckContext, Definition, Edit, FixContext, Issue, Rule
from mcpkit.compat._rules._util import add_description_sentence, show, types_of
from mcpkit.compat._walk import join, tool_schemas

INPUT = ("inputSchema",)

SUBSET = frozenset(
    {
        "type",
        "format",
        "title",
        "description",
        "nullable",
        "enum",
        "minItems",
        "maxItems",
        "properties",
        "required",
        "minProperties",
        "maxProperties",
        "minLength",
        "maxLength",
        "pattern",
        "example",
        "anyOf",
        "propertyOrdering",
        "default",
        "items",
        "minimum",
        "maximum",
    }
)
"""The keywords of Vertex AI's ``Schema`` object (cloud.google.com/vertex-ai/docs/reference/rest/v1/Schema)."""

REF_KEYWORDS = frozenset({"$ref", "$defs", "definitions"})
"""Reported and fixed by the references rule, which must run first."""

FORMATS = frozenset({"enum", "date-time"})
"""The STRING formats every source agrees on (gemini-cli#2141; the Vertex doc lists more)."""


def _input_nodes(definition: Definition) -> list[tuple[str, dict[str, Any]]]:
    return list(tool_schemas(definition, INPUT))


# -- references -------------------------------------------------------------------------------


def references(**meta: Any) -> Rule:
    """No ``$ref``/``$defs`` in the parameters: Gemini has no such keywords."""

    def check(definition: Definition, ctx: CheckContext) -> Iterator[Issue]:
        for pointer, node in _input_nodes(definition):
            for key in sorted(REF_KEYWORDS & set(node)):
                yield Issue(
                    join(pointer, key),
                    f"{key} is not supported in Gemini parameters",
                    "inline the definitions",
                )

    def fix(definition: Definition, ctx: FixContext) -> list[Edit]:
        schema = definition.get("inputSchema")
        if not isinstance(schema, dict):
            return []
        try:
            inlined = refs.inline(schema)
        except refs.InlineError as exc:
            return [Edit("/inputSchema", "inline-refs", str(exc), applied=False)]
        leftover = [p for p, node in refs.refs(inlined, "/inputSchema")]
        definition["inputSchema"] = inlined
        if leftover:
            return [Edit(leftover[0], "inline-refs", "a remote reference cannot be inlined", applied=False)]
        return [
            Edit("/inputSchema", "inline-refs", "replaced every local $ref by its definition; removed $defs")
        ]

    return Rule(
        check=check,
        fix=fix,
        adapt="inlines local $refs and removes $defs; a cycle is left and reported",
        **meta,
    )


# -- keywords outside the subset --------------------------------------------------------------


def _convert(pointer: str, node: dict[str, Any], key: str) -> Edit:
    """Rewrite or drop one keyword outside the subset."""
    ptr = join(pointer, key)
    value = node.pop(key)
    if key == "oneOf" and isinstance(value, list):
        if "anyOf" not in node:
            node["anyOf"] = value
            return Edit(ptr, "rename-keyword", "oneOf -> anyOf (accepts a superset)")
        return Edit(ptr, "drop-keyword", "removed oneOf next to anyOf (accepts a superset)")
    if key == "const" and "enum" not in node and isinstance(value, str | int | float | bool):
        node["enum"] = [value]
        return Edit(ptr, "rename-keyword", f"const {show(value)} -> enum [{show(value)}]")
    if key == "examples" and isinstance(value, list) and value and "example" not in node:
        node["example"] = value[0]
        return Edit(ptr, "rename-keyword", "examples -> example (the first one)")
    if (
        key in ("exclusiveMinimum", "exclusiveMaximum")
        and isinstance(value, int | float)
        and not isinstance(value, bool)
    ):
        bound = "minimum" if key == "exclusiveMinimum" else "maximum"
        if bound not in node:
            exact = types_of(node) == ["integer"] and isinstance(value, int)
            node[bound] = (value + 1 if bound == "minimum" else value - 1) if exact else value
            how = "exact for integers" if exact else "now inclusive"
            return Edit(ptr, "rename-keyword", f"{key} {value} -> {bound} {node[bound]} ({how})")
    if key == "prefixItems" and isinstance(value, list) and "items" not in node:
        node["items"] = {"anyOf": value} if len(value) > 1 else (value[0] if value else {})
        return Edit(ptr, "rename-keyword", "prefixItems -> items accepting any listed element")
    return Edit(ptr, "drop-keyword", f"removed {key} {show(value)}")


def keyword_subset(**meta: Any) -> Rule:
    """Every keyword in the parameters is one Gemini knows; tuple ``items`` are not."""

    def check(definition: Definition, ctx: CheckContext) -> Iterator[Issue]:
        for pointer, node in _input_nodes(definition):
            for key in node:
                if key not in SUBSET and key not in REF_KEYWORDS:
                    yield Issue(
                        join(pointer, key), f"keyword {key!r} is outside Gemini's schema subset", "remove it"
                    )
            if isinstance(node.get("items"), list):
                yield Issue(
                    join(pointer, "items"), "items as a list (tuple form) is not supported", "use one schema"
                )

    def fix(definition: Definition, ctx: FixContext) -> list[Edit]:
        edits: list[Edit] = []
        for pointer, node in _input_nodes(definition):
            for key in [k for k in node if k not in SUBSET and k not in REF_KEYWORDS]:
                edits.append(_convert(pointer, node, key))
            items = node.get("items")
            if isinstance(items, list):
                node["items"] = {"anyOf": items} if len(items) > 1 else (items[0] if items else {})
                edits.append(
                    Edit(join(pointer, "items"), "rewrite-items", "tuple items -> one schema accepting each")
                )
        return edits

    return Rule(
        check=check,
        fix=fix,
        adapt="oneOf -> anyOf, const -> enum, exclusive bounds -> inclusive, examples -> example; drops the rest",
        **meta,
    )


# -- values -----------------------------------------------------------------------------------


def enum_strings(**meta: Any) -> Rule:
    """``enum`` values are strings."""

    def check(definition: Definition, ctx: CheckContext) -> Iterator[Issue]:
        for pointer, node in _input_nodes(definition):
            values = node.get("enum")
            if isinstance(values, list) and any(not isinstance(v, str) for v in values):
                yield Issue(
                    join(pointer, "enum"), f"enum values must be strings: {show(values)}", "use string values"
                )

    def fix(definition: Definition, ctx: FixContext) -> list[Edit]:
        edits: list[Edit] = []
        for pointer, node in _input_nodes(definition):
            values = node.get("enum")
            if not isinstance(values, list) or all(isinstance(v, str) for v in values):
                continue
            node["enum"] = [v if isinstance(v, str) else json.dumps(v) for v in values]
            if "default" in node and not isinstance(node["default"], str):
                node["default"] = json.dumps(node["default"])
            before = show(node.get("type"))
            node["type"] = "string"
            add_description_sentence(node, "Sent as text.")
            edits.append(
                Edit(join(pointer, "enum"), "enum-to-text", f'values as text, type {before} -> "string"')
            )
        return edits

    return Rule(
        check=check, fix=fix, adapt='values become text and the type "string"; the handler coerces', **meta
    )


def required_defined(**meta: Any) -> Rule:
    """Every name in ``required`` is declared under ``properties``."""

    def missing(node: dict[str, Any]) -> list[Any]:
        required = node.get("required")
        if not isinstance(required, list) or not required:
            return []
        props = node.get("properties")
        names = props if isinstance(props, dict) else {}
        # a name that is not a string (malformed JSON Schema) is never declared either
        return [n for n in required if not isinstance(n, str) or n not in names]

    def check(definition: Definition, ctx: CheckContext) -> Iterator[Issue]:
        for pointer, node in _input_nodes(definition):
            gone = missing(node)
            if gone:
                yield Issue(
                    join(pointer, "required"),
                    f"required names without properties: {show(gone)}",
                    "declare them",
                )

    def fix(definition: Definition, ctx: FixContext) -> list[Edit]:
        edits: list[Edit] = []
        for pointer, node in _input_nodes(definition):
            gone = missing(node)
            if not gone:
                continue
            kept = [n for n in node["required"] if n not in gone]
            if kept:
                node["required"] = kept
            else:
                del node["required"]
            edits.append(Edit(join(pointer, "required"), "drop-required", f"removed undeclared {show(gone)}"))
        return edits

    return Rule(check=check, fix=fix, adapt="removes required names that have no property", **meta)


# -- degraded (warnings) ----------------------------------------------------------------------


def _is_parameter(pointer: str) -> bool:
    return pointer != "/inputSchema" and "/$defs/" not in pointer and "/definitions/" not in pointer


def _inferred_type(node: dict[str, Any]) -> str | None:
    values = node.get("enum")
    if isinstance(values, list) and values and all(isinstance(v, str) for v in values):
        return "string"
    if isinstance(node.get("properties"), dict):
        return "object"
    if "items" in node:
        return "array"
    return None


def typed(**meta: Any) -> Rule:
    """Every parameter declares a ``type`` (or is an ``anyOf``)."""

    def check(definition: Definition, ctx: CheckContext) -> Iterator[Issue]:
        for pointer, node in _input_nodes(definition):
            if _is_parameter(pointer) and "type" not in node and "anyOf" not in node and "$ref" not in node:
                yield Issue(pointer, "schema without a type", "declare its type")

    def fix(definition: Definition, ctx: FixContext) -> list[Edit]:
        edits: list[Edit] = []
        for pointer, node in _input_nodes(definition):
            if _is_parameter(pointer) and "type" not in node and "anyOf" not in node and "$ref" not in node:
                kind = _inferred_type(node)
                if kind is not None:
                    node["type"] = kind
                    edits.append(
                        Edit(join(pointer, "type"), "set-type", f"added type {kind!r}, implied by the schema")
                    )
        return edits

    return Rule(
        check=check,
        fix=fix,
        adapt="adds a type only when the schema implies it (string enum, properties, items)",
        **meta,
    )


def type_with_anyof(**meta: Any) -> Rule:
    """``type`` and ``anyOf`` are not in the same node."""

    def check(definition: Definition, ctx: CheckContext) -> Iterator[Issue]:
        for pointer, node in _input_nodes(definition):
            if "type" in node and "anyOf" in node:
                yield Issue(pointer, "type next to anyOf", "move the type into each anyOf branch")

    def fix(definition: Definition, ctx: FixContext) -> list[Edit]:
        edits: list[Edit] = []
        for pointer, node in _input_nodes(definition):
            if "type" in node and isinstance(node.get("anyOf"), list):
                kind = node.pop("type")
                for branch in node["anyOf"]:
                    if isinstance(branch, dict) and "type" not in branch:
                        branch["type"] = kind
                edits.append(
                    Edit(
                        join(pointer, "type"), "move-type", f"type {show(kind)} moved into the anyOf branches"
                    )
                )
        return edits

    return Rule(check=check, fix=fix, adapt="moves the type into each anyOf branch", **meta)


def string_formats(**meta: Any) -> Rule:
    """String ``format`` values are ones Gemini documents consistently."""

    def check(definition: Definition, ctx: CheckContext) -> Iterator[Issue]:
        for pointer, node in _input_nodes(definition):
            fmt = node.get("format")
            if "string" in types_of(node) and fmt is not None and fmt not in FORMATS:
                yield Issue(
                    join(pointer, "format"), f"format {show(fmt)} may be refused", "drop it; say it in words"
                )

    def fix(definition: Definition, ctx: FixContext) -> list[Edit]:
        edits: list[Edit] = []
        for pointer, node in _input_nodes(definition):
            fmt = node.get("format")
            if "string" in types_of(node) and fmt is not None and fmt not in FORMATS:
                del node["format"]
                edits.append(Edit(join(pointer, "format"), "drop-keyword", f"removed format {show(fmt)}"))
        return edits

    return Rule(
        check=check, fix=fix, adapt="drops the format (the description still says what is expected)", **meta
    )
