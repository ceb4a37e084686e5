"""``archive start`` fails in one line when its own server does not come up, and every query
names the archive that answered it (a server serving another archive than
``$MCPKIT_ARCHIVE_DB`` is not used for it)."""

from __future__ import annotations

import json
import socket
import traceback
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mcpkit.archive.importers import import_csv
from mcpkit.archive.store import Store
from tests.archive.helpers import row, write_csv
from tests.support.archive_thread import ThreadServer


def make_db(folder: Path, name: str, posts: int) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    store = Store(folder / f"{name}.db")
    try:
        rows = [row(i, name, f"{name} post {i} about tea") for i in range(1, posts + 1)]
        import_csv(write_csv(folder / f"{name}.csv", rows), store)
    finally:
        store.close()
    return folder / f"{name}.db"


def run_cli(*args: str, env: dict[str, str]) -> tuple[int, str, str]:
    from mcpkit.archive.cli import app

    done = CliRunner().invoke(app, list(args), env=env)
    stderr = done.stderr
    if done.exception is not None and not isinstance(done.exception, SystemExit):
        stderr += "".join(traceback.format_exception(done.exception))
    return done.exit_code, done.stdout, stderr


@pytest.fixture
def port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def env(tmp_path: Path, port: int) -> dict[str, str]:
    return {
        "MCPKIT_ARCHIVE_STATE": str(tmp_path / "state"),
        "MCPKIT_ARCHIVE_URL": f"ws://127.0.0.1:{port}",
        "MCPKIT_ARCHIVE_DB": "",
    }


@pytest.fixture
def other_server(tmp_path: Path, port: int) -> Iterator[tuple[ThreadServer, Path]]:
    """Another archive (7 posts) already served on the port."""
    db = make_db(tmp_path / "other", "other", 7)
    server = ThreadServer(db, port)
    yield server, db
    server.close()


@pytest.mark.slow
def test_start_fails_in_one_line_when_the_port_is_taken(
    tmp_path: Path, port: int, env: dict[str, str]
) -> None:
    """A plain socket holds the port: the server dies on "address already in use"; start says
    so in one line and exits 1 (it used to exit 0), and no pid file is left behind."""
    mine = make_db(tmp_path / "mine", "mine", 3)
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", port))
        holder.listen()
        code, out, err = run_cli("start", "--port", str(port), "--db", str(mine), env=env)
    assert code == 1 and not out
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "the archive server did not start" in lines[0]
    assert "address already in use" in lines[0].lower()
    assert not (tmp_path / "state" / "archive-server.pid").exists()
    code, out, _ = run_cli("status", env=env)
    assert code == 1 and "not running" in out


@pytest.mark.slow
def test_start_refuses_when_another_archive_answers(
    tmp_path: Path, port: int, env: dict[str, str], other_server: tuple[ThreadServer, Path]
) -> None:
    _, other_db = other_server
    mine = make_db(tmp_path / "mine", "mine", 3)
    code, out, err = run_cli("start", "--port", str(port), "--db", str(mine), env=env)
    assert code == 1 and not out
    assert len(err.strip().splitlines()) == 1, err
    assert f"another archive server answers at ws://127.0.0.1:{port}" in err and str(other_db) in err
    code, out, _ = run_cli("status", env=env)
    assert code == 1
    assert "not running" in out and "another server answers" in out and str(other_db) in out


def test_queries_name_the_archive_and_keep_to_the_named_one(
    tmp_path: Path, env: dict[str, str], other_server: tuple[ThreadServer, Path]
) -> None:
    _, other_db = other_server
    mine = make_db(tmp_path / "mine", "mine", 3)
    # no archive named: the server's is used, and named
    code, out, err = run_cli("stats", "--json", env=env)
    assert code == 0, err
    assert f"(db {other_db})" in err and json.loads(out)["total_posts"] == 7
    # $MCPKIT_ARCHIVE_DB names another: that one is searched, and the line says why
    code, out, err = run_cli("stats", "--json", env={**env, "MCPKIT_ARCHIVE_DB": str(mine)})
    assert code == 0, err
    assert f"serves {other_db}, not $MCPKIT_ARCHIVE_DB ({mine}); searching in-process" in err
    assert json.loads(out)["total_posts"] == 3
    # the same archive named: the server is used
    code, out, err = run_cli("stats", "--json", env={**env, "MCPKIT_ARCHIVE_DB": str(other_db)})
    assert code == 0 and "using the archive server" in err and json.loads(out)["total_posts"] == 7
