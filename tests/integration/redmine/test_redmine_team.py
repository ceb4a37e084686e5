"""The team deployment (issue 12): two stateless replicas behind a real nginx, each request as its sender.

``scripts/redmine-team.sh`` starts both replicas of ``mcpkit redmine mcp --transport http`` and
nginx (Debian package) balancing them round-robin, with no ``REDMINE_API_KEY``: every request
brings its own key. The SDK's streamable HTTP client talks to nginx.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import uuid
import xml.etree.ElementTree as ET
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.integration.redmine.redmine_session import RedmineEnv, rest
from tests.support.env import REPO, require

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
SCRIPT = REPO / "scripts" / "redmine-team.sh"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Team:
    url: str
    replica_pids: list[int]
    replica_ports: list[int]
    state: Path


def closed(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) != 0


@pytest.fixture(scope="module")
def team(redmine: RedmineEnv, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Team]:
    require(
        bool(shutil.which("nginx") or Path("/usr/sbin/nginx").exists()) or os.geteuid() == 0,
        "nginx is missing",
    )
    state = tmp_path_factory.mktemp("team")
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("REDMINE_")},
        "REDMINE_URL": redmine.url,
        "TEAM_STATE_DIR": str(state),
        "TEAM_PORT": str(free_port()),
        "TEAM_REPLICA_PORTS": f"{free_port()} {free_port()}",
        "MCPKIT": str(Path(sys.executable).with_name("mcpkit")),
    }
    out = subprocess.run(["bash", str(SCRIPT), "up"], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    values = dict(line.split("=", 1) for line in out.stdout.splitlines() if "=" in line)
    try:
        pids = [int(p) for p in values["REPLICA_PIDS"].split(",")]
        yield Team(values["TEAM_URL"], pids, [int(p) for p in env["TEAM_REPLICA_PORTS"].split()], state)
    finally:
        subprocess.run(["bash", str(SCRIPT), "down"], env=env, capture_output=True, timeout=60)


@asynccontextmanager
async def session(url: str, key: str) -> AsyncIterator[ClientSession]:
    http = httpx2.AsyncClient(headers={"X-Redmine-API-Key": key}, timeout=60)
    async with http, streamable_http_client(url, http_client=http) as (read, write, *_):  # noqa: SIM117
        async with ClientSession(read, write) as client:
            await client.initialize()
            yield client


async def call(client: ClientSession, name: str, args: dict[str, object], *secrets: str) -> tuple[bool, str]:
    result = await client.call_tool(name, args)
    text = "".join(getattr(c, "text", "") for c in result.content)
    for secret in secrets:
        assert secret not in text
    return bool(result.is_error), text


async def test_two_users_see_only_their_own_projects(redmine: RedmineEnv, team: Team) -> None:
    ident = f"team-private-{uuid.uuid4().hex[:8]}"
    rest(
        redmine,
        "POST",
        "projects.json",
        {"project": {"name": "Team private", "identifier": ident, "is_public": False}},
    )
    keys = (redmine.admin_key, redmine.user_key)
    try:
        async with (
            session(team.url, redmine.admin_key) as admin,
            session(team.url, redmine.user_key) as member,
        ):
            for _ in range(2):  # both replicas answer each user
                failed, text = await call(admin, "get_project", {"project": ident}, *keys)
                assert not failed and ident in text
                failed, text = await call(member, "get_project", {"project": ident}, *keys)
                assert failed and ("403" in text or "404" in text)
                failed, text = await call(member, "get_my_account", {}, *keys)
                assert not failed and ET.fromstring(text.encode()).findtext("login") == "mcpkit-member"
                failed, text = await call(member, "list_users", {}, *keys)
                assert failed and "403" in text
    finally:
        rest(redmine, "DELETE", f"projects/{ident}.json")


async def test_killing_a_replica_mid_session_does_not_break_the_client(
    redmine: RedmineEnv, team: Team
) -> None:
    async with session(team.url, redmine.user_key) as member:
        assert not (await call(member, "list_trackers", {}))[0]
        os.kill(team.replica_pids[0], signal.SIGKILL)
        # Gone, as a crashed or stopped replica is. (A call in flight at the very moment a replica
        # dies fails: nginx does not resend a POST that reached a replica, as it may have written.)
        for _ in range(100):
            if closed(team.replica_ports[0]):
                break
            await anyio.sleep(0.05)
        for _ in range(6):
            failed, text = await call(member, "get_my_account", {})
            assert not failed, text


def test_keys_are_refused_or_missing_with_401_and_foreign_origins_with_403(
    redmine: RedmineEnv, team: Team
) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    missing = httpx2.post(team.url, json=body, headers=headers)
    assert missing.status_code == 401 and "X-Redmine-API-Key" in missing.text
    wrong = httpx2.post(team.url, json=body, headers={**headers, "authorization": "Bearer " + "0" * 40})
    assert wrong.status_code == 401
    foreign = httpx2.post(
        team.url,
        json=body,
        headers={**headers, "origin": "https://evil.example", "x-redmine-api-key": redmine.user_key},
    )
    assert foreign.status_code == 403
    bearer = httpx2.post(
        team.url, json=body, headers={**headers, "authorization": "Bearer " + redmine.user_key}
    )
    assert bearer.status_code == 200 and "get_issue" in bearer.text


def test_no_key_in_any_log(redmine: RedmineEnv, team: Team) -> None:
    logs = list((team.state / "logs").glob("*.log"))
    assert logs
    for log in logs:
        text = log.read_text(errors="replace")
        assert redmine.admin_key not in text and redmine.user_key not in text, log.name
