"""The official MCP conformance suite against mcpkit's HTTP faces, held to an expected-failures file.

Four servers, each at both revisions' wires (2025-11-25 and 2026-07-28, each revision's frozen
requirement set): the suite's own fixture written with ``build_server``
(examples/conformance_server.py), ``mcpkit archive mcp`` on a small archive, ``mcpkit redmine
mcp`` on the real Redmine, and ``mcpkit gateway`` in front of the fixture (with the fixture's
names kept, so the suite finds its tools and prompts through the gateway).

Every failed check must be in tests/conformance/expected_failures.toml with the reason: the
suite's mistake (it fails servers for answering -32601 to prompts they never declared, and
tests only its fixture's tool names), a capability the server does not serve, or a known gap.
A failure not listed fails the test, and so does a listed one that now passes, so the file
stays true.

The 2026-07-28 scenarios are all in the pinned npm release. Where they need the fixture's own
tools (a tool list changed under a ``subscriptions/listen`` stream) or check only a field's form
(caching hints), ``mcpkit check --protocol 2026-07-28`` and the server and gateway tests cover
mcpkit's servers (tests/check/, tests/server/test_modern_wire.py, tests/gateway/).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.client.procs import free_port, start_command_on_port
from tests.conformance.suite import (
    REVISIONS,
    Failure,
    expected_for,
    failures,
    load_expected,
    run_suite,
    suite_version,
)
from tests.integration.redmine.redmine_session import locate_redmine
from tests.support.env import REPO

pytestmark = [pytest.mark.slow, pytest.mark.thirdparty]

FIXTURE = REPO / "examples" / "conformance_server.py"
SAMPLE = REPO / "src" / "mcpkit" / "archive" / "data" / "sample_twilog.csv"
MCPKIT = [sys.executable, "-m", "mcpkit"]


def fixture_names() -> dict[str, str]:
    """The gateway's ``names`` table that keeps each fixture tool's and prompt's own name."""
    sys.path.insert(0, str(FIXTURE.parent))
    try:
        import conformance_server as fixture
    finally:
        sys.path.remove(str(FIXTURE.parent))
    names = {f"fixture/{tool.name}": tool.name for tool in fixture.TOOLS}
    names.update({f"fixture/{prompt.name}": prompt.name for prompt in fixture.PROMPTS})
    return names


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}


def wait_declares(port: int, capability: str, timeout: float = 120) -> None:
    """Until the gateway's ``initialize`` declares ``capability``: its downstream is connected.

    The gateway declares prompts only once a server that has some is up, so the suite's
    first session is not told less than the gateway serves.
    """
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/mcp",
        data=json.dumps(INITIALIZE).encode(),
        headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream"},
    )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with urllib.request.urlopen(request, timeout=30) as response:
            body = response.read().decode()
        data = next((line[5:] for line in body.splitlines() if line.startswith("data:")), body)
        if capability in json.loads(data)["result"]["capabilities"]:
            return
        time.sleep(0.1)
    raise AssertionError(f"the gateway did not declare {capability} within {timeout} s")


@contextmanager
def serving(server: str, tmp: Path) -> Iterator[str]:
    """Start ``server``'s HTTP face on a free port; yield its URL; stop it."""
    port = free_port()
    env: dict[str, str] = {}
    if server == "fixture":
        argv = [sys.executable, str(FIXTURE), "--port", str(port)]
    elif server == "archive":
        db = tmp / "archive.db"
        subprocess.run(
            [*MCPKIT, "archive", "import", "--db", str(db), str(SAMPLE)], check=True, capture_output=True
        )
        argv = [*MCPKIT, "archive", "mcp", "--db", str(db), "--transport", "http", "--port", str(port)]
    elif server == "redmine":
        redmine = locate_redmine()
        env = {"REDMINE_URL": redmine.url, "REDMINE_API_KEY": redmine.admin_key}
        argv = [*MCPKIT, "redmine", "mcp", "--transport", "http", "--port", str(port)]
    else:
        config = {
            "mcpServers": {"fixture": {"command": sys.executable, "args": [str(FIXTURE)]}},
            "gateway": {"names": fixture_names()},
        }
        path = tmp / "gateway.json"
        path.write_text(json.dumps(config), encoding="utf-8")
        # With sessions, as a single gateway in front of desktop clients runs: a handshake
        # client is asked its server's questions (elicitation) mid-call.
        argv = [*MCPKIT, "gateway", "--config", str(path), "--transport", "http", "--port", str(port)]
        argv.append("--sessions")
    proc = start_command_on_port(argv, port, env)
    if server == "gateway":
        wait_declares(port, "prompts")
    try:
        # The suite is a spec client: the gateway serves it the spec's rules only. An unknown
        # client would get every known client's rules at once (docs/gateway.md), which rewrites
        # the 2020-12 keywords the suite checks ($defs, $anchor, if/then/else) on purpose.
        yield f"http://127.0.0.1:{port}/mcp" + ("?profile=mcp-spec" if server == "gateway" else "")
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.mark.parametrize("server", ["fixture", "archive", "redmine", "gateway"])
def test_official_suite_fails_only_where_expected(server: str, tmp_path: Path) -> None:
    version = suite_version()
    expected = expected_for(server, load_expected())
    failed: dict[Failure, str] = {}
    tally = []
    with serving(server, tmp_path) as url:
        for revision in REVISIONS:
            out = tmp_path / revision
            run = run_suite(url, revision, out)
            assert out.is_dir(), f"the suite wrote no results for {revision}: {run.stderr[-2000:]}"
            got, checks = failures(server, revision, out)
            failed.update(got)
            tally.append(f"{revision}: {checks - len(got)} of {checks} checks passed")
    unexpected = sorted(set(failed) - set(expected))
    stale = sorted(set(expected) - set(failed))
    report = [f"conformance {version} against {server}: " + "; ".join(tally)]
    report += [f"unexpected failure {f}: {failed[f]}" for f in unexpected]
    report += [f"listed in expected_failures.toml but passed: {f} ({expected[f].why})" for f in stale]
    print("\n".join(report))
    assert not unexpected and not stale, "\n".join(report)
