"""start|stop|status as a user runs them: readiness, pid file, the CLI using the running server."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from mcpkit.archive.rpc import RpcClient
from tests.archive_faces.conftest import cli, free_port


def test_start_status_stop(sample_db: Path, tmp_path: Path) -> None:
    port = free_port()
    url = f"ws://127.0.0.1:{port}"
    env = {"MCPKIT_ARCHIVE_STATE": str(tmp_path / "state"), "MCPKIT_ARCHIVE_URL": url}
    started = cli("start", "--port", str(port), "--db", str(sample_db), env=env)
    assert started.returncode == 0, started.stderr
    try:
        # start returned: the server must answer right now, with no retry.
        status = asyncio.run(RpcClient(url, connect_timeout=2).call("get_status", {}))
        assert status["ready"] is True and status["data_stats"]["total_posts"] == 330
        assert status["vector_index"]["auto_build"] is True  # the server warms up in the background
        info = json.loads(cli("status", "--json", env=env).stdout)
        assert info["running"] and info["answers"] and info["url"] == url
        assert (tmp_path / "state" / "archive-server.pid").exists()
        again = cli("start", "--port", str(port), "--db", str(sample_db), env=env)
        assert again.returncode == 1 and "already running" in again.stderr
        via_server = cli("search", "猫", "--top-k", "2", "--json", env=env)
        assert via_server.returncode == 0 and "using the archive server" in via_server.stderr
        assert len(json.loads(via_server.stdout)) == 2
    finally:
        stopped = cli("stop", env=env)
    assert stopped.returncode == 0, stopped.stderr
    assert not (tmp_path / "state" / "archive-server.pid").exists()
    after = cli("status", env=env)
    assert after.returncode == 1 and "not running" in after.stdout
    assert cli("stop", env=env).returncode == 1


@pytest.mark.parametrize("host", ["0.0.0.0", "192.0.2.1"])
def test_start_refuses_open_bind_without_token(tmp_path: Path, host: str) -> None:
    done = cli(
        "start", "--host", host, env={"MCPKIT_ARCHIVE_STATE": str(tmp_path), "MCPKIT_ARCHIVE_TOKEN": ""}
    )
    assert done.returncode == 2 and "MCPKIT_ARCHIVE_TOKEN" in done.stderr


def test_start_reports_a_server_that_dies(tmp_path: Path) -> None:
    port = free_port()
    blocker = cli  # the port is taken by a plain socket so the server cannot bind
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", port))
        sock.listen()
        done = blocker(
            "start", "--port", str(port), "--db", str(tmp_path / "x.db"), "--ready-timeout", "60", "--create",
            env={"MCPKIT_ARCHIVE_STATE": str(tmp_path / "state")},
        )  # fmt: skip
    assert done.returncode == 1 and "exited" in done.stderr
