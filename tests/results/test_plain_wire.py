"""plain_text_wire: the SDK's wire form of a text result, built without the SDK's models.

The shortcut is only worth having if it is exactly the SDK's answer: these tests compare it,
byte for byte, with the model round trip on results generated near and inside its shape.
"""

from __future__ import annotations

import math
from typing import Any

import hypothesis.strategies as st
import mcp_types
import pytest
from hypothesis import given, settings
from mcp_types.methods import SERVER_RESULTS, serialize_server_result
from pydantic_core import to_json

from mcpkit.results import plain_text_wire, validate_result
from mcpkit.results._plain import PLAIN_VERSIONS
from mcpkit.results._validate import _sdk_opinion

json_scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=12,
)
text_items = st.fixed_dictionaries({"type": st.just("text"), "text": st.text(max_size=12)})
near_items = (
    text_items
    | st.fixed_dictionaries({"text": st.text(max_size=5), "type": st.just("text")})
    | st.fixed_dictionaries({"type": st.just("text"), "text": st.text(max_size=5), "annotations": st.none()})
    | st.fixed_dictionaries(
        {"type": st.just("text"), "text": st.text(max_size=5), "annotations": st.just({"priority": 0.5})}
    )
    | st.fixed_dictionaries(
        {"type": st.just("image"), "data": st.just("aGk="), "mimeType": st.just("image/png")}
    )
    | st.fixed_dictionaries({"type": st.just("text"), "text": st.integers()})
)
results = st.fixed_dictionaries(
    {"content": st.lists(near_items, max_size=4)},
    optional={
        "structuredContent": st.dictionaries(st.text(max_size=5), json_values, max_size=4) | json_values,
        "isError": st.booleans() | st.sampled_from([0, 1, "true", None]),
        "_meta": st.just({"k": 1}),
    },
)
plain_results = st.fixed_dictionaries(
    {"content": st.lists(text_items, max_size=4)},
    optional={
        "structuredContent": st.dictionaries(st.text(max_size=5), json_values, max_size=4),
        "isError": st.booleans(),
    },
)


def the_sdk_way(raw: dict[str, Any], version: str) -> dict[str, Any]:
    dumped = mcp_types.CallToolResult.model_validate(raw).model_dump(
        by_alias=True, mode="json", exclude_none=True
    )
    return serialize_server_result("tools/call", version, dumped)


@settings(max_examples=400)
@given(raw=results, version=st.sampled_from(sorted(PLAIN_VERSIONS)))
def test_the_shortcut_is_the_sdks_wire_form_to_the_byte(raw: dict[str, Any], version: str) -> None:
    fast = plain_text_wire(raw, version)
    if fast is None:
        return
    slow = the_sdk_way(raw, version)
    # Written as the SDK writes a message (pydantic's JSON writer; non-finite numbers as null).
    assert to_json(fast, inf_nan_mode="null") == to_json(slow, inf_nan_mode="null")


@given(raw=plain_results)
def test_every_plain_text_result_is_taken_and_the_sdk_accepts_it(raw: dict[str, Any]) -> None:
    """validate_result skips the SDK's opinion for this shape: it must really have none."""
    for version in PLAIN_VERSIONS:
        assert plain_text_wire(raw, version) is not None
    assert _sdk_opinion(raw, "2025-11-25") == []


@pytest.mark.parametrize(
    "raw",
    [
        {"content": [{"type": "text", "text": "a", "annotations": {"priority": 0.5}}]},
        {"content": [{"type": "image", "data": "aGk=", "mimeType": "image/png"}]},
        {"content": [{"type": "text", "text": "a"}], "isError": "true"},
        {"content": [{"type": "text", "text": "a"}], "isError": 1},
        {"content": [{"type": "text", "text": "a"}], "structuredContent": None},
        {"content": [{"type": "text", "text": "a"}], "structuredContent": [1]},
        {"content": [{"type": "text", "text": "a"}], "_meta": {}},
        {"content": "a"},
        {},
    ],
)
def test_anything_else_is_left_to_the_sdk(raw: dict[str, Any]) -> None:
    assert plain_text_wire(raw, "2025-11-25") is None


def test_the_versions_are_those_whose_surface_is_the_2025_11_25_result() -> None:
    surface = SERVER_RESULTS[("tools/call", "2025-11-25")]
    shared = {
        version
        for (method, version), model in SERVER_RESULTS.items()
        if method == "tools/call" and model is surface
    }
    assert shared == PLAIN_VERSIONS
    assert plain_text_wire({"content": []}, "2026-07-28") is None
    assert plain_text_wire({"content": []}, "1999-01-01") is None


def test_a_skipped_sdk_opinion_still_leaves_mcpkits_own_checks() -> None:
    raw = {"content": [{"type": "text", "text": "a"}], "structuredContent": {"n": "x"}}
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    assert validate_result(raw, "2025-11-25", output_schema=schema)
    assert validate_result(
        {"content": [{"type": "text", "text": "a"}], "structuredContent": {"n": math.pi}}, "2024-11-05"
    )
