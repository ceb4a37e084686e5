"""Helpers for the gateway tests: real downstream command lines, config files, a gateway child."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from mcpkit.client import ClientHandlers, ServerConfig, Session, SessionOptions
from tests.support.env import THIRD_PARTY, require

HERE = Path(__file__).resolve().parent
FLAKY = HERE / "fixtures" / "flaky_server.py"
TIME = THIRD_PARTY / "venv" / "bin" / "mcp-server-time"
FETCH = THIRD_PARTY / "venv" / "bin" / "mcp-server-fetch"
EVERYTHING = THIRD_PARTY / "node" / "node_modules" / ".bin" / "mcp-server-everything"
SAMPLE_CSV = Path(__file__).resolve().parents[2] / "src" / "mcpkit" / "archive" / "data" / "sample_twilog.csv"

# clientInfo.name a real client sends, for each profile (openai-strict: forced, no client sends it)
CLIENT_OF = {
    "mcp-spec": "mcp-inspector",
    "claude-desktop-2025": "claude-ai",
    "claude": "claude-code",
    "openai": "codex-mcp-client",
    "openai-strict": None,
    "gemini": "gemini-cli-mcp-client",
    "cursor": "cursor-vscode",
    "vscode": "Visual Studio Code",
}


INITIALIZE: dict[str, Any] = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}


def wait_port(port: int, timeout: float = 60) -> None:
    """Until something accepts connections on ``port`` (RuntimeError after ``timeout``)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on port {port}")


def flaky(*flags: str) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(FLAKY), *flags]}


def time_server() -> dict[str, Any]:
    require(TIME.exists(), "mcp-server-time is not installed (bash scripts/third-party.sh)")
    return {"command": str(TIME)}


def fetch_server() -> dict[str, Any]:
    require(FETCH.exists(), "mcp-server-fetch is not installed (bash scripts/third-party.sh)")
    return {"command": str(FETCH)}


def everything_server() -> dict[str, Any]:
    require(EVERYTHING.exists(), "server-everything is not installed (bash scripts/third-party.sh)")
    return {"command": str(EVERYTHING), "args": ["stdio"]}


def archive_server(db: Path) -> dict[str, Any]:
    return {"command": sys.executable, "args": ["-m", "mcpkit", "archive", "mcp", "--db", str(db)]}


def make_archive_db(directory: Path) -> Path:
    """A small demo archive (the shipped sample CSV), made with the archive's own CLI."""
    db = directory / "demo.db"
    subprocess.run(
        [sys.executable, "-m", "mcpkit", "archive", "import", "--db", str(db), str(SAMPLE_CSV)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    return db


def write_config(path: Path, servers: dict[str, Any], gateway: dict[str, Any] | None = None) -> Path:
    data: dict[str, Any] = {"mcpServers": servers}
    if gateway:
        data["gateway"] = gateway
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def gateway_argv(config: Path, *flags: str) -> list[str]:
    return [sys.executable, "-m", "mcpkit", "gateway", "--config", str(config), *flags]


def gateway_env() -> dict[str, str]:
    return {"MCPKIT_LOG": os.environ.get("MCPKIT_LOG", "warning")}


@asynccontextmanager
async def gateway_session(
    config: Path,
    *flags: str,
    client_name: str | None = "claude-code",
    on_notification: Callable[[str, dict[str, Any]], Awaitable[None]] | None = None,
    timeout: float = 60,
    handlers: ClientHandlers | None = None,
) -> AsyncIterator[Session]:
    """A real client session to ``mcpkit gateway`` started as a child process."""
    server = ServerConfig(name="gateway", command=gateway_argv(config, *flags), env=gateway_env())
    info = {"name": client_name, "version": "1.0"} if client_name else None
    async with Session(
        server,
        SessionOptions(
            timeout=timeout,
            connect_timeout=120,
            raise_on_error=False,
            client_info=info,
            on_notification=on_notification,
            handlers=handlers,
        ),
    ) as session:
        yield session


def run_cli(*args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcpkit", *args], capture_output=True, text=True, timeout=timeout, check=False
    )
