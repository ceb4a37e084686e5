"""The API of an archive that does not exist yet: a fresh install's MCP server.

A client shows a server that exits before ``initialize`` as dead, with no reason a person can
act on. Started from a bundle or a registry entry before anything was imported, the archive's
MCP server therefore starts and lists its tools, and each call answers with one line saying how
to import an export. Nothing is created: a mistyped path must not become an empty archive. Once
the file exists (an import ran meanwhile), the next call opens it and is answered, without a
restart.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread

from mcpkit.archive import messages as m
from mcpkit.archive.errors import ArchiveMissingError
from mcpkit.archive.messages import Lang
from mcpkit.archive.rpc.api_protocol import ArchiveAPIProtocol, Params, open_stream


class FirstRunAPI:
    """:class:`ArchiveAPIProtocol` over ``path``, opened by ``opener`` once the file exists."""

    def __init__(self, path: Path, opener: Callable[[], ArchiveAPIProtocol]) -> None:
        self.path = path
        self._opener = opener
        self._api: ArchiveAPIProtocol | None = None
        self._lock = anyio.Lock()

    def missing_message(self, lang: Lang = "en") -> str:
        return m.FIRST_RUN_MISSING(lang, path=self.path)

    async def _ready(self) -> ArchiveAPIProtocol:
        async with self._lock:
            if self._api is None:
                if not self.path.exists():
                    raise ArchiveMissingError(m.FIRST_RUN_MISSING, path=self.path)
                self._api = await anyio.to_thread.run_sync(self._opener)
            return self._api

    def methods(self) -> list[str]:
        return list(self._api.methods()) if self._api is not None else []

    async def call(self, method: str, params: Params) -> Any:
        return await (await self._ready()).call(method, params)

    def is_streaming(self, method: str) -> bool:
        return self._api is not None and self._api.is_streaming(method)

    async def stream(self, method: str, params: Params) -> AsyncIterator[Any]:
        async for chunk in await open_stream(await self._ready(), method, params):
            yield chunk

    async def aclose(self) -> None:
        if self._api is not None:
            await self._api.aclose()
