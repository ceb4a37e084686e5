"""``flat_validator`` gives jsonschema's verdict on every flat schema, and declines the rest."""

from __future__ import annotations

import math
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft7Validator, Draft202012Validator
from jsonschema.validators import validator_for

from mcpkit.tools import flat_validator

TYPES = ["string", "integer", "number", "boolean", "null", "array", "object"]
annotations = st.fixed_dictionaries(
    {}, optional={"description": st.text(max_size=5), "title": st.just("T"), "format": st.just("date")}
)
numbers = st.integers(-5, 5) | st.floats(-5, 5, allow_nan=False)


def scalar_schema(nested: bool) -> st.SearchStrategy[dict[str, Any]]:
    base = st.fixed_dictionaries(
        {},
        optional={
            "type": st.sampled_from(TYPES)
            | st.lists(st.sampled_from(TYPES), min_size=1, max_size=3, unique=True),
            "enum": st.lists(st.text(max_size=3), min_size=1, max_size=3),
            "minimum": numbers,
            "maximum": numbers,
            "exclusiveMinimum": numbers,
            "exclusiveMaximum": numbers,
            "minLength": st.integers(0, 3),
            "maxLength": st.integers(0, 3),
            "minItems": st.integers(0, 2),
            "maxItems": st.integers(0, 2),
        },
    )
    if nested:
        base = st.tuples(base, st.none() | scalar_schema(False)).map(
            lambda pair: pair[0] if pair[1] is None else {**pair[0], "items": pair[1]}
        )
    return st.tuples(base, annotations).map(lambda pair: {**pair[0], **pair[1]})


flat_schemas = st.fixed_dictionaries(
    {
        "type": st.just("object"),
        "properties": st.dictionaries(st.sampled_from("abcd"), scalar_schema(True), max_size=4),
    },
    optional={
        "required": st.lists(st.sampled_from("abcde"), max_size=3),
        "additionalProperties": st.booleans(),
        "$schema": st.sampled_from(
            ["https://json-schema.org/draft/2020-12/schema", "http://json-schema.org/draft-07/schema#"]
        ),
    },
)
scalars = (
    st.none()
    | st.booleans()
    | st.integers(-10, 10)
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.sampled_from([0.0, 1.0, -0.0, 2.0, 1e300])
    | st.text(max_size=4)
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from("abcde"), inner, max_size=4),
    max_leaves=8,
)


@settings(max_examples=1500, deadline=None)
@given(schema=flat_schemas, value=values)
def test_the_verdict_is_jsonschemas(schema: dict[str, Any], value: Any) -> None:
    check = flat_validator(schema)
    assert check is not None, schema
    expected = validator_for(schema, default=Draft202012Validator)(schema).is_valid(value)
    assert check(value) is expected, (schema, value)


@settings(max_examples=300, deadline=None)
@given(schema=flat_schemas, value=st.dictionaries(st.sampled_from("abcde"), values, max_size=5))
def test_objects_of_the_right_keys_too(schema: dict[str, Any], value: dict[str, Any]) -> None:
    check = flat_validator(schema)
    assert check is not None
    assert check(value) is Draft202012Validator(schema).is_valid(value)


def test_schemas_outside_the_subset_are_declined() -> None:
    declined = [
        {"type": "object", "properties": {"a": {"$ref": "#/$defs/x"}}, "$defs": {"x": {}}},
        {"type": "object", "properties": {"a": {"anyOf": [{"type": "string"}]}}},
        {"type": "object", "properties": {"a": {"type": "string", "pattern": "^x"}}},
        {"type": "object", "properties": {"a": {"enum": [1, True]}}},  # JSON equality differs from Python's
        {"type": "object", "additionalProperties": {"type": "string"}},
        {"type": "object", "$schema": "http://json-schema.org/draft-04/schema#"},  # 1.0 is no integer there
        {"type": "object", "properties": {"a": {"type": "strin"}}},
        {"type": "object", "properties": {"a": {"type": "array", "items": [{"type": "string"}]}}},
        {"type": "object", "properties": {"a": {"minimum": math.inf}}},
        {"type": "array"},
        {"properties": {}},
        "not a schema",
    ]
    for schema in declined:
        assert flat_validator(schema) is None, schema


def test_draft_7_integers_and_nan_bounds_match() -> None:
    schema = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {
            "n": {"type": "integer", "minimum": 0},
            "x": {"type": "number", "minimum": 0, "exclusiveMaximum": 1},
        },
        "required": ["n"],
    }
    check = flat_validator(schema)
    assert check is not None
    for value in (
        {"n": 1.0},
        {"n": math.nan},
        {"n": -1},
        {"n": True},
        {},
        {"n": 10**30},
        {"n": 1, "x": math.nan},
        {"n": 1, "x": 1},
        {"n": 1, "x": -math.inf},
    ):
        assert check(value) is Draft7Validator(schema).is_valid(value), value
