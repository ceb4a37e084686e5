"""A small but real API object with the ArchiveAPI interface, for testing the RPC layer alone.

It is not a stand-in for the engine's results: it has its own behaviour (a notebook of
strings, arithmetic with validation, a gate that blocks until released, counted streams), so
every test of the server checks real effects — pipelining is proven by one request unblocking
another, notifications by their side effect, disconnects by the stream being closed.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from typing import Any

from mcpkit.jsonrpc import JsonRpcError

TinyError = JsonRpcError
"""The server puts code/message/data on the wire."""


class TinyAPI:
    def __init__(self) -> None:
        self.notes: list[str] = []
        self.started: list[str] = []  # every call, in the order the server started them
        self.gate = asyncio.Event()
        self.streams_opened = 0
        self.streams_closed = 0
        self.stream_started = asyncio.Event()

    def methods(self) -> list[str]:
        return ["add", "note", "notes", "wait_gate", "open_gate", "boom", "count", "endless", "big"]

    def is_streaming(self, method: str) -> bool:
        return method in ("count", "endless")

    @staticmethod
    def _args(params: Mapping[str, Any] | list[Any] | None) -> dict[str, Any]:
        if params is None:
            return {}
        if isinstance(params, list):
            return dict(enumerate(params))  # type: ignore[arg-type]
        return dict(params)

    async def call(self, method: str, params: Mapping[str, Any] | list[Any] | None) -> Any:
        args = self._args(params)
        self.started.append(method)
        if method == "add":
            a, b = args.get("a", args.get(0)), args.get("b", args.get(1))
            if not isinstance(a, int) or not isinstance(b, int):
                raise TinyError(-32602, "Invalid params: a and b must be integers")
            return a + b
        if method == "note":
            self.notes.append(str(args.get("text", "")))
            return len(self.notes)
        if method == "notes":
            return list(self.notes)
        if method == "wait_gate":
            await self.gate.wait()
            return "passed"
        if method == "open_gate":
            self.gate.set()
            return "opened"
        if method == "boom":
            raise RuntimeError("secret internal detail")
        if method == "big":
            return "x" * int(args.get("n", 10))
        raise TinyError(-32601, f"Method not found: {method}")

    async def aclose(self) -> None:
        return None

    async def stream(self, method: str, params: Mapping[str, Any] | list[Any] | None) -> AsyncIterator[Any]:
        args = self._args(params)
        self.streams_opened += 1
        try:
            if method == "count":
                n = int(args.get("n", 3))
                for i in range(n):
                    yield {
                        "data": [[i, 1.0 - i / 100]],
                        "chunk": i + 1,
                        "total_chunks": n,
                        "start_rank": i + 1,
                    }
            elif method == "endless":
                i = 0
                while True:
                    yield {"data": [[i, 0.5]], "chunk": i + 1}
                    self.stream_started.set()
                    i += 1
                    await asyncio.sleep(0.01)
            else:
                yield await self.call(method, params)
        finally:
            self.streams_closed += 1
