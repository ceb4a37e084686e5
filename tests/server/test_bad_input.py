"""Whatever arguments arrive, every tools/call on a build_server server is a valid result.

Hypothesis throws arbitrary JSON objects (and near-miss arguments built from the real
schemas) at every tool of the example server over one real stdio session, and each raw
result from the wire is checked with validate_result.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpkit.results import validate_result
from tests.support.raw_stdio import RawStdioClient

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
TOOL_NAMES = ["echo", "add", "user-label", "divide", "crash", "no-such-tool", ""]
ARG_NAMES = ["text", "a", "b", "user", "x", ""]
arguments = st.dictionaries(st.sampled_from(ARG_NAMES) | st.text(max_size=6), json_values, max_size=4)


@pytest.fixture(scope="module")
def session() -> Iterator[tuple[RawStdioClient, dict[str, Any]]]:
    with RawStdioClient([sys.executable, "examples/echo_server.py"]) as client:
        client.initialize()
        tools = {t["name"]: t for t in client.request("tools/list", {})["result"]["tools"]}
        yield client, tools


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(TOOL_NAMES), args=arguments)
def test_arbitrary_arguments_give_valid_results(
    session: tuple[RawStdioClient, dict[str, Any]], name: str, args: dict[str, Any]
) -> None:
    client, tools = session
    reply = client.request("tools/call", {"name": name, "arguments": args})
    assert "result" in reply, reply
    schema = tools.get(name, {}).get("outputSchema")
    problems = validate_result(reply["result"], "2025-11-25", output_schema=schema)
    assert problems == [], (name, args, reply)
    if reply["result"].get("isError"):
        text = reply["result"]["content"][0]["text"]
        assert "\n" not in text and "Traceback" not in text and text.strip()
