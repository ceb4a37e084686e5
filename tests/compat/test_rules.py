"""Every rule: it fires on its bad case at the right pointer, stays silent on the good one,
and adapt repairs it (or, where no safe rewrite exists, says so and leaves the finding)."""

from __future__ import annotations

import pytest

from mcpkit.compat import PROFILES, adapt_all, lint
from mcpkit.compat._profiles import all_rules
from tests.compat.cases import CASES, Case


def _rule(case: Case):  # type: ignore[no-untyped-def]
    return next(r for r in PROFILES[case.profile].rules if r.id == case.rule)


def test_every_rule_has_a_case() -> None:
    covered = {c.rule for c in CASES}
    missing = sorted({r.id for _, r in all_rules()} - covered)
    assert missing == []


def test_cases_name_real_rules_in_their_profile() -> None:
    for case in CASES:
        assert case.rule in {r.id for r in PROFILES[case.profile].rules}, case.id


def test_rule_ids_are_unique_per_meaning() -> None:
    """The same id in two profiles must be the same rule object (reported once)."""
    by_id: dict[str, object] = {}
    for _, rule in all_rules():
        assert by_id.setdefault(rule.id, rule) is rule, rule.id


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_rule_fires_on_bad_case(case: Case) -> None:
    findings = [f for f in lint(case.bad, case.profile, server_name=case.server_name) if f.rule == case.rule]
    assert any(f.pointer == case.pointer and f.tool == case.tool for f in findings), findings
    rule = _rule(case)
    for f in findings:
        assert f.severity == rule.severity
        assert f.client == rule.client
        assert f.profile == case.profile
        assert f.message


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_rule_is_silent_on_good_case(case: Case) -> None:
    findings = [f for f in lint(case.good, case.profile, server_name=case.server_name) if f.rule == case.rule]
    assert findings == []


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_adapt_repairs_or_reports(case: Case) -> None:
    result = adapt_all(case.bad, case.profile, server_name=case.server_name)
    after = [f for f in lint(result.tools, case.profile, server_name=case.server_name) if f.rule == case.rule]
    mine = [c for c in result.changes if c.rule == case.rule]
    if case.fixable:
        assert after == [], after
        assert mine and all(c.applied for c in mine)
    else:
        assert after, "an unfixable finding must stay visible after adapt"
        if _rule(case).severity == "error" and case.tool is not None:
            assert any(not c.applied for c in mine), "adapt must say what it left"


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_adapt_leaves_good_case_alone_for_that_rule(case: Case) -> None:
    result = adapt_all(case.good, case.profile, server_name=case.server_name)
    assert [c for c in result.changes if c.rule == case.rule] == []


def test_default_profiles_share_no_duplicate_reports() -> None:
    bad = [{"name": "t", "inputSchema": {"properties": {}}}]
    findings = lint(bad, ["mcp-spec", "claude-desktop-2025", "claude-desktop-2025"])
    keys = [(f.rule, f.tool, f.pointer) for f in findings]
    assert len(keys) == len(set(keys))
    assert {"spec-input-schema-object", "ts-sdk-input-root-object"} <= {f.rule for f in findings}


def test_shared_rule_reported_once_across_profiles() -> None:
    bad = [{"name": "t", "inputSchema": {"type": "object", "properties": {"a": {"$ref": "#/$defs/X"}}}}]
    findings = [f for f in lint(bad, ["claude", "cursor"]) if f.rule == "ts-sdk-ref-resolvable"]
    assert len(findings) == 1 and findings[0].profile == "claude"


def test_unknown_profile_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match=r"unknown client profile 'claud'.*known: mcp-spec"):
        lint([], "claud")


def test_tool_set_findings_have_no_tool() -> None:
    findings = lint([{"name": f"t{i}", "inputSchema": {"type": "object"}} for i in range(41)], "cursor")
    assert [(f.rule, f.tool, f.pointer) for f in findings] == [("cursor-tool-count", None, "")]
