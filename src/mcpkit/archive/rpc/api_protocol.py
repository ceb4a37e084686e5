"""The shape of the one archive API as the faces see it.

The archive has one noun for what answers its methods: the API. The server and the faces
accept any object with this interface: :class:`mcpkit.archive.api.ArchiveAPI` (in-process, on
the database) or :class:`mcpkit.archive.rpc.client.RpcClient` (the same API over a WebSocket).
Faces never validate params or shape results themselves: that is the API's single job, so a
method cannot answer differently on the command line than over MCP.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Iterable, Mapping
from typing import Any, Protocol, runtime_checkable

Params = Mapping[str, Any] | list[Any] | None
"""Named params, or positional ones in the method's documented order (the API maps them)."""


@runtime_checkable
class ArchiveAPIProtocol(Protocol):
    """What every face needs from the API."""

    def methods(self) -> Iterable[str]: ...

    async def call(self, method: str, params: Params) -> Any:
        """Run ``method``; failures are :class:`~mcpkit.jsonrpc.JsonRpcError` with their code."""
        ...

    def is_streaming(self, method: str) -> bool: ...

    def stream(self, method: str, params: Params) -> Any: ...

    async def aclose(self) -> None:
        """Release what the backend holds (database connections, a socket)."""
        ...


async def open_stream(api: ArchiveAPIProtocol, method: str, params: Params) -> AsyncIterator[Any]:
    """``api.stream(...)`` as an async iterator, whether it is an async generator or a coroutine."""
    produced = api.stream(method, params)
    if inspect.isawaitable(produced):
        produced = await produced
    if not hasattr(produced, "__aiter__"):
        raise TypeError(f"{type(api).__name__}.stream({method!r}) did not return an async iterator")
    iterator: AsyncIterator[Any] = produced
    return iterator
