"""Per client profile: ``mcpkit check --profile P`` with that client's clientInfo finds no errors
through the gateway, although the same real downstreams checked directly do.

Downstreams: server-everything, mcp-server-time, mcp-server-fetch, mcpkit's archive on a
small demo DB, and the flaky fixture (whose definitions break a rule of every profile).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpkit.check import CheckOptions, check_session
from mcpkit.client import ServerConfig, Session, SessionOptions
from mcpkit.compat import PROFILES
from tests.gateway.support import (
    CLIENT_OF,
    archive_server,
    everything_server,
    fetch_server,
    flaky,
    make_archive_db,
    run_cli,
    time_server,
    write_config,
)

pytestmark = [pytest.mark.slow, pytest.mark.thirdparty]


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    db = make_archive_db(tmp_path_factory.mktemp("archive"))
    return {
        "everything": everything_server(),
        "time": time_server(),
        "fetch": fetch_server(),
        "archive": archive_server(db),
        "flaky": flaky(),
    }


def _direct_errors(servers: dict[str, Any], profiles: list[str]) -> dict[str, set[str]]:
    """Error rule ids per profile, each downstream checked on its own (the check's Python API)."""

    async def run() -> dict[str, set[str]]:
        out: dict[str, set[str]] = {p: set() for p in profiles}
        for name, entry in servers.items():
            server = ServerConfig(name=name, command=[entry["command"], *entry.get("args", [])])
            async with Session(
                server, SessionOptions(timeout=60, connect_timeout=120, raise_on_error=False)
            ) as session:
                for profile in profiles:
                    report = await check_session(session, CheckOptions(profiles=(profile,)))
                    out[profile] |= {f.rule for f in report.findings if f.severity == "error"}
        return out

    return anyio.run(run)


@pytest.fixture(scope="module")
def direct(servers: dict[str, Any]) -> dict[str, set[str]]:
    return _direct_errors(servers, list(PROFILES))


def _gateway_check(config: Path, profile: str) -> dict[str, Any]:
    client = CLIENT_OF[profile]
    who = ["--client-name", client] if client else []
    forced = [] if client else ["--profile", profile]
    done = run_cli(
        "check", "--json", "--profile", profile, *who, "--timeout", "120",
        "--", *_gateway_cmd(config), *forced,
    )  # fmt: skip
    assert done.stdout, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def _gateway_cmd(config: Path) -> list[str]:
    import sys

    return [sys.executable, "-m", "mcpkit", "gateway", "--config", str(config)]


@pytest.mark.parametrize("profile", [p for p in PROFILES if p != "vscode"])
def test_gateway_fixes_what_the_downstreams_break(
    profile: str, servers: dict[str, Any], direct: dict[str, set[str]], tmp_path: Path
) -> None:
    assert direct[profile], f"the downstreams should break {profile} when checked directly"
    report = _gateway_check(write_config(tmp_path / "gw.json", servers), profile)
    errors = [f for f in report["findings"] if f["severity"] == "error"]
    assert errors == [], errors
    if profile == "cursor":
        # the union is over the 40 tools Cursor sends on: it gets the meta-tools instead
        assert sorted(report["tools"]) == ["call_tool", "describe_tool", "search_tools"]
    else:
        assert len(report["tools"]) > 20  # the union is served, not an empty list


def test_vscode_tool_limit_gets_meta_tools(servers: dict[str, Any], tmp_path: Path) -> None:
    bulky = {**servers, "bulk": flaky("--many", "125")}
    direct = _direct_errors({"bulk": bulky["bulk"]}, ["vscode"])
    assert "vscode-tool-count" in direct["vscode"]
    report = _gateway_check(write_config(tmp_path / "gw.json", bulky), "vscode")
    assert [f for f in report["findings"] if f["severity"] == "error"] == []
    assert sorted(report["tools"]) == ["call_tool", "describe_tool", "search_tools"]
