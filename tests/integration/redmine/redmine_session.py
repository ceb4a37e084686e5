"""Helpers for the Redmine integration tests: where Redmine is, and MCP sessions over real stdio.

``scripts/redmine-up.sh`` starts Redmine and writes its address and keys to ``.redmine/env``
(or ``$REDMINE_ENV_FILE``). Without it these tests skip on a developer machine and fail in CI.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.request
import xml.etree.ElementTree as ET
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.support.env import REPO, require


@dataclass(frozen=True)
class RedmineEnv:
    url: str
    admin_key: str
    user_key: str


def _read_env_file() -> dict[str, str]:
    path = Path(os.environ.get("REDMINE_ENV_FILE") or REPO / ".redmine" / "env")
    if not path.is_file():
        return {}
    out: dict[str, str] = {}
    for line in path.read_text().splitlines():
        name, sep, value = line.partition("=")
        if sep:
            out[name.strip()] = value.strip()
    return out


def _answers(url: str, key: str) -> bool:
    request = urllib.request.Request(f"{url}/users/current.json", headers={"X-Redmine-API-Key": key})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return bool(response.status == 200)
    except OSError:
        return False


def locate_redmine() -> RedmineEnv:
    values = _read_env_file()
    url, key, user_key = (
        values.get("REDMINE_URL"),
        values.get("REDMINE_API_KEY"),
        values.get("REDMINE_USER_API_KEY"),
    )
    require(bool(url and key and user_key), "Redmine is not set up: run scripts/redmine-up.sh")
    assert url and key and user_key
    require(_answers(url, key), f"Redmine at {url} does not answer: run scripts/redmine-up.sh")
    return RedmineEnv(url=url, admin_key=key, user_key=user_key)


def rest(env: RedmineEnv, method: str, path: str, body: Any = None, *, key: str | None = None) -> Any:
    """A raw REST call for test set-up (bulk data the tools are then asked about)."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(
        f"{env.url}/{path}",
        data=data,
        method=method,
        headers={"X-Redmine-API-Key": key or env.admin_key, "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        raw = response.read()
    return json.loads(raw) if raw.strip() else {}


CALLED: set[str] = set()
"""Every tool any integration test called, for the check that every listed tool was exercised."""
LISTED: set[str] = set()


def server_args() -> list[str]:
    """``mcpkit redmine mcp``, as a user's MCP client would start it."""
    return ["-m", "mcpkit", "redmine", "mcp"]


@dataclass
class Session:
    """An SDK client session with helpers that check every result on the way."""

    client: ClientSession
    secrets: tuple[str, ...]
    called: set[str] = field(default_factory=set)

    async def raw(self, name: str, args: Mapping[str, Any] | None = None) -> tuple[bool, str]:
        result = await self.client.call_tool(name, dict(args or {}))
        self.called.add(name)
        CALLED.add(name)
        text = "".join(getattr(c, "text", "") for c in result.content)
        for secret in self.secrets:
            assert secret not in text, f"{name} leaked a key"
        return bool(result.is_error), text

    async def ok(self, name: str, args: Mapping[str, Any] | None = None) -> ET.Element:
        """Call a tool that must succeed; return its parsed XML."""
        is_error, text = await self.raw(name, args)
        assert not is_error, f"{name} failed: {text}"
        return ET.fromstring(text.encode("utf-8"))

    async def error(self, name: str, args: Mapping[str, Any] | None = None) -> str:
        """Call a tool that must fail; return its one-line message."""
        is_error, text = await self.raw(name, args)
        assert is_error, f"{name} should have failed: {text[:300]}"
        assert "\n" not in text.strip()
        return text


@asynccontextmanager
async def mcp_session(env: RedmineEnv, **overrides: str) -> AsyncIterator[Session]:
    """Spawn the server as a client would and yield an initialized session."""
    variables = {
        "REDMINE_URL": env.url,
        "REDMINE_API_KEY": env.admin_key,
        "MCPKIT_STRICT": "1",
        "REDMINE_TOOLS": "all",  # every tool; the default list is tested in test_redmine_lean.py
        **overrides,
    }
    params = StdioServerParameters(command=sys.executable, args=server_args(), env=variables, cwd=REPO)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
        await client.initialize()
        yield Session(client, (env.admin_key, env.user_key, overrides.get("REDMINE_API_KEY", env.admin_key)))
