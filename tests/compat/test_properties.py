"""Property tests: adapt's invariant over generated tools, and lint/adapt never crash."""

from __future__ import annotations

import copy
from collections import Counter
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpkit.compat import PROFILES, adapt, adapt_all, errors, lint
from tests.compat.strategies import broad_tools, junk_tools, server_names, tools

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("profile", list(PROFILES))
@SETTINGS
@given(tool=tools(), server_name=server_names)
def test_after_adapt_lint_has_no_errors(profile: str, tool: dict[str, Any], server_name: str | None) -> None:
    before = copy.deepcopy(tool)
    adapted, changes = adapt(tool, profile, server_name=server_name)
    assert tool == before, "adapt must not modify its input"
    assert [c for c in changes if not c.applied] == []
    assert errors(lint([adapted], profile, server_name=server_name)) == []
    # adapt is idempotent: a second pass finds nothing left to do
    again, more = adapt(adapted, profile, server_name=server_name)
    assert more == [] and again == adapted


@pytest.mark.parametrize("profile", ["mcp-spec", "claude", "openai-strict", "vscode"])
@SETTINGS
@given(tool=tools())
def test_adapted_input_schema_stays_valid_json_schema(profile: str, tool: dict[str, Any]) -> None:
    adapted, _ = adapt(tool, profile)
    jsonschema.Draft202012Validator.check_schema(adapted["inputSchema"])


@SETTINGS
@given(batch=st.lists(tools(), max_size=6), server_name=server_names)
def test_adapt_all_names_are_unique_and_mapped(batch: list[dict[str, Any]], server_name: str | None) -> None:
    result = adapt_all(batch, "claude", server_name=server_name)
    new_names = [t["name"] for t in result.tools]
    assert len(set(new_names)) == len(new_names)
    assert sorted(result.name_map) == sorted(new_names)
    assert [result.name_map[n] for n in new_names] == [t["name"] for t in batch]
    assert errors(lint(result.tools, "claude", server_name=server_name)) == []


@pytest.mark.parametrize("profile", list(PROFILES))
@settings(max_examples=40, deadline=None)
@given(tool=junk_tools())
def test_lint_and_adapt_never_crash_on_any_json(profile: str, tool: dict[str, Any]) -> None:
    findings = lint([tool], profile)
    assert all(f.severity in ("error", "warning") for f in findings)
    adapted, changes = adapt(tool, profile)
    assert isinstance(adapted, dict)
    # whatever adapt could not fix is said, never silently dropped
    left = {c.rule for c in changes if not c.applied}
    assert {f.rule for f in errors(lint([adapted], profile)) if f.tool is not None} <= left


def _error_counts(tool: dict[str, Any], profile: str, server_name: str | None) -> Counter[str]:
    return Counter(
        f.rule for f in errors(lint([tool], profile, server_name=server_name)) if f.tool is not None
    )


@pytest.mark.parametrize("profile", list(PROFILES))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tool=broad_tools(), server_name=server_names)
def test_adapt_never_makes_a_tool_worse(profile: str, tool: dict[str, Any], server_name: str | None) -> None:
    """Over schemas as real servers write them (combinators and union types at any depth,
    formats, nested items, Optional[X], required-only branches, boolean schemas), adapt's
    output has no error its input did not have, under the profile and under the spec."""
    before = copy.deepcopy(tool)
    adapted, changes = adapt(tool, profile, server_name=server_name)
    assert tool == before
    for judge in dict.fromkeys([profile, "mcp-spec"]):
        new = _error_counts(adapted, judge, server_name) - _error_counts(tool, judge, server_name)
        assert not new, (judge, new, changes)
    left = {c.rule for c in changes if not c.applied}
    assert {r for r in _error_counts(adapted, profile, server_name)} <= left
