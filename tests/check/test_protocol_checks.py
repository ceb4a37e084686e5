"""The checks issue 11 added, each against a fixture that breaks it and one that does not.

protocol_server.py is correct by default (every capability declared, every list paged) and
breaks one rule per flag; http_misbehave.py serves HTTP with or without an Origin check.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from mcpkit.check.rules import CATALOG
from tests.check.test_check_fixtures import MCPKIT, protocol, rules, run_check
from tests.client.procs import raw, start_http_server, start_misbehaving_http

# What protocol_server.py --secrets writes into a tool (fake credentials, in two parts so no
# scanner takes this file for a leak).
SECRET_TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
SECRET_KEY = "AKIA" + "Z7Q4M2X8P1W6R3T5"

pytestmark = pytest.mark.slow  # every test runs `mcpkit check` as a process

SARIF_SCHEMA = Path(__file__).resolve().parents[1] / "data" / "sarif-schema-2.1.0.json"


def test_the_correct_fixture_has_no_findings_with_probe() -> None:
    code, report, err = run_check("--probe", "--fail-on", "warning", "--", *protocol())
    assert code == 0, err
    assert report["findings"] == []
    assert report["tools"] == ["weather", "time", "dice"]  # three tools over two pages
    assert {"logging", "completions", "resources", "prompts"} <= set(report["capabilities"])


@pytest.mark.parametrize(
    ("flags", "rule", "needle"),
    [
        (["--no-ping"], "ping-fails", "-32601"),
        (["--broken-logging"], "logging-setlevel-fails", "logging/setLevel"),
        (["--broken-completion"], "completion-fails", "completion"),
        (["--bad-resources"], "list-result-invalid", "/resources/0/uri"),
        (["--bad-prompts"], "list-result-invalid", "/prompts/0/name"),
        (["--page-loop", "tools"], "pagination-broken", "tools/list"),
        (["--page-loop", "prompts"], "pagination-broken", "prompts/list"),
        (["--page-dup", "resources"], "pagination-duplicate", "memo://0"),
        (["--page-dup", "tools"], "pagination-duplicate", "weather"),
    ],
)
def test_each_protocol_defect_is_an_error(flags: list[str], rule: str, needle: str) -> None:
    code, report, _ = run_check("--", *protocol(*flags))
    assert code == 1
    found = [f for f in report["findings"] if f["rule"] == rule]
    assert found and found[0]["severity"] == "error" and needle in found[0]["message"]
    assert found[0]["evidence"]  # every finding says what it enforces


def test_tool_poisoning_heuristics() -> None:
    code, report, _ = run_check("--", *protocol("--poison"))
    assert code == 1  # poisoning aimed at the model is an error
    by_rule: dict[str, set[str]] = {}
    for f in report["findings"]:
        by_rule.setdefault(f["rule"], set()).add(f["tool"])
    severity = {(f["rule"], f["tool"], f["pointer"]): f["severity"] for f in report["findings"]}
    assert severity[("poisoning-hidden-text", "notes", "/description")] == "error"  # beside "do not tell"
    assert severity[("poisoning-instructions", "notes", "/description")] == "error"
    assert severity[("poisoning-shadowing", "mailer", "/description")] == "error"  # bcc to an address
    assert severity[("poisoning-bidi", "flip", "/description")] == "warning"  # reversed text, no instruction
    assert by_rule["poisoning-hidden-text"] == {"notes"}
    assert by_rule["poisoning-instructions"] == {"notes", "flip"}
    assert by_rule["poisoning-bidi"] == {"flip"}
    assert by_rule["poisoning-shadowing"] == {"mailer"}
    # The clean tools of the same server are not suspected.
    assert not {"weather", "time", "dice"} & set().union(
        *(t for r, t in by_rule.items() if r.startswith("poisoning"))
    )
    flip = next(
        f for f in report["findings"] if f["rule"] == "poisoning-instructions" and f["tool"] == "flip"
    )
    assert flip["pointer"] == "/inputSchema/properties/side/description"


def test_secrets_in_definitions_are_errors_and_never_printed() -> None:
    code, report, _ = run_check("--", *protocol("--secrets"))
    assert code == 1
    found = {(f["tool"], f["pointer"]) for f in report["findings"] if f["rule"] == "secret-in-definition"}
    assert found == {
        ("deploy", "/description"),
        ("deploy", "/inputSchema/properties/token/default"),
    }
    text = json.dumps(report, ensure_ascii=False)
    assert SECRET_TOKEN not in text and SECRET_KEY not in text
    assert "ghp_…, 40 characters" in text


def test_baseline_records_then_reports_a_changed_tool(tmp_path: Path) -> None:
    baseline = tmp_path / "tools.baseline.json"
    code, report, _ = run_check("--baseline", str(baseline), "--", *protocol())
    assert code == 0 and report["baseline"]["recorded"] == 3
    recorded = json.loads(baseline.read_text())
    assert set(recorded["tools"]) == {"weather", "time", "dice"}
    assert all(h.startswith("sha256:") for h in recorded["tools"].values())

    code, report, _ = run_check("--baseline", str(baseline), "--", *protocol())
    assert code == 0 and not rules(report)  # unchanged

    code, report, _ = run_check("--baseline", str(baseline), "--", *protocol("--rug-pull", "--poison"))
    assert code == 1
    assert {(f["rule"], f["tool"]) for f in report["findings"] if f["rule"].startswith("tool-")} == {
        ("tool-changed", "weather"),
        ("tool-added", "notes"),
        ("tool-added", "mailer"),
        ("tool-added", "flip"),
    }
    assert report["baseline"]["changed"] == ["weather"]

    code, report, _ = run_check(
        "--baseline", str(baseline), "--update-baseline", "--", *protocol("--rug-pull")
    )
    code, report, _ = run_check("--baseline", str(baseline), "--", *protocol("--rug-pull"))
    assert not {r for r in rules(report) if r.startswith("tool-")}
    code, report, _ = run_check("--baseline", str(baseline), "--", *protocol())
    assert ("tool-changed", "weather") in {(f["rule"], f["tool"]) for f in report["findings"]}


def test_a_corrupt_baseline_is_a_clear_error(tmp_path: Path) -> None:
    baseline = tmp_path / "b.json"
    baseline.write_text("not json")
    code, report, err = run_check("--baseline", str(baseline), "--", *protocol())
    assert code == 2 and "update-baseline" in report["error"] and "cannot read baseline" in err


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        ((), {"origin-not-checked", "host-not-checked"}),
        (("--check-origin",), {"host-not-checked"}),
        (("--check-host",), {"origin-not-checked"}),
        (("--check-origin", "--check-host"), set()),
    ],
)
def test_origin_and_host_checks_on_http_servers(flags: tuple[str, ...], expected: set[str]) -> None:
    """DNS rebinding both ways: a foreign Origin, and a foreign Host without Origin."""
    proc, port = start_misbehaving_http(*flags)
    try:
        _, report, err = run_check("--url", f"http://127.0.0.1:{port}/mcp")
    finally:
        proc.terminate()
        proc.wait(10)
    assert report["serverInfo"]["name"] == "http-misbehave", err
    found = {f["rule"] for f in report["findings"] if f["area"] == "security"}
    assert found == expected
    for finding in (f for f in report["findings"] if f["area"] == "security"):
        assert finding["severity"] == "error", finding  # a loopback address: rebinding bites
        assert "HTTP 200" in finding["message"]


def test_a_hang_and_a_crash_are_blamed_on_their_own_tools() -> None:
    """Without a restart every tool after ``hang`` timed out too, and was blamed for it."""
    code, report, _ = run_check("--probe-all", "--timeout", "2", "--", *raw())
    assert code == 1
    timeouts = {f["tool"] for f in report["findings"] if f["rule"] == "probe-timeout"}
    crashed = {f["tool"] for f in report["findings"] if f["rule"] == "server-crashed"}
    assert timeouts == {"hang"} and crashed == {"crash"}
    assert report["restarts"] == 2
    # The tools probed after the restarts answered normally.
    after = report["probed"][report["probed"].index("crash") + 1 :]
    assert "big" in after and "mixed" in after
    assert not {f["tool"] for f in report["findings"] if f["severity"] != "info"} & set(after)


def test_json_is_one_document_when_the_server_cannot_start() -> None:
    code, report, err = run_check("--", *raw("--exit-on-start", "1"))
    assert code == 2 and "refusing to start" in report["error"] and "cannot check the server" in err
    assert [f["rule"] for f in report["findings"]] == ["server-unreachable"]


def _sarif(*args: str, cwd: Path | None = None) -> tuple[int, dict[str, Any]]:
    out = subprocess.run(
        [*MCPKIT, "check", "--sarif", *args], capture_output=True, text=True, timeout=180, cwd=cwd
    )
    return out.returncode, json.loads(out.stdout)


def _validate_sarif(doc: dict[str, Any]) -> None:
    schema = json.loads(SARIF_SCHEMA.read_text())
    jsonschema.Draft4Validator(schema).validate(doc)


def test_sarif_is_valid_and_carries_what_code_scanning_needs() -> None:
    code, doc = _sarif("--", *protocol("--poison", "--no-ping"))
    assert code == 1
    _validate_sarif(doc)
    run = doc["runs"][0]
    rules_meta = {r["id"]: r for r in run["tool"]["driver"]["rules"]}
    for rule in rules_meta.values():
        assert rule["shortDescription"]["text"] and rule["fullDescription"]["text"]
        assert rule["helpUri"].startswith("https://") and rule["defaultConfiguration"]["level"] in {
            "error",
            "warning",
            "note",
        }
    # Rule help comes from the catalog, not from the first finding's text.
    assert rules_meta["ping-fails"]["fullDescription"]["text"] == CATALOG["ping-fails"].evidence
    for result in run["results"]:
        location = result["locations"][0]["physicalLocation"]
        assert location["artifactLocation"]["uri"] == "mcp-servers/protocol-fixture"
        assert location["region"]["startLine"] == 1
        assert len(result["partialFingerprints"]["mcpkitFinding/v1"]) == 64
        assert run["tool"]["driver"]["rules"][result["ruleIndex"]]["id"] == result["ruleId"]
    text = json.dumps(doc)
    assert sys.executable not in text and "protocol_server.py" not in text  # no command line
    assert run["automationDetails"]["id"] == "mcpkit-check/protocol-fixture/"


def test_sarif_fingerprints_are_stable_across_runs() -> None:
    _, first = _sarif("--", *protocol("--poison"))
    _, second = _sarif("--", *protocol("--poison"))
    prints = [[r["partialFingerprints"] for r in d["runs"][0]["results"]] for d in (first, second)]
    assert prints[0] == prints[1] and len({json.dumps(p) for p in prints[0]}) == len(prints[0])


def test_sarif_points_at_the_config_file_and_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "servers.toml"
    config.write_text(
        "# my servers\n\n"
        "[mcp_servers.other]\ncommand = 'true'\n\n"
        f"[mcp_servers.proto]\ncommand = {json.dumps(sys.executable)}\n"
        f"args = [{json.dumps(str(protocol()[1]))}, '--no-ping']\nenv = {{ SECRET_TOKEN = 'hunter2' }}\n"
    )
    code, doc = _sarif("--server", "proto", "--config", str(config), cwd=tmp_path)
    assert code == 1
    _validate_sarif(doc)
    location = doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    assert location == {"artifactLocation": {"uri": "servers.toml"}, "region": {"startLine": 6}}
    assert "hunter2" not in json.dumps(doc)


def test_sarif_of_a_start_up_failure_is_valid() -> None:
    code, doc = _sarif("--", *raw("--exit-on-start", "1"))
    assert code == 2
    _validate_sarif(doc)
    assert [r["ruleId"] for r in doc["runs"][0]["results"]] == ["server-unreachable"]


def test_the_python_sdk_http_server_passes_every_check() -> None:
    """A real SDK server over streamable HTTP: its Origin check holds and nothing else is found."""
    proc, port = start_http_server("--http")
    try:
        code, report, err = run_check(
            "--probe", "--fail-on", "warning", "--url", f"http://127.0.0.1:{port}/mcp"
        )
    finally:
        proc.terminate()
        proc.wait(10)
    assert code == 0, err
    assert report["serverInfo"]["name"] == "sdk-echo"
    # Both eras served; the SDK's stateless face lists only its own revision in discover and
    # says ttlMs 0 for a fixed tool list: notes on that era, nothing on the handshake.
    assert {era: facts["served"] for era, facts in report["eras"].items()} == {
        "2025-11-25": True,
        "2026-07-28": True,
    }
    assert {(f["rule"], f["severity"], f["era"]) for f in report["findings"]} == {
        ("discover-omits-handshake", "info", "2026-07-28"),
        ("cache-ttl-zero", "info", "2026-07-28"),
    }
