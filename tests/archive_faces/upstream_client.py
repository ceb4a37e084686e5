"""A minimal client that speaks exactly as upstream twilog-search's clients do.

Written from the description of upstream's ``BaseEmbedClient._send_request`` (Python) and the
MCP wrapper's ``sendWebSocketRequest`` (Node): a new connection per request, an integer id
from a global counter, ``params`` always present, ``ensure_ascii=False``; answers must carry
``jsonrpc: "2.0"`` and the same id; a message without ``more`` is the whole answer, otherwise
chunks are collected until ``more`` is false; then the connection is closed. No Origin, no
token: that is how upstream's clients connect.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

import websockets

_ids = itertools.count(1)


async def upstream_send_request(url: str, method: str, params: dict[str, Any] | None = None) -> Any:
    ws = await websockets.connect(url)
    try:
        req_id = next(_ids)
        await ws.send(
            json.dumps(
                {"jsonrpc": "2.0", "id": req_id, "method": method, "params": params or {}}, ensure_ascii=False
            )
        )
        results: list[Any] = []
        while True:
            data = json.loads(await ws.recv())
            if data.get("jsonrpc") != "2.0":
                raise RuntimeError("server does not speak JSON-RPC 2.0")
            if data.get("id") != req_id:
                raise RuntimeError("answer with a wrong id")
            if "error" in data:
                raise RuntimeError(f"[{data['error']['code']}] {data['error']['message']}")
            if "result" not in data:
                raise RuntimeError("Invalid JSON-RPC response")
            more = data.get("more")
            if more is None:
                if results:
                    raise RuntimeError("'more' missing in a streamed answer")
                return data["result"]
            results.append(data["result"])
            if not more:
                return results
    finally:
        await ws.close()


def upstream_vector_search_merge(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    """Upstream's ``TwilogClient.vector_search``: the first chunk with every chunk's data joined."""
    first = dict(chunks[0])
    first["data"] = [pair for chunk in chunks for pair in chunk["data"]]
    return first
