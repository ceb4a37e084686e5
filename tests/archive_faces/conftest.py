"""Fixtures for the archive faces: real servers on real loopback sockets, a real sample DB, the CLI in process."""

from __future__ import annotations

import socket
import traceback
from collections.abc import AsyncIterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mcpkit.archive.rpc import RpcServer, RpcServerOptions
from tests.archive_faces.tiny_api import TinyAPI


@pytest.fixture
def tiny_api() -> TinyAPI:
    return TinyAPI()


@pytest.fixture
async def tiny_server(tiny_api: TinyAPI) -> AsyncIterator[RpcServer]:
    async with RpcServer(tiny_api, RpcServerOptions(port=0)) as server:
        yield server


def sample_csv() -> Path:
    return Path(str(resources.files("mcpkit.archive") / "data" / "sample_twilog.csv"))


@pytest.fixture(scope="session")
def sample_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shipped sample archive, imported and embedded with the default model (real data path)."""
    from mcpkit.archive.embedders import create_embedder
    from mcpkit.archive.embedding import embed_missing
    from mcpkit.archive.importers import import_csv
    from mcpkit.archive.store import Store

    db = tmp_path_factory.mktemp("archive") / "sample.db"
    store = Store(db)
    try:
        import_csv(sample_csv(), store)
        embed_missing(store, "content", create_embedder(None))
    finally:
        store.close()
    return db


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass(frozen=True)
class Ran:
    """What a command left behind, named as ``subprocess.CompletedProcess`` names it."""

    returncode: int
    stdout: str
    stderr: str


def cli(*args: str, env: dict[str, str] | None = None, input: str | None = None) -> Ran:
    """Run ``mcpkit archive ARGS`` in this process through typer's CliRunner (the same parse,
    exit codes and streams a user gets, without a child interpreter per command).

    An exception the command did not turn into an exit code is written to ``stderr`` as its
    traceback, as a child process would have: tests that demand one line catch it.
    """
    from mcpkit.archive.cli import app

    full_env = {"MCPKIT_ARCHIVE_URL": "ws://127.0.0.1:9", **(env or {})}  # in-process unless told
    done = CliRunner().invoke(app, list(args), env=full_env, input=input, catch_exceptions=True)
    stderr = done.stderr
    if done.exception is not None and not isinstance(done.exception, SystemExit):
        stderr += "".join(traceback.format_exception(done.exception))
    return Ran(done.exit_code, done.stdout, stderr)
