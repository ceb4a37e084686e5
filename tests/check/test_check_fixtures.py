"""``mcpkit check`` against our own clean servers and each broken fixture (its defect found)."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest
from typer.testing import CliRunner

from mcpkit.check.model import CheckFinding, CheckReport
from mcpkit.cli import app as mcpkit_app
from tests.client.procs import SERVERS, raw, sdk_echo

PROTOCOL = SERVERS / "protocol_server.py"


def protocol(*flags: str) -> list[str]:
    """The paged, fully declared fixture server (tests/fixtures/servers/protocol_server.py)."""
    return [sys.executable, str(PROTOCOL), *flags]


MCPKIT = [sys.executable, "-m", "mcpkit"]  # for the tests that need the command as a process
CLEAN = [sys.executable, str(SERVERS / "mcpkit_clean.py")]


def run_check(*args: str) -> tuple[int, dict[str, Any], str]:
    """Run ``mcpkit check --json`` in this process through typer's CliRunner (the server it
    grades is still a real child process); return (exit code, report, stderr)."""
    out = CliRunner().invoke(mcpkit_app, ["check", "--json", *args], catch_exceptions=False)
    report = json.loads(out.stdout) if out.stdout.strip() else {}
    return out.exit_code, report, out.stderr


def rules(report: dict[str, Any], severity: str | None = None) -> set[str]:
    return {f["rule"] for f in report["findings"] if severity is None or f["severity"] == severity}


def test_mcpkit_built_server_is_clean_with_probe() -> None:
    code, report, err = run_check("--probe", "--", *CLEAN)
    assert code == 0, err
    assert rules(report, "error") == set() and rules(report, "warning") == set()
    assert report["serverInfo"] == {"name": "clean", "version": "1.0"}
    assert set(report["capabilities"]) == {"tools", "resources", "prompts"}
    assert report["probed"] == ["echo", "measure"]  # the writer is never called without --probe-all


def test_profile_all_adds_the_stricter_clients() -> None:
    """mcpkit servers pass the default profiles; 'all' also grades them for e.g. Gemini."""
    _, report, _ = run_check("--profile", "all", "--", *CLEAN)
    profiles = {f["profile"] for f in report["findings"] if f["severity"] == "error"}
    assert profiles and not profiles & {"mcp-spec", "claude-desktop-2025"}


def test_profile_all_leaves_out_a_profile_no_client_uses() -> None:
    """'all' once failed every real server on openai-strict, which no client sends; by name it
    still grades."""
    from mcpkit.check.cli import parse_profiles
    from mcpkit.compat import PROFILES

    assert "openai-strict" not in parse_profiles("all")
    assert set(parse_profiles("all")) == set(PROFILES) - {"openai-strict"}
    _, report, _ = run_check("--profile", "all", "--", *CLEAN)
    assert "openai-strict" not in {f["profile"] for f in report["findings"]}
    _, report, _ = run_check("--profile", "openai-strict", "--", *raw("--bad-tools"))
    assert "openai-strict" in {f["profile"] for f in report["findings"] if f["severity"] == "error"}


def test_sdk_server_has_no_findings() -> None:
    code, report, _ = run_check("--probe", "--", *sdk_echo())
    assert code == 0 and report["findings"] == []
    assert report["protocolVersion"] == "2025-11-25" and report["initSeconds"] > 0


def test_well_behaved_raw_server_only_has_notes() -> None:
    code, report, _ = run_check("--probe", "--", *raw())
    assert code == 0
    assert rules(report) == {"probe-skipped-write", "probe-is-error"}
    skipped = {f["tool"] for f in report["findings"] if f["rule"] == "probe-skipped-write"}
    assert skipped == {"hang", "crash", "spawn"}


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        (
            ["--declare-undeclared"],
            {"undeclared-method-served", "declared-method-fails"},
        ),
        (["--garbage-on-start"], {"stdout-not-jsonrpc"}),
        (["--no-server-info"], {"server-info-missing"}),
        (["--lenient"], {"unknown-tool-accepted", "invalid-arguments-accepted"}),
        (["--bad-results"], {"result-invalid"}),
        (["--odd"], {"result-invalid"}),
        (["--crash-after", "2"], {"server-crashed"}),
        (["--bad-tools"], {"tool-name-duplicate", "schema-invalid"}),
    ],
)
def test_each_defect_is_found_and_fails_the_check(flags: list[str], expected: set[str]) -> None:
    code, report, err = run_check("--probe", "--", *raw(*flags))
    assert code == 1, err
    assert expected <= rules(report, "error") | rules(report, "warning")


def test_bad_tool_definitions_are_linted_per_profile() -> None:
    _, report, _ = run_check("--", *raw("--bad-tools"))
    by_tool: dict[str, set[str]] = {}
    for f in report["findings"]:
        if f["severity"] == "error" and f["tool"]:
            by_tool.setdefault(f["tool"], set()).add(f["pointer"])
    assert "/inputSchema" in by_tool["not-an-object"] or "/inputSchema/type" in by_tool["not-an-object"]
    assert any(p.startswith("/outputSchema") for p in by_tool["bad output"])
    assert "x" * 80 in by_tool  # name over the client's length budget
    profiles = {f["profile"] for f in report["findings"] if f["profile"]}
    assert profiles == {"mcp-spec", "claude-desktop-2025"}


def test_context_cost_per_client() -> None:
    """Every client profile in use gets a row: tools against its limit and estimated tokens;
    Windsurf, a limit without a profile, gets its own row and a warning over 100 tools."""
    _, report, _ = run_check("--", *raw("--many-tools", "130"))
    rows = {row["profile"] or row["client"]: row for row in report["context"]}
    assert set(rows) == {*parse_all(), "Windsurf (Cascade)"}
    assert rows["cursor"]["tools"] == len(report["tools"]) > 130 and rows["cursor"]["limit"] == 40
    assert rows["openai"]["limit"] == rows["vscode"]["limit"] == 128
    assert rows["claude"]["limit"] is None
    assert all(row["tokens"] >= row["largest"] > 0 for row in rows.values())
    # Claude Code's mcp__server__ prefix makes its list cost more than the bare names
    assert rows["claude"]["tokens"] > rows["claude-desktop-2025"]["tokens"]
    assert "tool-count-over-limit" in rules(report, "warning")
    _, small, _ = run_check("--", *raw())
    assert "tool-count-over-limit" not in rules(small)
    assert {row["tools"] for row in small["context"]} == {len(small["tools"])}


def parse_all() -> tuple[str, ...]:
    from mcpkit.check.cli import parse_profiles

    return parse_profiles("all")


def test_tool_count_budgets_per_client() -> None:
    _, report, _ = run_check("--profile", "openai,cursor,vscode", "--", *raw("--many-tools", "130"))
    assert {"openai-tool-count", "vscode-tool-count"} <= rules(report, "error")
    assert "cursor-tool-count" in rules(report, "warning")
    _, report, _ = run_check("--profile", "openai,cursor,vscode", "--", *raw())
    assert not {r for r in rules(report) if r.endswith("tool-count")}


def test_rpc_errors_for_an_unknown_tool_are_what_the_spec_asks() -> None:
    """CallToolResult.isError: errors in finding the tool are MCP error responses: no finding.

    Invalid arguments as a JSON-RPC error are only a note (2025-11-25 makes input validation
    errors tool execution errors), so even --fail-on warning passes.
    """
    code, report, _ = run_check("--probe", "--fail-on", "warning", "--", *raw("--rpc-errors"))
    assert code == 0
    assert not {r for r in rules(report) if r.startswith("unknown-tool")}
    assert rules(report, "info") >= {"invalid-arguments-not-iserror"}
    note = next(f for f in report["findings"] if f["rule"] == "invalid-arguments-not-iserror")
    assert note["tool"] == "echo" and "isError" in note["evidence"]


def test_empty_capability_objects_are_not_reported() -> None:
    # tools: {} is the normal declaration; every field in it is optional.
    _, report, _ = run_check("--", *protocol())
    assert report["capabilities"]["tools"] == {} and report["findings"] == []


def test_probe_all_calls_writers_and_reports_hang_and_crash() -> None:
    code, report, _ = run_check("--probe-all", "--timeout", "1", "--", *raw())
    assert code == 1
    timeouts = {f["tool"] for f in report["findings"] if f["rule"] == "probe-timeout"}
    crashed = {f["tool"] for f in report["findings"] if f["rule"] == "server-crashed"}
    assert timeouts == {"hang"} and crashed == {"crash"}


def test_unreachable_server_exits_2() -> None:
    code, _, err = run_check("--", *raw("--exit-on-start", "1"))
    assert code == 2 and "cannot check the server" in err and "refusing to start" in err


def test_sarif_output() -> None:
    out = CliRunner().invoke(mcpkit_app, ["check", "--sarif", "--", *raw("--declare-undeclared")])
    assert out.exit_code == 1
    sarif = json.loads(out.stdout)
    assert sarif["version"] == "2.1.0"
    run = sarif["runs"][0]
    ids = {r["id"] for r in run["tool"]["driver"]["rules"]}
    assert {r["ruleId"] for r in run["results"]} == ids
    assert {r["level"] for r in run["results"]} <= {"error", "warning", "note"}
    assert "undeclared-method-served" in ids


def test_table_output_groups_by_severity() -> None:
    result = CliRunner().invoke(mcpkit_app, ["check", "--", *raw("--declare-undeclared")])
    assert result.exit_code == 1
    assert result.output.index("error") < result.output.index("warning")
    assert "undeclared-method-served" in result.output and "Declare resources" in result.output


@pytest.mark.parametrize(
    "args",
    [
        ["check", "--json", "--sarif", "--", "x"],
        ["check", "--profile", "nope", "--", "x"],
        ["check"],
        ["check", "--fail-on", "info", "--", "x"],
    ],
)
def test_usage_errors_exit_2(args: list[str]) -> None:
    assert CliRunner().invoke(mcpkit_app, args).exit_code == 2


def test_fail_on_threshold() -> None:
    report = CheckReport(target="t")
    assert not report.fails("error") and not report.fails("warning")
    report.add(CheckFinding("r", "info", "tools", "m"))
    assert not report.fails("warning")
    report.add(CheckFinding("r", "warning", "tools", "m"))
    assert report.fails("warning") and not report.fails("error")
    report.add(CheckFinding("r", "error", "tools", "m"))
    assert report.fails("error")
