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
        status = asyncio.run(RpcClient(url, connect_timeout=30).call("get_status", {}))
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
    assert done.returncode == 1 and "did not start" in done.stderr and "in use" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1  # one line (it was the log's tail)


def _flags(command: str) -> set[str]:
    import typer.main

    from mcpkit.archive.cli import app

    group = typer.main.get_command(app)
    found = group.commands[command]  # type: ignore[attr-defined]
    return {opt for p in found.params if p.param_type_name == "option" for opt in p.opts}


def test_start_takes_every_serve_option() -> None:
    """start once rebuilt serve's argv by hand and lacked --trace and --max-message-bytes."""
    assert _flags("serve") <= _flags("start")
    assert _flags("start") - _flags("serve") == {"--ready-timeout", "--lang"}  # start's own lines


def test_the_spec_survives_its_trip_to_the_child() -> None:
    from mcpkit.archive import daemon
    from mcpkit.archive.cli import SPEC_COMMAND
    from mcpkit.archive.daemon import ServeSpec
    from mcpkit.archive.embedders import EmbedEndpoint
    from mcpkit.archive.limits import InputLimits
    from mcpkit.archive.rpc import RpcServerOptions

    spec = ServeSpec(
        db="/tmp/a.db",
        server=RpcServerOptions(
            host="::1", port=9, token="t", allowed_origins=("http://a",), max_message_bytes=4096, trace=True
        ),
        limits=InputLimits(max_text_chars=7),
        create=True,
        exact=True,
        endpoint=EmbedEndpoint("http://e/v1", "sk-secret"),
    )
    assert ServeSpec.from_json(spec.to_json()) == spec
    assert spec.url == "ws://[::1]:9"
    assert "sk-secret" not in repr(spec) and "host=" in repr(spec)  # secrets stay out of logs
    assert "token=" not in repr(spec)
    assert SPEC_COMMAND == daemon.SPEC_COMMAND


def test_start_with_trace_and_a_message_limit(sample_db: Path, tmp_path: Path) -> None:
    """Every serve option reaches the background server: --trace logs the messages, the
    --max-message-bytes limit refuses a bigger request, and the token stays out of argv."""
    from mcpkit.errors import JsonRpcError

    port = free_port()
    url = f"ws://127.0.0.1:{port}"
    state = tmp_path / "state"
    env = {"MCPKIT_ARCHIVE_STATE": str(state), "MCPKIT_ARCHIVE_TOKEN": "tok-in-env"}
    started = cli(
        "start", "--port", str(port), "--db", str(sample_db), "--trace", "--max-message-bytes", "2048",
        env=env,
    )  # fmt: skip
    assert started.returncode == 0, started.stderr
    try:
        pid = json.loads((state / "archive-server.pid").read_text())["pid"]
        assert b"tok-in-env" not in Path(f"/proc/{pid}/cmdline").read_bytes()

        async def exchange() -> None:
            client = RpcClient(url, token="tok-in-env", connect_timeout=30)
            try:
                assert (await client.call("get_status", {}))["ready"] is True
                with pytest.raises(JsonRpcError) as refused:
                    await client.call("search_posts_by_text", {"search_term": "x" * 4000})
                assert refused.value.code == -32600
            finally:
                await client.aclose()

        asyncio.run(exchange())
    finally:
        assert cli("stop", env=env).returncode == 0
    log = (state / "archive-server.log").read_text()
    assert "<- " in log and "get_status" in log  # --trace reached the child


def test_the_token_comes_from_a_variable_never_argv(tmp_path: Path) -> None:
    """As for the gateway: --token-env names the variable; one unset is a usage error."""
    assert "--token" not in _flags("serve") and "--token-env" in _flags("start")
    env = {"MCPKIT_ARCHIVE_STATE": str(tmp_path)}
    done = cli("start", "--host", "0.0.0.0", "--token-env", "NO_SUCH_TOKEN_VAR", env=env)
    assert done.returncode == 2 and "NO_SUCH_TOKEN_VAR" in done.stderr
