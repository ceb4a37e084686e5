"""``mcpkit check --protocol both`` on mcpkit's own HTTP faces: no errors on either era.

The archive MCP, the Redmine MCP (against the real Redmine of scripts/redmine-up.sh) and the
gateway (in front of the archive and a toolkit server) each run as the command a user starts;
the checker speaks the handshake and the stateless wire to the same URL. The archive face also
runs as an OAuth protected resource of a real authorization server (oidc-provider): without a
token only its challenge and metadata are checked, with the right one everything is, and a
token the authorization server issued for another resource must be refused.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.check.test_check_fixtures import CLEAN, run_check
from tests.client.procs import free_port, wait_listening
from tests.gateway.support import archive_server, make_archive_db, write_config
from tests.integration.redmine.redmine_session import locate_redmine
from tests.server.test_oauth import AuthServer, auth_server

__all__ = ["auth_server"]  # the module-scoped oidc-provider fixture, shared with the OAuth tests

pytestmark = pytest.mark.slow

MCPKIT = [sys.executable, "-m", "mcpkit"]
BOTH = {"2025-11-25", "2026-07-28"}


@contextmanager
def serving(*args: str, env: dict[str, str] | None = None) -> Iterator[str]:
    """``mcpkit ARGS --transport http --port P`` as a child; yields its URL."""
    port = free_port()
    argv = [*MCPKIT, *args, "--transport", "http", "--port", str(port)]
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "MCPKIT_LOG": "warning", **(env or {})},
    )
    wait_listening(proc, port)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(20)


def assert_clean_on_both_eras(url: str, *extra: str) -> dict[str, Any]:
    code, report, err = run_check("--protocol", "both", "--timeout", "60", *extra, "--url", url)
    errors = [f for f in report.get("findings", []) if f["severity"] == "error"]
    assert code == 0 and not errors, (err, errors)
    assert {era for era, facts in report["eras"].items() if facts["served"]} == BOTH, report["eras"]
    return report


@pytest.fixture(scope="module")
def archive_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_archive_db(tmp_path_factory.mktemp("archive"))


def test_the_archive_mcp_http_face(archive_db: Path) -> None:
    with serving("archive", "mcp", "--db", str(archive_db)) as url:
        report = assert_clean_on_both_eras(url, "--probe")
    stateless = report["eras"]["2026-07-28"]
    assert "2025-11-25" in stateless["supportedVersions"]
    assert stateless["caching"]["tools/list"]["ttlMs"] > 0  # a fixed tool set says how long it holds
    assert report["probed"]  # its read-only tools were called and their results validated


def test_the_redmine_mcp_http_face() -> None:
    redmine = locate_redmine()
    env = {"REDMINE_URL": redmine.url, "REDMINE_API_KEY": redmine.admin_key}
    with serving("redmine", "mcp", env=env) as url:
        report = assert_clean_on_both_eras(url)
    assert "2025-11-25" in report["eras"]["2026-07-28"]["supportedVersions"]


def test_the_gateway_http_face(archive_db: Path, tmp_path: Path) -> None:
    servers = {"archive": archive_server(archive_db), "clean": {"command": CLEAN[0], "args": CLEAN[1:]}}
    config = write_config(tmp_path / "gateway.json", servers)
    with serving("gateway", "--config", str(config)) as url:
        report = assert_clean_on_both_eras(url)
    # The gateway declares tools.listChanged on 2026 too, and its subscriptions/listen answered.
    assert report["eras"]["2026-07-28"]["capabilities"]["tools"]["listChanged"] is True
    assert "listen-fails" not in {f["rule"] for f in report["findings"]}


def test_the_archive_face_as_an_oauth_protected_resource(
    auth_server: AuthServer, archive_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    argv = [*MCPKIT, "archive", "mcp", "--db", str(archive_db), "--transport", "http", "--port", str(port)]
    proc = subprocess.Popen(
        [*argv, "--oauth-issuer", auth_server.issuer],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wait_listening(proc, port)
    try:
        code, report, err = run_check("--url", url)
        assert code == 0, err
        assert [f["rule"] for f in report["findings"]] == ["auth-no-token"]
        assert report["auth"]["authorizationServers"] == [auth_server.issuer]

        monkeypatch.setenv("MCPKIT_TEST_FOREIGN_TOKEN", auth_server.token("https://other.example/mcp"))
        token = auth_server.token(url)
        report = assert_clean_on_both_eras(
            url, "-H", f"Authorization: Bearer {token}", "--foreign-token-env", "MCPKIT_TEST_FOREIGN_TOKEN"
        )
        assert report["auth"]["foreignTokenChecked"] is True
        assert not {f["rule"] for f in report["findings"]} & {
            "auth-audience-not-checked",
            "auth-altered-token-accepted",
        }
        assert token not in str(report)
    finally:
        proc.terminate()
        proc.wait(20)
