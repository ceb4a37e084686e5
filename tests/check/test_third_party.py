"""``mcpkit tools``, ``call`` and ``check`` against real third-party servers (scripts/third-party.sh).

The expected findings are recorded here, every one of them per server: what these servers
really do today, so a change in a server or in the checker shows up as a failing test. None
of the false positives issue 11 found may come back: an unknown tool answered with a JSON-RPC
error is what the spec asks for, an extra argument is only tried on closed schemas, ``tools:
{}`` is a normal declaration, and the unconfirmed Claude Desktop rules are warnings, so a
default ``check`` passes (exit 0) on every one of these servers but the HTTP one, whose
missing Origin check is a real MUST of the spec.

Skipped when the servers are not installed; a failure in CI (see tests/support/env.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.check.test_check_fixtures import run_check
from tests.client.procs import free_port, start_command_on_port
from tests.support.env import THIRD_PARTY, require

pytestmark = [pytest.mark.thirdparty, pytest.mark.slow]

VENV = THIRD_PARTY / "venv" / "bin"
NODE = THIRD_PARTY / "node" / "node_modules" / ".bin"
TIME = VENV / "mcp-server-time"
FETCH = VENV / "mcp-server-fetch"
GIT = VENV / "mcp-server-git"
EVERYTHING = NODE / "mcp-server-everything"
FILESYSTEM = NODE / "mcp-server-filesystem"

FALSE_POSITIVES = {
    "unknown-tool-not-iserror",
    "unknown-tool-accepted",
    "invalid-arguments-accepted",
    "capability-empty-object",
}
W = "warning"
PAREN, UNDER = "desktop-description-parentheses", "desktop-description-underscores"


def _need(path: Path) -> None:
    require(path.exists(), f"{path.name} is not installed (bash scripts/third-party.sh)")


def mcpkit(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcpkit", *args], capture_output=True, text=True, timeout=timeout
    )


def significant(report: dict[str, Any]) -> set[tuple[str, str, str | None, str]]:
    return {
        (f["rule"], f["severity"], f["tool"], f["pointer"])
        for f in report["findings"]
        if f["severity"] != "info"
    }


def notes(report: dict[str, Any]) -> set[tuple[str, str | None]]:
    return {(f["rule"], f["tool"]) for f in report["findings"] if f["severity"] == "info"}


def _no_false_positives(report: dict[str, Any]) -> None:
    assert not FALSE_POSITIVES & {f["rule"] for f in report["findings"]}
    assert all(f["evidence"] for f in report["findings"])
    for f in report["findings"]:
        if f["rule"].startswith("desktop-description"):
            assert f["severity"] == "warning" and "unconfirmed" in f["message"]


@pytest.fixture(scope="module")
def git_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = tmp_path_factory.mktemp("repo")
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com"}
    env |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    subprocess.run(["git", "init", "-q", str(repo)], check=True, env=env)
    (repo / "a.txt").write_text("hello\n")
    subprocess.run(["git", "-C", str(repo), "add", "a.txt"], check=True, env=env)
    subprocess.run(["git", "-C", str(repo), "commit", "-qm", "first"], check=True, env=env)
    return repo


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("files")
    (root / "a.txt").write_text("hello from a file\n")
    return root


@pytest.fixture(scope="module")
def everything_http() -> Iterator[str]:
    _need(EVERYTHING)
    port = free_port()
    proc = start_command_on_port([str(EVERYTHING), "streamableHttp"], port, env={"PORT": str(port)})
    yield f"http://127.0.0.1:{port}/mcp"
    proc.terminate()
    proc.wait(10)


# ---- mcp-server-time ----------------------------------------------------------------------


def test_time_tools_call_check() -> None:
    _need(TIME)
    out = mcpkit("tools", "--json", "--", str(TIME))
    assert out.returncode == 0 and '"get_current_time"' in out.stdout and '"convert_time"' in out.stdout
    out = mcpkit("call", "get_current_time", "timezone=UTC", "--", str(TIME))
    assert out.returncode == 0 and '"timezone": "UTC"' in out.stdout
    code, report, err = run_check("--probe", "--", str(TIME))
    assert code == 0, err
    _no_false_positives(report)
    assert report["serverInfo"]["name"] == "mcp-time" and sorted(report["tools"]) == [
        "convert_time",
        "get_current_time",
    ]
    props = "/inputSchema/properties/"
    assert significant(report) == {
        (PAREN, W, "get_current_time", props + "timezone/description"),
        (PAREN, W, "convert_time", props + "source_timezone/description"),
        (PAREN, W, "convert_time", props + "target_timezone/description"),
        (PAREN, W, "convert_time", props + "time/description"),
        (UNDER, W, "get_current_time", props + "timezone/description"),
        (UNDER, W, "convert_time", props + "source_timezone/description"),
        (UNDER, W, "convert_time", props + "target_timezone/description"),
    }
    # The generated timezone ("example") is not a real one: an isError result, a note.
    assert notes(report) == {("probe-is-error", "get_current_time"), ("probe-is-error", "convert_time")}


# ---- mcp-server-fetch ---------------------------------------------------------------------


def test_fetch_tools_call_check(files: Path) -> None:
    _need(FETCH)
    server = [str(FETCH), "--ignore-robots-txt", "--allow-private-ips"]
    port = free_port()
    web = start_command_on_port(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "-d", str(files)], port
    )
    try:
        out = mcpkit("call", "fetch", f"url=http://127.0.0.1:{port}/a.txt", "--", *server)
    finally:
        web.terminate()
        web.wait(10)
    assert out.returncode == 0 and "hello from a file" in out.stdout, out.stderr
    # No --probe: fetching generated URLs would leave the machine.
    code, report, err = run_check("--", *server)
    assert code == 0, err
    assert report["serverInfo"]["name"] == "mcp-fetch" and report["tools"] == ["fetch"]
    assert report["findings"] == []


# ---- mcp-server-git -----------------------------------------------------------------------


def test_git_tools_call_check(git_repo: Path) -> None:
    _need(GIT)
    server = [str(GIT), "--repository", str(git_repo)]
    out = mcpkit("call", "git_log", f"repo_path={git_repo}", "--", *server)
    assert out.returncode == 0 and "first" in out.stdout, out.stderr
    code, report, err = run_check("--probe", "--", *server)
    assert code == 0, err
    _no_false_positives(report)
    assert report["serverInfo"]["name"] == "mcp-git" and len(report["tools"]) == 12
    props = "/inputSchema/properties/"
    assert significant(report) == {
        (PAREN, W, "git_branch", props + "branch_type/description"),
        (PAREN, W, "git_log", props + "start_timestamp/description"),
        (PAREN, W, "git_log", props + "end_timestamp/description"),
    }
    writers = {"git_add", "git_checkout", "git_commit", "git_create_branch", "git_reset"}
    assert {t for r, t in notes(report) if r == "probe-skipped-write"} == writers
    # Generated repo_path "example" is outside the repository: isError, a note.
    assert {t for r, t in notes(report) if r == "probe-is-error"} == set(report["tools"]) - writers


# ---- @modelcontextprotocol/server-filesystem ----------------------------------------------


def test_filesystem_tools_call_check(files: Path) -> None:
    _need(FILESYSTEM)
    server = [str(FILESYSTEM), str(files)]
    out = mcpkit("call", "read_text_file", f"path={files / 'a.txt'}", "--", *server)
    assert out.returncode == 0 and "hello from a file" in out.stdout, out.stderr
    code, report, err = run_check("--probe", "--", *server)
    assert code == 0, err
    _no_false_positives(report)
    assert report["serverInfo"]["name"] == "secure-filesystem-server" and len(report["tools"]) == 14
    assert significant(report) == {
        (PAREN, W, "directory_tree", "/description"),
        (UNDER, W, "read_file", "/description"),
    }
    writers = {"create_directory", "edit_file", "move_file", "write_file"}
    assert {t for r, t in notes(report) if r == "probe-skipped-write"} == writers
    # Generated paths ("example") are outside the allowed directory: isError, a note. The two
    # that need no path, or take a list that may be empty, answer normally.
    no_path = {"list_allowed_directories", "read_multiple_files"}
    assert {t for r, t in notes(report) if r == "probe-is-error"} == set(report["tools"]) - writers - no_path


# ---- @modelcontextprotocol/server-everything, stdio and streamable HTTP ---------------------

EVERYTHING_FINDINGS = {
    (PAREN, W, "get-resource-links", "/inputSchema/properties/count/description"),
    (PAREN, W, "simulate-research-query", "/inputSchema/properties/ambiguous/description"),
    (UNDER, W, "simulate-research-query", "/inputSchema/properties/ambiguous/description"),
}
EVERYTHING_WRITERS = {
    "gzip-file-as-resource",
    "simulate-research-query",
    "toggle-simulated-logging",
    "toggle-subscriber-updates",
}
ASKS_THE_CLIENT = {"trigger-sampling-request", "trigger-elicitation-request", "trigger-url-elicitation"}
"""Listed only to a client that declares sampling or elicitation: mcpkit declares each only
with a handler, and its CLI installs none."""


def _everything_target(transport: str, url: str | None) -> list[str]:
    return ["--url", url] if url else ["--", str(EVERYTHING)]


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_everything_tools_call_check(transport: str, request: pytest.FixtureRequest) -> None:
    _need(EVERYTHING)
    url = request.getfixturevalue("everything_http") if transport == "http" else None
    target = _everything_target(transport, url)
    out = mcpkit("tools", "--json", *target)
    # Every tool but those it lists only for clients that declare sampling or elicitation.
    assert out.returncode == 0 and out.stdout.count('"name":') >= 14, out.stderr
    assert '"get-roots-list"' in out.stdout
    assert not [name for name in ASKS_THE_CLIENT if f'"{name}"' in out.stdout]
    out = mcpkit("call", "echo", "message=hi there", *target)
    assert out.returncode == 0 and out.stdout.strip() == "Echo: hi there"
    out = mcpkit("call", "get-roots-list", *target)
    assert out.returncode == 0 and "no roots are currently configured" in out.stdout
    out = mcpkit("call", "trigger-sampling-request", "prompt=hello", *target)
    assert out.returncode == 1 and "trigger-sampling-request" in out.stderr
    assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr

    code, report, err = run_check("--probe", "--timeout", "30", *target)
    _no_false_positives(report)
    assert report["serverInfo"]["name"] == "mcp-servers/everything" and len(report["tools"]) == 14
    assert {"tools", "prompts", "resources", "logging", "completions"} <= set(report["capabilities"])
    expected = set(EVERYTHING_FINDINGS)
    if transport == "http":
        # Real: its HTTP transport answers any Origin (spec: MUST answer 403 to an invalid one),
        # and any Host (DNS rebinding without an Origin).
        expected.add(("origin-not-checked", "error", None, ""))
        expected.add(("host-not-checked", "error", None, ""))
    assert significant(report) == expected
    assert code == (1 if transport == "http" else 0), err
    assert {t for r, t in notes(report) if r == "probe-skipped-write"} == EVERYTHING_WRITERS
    assert "echo" in report["probed"] and report["restarts"] == 0
