"""``mcpkit check`` on both protocol eras, against a raw two-era server broken one rule at a time.

era_server.py is correct by default and breaks one 2026-07-28 (or handshake) rule per flag;
each defect must be found, filed under its era, and nothing else found beside it.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.check.test_check_fixtures import protocol, run_check
from tests.client.procs import free_port, wait_listening

pytestmark = pytest.mark.slow  # each test serves HTTP and runs the checker against it

ERA_SERVER = Path(__file__).with_name("era_server.py")
TWO_ERAS = [sys.executable, str(Path(__file__).parents[1] / "fixtures" / "servers" / "asking_server.py")]
"""A toolkit server that serves both eras on stdio."""
BOTH = {"2025-11-25", "2026-07-28"}


@contextmanager
def era_server(*flags: str) -> Iterator[str]:
    port = free_port()
    proc, _ = wait_listening(
        subprocess.Popen([sys.executable, str(ERA_SERVER), str(port), *flags], stderr=subprocess.DEVNULL),
        port,
    )
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.kill()
        proc.wait(10)


def found(report: dict[str, Any]) -> set[tuple[str, str, str | None]]:
    return {(f["rule"], f["severity"], f["era"]) for f in report["findings"]}


def test_a_correct_two_era_server_has_no_findings_even_probed() -> None:
    with era_server() as url:
        code, report, err = run_check("--probe", "--fail-on", "warning", "--timeout", "10", "--url", url)
    assert code == 0, err
    assert report["findings"] == []
    eras = report["eras"]
    assert set(eras) == BOTH and all(facts["served"] for facts in eras.values())
    assert eras["2026-07-28"]["supportedVersions"] == ["2026-07-28", "2025-11-25"]
    assert eras["2026-07-28"]["caching"]["tools/list"] == {"ttlMs": 60_000, "cacheScope": "public"}
    # Every answer was validated on both eras (discover, lists, the listen acknowledgement...).
    assert eras["2025-11-25"]["messagesValidated"] >= 3 and eras["2026-07-28"]["messagesValidated"] >= 4


@pytest.mark.parametrize(
    ("flag", "expected"),
    [
        ("--only-2026-listed", ("discover-omits-handshake", "info", "2026-07-28")),
        ("--ttl-zero", ("cache-ttl-zero", "info", "2026-07-28")),
        ("--no-listen", ("listen-fails", "error", "2026-07-28")),
        ("--lax-envelope", ("envelope-not-required", "warning", "2026-07-28")),
        ("--bad-discover", ("message-invalid", "error", "2026-07-28")),
        ("--bad-ping", ("message-invalid", "error", "2025-11-25")),
        ("--no-stateless", ("stateless-not-served", "info", "2026-07-28")),
        ("--quiet-2026", ("eras-disagree", "warning", "2026-07-28")),
    ],
)
def test_each_defect_is_found_on_its_era(flag: str, expected: tuple[str, str, str]) -> None:
    with era_server(flag) as url:
        code, report, err = run_check("--timeout", "10", "--url", url)
    assert found(report) == {expected}, err
    assert code == (1 if expected[1] == "error" else 0)
    assert report["eras"][expected[2]]["summary"][expected[1]] == 1


def test_a_long_ttl_is_a_warning_on_each_cacheable_result() -> None:
    with era_server("--long-ttl") as url:
        _, report, _ = run_check("--timeout", "10", "--url", url)
    long = [f for f in report["findings"] if f["rule"] == "cache-ttl-long"]
    assert {f["message"].split()[0] for f in long} == {"server/discover", "tools/list"}
    assert all(f["severity"] == "warning" and "30.0 days" in f["message"] for f in long)


def test_a_schema_violation_names_the_message_and_the_field() -> None:
    with era_server("--bad-discover") as url:
        _, report, _ = run_check("--timeout", "10", "--url", url)
    (finding,) = report["findings"]
    assert finding["message"].startswith("server/discover (2026-07-28):") and finding["pointer"] == "/ttlMs"


def test_one_era_on_request() -> None:
    with era_server("--bad-ping") as url:
        code, report, _ = run_check("--protocol", "2026-07-28", "--timeout", "10", "--url", url)
        assert code == 0 and set(report["eras"]) == {"2026-07-28"} and report["findings"] == []
        code, report, _ = run_check("--protocol", "2025-11-25", "--timeout", "10", "--url", url)
        assert code == 1 and set(report["eras"]) == {"2025-11-25"}
        assert found(report) == {("message-invalid", "error", "2025-11-25")}


def test_asking_for_an_era_the_server_does_not_serve_is_a_connect_failure() -> None:
    """With ``both`` a missing era is a note; asked for alone, it is what cannot be checked."""
    with era_server("--no-stateless") as url:
        code, report, err = run_check("--protocol", "2026-07-28", "--timeout", "10", "--url", url)
    assert code == 2 and "does not serve 2026-07-28" in report["error"] and "cannot check" in err


def test_stdio_defaults_to_the_handshake_and_checks_the_stateless_era_on_request() -> None:
    """``--protocol 2026-07-28`` on stdio is checked there, as ``mcpkit call`` speaks it (it was
    refused: "need an HTTP target"); a handshake-only server cannot be checked on it."""
    code, report, _ = run_check("--", *protocol())
    assert code == 0 and set(report["eras"]) == {"2025-11-25"}
    code, report, err = run_check("--protocol", "2026-07-28", "--probe", "--timeout", "20", "--", *TWO_ERAS)
    assert code in (0, 1), err
    facts = report["eras"]["2026-07-28"]
    assert set(report["eras"]) == {"2026-07-28"} and facts["served"] is True
    assert report["protocolVersion"] == "2026-07-28" and report["serverInfo"]["name"]
    assert report["tools"] and report["probed"] and facts["messagesValidated"] >= 3
    assert "tools/list" in facts["caching"]
    assert not [f for f in report["findings"] if f["era"] == "2026-07-28" and f["severity"] == "error"]
    code, report, err = run_check("--protocol", "2026-07-28", "--timeout", "10", "--", *protocol())
    assert code == 2 and "does not serve 2026-07-28" in report["error"], err
    code, _, err = run_check("--protocol", "2027-01-01", "--", *protocol())
    assert code == 2 and "--protocol must be" in err


def test_auth_without_a_token_checks_the_challenge_and_metadata_only() -> None:
    with era_server("--auth") as url:
        code, report, _ = run_check("--timeout", "10", "--url", url)
    assert code == 0
    assert found(report) == {("auth-no-token", "info", None)}
    assert report["auth"]["required"] is True
    assert report["auth"]["metadata"].endswith("/.well-known/oauth-protected-resource/mcp")
    assert "eras" not in report  # nothing past the 401 was checked


def test_a_server_that_takes_any_token_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """era_server --auth takes any bearer token: an altered one and one for another resource pass."""
    monkeypatch.setenv("MCPKIT_TEST_FOREIGN", "token-for-another-resource")
    with era_server("--auth") as url:
        code, report, _ = run_check(
            "--timeout",
            "10",
            "-H",
            "Authorization: Bearer aaa.bbb.ccc",
            "--foreign-token-env",
            "MCPKIT_TEST_FOREIGN",
            "--url",
            url,
        )
    assert code == 1
    assert found(report) == {
        ("auth-altered-token-accepted", "error", None),
        ("auth-audience-not-checked", "error", None),
    }
    assert set(report["eras"]) == BOTH  # with a token, the rest was checked too
    assert "token-for-another-resource" not in str(report) and "aaa.bbb.ccc" not in str(report)


def test_a_foreign_token_variable_that_is_not_set_is_a_usage_error() -> None:
    code, _, err = run_check(
        "--foreign-token-env", "MCPKIT_TEST_UNSET_VARIABLE", "--url", "http://127.0.0.1:9/mcp"
    )
    assert code == 2 and "MCPKIT_TEST_UNSET_VARIABLE" in err


def test_a_server_of_the_stateless_era_only_is_checked_there() -> None:
    """No handshake: a note, and the tools are graded (and probed) as the stateless era lists them."""
    with era_server("--no-handshake") as url:
        code, report, err = run_check("--probe", "--timeout", "10", "--url", url)
    assert code == 0, err
    assert found(report) == {("handshake-not-served", "info", "2025-11-25")}
    assert report["tools"] == ["echo"] and report["probed"] == ["echo"]
    assert report["serverInfo"]["name"] == "era-server" and report["protocolVersion"] == "2026-07-28"


def test_an_unreachable_http_server_is_exit_2_on_both_eras() -> None:
    code, report, err = run_check("--timeout", "3", "--url", f"http://127.0.0.1:{free_port()}/mcp")
    assert code == 2 and "connection refused" in report["error"] and "cannot check" in err
