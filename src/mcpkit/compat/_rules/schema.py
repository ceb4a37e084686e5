"""Rules about the shape of input and output schemas that many clients share."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from functools import cache
from typing import Any

from mcpkit.compat import _refs as refs
from mcpkit.compat._model import CheckContext, Definition, Edit, FixContext, Issue, Rule
from mcpkit.compat._rules import merge
from mcpkit.compat._rules._util import add_description_sentence, input_root, is_object_node, show, types_of
from mcpkit.compat._text import type_phrase
from mcpkit.compat._walk import TOOL_SCHEMAS, join, tool_schemas

INPUT = ("inputSchema",)


# -- root of the input and output schemas -----------------------------------------------------


def input_root_object(**meta: Any) -> Rule:
    """``inputSchema`` is a JSON object with ``type: "object"`` at its root."""

    def check(definition: Definition, ctx: CheckContext) -> Iterator[Issue]:
        if "inputSchema" not in definition:
            yield Issue("/inputSchema", "inputSchema is missing", 'use {"type": "object"} for no parameters')
            return
        root = definition["inputSchema"]
        if not isinstance(root, dict):
            yield Issue(
                "/inputSchema", f"inputSchema must be an object, got {show(root)}", "use a JSON Schema object"
            )
        elif root.get("type") != "object":
            yield Issue(
                "/inputSchema/type",
                f'the root type must be "object", got {show(root.get("type"))}',
                'add "type": "object" at the root',
            )

    def fix(definition: Definition, ctx: FixContext) -> list[Edit]:
        root = definition.get("inputSchema")
        if root is None:
            definition["inputSchema"] = {"type": "object", "properties": {}}
            return [
                Edit("/inputSchema", "add-schema", "a tool without parameters gets an empty object schema")
            ]
        if not isinstance(root, dict):
            return [
                Edit(
                    "/inputSchema", "none", "a schema that is not an object cannot be repaired", applied=False
                )
            ]
        kinds = types_of(root)
        if root.get("type") in (None, "", []):
            root["type"] = "object"
            return [
                Edit(
                    "/inputSchema/type", "set-type", 'added "type": "object": arguments are always an object'
                )
            ]
        if "object" in kinds and isinstance(root.get("type"), list):
            before = root["type"]
            root["type"] = "object"
            return [
                Edit("/inputSchema/type", "set-type", f'{show(before)} -> "object": arguments are an object')
            ]
        return [
            Edit(
                "/inputSchema/type",
                "none",
                f"a root of type {show(root.get('type'))} is not a parameter list",
                applied=False,
            )
        ]

    return Rule(
        check=check,
        fix=fix,
        adapt='adds a missing schema or "type": "object"; a non-object root stays',
        **meta,
    )


def output_root_object(**meta: Any) -> Rule:
    """``outputSchema``, when present, is an object schema with ``type: "object"`` at its root."""

    def check(definition: Definition, ctx: CheckContext) -> Iterator[Issue]:
        if "outputSchema" not in definition:
            return
        root = definition["outputSchema"]
        if not isinstance(root, dict):
            yield Issue(
                "/outputSchema", f"outputSchema must be an object, got {show(root)}", "remove it or fix it"
            )
        elif root.get("type") != "object":
            yield Issue(
                "/outputSchema/type",
                f'the root type must be "object", got {show(root.get("type"))}',
                "wrap the result in an object, or drop the outputSchema",
            )

    def fix(definition: Definition, ctx: FixContext) -> list[Edit]:
        root = definition.get("outputSchema")
        if isinstance(root, dict):
            kinds = types_of(root)
            if "type" not in root or "object" in kinds:
                before = root.get("type")
                root["type"] = "object"
                return [
                    Edit(
                        "/outputSchema/type",
                        "set-type",
                        f'{show(before)} -> "object": structured content is an object',
                    )
                ]
        definition.pop("outputSchema", None)
        return [
            Edit(
                "/outputSchema",
                "drop-schema",
                f"removed an output schema with root {show(root)}: clients would refuse the tool list",
            )
        ]

    return Rule(
        check=check,
        fix=fix,
        adapt='sets root "type": "object" when it fits, else drops the outputSchema',
        **meta,
    )


def root_combinators(keywords: tuple[str, ...], require_type: bool = False, **meta: Any) -> Rule:
    """The input schema's root uses none of ``keywords`` (and, optionally, declares type object)."""

    def check(definition: Definition, ctx: CheckContext) -> Iterator[Issue]:
        root = input_root(definition)
        if root is None:
            return
        if require_type and root.get("type") != "object":
            yield Issue(
                "/inputSchema/type",
                f'the root type must be "object", got {show(root.get("type"))}',
                'add "type": "object"',
            )
        for key in keywords:
            if key in root:
                yield Issue(
                    join("/inputSchema", key),
                    f"{key} at the root of inputSchema",
                    "declare the parameters flat",
                )

    def fix(definition: Definition, ctx: FixContext) -> list[Edit]:
        root = input_root(definition)
        if root is None:
            return [Edit("/inputSchema", "none", "no input schema object to rewrite", applied=False)]
        edits: list[Edit] = []
        for key in keywords:
            if key not in root:
                continue
            pointer = join("/inputSchema", key)
            if key in ("allOf", "anyOf", "oneOf"):
                try:
                    edits.append(Edit(pointer, "fold-branches", merge.fold(root, key, root)))
                except merge.MergeError as exc:
                    edits.append(Edit(pointer, "fold-branches", str(exc), applied=False))
            else:
                before = root.pop(key)
                edits.append(Edit(pointer, "drop-keyword", f"removed {key} {show(before)} at the root"))
        if require_type and root.get("type") != "object":
            kinds = types_of(root)
            if "type" not in root or "object" in kinds:
                root["type"] = "object"
                edits.append(Edit("/inputSchema/type", "set-type", 'root "type": "object"'))
            else:
                edits.append(
                    Edit("/inputSchema/type", "none", "the root is not an object schema", applied=False)
                )
        return edits

    return Rule(
        check=check,
        fix=fix,
        adapt="folds object branches into flat properties; drops a root enum or not",
        **meta,
    )


