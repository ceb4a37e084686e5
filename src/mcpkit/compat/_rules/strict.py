"""Rules for OpenAI structured outputs (``strict: true`` function calling).

Strict mode makes the model's arguments match the schema exactly, so it demands a closed
schema: ``additionalProperties: false`` on every object and every property listed in
``required`` (an optional parameter is spelled "required but nullable"). The fixers make
exactly those rewrites; the handler then receives ``null`` for "not given".
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from mcpkit.compat._model import CheckContext, Definition, Edit, FixContext, Issue, Rule
from mcpkit.compat._rules import merge
from mcpkit.compat._rules._util import is_object_node, show, types_of
from mcpkit.compat._walk import depth_of, join, tool_schemas

INPUT = ("inputSchema",)

FORBIDDEN = ("allOf", "not", "dependentRequired", "dependentSchemas", "dependencies", "if", "then", "else")


def _objects(definition: Definition) -> list[tuple[str, dict[str, Any]]]:
    return [(p, n) for p, n in tool_schemas(definition, INPUT) if is_object_node(n) or "properties" in n]


def closed_objects(**meta: Any) -> Rule:
    """Every object schema says ``additionalProperties: false``."""

    def check(definition: Definition, ctx: CheckContext) -> Iterator[Issue]:
        for pointer, node in _objects(definition):
            if node.get("additionalProperties") is not False:
                yield Issue(
                    join(pointer, "additionalProperties"),
                    f"additionalProperties must be false, got {show(node.get('additionalProperties'))}",
                    'add "additionalProperties": false',
                )

    def fix(definition: Definition, ctx: FixContext) -> list[Edit]:
        edits: list[Edit] = []
        for pointer, node in _objects(definition):
            current = node.get("additionalProperties")
            if current is False:
                continue
            ptr = join(pointer, "additionalProperties")
            if current in (None, True, {}):
                node["additionalProperties"] = False
                edits.append(
                    Edit(ptr, "close-object", f"{show(current)} -> false: the model sends declared keys only")
                )
            else:
                edits.append(
                    Edit(
                        ptr,
                        "close-object",
                        "a map of free keys cannot be expressed in strict mode",
                        applied=False,
                    )
                )
        return edits

    return Rule(
        check=check,
        fix=fix,
        adapt="sets additionalProperties: false; a map of free keys is left and reported",
        **meta,
    )


def _nullable(schema: Any) -> Any:
    """The same schema, also accepting ``null``."""
    if not isinstance(schema, dict):
        return schema
    out = dict(schema)
    kinds = out.get("type")
    if isinstance(kinds, str | list) and "const" not in out:
        listed = [kinds] if isinstance(kinds, str) else list(kinds)
        if "null" not in listed:
            out["type"] = [*listed, "null"]
        if isinstance(out.get("enum"), list) and None not in out["enum"]:
            out["enum"] = [*out["enum"], None]
        return out
    description = out.pop("description", None)
    wrapped: dict[str, Any] = {"anyOf": [out, {"type": "null"}]}
    if isinstance(description, str):
        wrapped["description"] = description
    return wrapped


def all_required(**meta: Any) -> Rule:
    """Every property of every object is listed in ``required``."""

    def optional(node: dict[str, Any]) -> list[str]:
        props = node.get("properties")
        required = node.get("required")
        listed = required if isinstance(required, list) else []
        return [n for n in props if n not in listed] if isinstance(props, dict) else []

    def check(definition: Definition, ctx: CheckContext) -> Iterator[Issue]:
        for pointer, node in _objects(definition):
            names = optional(node)
            if names:
                yield Issue(
                    join(pointer, "required"),
                    f"properties not in required: {show(names)}",
                    'list them in "required" and allow null for "not given"',
                )

    def fix(definition: Definition, ctx: FixContext) -> list[Edit]:
        edits: list[Edit] = []
        # Innermost first: wrapping a property copies it, so its own fixes must come before.
        for pointer, node in reversed(_objects(definition)):
            names = optional(node)
            if not names:
                continue
            for name in names:
                node["properties"][name] = _nullable(node["properties"][name])
            required = node.get("required")
            node["required"] = [*(required if isinstance(required, list) else []), *names]
            edits.append(
                Edit(
                    join(pointer, "required"),
                    "require-nullable",
                    f"{show(names)} now required and nullable: null means not given",
                )
            )
        return edits

    return Rule(
        check=check, fix=fix, adapt="lists optional properties in required and lets them be null", **meta
    )


def forbidden_keywords(**meta: Any) -> Rule:
    """No ``allOf``, ``not``, ``dependent*``, ``if``/``then``/``else`` anywhere."""

    def check(definition: Definition, ctx: CheckContext) -> Iterator[Issue]:
        for pointer, node in tool_schemas(definition, INPUT):
            for key in FORBIDDEN:
                if key in node:
                    yield Issue(
                        join(pointer, key),
                        f"{key} is not allowed in strict mode",
                        "express it without " + key,
                    )

    def fix(definition: Definition, ctx: FixContext) -> list[Edit]:
        edits: list[Edit] = []
        root = definition.get("inputSchema")
        for pointer, node in list(tool_schemas(definition, INPUT)):
            for key in FORBIDDEN:
                if key not in node:
                    continue
                ptr = join(pointer, key)
                if key == "allOf":
                    try:
                        edits.append(Edit(ptr, "fold-branches", merge.fold(node, key, root)))
                        continue
                    except merge.MergeError as exc:
                        # Branches that cannot become properties: drop the conjunction (the
                        # model sees a superset; the server still checks every branch).
                        before = node.pop(key)
                        edits.append(
                            Edit(
                                ptr,
                                "drop-keyword",
                                f"removed {key} {show(before)} ({exc}; accepts a superset)",
                            )
                        )
                else:
                    before = node.pop(key)
                    edits.append(
                        Edit(ptr, "drop-keyword", f"removed {key} {show(before)} (accepts a superset)")
                    )
        return edits

    return Rule(
        check=check,
        fix=fix,
        adapt="folds object allOf into properties; drops not, dependent*, if/then/else",
        **meta,
    )


def limits(max_properties: int, max_depth: int, max_enum: int, max_chars: int, **meta: Any) -> Rule:
    """Size limits of strict schemas (total properties, nesting, enum values, characters)."""

    def check(definition: Definition, ctx: CheckContext) -> Iterator[Issue]:
        nodes = list(tool_schemas(definition, INPUT))
        props = sum(len(n["properties"]) for _, n in nodes if isinstance(n.get("properties"), dict))
        enums = sum(len(n["enum"]) for _, n in nodes if isinstance(n.get("enum"), list))
        depth = max((depth_of(p) for p, n in nodes if types_of(n) or "properties" in n), default=0)
        size = len(json.dumps(definition.get("inputSchema"), default=repr))
        for what, value, limit in (
            ("properties", props, max_properties),
            ("nesting levels", depth, max_depth),
            ("enum values", enums, max_enum),
            ("characters", size, max_chars),
        ):
            if value > limit:
                yield Issue(
                    "/inputSchema", f"{value} {what}, over {limit}", "split the tool or flatten the schema"
                )

    return Rule(check=check, adapt="none: the schema must be made smaller by hand", **meta)
