"""Schema-generated probe arguments are valid against the schema they came from."""

from __future__ import annotations

from typing import Any

import jsonschema
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpkit.check.argsgen import example_arguments

leaf = st.one_of(
    st.builds(
        lambda lo, n: {"type": "string", "minLength": lo, "maxLength": lo + n},
        st.integers(0, 20),
        st.integers(0, 5),
    ),
    st.sampled_from([{"type": "string", "format": f} for f in ("date", "date-time", "email", "uri", "uuid")]),
    st.builds(
        lambda lo, n: {"type": "integer", "minimum": lo, "maximum": lo + n},
        st.integers(-50, 50),
        st.integers(0, 9),
    ),
    st.builds(lambda lo: {"type": "number", "exclusiveMinimum": lo}, st.integers(-5, 5)),
    st.just({"type": "boolean"}),
    st.lists(st.text(max_size=5), min_size=1, max_size=4, unique=True).map(
        lambda v: {"type": "string", "enum": v}
    ),
    st.integers().map(lambda v: {"const": v}),
)


def objects(children: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    def build(props: dict[str, dict[str, Any]], data: st.DataObject) -> dict[str, Any]:
        required = data.draw(st.lists(st.sampled_from(sorted(props)), unique=True)) if props else []
        return {"type": "object", "properties": props, "required": required, "additionalProperties": False}

    return st.builds(
        build, st.dictionaries(st.from_regex(r"[a-z]{1,6}", fullmatch=True), children, max_size=4), st.data()
    )


schemas = st.recursive(
    leaf,
    lambda inner: st.one_of(
        objects(inner),
        st.builds(lambda item, n: {"type": "array", "items": item, "minItems": n}, inner, st.integers(0, 3)),
        st.builds(lambda a, b: {"anyOf": [a, b]}, inner, inner),
    ),
    max_leaves=12,
)


@settings(max_examples=200)
@given(objects(schemas))
def test_generated_arguments_validate(schema: dict[str, Any]) -> None:
    args = example_arguments(schema)
    jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker()).validate(args)


def test_refs_defaults_and_examples_are_used() -> None:
    schema = {
        "type": "object",
        "$defs": {"mode": {"type": "string", "enum": ["fast", "slow"]}},
        "properties": {
            "mode": {"$ref": "#/$defs/mode"},
            "limit": {"type": "integer", "default": 10},
            "query": {"type": "string", "examples": ["cats"]},
            "optional": {"type": "string"},
        },
        "required": ["mode", "limit", "query"],
    }
    assert example_arguments(schema) == {"mode": "fast", "limit": 10, "query": "cats"}


def test_no_schema_means_no_arguments() -> None:
    assert example_arguments(None) == {} and example_arguments({"type": "object"}) == {}
