"""answer_line: the bytes both fast paths send for a call's result, the SDK path's to the byte."""

from __future__ import annotations

from typing import Any

import hypothesis.strategies as st
import mcp_types
from hypothesis import given, settings

from mcpkit.server._plain_calls import answer_line, wire_result

values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.sampled_from([1e-7, 1e-05, 2.5e-8])
    | st.text(max_size=6),
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
    """Byte for byte what the SDK's stdio and HTTP writers put out for the same result."""
    sdk = mcp_types.JSONRPCResponse(jsonrpc="2.0", id=request_id, result=wire_result(raw, version, "t"))
    try:
        expected: bytes | type[Exception] = sdk.model_dump_json(by_alias=True, exclude_unset=True).encode()
    except ValueError:  # a lone surrogate: neither can write it
        expected = ValueError
    try:
        got: bytes | type[Exception] = answer_line(request_id, raw, version, "t")
    except ValueError:
        got = ValueError
    assert got == expected


def test_floats_are_spelled_as_the_sdk_spells_them() -> None:
    raw = {
        "content": [{"type": "text", "text": "x"}],
        "structuredContent": {"v": float("nan"), "small": 1e-7, "big": 1e22, "tiny": 0.00001},
    }
    line = answer_line(1, raw, "2025-11-25", "t")
    assert b'"structuredContent":{"v":null,"small":1e-7,"big":1e+22,"tiny":0.00001}' in line
