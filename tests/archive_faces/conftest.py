"""Fixtures for the archive faces: real servers on real loopback sockets, a real sample DB."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from importlib import resources
from pathlib import Path

import pytest

from mcpkit.archive.rpc import RpcServer, ServerOptions
from tests.archive_faces.tiny_api import TinyAPI


@pytest.fixture
def tiny_api() -> TinyAPI:
    return TinyAPI()


@pytest.fixture
async def tiny_server(tiny_api: TinyAPI) -> AsyncIterator[RpcServer]:
    async with RpcServer(tiny_api, ServerOptions(port=0)) as server:
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


def cli(
    *args: str, env: dict[str, str] | None = None, input: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``mcpkit archive ARGS`` in a child process (the face as a user runs it)."""
    full_env = dict(os.environ, **(env or {}))
    full_env.setdefault("MCPKIT_ARCHIVE_URL", "ws://127.0.0.1:9")  # nothing listens: in-process unless told
    return subprocess.run(
        [sys.executable, "-m", "mcpkit.archive.cli", *args],
        capture_output=True,
        text=True,
        env=full_env,
        input=input,
        timeout=180,
        check=False,
    )
