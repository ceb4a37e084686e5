"""``mcpkit check`` against real third-party servers (installed by scripts/third-party.sh).

The expected findings are recorded here: they are what these servers really do today, so a
change in either the servers or the checker shows up as a failing test. Skipped when the
servers are not installed; a failure in CI (see tests/support/env.py).
"""

from __future__ import annotations

import pytest

from tests.check.test_check_fixtures import rules, run_check
from tests.support.env import THIRD_PARTY, require

pytestmark = pytest.mark.thirdparty

TIME = THIRD_PARTY / "venv" / "bin" / "mcp-server-time"
FETCH = THIRD_PARTY / "venv" / "bin" / "mcp-server-fetch"
EVERYTHING = THIRD_PARTY / "node" / "node_modules" / ".bin" / "mcp-server-everything"


def _findings(report: dict[str, object], rule: str) -> set[tuple[str, str]]:
    return {(f["tool"], f["pointer"]) for f in report["findings"] if f["rule"] == rule}  # type: ignore[attr-defined, index]


def test_mcp_server_time() -> None:
    require(TIME.exists(), "mcp-server-time is not installed (bash scripts/third-party.sh)")
    code, report, err = run_check("--probe", "--", str(TIME))
    assert code == 1, err
    assert report["serverInfo"]["name"] == "mcp-time"
    assert sorted(report["tools"]) == ["convert_time", "get_current_time"]
    # Its SDK declares prompts and resources it has none of; they answer (empty), so no finding.
    assert {"tools", "prompts", "resources"} <= set(report["capabilities"])
    # Parameter descriptions with parentheses and underscores (seed 000's crash pattern).
    assert _findings(report, "desktop-description-parentheses") == {
        ("get_current_time", "/inputSchema/properties/timezone/description"),
        ("convert_time", "/inputSchema/properties/source_timezone/description"),
        ("convert_time", "/inputSchema/properties/target_timezone/description"),
        ("convert_time", "/inputSchema/properties/time/description"),
    }
    assert ("get_current_time", "/inputSchema/properties/timezone/description") in _findings(
        report, "desktop-description-underscores"
    )
    # An unknown tool is a JSON-RPC error (-32602), not an isError result.
    assert rules(report, "warning") == {"unknown-tool-not-iserror"}
    # Results are valid MCP results, even for the generated (nonsense) timezone.
    assert "result-invalid" not in rules(report)


def test_mcp_server_fetch_definitions() -> None:
    # No --probe: fetching would leave the machine (only loopback is allowed in tests).
    require(FETCH.exists(), "mcp-server-fetch is not installed (bash scripts/third-party.sh)")
    code, report, err = run_check("--", str(FETCH))
    assert code == 0, err
    assert report["serverInfo"]["name"] == "mcp-fetch" and report["tools"] == ["fetch"]
    assert report["findings"] == []


def test_server_everything() -> None:
    require(
        EVERYTHING.exists(),
        "@modelcontextprotocol/server-everything is not installed (npm, scripts/third-party.sh)",
    )
    code, report, err = run_check("--probe", "--timeout", "60", "--", str(EVERYTHING), timeout=300)
    assert code == 1, err
    assert report["serverInfo"]["name"] == "mcp-servers/everything"
    assert len(report["tools"]) == 17 and "echo" in report["tools"]
    assert {"tools", "prompts", "resources", "logging", "completions"} <= set(report["capabilities"])
    assert rules(report, "error") == {"desktop-description-parentheses", "desktop-description-underscores"}
    assert {t for t, _ in _findings(report, "desktop-description-parentheses")} == {
        "get-resource-links",
        "simulate-research-query",
        "trigger-url-elicitation",
    }
    assert rules(report, "warning") == set()  # unknown tool and bad arguments are isError results
    skipped = {t for t, _ in _findings(report, "probe-skipped-write")}
    assert skipped == {
        "gzip-file-as-resource",
        "toggle-simulated-logging",
        "toggle-subscriber-updates",
        "simulate-research-query",
        "trigger-sampling-request",
        "trigger-elicitation-request",
        "trigger-url-elicitation",
    }
    assert "echo" in report["probed"] and "result-invalid" not in rules(report)