# -- type arrays ------------------------------------------------------------------------------


def _fix_type_array(pointer: str, node: dict[str, Any], nullable_keyword: bool) -> Edit:
    """One ``type`` array rewritten the safe way for its side (input narrows, output widens)."""
    types = [t for t in node["type"] if isinstance(t, str)]
    before = show(node["type"])
    non_null = list(dict.fromkeys(t for t in types if t != "null"))
    ptr = join(pointer, "type")
    if pointer.startswith("/outputSchema"):
        if pointer == "/outputSchema" and "object" in non_null:
            node["type"] = "object"
            return Edit(ptr, "type-array", f'{before} -> "object"')
        del node["type"]
        add_description_sentence(node, f"Either {type_phrase(types)}.")
        return Edit(
            ptr, "type-array", f"removed {before}; the description names the types: results stay valid"
        )
    if len(non_null) == 1:
        node["type"] = non_null[0]
        if nullable_keyword and "null" in types:
            node["nullable"] = True
            return Edit(ptr, "type-array", f"{before} -> {show(non_null[0])} with nullable: true")
        return Edit(
            ptr, "type-array", f"{before} -> {show(non_null[0])}: callers send a value or leave it out"
        )
    if not non_null:
        if "null" in types:
            node["type"] = "null"
            return Edit(ptr, "type-array", f'{before} -> "null"')
        del node["type"]
        return Edit(ptr, "type-array", f"removed an empty type array {before}")
    node["type"] = "string"
    add_description_sentence(node, f"Accepts {type_phrase(non_null)}, sent as text.")
    return Edit(ptr, "type-array", f'{before} -> "string"; the handler must coerce the text')


def type_arrays(which: tuple[str, ...] = TOOL_SCHEMAS, nullable_keyword: bool = False, **meta: Any) -> Rule:
    """No ``type`` array anywhere (``["number", "string"]``, ``["string", "null"]``)."""

    def check(definition: Definition, ctx: CheckContext) -> Iterator[Issue]:
        for pointer, node in tool_schemas(definition, which):
            if isinstance(node.get("type"), list):
                yield Issue(
                    join(pointer, "type"),
                    f"type is an array {show(node['type'])}",
                    "declare one type: a string coerced in the handler (mcpkit.tools.coerce)",
                )

    def fix(definition: Definition, ctx: FixContext) -> list[Edit]:
        return [
            _fix_type_array(pointer, node, nullable_keyword)
            for pointer, node in list(tool_schemas(definition, which))
            if isinstance(node.get("type"), list)
        ]

    how = "nullable: true" if nullable_keyword else "the single type"
    return Rule(
        check=check,
        fix=fix,
        adapt=f'input: ["T", "null"] -> {how}, other arrays -> "string" with the types in the description; '
        "output: the type is removed and named in the description",
        **meta,
    )


# -- objects and arrays -----------------------------------------------------------------------


def object_properties(which: tuple[str, ...] = INPUT, **meta: Any) -> Rule:
    """Every ``type: object`` schema has ``properties`` (``{}`` is enough)."""

    def check(definition: Definition, ctx: CheckContext) -> Iterator[Issue]:
        for pointer, node in tool_schemas(definition, which):
            if is_object_node(node) and not isinstance(node.get("properties"), dict):
                yield Issue(pointer, "object schema without properties", 'add "properties": {}')

    def fix(definition: Definition, ctx: FixContext) -> list[Edit]:
        edits: list[Edit] = []
        for pointer, node in list(tool_schemas(definition, which)):
            if is_object_node(node) and not isinstance(node.get("properties"), dict):
                node["properties"] = {}
                edits.append(Edit(join(pointer, "properties"), "add-properties", 'added "properties": {}'))
        return edits

    return Rule(check=check, fix=fix, adapt='adds "properties": {} (accepts the same values)', **meta)


