"""Rules for Gemini's function ``parameters``: an OpenAPI 3.0 subset of JSON Schema.

Gemini answers "Unknown name ..." for any keyword outside its subset and rejects the whole
request, so these rules walk the input schema by keyword and the fixers rewrite it into the
subset: references inlined, ``oneOf`` read as ``anyOf``, ``const`` as a one-value ``enum``,
exclusive bounds as inclusive ones, everything else dropped. Each rewrite accepts at least
what the original accepted; the server keeps validating calls against its own schema.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

from mcpkit.compat import _refs as refs
from mcpkit.compat._model import CheckContext, Definition, Edit, FixContext, Issue, Rule
from mcpkit.compat._rules import merge
from mcpkit.compat._rules._util import add_description_sentence, show, types_of
from mcpkit.compat._text import type_phrase
from mcpkit.compat._walk import SCHEMA_LISTS, join, tool_schemas

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

MAX_PASSES = 8
"""Walks of the schema a fixer may make while its own rewrites uncover more to rewrite."""

REF_KEYWORDS = frozenset({"$ref", "$defs", "definitions"})
"""Reported and fixed by the references rule, which must run first."""

STRING_FORMATS = frozenset({"enum", "date-time"})
"""The STRING formats Gemini accepts (gemini-cli#2141; uri, email and uuid refused in production)."""

NUMBER_FORMATS = frozenset({"float", "double", "int32", "int64"})
"""The formats Gemini accepts on numbers and integers."""

ANY_VALUE = "Any JSON value, sent as text."
"""What a parameter without a type becomes: Gemini needs a type, and text can carry any value."""


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


def _flatten_all_of(pointer: str, node: dict[str, Any], root: Any) -> Edit:
    """``allOf`` folded into the node, so the branches' types and properties are kept.

    Plain object branches fold into properties (their required names add up). One branch
    whose keywords the node does not already use merges in as it is (the node and the branch
    both held, and now hold in one schema). Anything else is dropped: the result accepts a
    superset and the server still checks every branch.
    """
    ptr = join(pointer, "allOf")
    try:
        return Edit(ptr, "fold-branches", merge.fold(node, "allOf", root))
    except merge.MergeError:
        pass
    branches = node.pop("allOf")
    merged: dict[str, Any] = {}
    if isinstance(branches, list):
        for branch in branches:
            if not isinstance(branch, dict):
                merged = {}
                break
            for key, value in branch.items():
                if key in ("description", "title") and (key in node or key in merged):
                    continue  # the node's own words win; they describe the parameter
                if (key in node and node[key] != value) or (key in merged and merged[key] != value):
                    merged = {}
                    break
                merged[key] = copy.deepcopy(value)
            else:
                continue
            break
        else:
            node.update(merged)
            return Edit(ptr, "merge-branches", f"merged {len(branches)} allOf branches into the schema")
    return Edit(ptr, "drop-keyword", f"removed allOf {show(branches)} (accepts a superset)")


def _convert(pointer: str, node: dict[str, Any], key: str, root: Any = None) -> Edit:
    """Rewrite or drop one keyword outside the subset."""
    ptr = join(pointer, key)
    if key == "allOf" and isinstance(node.get("allOf"), list):
        return _flatten_all_of(pointer, node, root)
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
        root = definition.get("inputSchema")
        # A merged allOf brings its branches' keywords up a level: walk again until none is left.
        for _ in range(MAX_PASSES):
            before = len(edits)
            for pointer, node in _input_nodes(definition):
                for key in [k for k in node if k not in SUBSET and k not in REF_KEYWORDS]:
                    if key in node:  # an allOf merged just before may have brought and taken keys
                        edits.append(_convert(pointer, node, key, root))
                items = node.get("items")
                if isinstance(items, list):
                    node["items"] = {"anyOf": items} if len(items) > 1 else (items[0] if items else {})
                    edits.append(
                        Edit(
                            join(pointer, "items"),
                            "rewrite-items",
                            "tuple items -> one schema accepting each",
                        )
                    )
            if len(edits) == before:
                break
        return edits

    return Rule(
        check=check,
        fix=fix,
        adapt="allOf folded into the schema, oneOf -> anyOf, const -> enum, exclusive bounds -> inclusive, "
        "examples -> example; drops the rest",
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


# -- types ------------------------------------------------------------------------------------


def _in_definitions(pointer: str) -> bool:
    return "/$defs/" in pointer or "/definitions/" in pointer


_STRING_HINTS = ("minLength", "maxLength", "pattern")
_NUMBER_HINTS = ("minimum", "maximum")
_ARRAY_HINTS = ("items", "minItems", "maxItems")
_OBJECT_HINTS = ("properties", "required", "minProperties", "maxProperties")


def _inferred_type(node: dict[str, Any]) -> str | None:
    """The one type the node's own keywords imply, if they imply exactly one."""
    values = node.get("enum")
    if isinstance(values, list) and values and all(isinstance(v, str) for v in values):
        return "string"
    found = [
        kind
        for kind, hints in (
            ("string", _STRING_HINTS),
            ("number", _NUMBER_HINTS),
            ("array", _ARRAY_HINTS),
            ("object", _OBJECT_HINTS),
        )
        if any(h in node for h in hints)
    ]
    return found[0] if len(found) == 1 else None


def _is_null(branch: Any) -> bool:
    return (
        isinstance(branch, dict) and types_of(branch) == ["null"] and set(branch) <= {"type", "description"}
    )


def _is_object_like(branch: Any) -> bool:
    return isinstance(branch, dict) and types_of(branch) in ([], ["object"])


def _merge_into(node: dict[str, Any], branch: dict[str, Any]) -> bool:
    """Put ``branch``'s keywords into ``node`` (anyOf removed) when none contradicts the node's."""
    own = {k: v for k, v in node.items() if k != "anyOf"}
    for key, value in branch.items():
        if key in own and own[key] != value and key not in ("description", "title", "default"):
            return False
    merged = {**copy.deepcopy(branch), **own}
    node.clear()
    node.update(merged)
    return True


def _required_sentence(branches: list[Any]) -> str | None:
    """ "Requires id or name." for anyOf branches that only require different names."""
    sets = [b.get("required") for b in branches if isinstance(b, dict)]
    if len(sets) != len(branches) or not all(isinstance(r, list) and r for r in sets):
        return None
    words = [" and ".join(str(n) for n in r) for r in sets]  # type: ignore[union-attr]
    return "Requires " + " or ".join(words) + "."


def collapse_any_of(pointer: str, node: dict[str, Any], root: Any, *, typeless: bool) -> Edit | None:
    """Turn an ``anyOf`` into a schema with one ``type`` that accepts at least the same values.

    The shapes, in order: ``[X, null]`` (Pydantic's ``Optional[X]``) becomes X with
    ``nullable: true``; object branches fold into one object (names every branch requires stay
    required; the alternatives are said in the description); branches of one type keep the
    anyOf and get that type beside it; any other mix becomes text naming the types (the
    gateway parses it back, :mod:`mcpkit.gateway.arguments`). Only the first two when the
    node already has a type (``typeless`` False): then a type is there and nothing must change.
    """
    branches = node.get("anyOf")
    if not isinstance(branches, list) or not branches or not all(isinstance(b, dict) for b in branches):
        return None
    ptr = join(pointer, "anyOf")
    nullable = any(_is_null(b) for b in branches)
    rest = [b for b in branches if not _is_null(b)]
    if len(rest) == 1 and _merge_into(node, rest[0]):
        if nullable:
            node["nullable"] = True
        return Edit(
            ptr,
            "collapse-any-of",
            "anyOf of one schema"
            + (" and null" if nullable else "")
            + " -> that schema"
            + (" with nullable: true" if nullable else ""),
        )
    object_node = typeless or types_of(node) == ["object"]
    if rest and object_node and all(_is_object_like(b) for b in rest):
        sentence = _required_sentence(rest)
        saved = node["anyOf"]
        node["anyOf"] = rest
        try:
            account = merge.fold(node, "anyOf", root)
        except merge.MergeError:
            node["anyOf"] = saved
        else:
            if nullable:
                node["nullable"] = True
            if sentence:
                add_description_sentence(node, sentence)
            return Edit(ptr, "fold-branches", account)
    if not typeless or not rest:
        return None
    kinds = [types_of(b) for b in rest]
    if all(len(k) == 1 for k in kinds) and len({k[0] for k in kinds}) == 1:
        node["type"] = kinds[0][0]
        if nullable:
            node["anyOf"] = rest
            node["nullable"] = True
        return Edit(
            join(pointer, "type"), "set-type", f"added type {kinds[0][0]!r}, the type of every anyOf branch"
        )
    named = list(dict.fromkeys(t for k in kinds for t in k)) or ["any JSON value"]
    del node["anyOf"]
    for key in [k for k in node if k not in ("description", "title", "default", "nullable")]:
        del node[key]
    node["type"] = "string"
    if nullable:
        node["nullable"] = True
    add_description_sentence(node, f"Accepts {type_phrase(named)}, sent as text.")
    return Edit(ptr, "any-of-to-text", f'anyOf of {show(named)} -> "string"; the handler must parse the text')


def _set_object(root: dict[str, Any]) -> Edit:
    root["type"] = "object"
    return Edit("/inputSchema/type", "set-type", 'added "type": "object": arguments are always an object')


def _untyped(pointer: str, node: dict[str, Any]) -> bool:
    return "type" not in node and "$ref" not in node and not _in_definitions(pointer)


def typed(**meta: Any) -> Rule:
    """Every schema in the parameters declares a ``type``, an ``anyOf`` node included."""

    def check(definition: Definition, ctx: CheckContext) -> Iterator[Issue]:
        for pointer, node in _input_nodes(definition):
            if _untyped(pointer, node):
                what = "anyOf without a type" if "anyOf" in node else "schema without a type"
                yield Issue(pointer, what, "declare its type")

    def fix(definition: Definition, ctx: FixContext) -> list[Edit]:
        edits: list[Edit] = []
        root = definition.get("inputSchema")
        for _ in range(MAX_PASSES):
            before = len(edits)
            for pointer, node in _input_nodes(definition):
                if not _untyped(pointer, node):
                    continue
                if pointer == "/inputSchema":  # arguments are an object whatever else the root says
                    edits.append(_set_object(node))
                    folded = collapse_any_of(pointer, node, root, typeless=False)
                    if folded is not None:
                        edits.append(folded)
                    continue
                kind = _inferred_type(node) if "anyOf" not in node else None
                if kind is not None:
                    node["type"] = kind
                    edits.append(
                        Edit(join(pointer, "type"), "set-type", f"added type {kind!r}, implied by the schema")
                    )
                    continue
                edit = collapse_any_of(pointer, node, root, typeless=True) if "anyOf" in node else None
                if edit is None and "anyOf" not in node:
                    node["type"] = "string"
                    add_description_sentence(node, ANY_VALUE)
                    edit = Edit(
                        join(pointer, "type"),
                        "set-type",
                        'any value -> "string": the handler parses the text',
                    )
                if edit is not None:
                    edits.append(edit)
            if len(edits) == before:
                break
        return edits

    return Rule(
        check=check,
        fix=fix,
        adapt="a type the keywords imply; anyOf [X, null] -> X with nullable: true; object branches folded; "
        'one type shared by the branches added; otherwise "string" naming the types',
        **meta,
    )


def type_with_anyof(**meta: Any) -> Rule:
    """``type`` and ``anyOf`` are not in the same node."""

    def check(definition: Definition, ctx: CheckContext) -> Iterator[Issue]:
        for pointer, node in _input_nodes(definition):
            if "type" in node and "anyOf" in node:
                yield Issue(pointer, "type next to anyOf", "fold the branches into the typed schema")

    def fix(definition: Definition, ctx: FixContext) -> list[Edit]:
        # The type stays: the Gemini API now refuses an anyOf without one (row 12), which
        # outweighs the older CLI's complaint. Only branches that fold away are rewritten.
        root = definition.get("inputSchema")
        edits: list[Edit] = []
        for pointer, node in _input_nodes(definition):
            if "type" in node and "anyOf" in node:
                edit = collapse_any_of(pointer, node, root, typeless=False)
                if edit is not None:
                    edits.append(edit)
        return edits

    return Rule(
        check=check,
        fix=fix,
        adapt="folds anyOf [X, null] and object branches into the typed schema; other branches stay "
        "(the API needs the type)",
        **meta,
    )


def formats(kinds: tuple[str, ...], allowed: frozenset[str], **meta: Any) -> Rule:
    """``format`` on a schema of one of ``kinds`` is one of ``allowed``."""

    def bad(node: dict[str, Any]) -> bool:
        fmt = node.get("format")
        return fmt is not None and fmt not in allowed and any(k in types_of(node) for k in kinds)

    def check(definition: Definition, ctx: CheckContext) -> Iterator[Issue]:
        for pointer, node in _input_nodes(definition):
            if bad(node):
                yield Issue(
                    join(pointer, "format"),
                    f"format {show(node['format'])} is refused; allowed: {', '.join(sorted(allowed))}",
                    "drop it; say it in words",
                )

    def fix(definition: Definition, ctx: FixContext) -> list[Edit]:
        edits: list[Edit] = []
        for pointer, node in _input_nodes(definition):
            if bad(node):
                fmt = node.pop("format")
                if isinstance(fmt, str) and fmt:
                    add_description_sentence(node, f"Format: {fmt}.")
                edits.append(
                    Edit(
                        join(pointer, "format"),
                        "drop-keyword",
                        f"removed format {show(fmt)}; the description names it",
                    )
                )
        return edits

    return Rule(check=check, fix=fix, adapt="drops the format and names it in the description", **meta)


def boolean_schemas(**meta: Any) -> Rule:
    """No ``true``/``false`` schema where Gemini expects a schema object."""

    Spot = tuple[str, str, dict[str, Any] | list[Any], Any]

    def spots(definition: Definition) -> Iterator[Spot]:
        """(pointer, where, holder, key) of every boolean subschema Gemini would read."""
        for pointer, node in _input_nodes(definition):
            props = node.get("properties")
            if isinstance(props, dict):
                for name, sub in props.items():
                    if isinstance(sub, bool):
                        yield join(pointer, "properties", name), "property", props, name
            if isinstance(node.get("items"), bool):
                yield join(pointer, "items"), "items", node, "items"
            for key in SCHEMA_LISTS:
                value = node.get(key)
                if isinstance(value, list):
                    for i, sub in enumerate(value):
                        if isinstance(sub, bool):
                            yield join(pointer, key, i), "branch", value, i

    def check(definition: Definition, ctx: CheckContext) -> Iterator[Issue]:
        for pointer, _, holder, key in spots(definition):
            yield Issue(
                pointer,
                f"boolean schema {show(holder[key])} instead of a schema object",
                "use an object schema",
            )

    def fix(definition: Definition, ctx: FixContext) -> list[Edit]:
        edits: list[Edit] = []
        # Last first, so removing a list element leaves the earlier indexes valid.
        for pointer, where, holder, key in reversed(list(spots(definition))):
            if holder[key] is True:
                holder[key] = {"type": "string", "description": ANY_VALUE}
                edits.append(Edit(pointer, "boolean-schema", 'true -> "string": any value, sent as text'))
            elif where == "property":
                del holder[key]
                edits.append(
                    Edit(pointer, "boolean-schema", "removed a property declared false (never valid)")
                )
            elif where == "branch" and len(holder) > 1:
                del holder[key]
                edits.append(Edit(pointer, "boolean-schema", "removed a false branch (it never matches)"))
            elif where == "items" and isinstance(holder, dict):
                holder["items"] = {"type": "string"}
                holder["maxItems"] = 0
                edits.append(Edit(pointer, "boolean-schema", "items false -> maxItems 0 (an empty list)"))
            else:
                edits.append(Edit(pointer, "none", "a lone false schema has no Gemini form", applied=False))
        return edits

    return Rule(
        check=check,
        fix=fix,
        adapt='true -> "string" (any value as text); a false property or branch is removed; items false -> maxItems 0',
        **meta,
    )
