"""The archive's WebSocket server on a real database, on its own event loop in a thread, so a
plain (synchronous, hypothesis-driven or CLI) test can talk to it as any client would."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from mcpkit.archive.api import ArchiveAPI
from mcpkit.archive.rpc import RpcServer, RpcServerOptions


class ThreadServer:
    """The real server on the real API, on its own event loop in a thread, so that a plain
    (hypothesis-driven) test can talk to it with the blocking client."""

    def __init__(self, db: Path, port: int = 0) -> None:
        self.url = ""
        self._ready = threading.Event()
        self._loop = asyncio.new_event_loop()
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._loop.run_until_complete, args=(self._main(db, port),))
        self._thread.start()
        assert self._ready.wait(60)

    async def _main(self, db: Path, port: int) -> None:
        self._stop = asyncio.Event()
        api = ArchiveAPI.open(db)
        try:
            async with RpcServer(api, RpcServerOptions(port=port)) as server:
                self.url = server.url
                self._ready.set()
                await self._stop.wait()
        finally:
            await api.aclose()

    def close(self) -> None:
        assert self._stop is not None
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(30)
        self._loop.close()