def array_items(which: tuple[str, ...] = INPUT, **meta: Any) -> Rule:
    """Every ``type: array`` schema has ``items``."""

    def check(definition: Definition, ctx: CheckContext) -> Iterator[Issue]:
        for pointer, node in tool_schemas(definition, which):
            if "array" in types_of(node) and "items" not in node:
                yield Issue(pointer, "array schema without items", "say what the elements are")

    def fix(definition: Definition, ctx: FixContext) -> list[Edit]:
        edits: list[Edit] = []
        for pointer, node in list(tool_schemas(definition, which)):
            if "array" in types_of(node) and "items" not in node:
                node["items"] = {}
                edits.append(
                    Edit(join(pointer, "items"), "add-items", 'added "items": {} (accepts the same values)')
                )
        return edits

    return Rule(check=check, fix=fix, adapt='adds "items": {} (accepts the same values)', **meta)


# -- validity and references ------------------------------------------------------------------


@cache
def _dialects() -> dict[str, type[Any]]:
    """The validator class per dialect; jsonschema is imported only when a schema is checked."""
    import jsonschema

    return {
        "2020-12": jsonschema.Draft202012Validator,
        "2019-09": jsonschema.Draft201909Validator,
        "draft-07": jsonschema.Draft7Validator,
        "draft-06": jsonschema.Draft6Validator,
        "draft-04": jsonschema.Draft4Validator,
    }


@cache
def _meta_validator(dialect: str) -> Any:
    cls = _dialects()[dialect]
    return cls(cls.META_SCHEMA, format_checker=cls.FORMAT_CHECKER)


def _declared_dialect(schema: dict[str, Any]) -> str:
    """The dialect named by ``$schema``; 2020-12 when absent or unknown (the MCP default)."""
    uri = schema.get("$schema")
    if not isinstance(uri, str):
        return "2020-12"
    import jsonschema.validators

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cls = jsonschema.validators.validator_for({"$schema": uri}, default=jsonschema.Draft202012Validator)
    for name, known in _dialects().items():
        if cls is known:
            return name
    return "2020-12"


def schema_errors(schema: Any, dialect: str) -> list[tuple[str, str]]:
    """Metaschema violations of ``schema`` as ``(relative pointer, message)``; [] when valid."""
    if not isinstance(schema, dict):
        return []
    name = _declared_dialect(schema) if dialect == "declared" else dialect
    import jsonschema.exceptions

    out: list[tuple[str, str]] = []
    try:
        errors = sorted(
            _meta_validator(name).iter_errors(schema), key=lambda e: list(map(str, e.absolute_path))
        )
    except (jsonschema.exceptions.SchemaError, RecursionError, TypeError, ValueError) as exc:
        return [("", f"schema cannot be checked: {exc}")]
    for error in errors[:10]:
        out.append((join("", *error.absolute_path), f"not valid JSON Schema {name}: {error.message[:200]}"))
    return out


def valid_schema(dialect: str, which: tuple[str, ...] = INPUT, **meta: Any) -> Rule:
    """The schemas are valid under a JSON Schema dialect ("declared": the one ``$schema`` names)."""

    def check(definition: Definition, ctx: CheckContext) -> Iterator[Issue]:
        for key in which:
            for pointer, message in schema_errors(definition.get(key), dialect):
                yield Issue(
                    "/" + key + pointer, message, "fix the schema; check it with a JSON Schema validator"
                )

    return Rule(check=check, adapt="none: an invalid schema has no safe rewrite", **meta)


def refs_resolvable(which: tuple[str, ...] = TOOL_SCHEMAS, **meta: Any) -> Rule:
    """Every ``$ref`` points inside the same schema and resolves there."""

    def check(definition: Definition, ctx: CheckContext) -> Iterator[Issue]:
        for key in which:
            schema = definition.get(key)
            for pointer, ref in refs.refs(schema, "/" + key):
                if not refs.is_local(ref):
                    yield Issue(
                        join(pointer, "$ref"), f"reference {ref} points outside the schema", "use $defs"
                    )
                elif not refs.resolves(schema, ref):
                    yield Issue(
                        join(pointer, "$ref"), f"reference {ref} does not resolve", "define it in $defs"
                    )

    return Rule(check=check, adapt="none: a dangling reference has no safe rewrite", **meta)
