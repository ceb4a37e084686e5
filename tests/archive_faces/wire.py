"""Raw WebSocket helpers for tests: speak JSON-RPC by hand so the bytes on the wire are checked."""

from __future__ import annotations

import json
from typing import Any

from websockets.asyncio.client import ClientConnection, connect


async def raw_connect(url: str, **kwargs: Any) -> ClientConnection:
    return await connect(url, compression=None, max_size=None, **kwargs)


async def send_json(ws: ClientConnection, obj: Any) -> None:
    await ws.send(json.dumps(obj, ensure_ascii=False))


async def recv_json(ws: ClientConnection) -> Any:
    return json.loads(await ws.recv())


async def rpc(ws: ClientConnection, method: str, params: Any = None, req_id: Any = 1) -> Any:
    """One request, one answer (the caller checks the envelope)."""
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": req_id, "method": method}
    if params is not None:
        msg["params"] = params
    await send_json(ws, msg)
    return await recv_json(ws)
