"""Hypothesis strategies for tool definitions that break client rules in every fixable way.

The tools are valid JSON Schema (2020-12 or draft-07) with acyclic local references, so
everything wrong with them has a safe rewrite: names with any characters and lengths,
descriptions with parentheses, underscores and many lines, type arrays, keywords outside
Gemini's subset, optional properties, open objects, root combinators of object branches.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

NAME_CHARS = [*"abcXYZ019_-.: /,()é", "\t"]
TEXT_CHARS = [*"ab _()\n.,:é\t\r-", "\x85", "\u2028"]

names = st.text(alphabet=st.sampled_from(NAME_CHARS), max_size=140)
descriptions = st.text(alphabet=st.sampled_from(TEXT_CHARS), max_size=120) | st.text(max_size=40)
prop_names = st.text(alphabet=st.sampled_from(list("abc_-.")), min_size=1, max_size=6)
server_names = st.none() | st.text(alphabet=st.sampled_from(list("abcdef-_")), min_size=1, max_size=20)

SCALARS = ["string", "integer", "number", "boolean"]


@st.composite
def leaf(draw: st.DrawFn, defs: tuple[str, ...]) -> dict[str, Any]:
    kind = draw(st.sampled_from(["typed", "type-array", "enum", "ref", "const", "empty"]))
    node: dict[str, Any]
    if kind == "ref" and defs:
        node = {"$ref": "#/$defs/" + draw(st.sampled_from(defs))}
    elif kind == "type-array":
        node = {
            "type": draw(
                st.lists(
                    st.sampled_from([*SCALARS, "null", "object", "array"]),
                    min_size=1,
                    max_size=3,
                    unique=True,
                )
            )
        }
    elif kind == "enum":
        values = (
            draw(st.lists(st.integers(-5, 5), min_size=1, max_size=4, unique=True))
            if draw(st.booleans())
            else ["a", "b"]
        )
        node = {"enum": values}
        if draw(st.booleans()):
            node["type"] = "integer" if isinstance(values[0], int) else "string"
    elif kind == "const":
        node = {"const": draw(st.sampled_from(["x", 1, True]))}
    elif kind == "empty":
        node = {}
    else:
        node = {"type": draw(st.sampled_from(SCALARS))}
        if node["type"] in ("integer", "number") and draw(st.booleans()):
            node[draw(st.sampled_from(["minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"]))] = (
                draw(st.integers(-10, 10))
            )
        if node["type"] == "string":
            extra = draw(st.sampled_from([None, "format", "pattern", "minLength"]))
            if extra == "format":
                node["format"] = draw(st.sampled_from(["uri", "date-time", "email"]))
            elif extra == "pattern":
                node["pattern"] = "^[a-z]+$"
            elif extra == "minLength":
                node["minLength"] = 1
    if draw(st.booleans()):
        node["description"] = draw(descriptions)
    if draw(st.integers(0, 5)) == 0:
        key, value = draw(
            st.sampled_from([("examples", ["e"]), ("deprecated", True), ("title", "A_title (x)")])
        )
        node[key] = value
    return node


def schema(defs: tuple[str, ...]) -> st.SearchStrategy[dict[str, Any]]:
    def extend(children: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
        return st.one_of(
            obj(children),
            st.builds(
                lambda items, d: {"type": "array", **({"items": items} if d else {})}, children, st.booleans()
            ),
            st.builds(lambda a, b, k: {k: [a, b]}, children, children, st.sampled_from(["anyOf", "oneOf"])),
            st.builds(lambda a: {**a, "not": {"enum": ["zzz"]}}, children),
        )

    return st.recursive(leaf(defs), extend, max_leaves=8)


@st.composite
def obj(draw: st.DrawFn, children: st.SearchStrategy[dict[str, Any]]) -> dict[str, Any]:
    props = draw(st.dictionaries(prop_names, children, max_size=4))
    node: dict[str, Any] = {"type": "object"}
    if props or draw(st.booleans()):
        node["properties"] = props
    if props and draw(st.booleans()):
        node["required"] = draw(st.lists(st.sampled_from(sorted(props)), unique=True))
    if draw(st.booleans()):
        node["additionalProperties"] = draw(st.booleans())
    if draw(st.booleans()):
        node["description"] = draw(descriptions)
    return node


@st.composite
def input_schemas(draw: st.DrawFn) -> dict[str, Any]:
    def_names = tuple(draw(st.lists(st.sampled_from(["A", "B_c", "D"]), unique=True, max_size=2)))
    defs = {n: draw(leaf(())) for n in def_names}
    root = draw(obj(schema(def_names)))
    if draw(st.integers(0, 4)) == 0:
        del root["type"]
    if defs:
        root["$defs"] = defs
    if draw(st.booleans()):
        root["$schema"] = draw(
            st.sampled_from(
                ["http://json-schema.org/draft-07/schema#", "https://json-schema.org/draft/2020-12/schema"]
            )
        )
    if draw(st.integers(0, 4)) == 0:
        branch = st.builds(
            lambda p, r: {
                "type": "object",
                "properties": {p: {"type": "string"}},
                **({"required": [p]} if r else {}),
            },
            prop_names,
            st.booleans(),
        )
        root[draw(st.sampled_from(["anyOf", "oneOf", "allOf"]))] = draw(
            st.lists(branch, min_size=1, max_size=3)
        )
    return root


@st.composite
def output_schemas(draw: st.DrawFn) -> dict[str, Any] | None:
    kind = draw(st.sampled_from(["none", "object", "nullable-root", "array-root"]))
    if kind == "none":
        return None
    if kind == "array-root":
        return {"type": "array", "items": {"type": "string"}}
    node = draw(obj(schema(())))
    if kind == "nullable-root":
        node["type"] = ["object", "null"]
    return node


@st.composite
def tools(draw: st.DrawFn) -> dict[str, Any]:
    out: dict[str, Any] = {"name": draw(names), "inputSchema": draw(input_schemas())}
    if draw(st.integers(0, 5)):
        out["description"] = draw(descriptions)
    output = draw(output_schemas())
    if output is not None:
        out["outputSchema"] = output
    return out


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=10),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)
"""Any JSON value."""

SCHEMA_KEYS = [
    "type",
    "properties",
    "items",
    "anyOf",
    "$ref",
    "$defs",
    "required",
    "enum",
    "description",
    "allOf",
]


@st.composite
def junk_tools(draw: st.DrawFn) -> dict[str, Any]:
    """A dict shaped roughly like a tool whose every part may be any JSON (a broken server)."""
    schema_like = st.recursive(
        json_values,
        lambda children: st.dictionaries(
            st.sampled_from(SCHEMA_KEYS) | st.text(max_size=5), children, max_size=5
        ),
        max_leaves=25,
    )
    out: dict[str, Any] = {}
    for key, values in (
        ("name", json_values),
        ("description", json_values),
        ("inputSchema", schema_like),
        ("outputSchema", schema_like),
    ):
        if draw(st.booleans()):
            out[key] = draw(values)
    return out


# -- broad schemas: what real servers send, whether or not a safe rewrite exists -------------

FORMATS = [
    "uri",
    "email",
    "uuid",
    "date-time",
    "date",
    "int32",
    "int64",
    "float",
    "double",
    "decimal",
    "enum",
]
ALL_TYPES = [*SCALARS, "null", "object", "array"]


@st.composite
def broad_leaf(draw: st.DrawFn) -> Any:
    kind = draw(
        st.sampled_from(
            ["typed", "union", "format", "enum", "const", "empty", "bool", "optional", "required-only"]
        )
    )
    node: Any
    if kind == "union":
        node = {"type": draw(st.lists(st.sampled_from(ALL_TYPES), min_size=1, max_size=3, unique=True))}
    elif kind == "format":
        node = {
            "type": draw(st.sampled_from(["string", "integer", "number"])),
            "format": draw(st.sampled_from(FORMATS)),
        }
    elif kind == "enum":
        node = {
            "enum": draw(
                st.lists(st.sampled_from(["a", "b", 1, 2, None, True]), min_size=1, max_size=3, unique=True)
            )
        }
    elif kind == "const":
        node = {"const": draw(st.sampled_from(["x", 1, None]))}
    elif kind == "empty":
        node = {}
    elif kind == "bool":
        node = draw(st.booleans())
    elif kind == "optional":  # Pydantic's Optional[X]
        node = {"anyOf": [{"type": draw(st.sampled_from(SCALARS))}, {"type": "null"}], "default": None}
    elif kind == "required-only":
        node = {"required": [draw(prop_names)]}
    else:
        node = {"type": draw(st.sampled_from(SCALARS))}
    if isinstance(node, dict) and draw(st.booleans()):
        node["description"] = draw(descriptions)
    return node


def broad_schema() -> st.SearchStrategy[Any]:
    def extend(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        return st.one_of(
            st.builds(
                lambda props, req, extra: {
                    "type": "object",
                    "properties": props,
                    **({"required": sorted(props)[:1]} if req and props else {}),
                    **extra,
                },
                st.dictionaries(prop_names, children, max_size=3),
                st.booleans(),
                st.sampled_from(
                    [{}, {"additionalProperties": False}, {"additionalProperties": {"type": "string"}}]
                ),
            ),
            st.builds(
                lambda items, extra: {"type": draw_type(extra), "items": items},
                children,
                st.booleans(),
            ),
            st.builds(
                lambda branches, key, typed: {**({"type": "object"} if typed else {}), key: branches},
                st.lists(children, min_size=1, max_size=3),
                st.sampled_from(["anyOf", "oneOf", "allOf"]),
                st.booleans(),
            ),
            st.builds(lambda a: {**a, "not": {"enum": ["zzz"]}} if isinstance(a, dict) else a, children),
        )

    return st.recursive(broad_leaf(), extend, max_leaves=10)


def draw_type(union: bool) -> Any:
    return ["array", "null"] if union else "array"


@st.composite
def broad_tools(draw: st.DrawFn) -> dict[str, Any]:
    """Tools with input schemas as real servers write them: combinators and union types at any
    depth, formats, nested items, Optional[X], required-only branches, boolean schemas."""
    root: dict[str, Any] = {
        "type": "object",
        "properties": draw(st.dictionaries(prop_names, broad_schema(), max_size=4)),
    }
    if draw(st.booleans()):
        declared = sorted(root["properties"]) or ["id"]
        root["anyOf"] = [{"required": [n]} for n in declared[:2]]
    if draw(st.integers(0, 3)) == 0:
        root[draw(st.sampled_from(["oneOf", "allOf"]))] = draw(
            st.lists(broad_schema(), min_size=1, max_size=2)
        )
    if draw(st.integers(0, 4)) == 0:
        del root["type"]
    return {"name": draw(names), "description": draw(descriptions), "inputSchema": root}
