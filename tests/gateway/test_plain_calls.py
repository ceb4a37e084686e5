"""answer_line: the bytes both fast paths send for a call's result, the SDK path's to the byte."""

from __future__ import annotations

from typing import Any

import hypothesis.strategies as st
from hypothesis import given, settings

from mcpkit.gateway.plain_calls import answer_line, response, wire_result

values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=10,
)
items = st.fixed_dictionaries({"type": st.just("text"), "text": st.text(max_size=8)}) | st.fixed_dictionaries(
    {"type": st.just("image"), "data": st.just("aGk="), "mimeType": st.just("image/png")}
)
results = st.fixed_dictionaries(
    {"content": st.lists(items, max_size=3)},
    optional={
        "structuredContent": st.dictionaries(st.text(max_size=4), values, max_size=3),
        "isError": st.booleans() | st.just("yes"),
    },
)


@settings(max_examples=300)
@given(
    raw=results,
    request_id=st.integers(min_value=-(2**53), max_value=2**53) | st.text(max_size=6),
    version=st.sampled_from(["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]),
)
def test_the_answer_is_the_sdk_paths_answer(raw: dict[str, Any], request_id: Any, version: str) -> None:
    try:
        expected: bytes | type[Exception] = response(request_id, wire_result(raw, version, "t"))
    except UnicodeEncodeError:  # a lone surrogate: neither path can encode it
        expected = UnicodeEncodeError
    try:
        got: bytes | type[Exception] = answer_line(request_id, raw, version, "t")
    except UnicodeEncodeError:
        got = UnicodeEncodeError
    assert got == expected


def test_a_non_finite_number_becomes_null_as_on_the_sdk_path() -> None:
    raw = {"content": [{"type": "text", "text": "x"}], "structuredContent": {"v": float("nan")}}
    line = answer_line(1, raw, "2025-11-25", "t")
    assert b'"structuredContent":{"v":null}' in line
