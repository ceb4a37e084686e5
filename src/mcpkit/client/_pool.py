"""Pool: many servers from one config file, addressed as ``"server.tool"``.

Sessions open lazily on first use (a config may list servers you never call) and each lives
in a task the pool owns, so a call from any task can open one and ``aclose`` can still close
them all (anyio scopes must end in the task that began them).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import Any

import anyio
import anyio.abc

from mcpkit.client._config import ServerConfig, load_config
from mcpkit.client._options import SessionOptions
from mcpkit.client._outcome import Outcome
from mcpkit.client._session import Session
from mcpkit.client._wire import Tool
from mcpkit.errors import CallError, ConnectError


class Pool:
    """A set of named servers; ``await pool.call("time.get_current_time", {...})``."""

    def __init__(self, servers: Mapping[str, ServerConfig], options: SessionOptions | None = None) -> None:
        self.servers = dict(servers)
        self._options = options
        self._sessions: dict[str, Session] = {}
        self._locks: dict[str, anyio.Lock] = {name: anyio.Lock() for name in self.servers}
        self._stop = anyio.Event()
        self._tg: anyio.abc.TaskGroup | None = None

    @classmethod
    def from_config(cls, path: str | Path | None, options: SessionOptions | None = None) -> Pool:
        """Read JSON (Claude Desktop style) or TOML. A CLI finds the user's file with
        :func:`~mcpkit.client.default_config_path` (None here: no file was found)."""
        if path is None:
            raise ConnectError("no config file given and none found in the default places")
        return cls(load_config(Path(path)), options)

    @property
    def names(self) -> list[str]:
        return sorted(self.servers)

    async def __aenter__(self) -> Pool:
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close every open session (each kills its server's process group)."""
        if self._tg is None:
            return
        self._stop.set()
        tg, self._tg = self._tg, None
        tg.cancel_scope.shield = True
        await tg.__aexit__(None, None, None)
        self._sessions.clear()

    async def session(self, name: str) -> Session:
        """The open session for ``name``, connecting on first use."""
        if name not in self.servers:
            raise CallError(f"no server {name!r} in the pool (known: {', '.join(self.names) or 'none'})")
        if self._tg is None:
            raise CallError("pool is not open: use 'async with pool'")
        async with self._locks[name]:
            if name not in self._sessions:
                self._sessions[name] = await self._tg.start(self._hold, name)
            return self._sessions[name]

    async def _hold(self, name: str, *, task_status: anyio.abc.TaskStatus[Session]) -> None:
        async with Session(self.servers[name], self._options) as session:
            task_status.started(session)
            await self._stop.wait()

    def split(self, qualified: str) -> tuple[str, str]:
        """``"server.tool"`` -> (server, tool); the longest known server name wins (names may hold dots)."""
        for name in sorted(self.servers, key=len, reverse=True):
            if qualified.startswith(name + ".") and len(qualified) > len(name) + 1:
                return name, qualified[len(name) + 1 :]
        raise CallError(f"{qualified!r} is not 'server.tool' with a known server ({', '.join(self.names)})")

    async def call(self, qualified: str, args: Mapping[str, Any] | None = None, **options: Any) -> Outcome:
        """Call ``"server.tool"``; options as for :meth:`Session.call`."""
        server, tool = self.split(qualified)
        return await (await self.session(server)).call(tool, args, **options)

    async def list_tools(self) -> dict[str, list[Tool]]:
        """Every server's tool definitions, keyed by server name (connects to all of them)."""
        out: dict[str, list[Tool]] = {}
        for name in self.names:
            out[name] = await (await self.session(name)).list_tools()
        return out
