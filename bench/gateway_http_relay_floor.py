"""The floor for any HTTP gateway written in Python, for bench/gateway_overhead.py.

A bare streamable-HTTP relay: uvicorn serves an ASGI app that passes each request (POST,
GET, DELETE; body and MCP headers) to the downstream URL with one pooled httpx2 client and
streams the answer back. No SDK, no JSON parsing, no checks. Whatever this hop costs (one
more HTTP server and one more HTTP client per call, two more process wake-ups), no Python
gateway on the same stack can go below.

    python bench/gateway_http_relay_floor.py PORT DOWNSTREAM_URL
"""

from __future__ import annotations

import sys
from typing import Any

import httpx2
import uvicorn

PASSED = (b"content-type", b"accept", b"mcp-session-id", b"mcp-protocol-version", b"last-event-id")


def relay_app(downstream: str) -> Any:
    client = httpx2.AsyncClient(timeout=None, limits=httpx2.Limits(max_keepalive_connections=64))

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        headers = [(k, v) for k, v in scope["headers"] if k in PASSED]
        request = client.build_request(scope["method"], downstream, headers=headers, content=body)
        response = await client.send(request, stream=True)
        try:
            out = [
                (k.lower().encode(), v.encode())
                for k, v in response.headers.items()
                if k.lower() in {"content-type", "mcp-session-id", "cache-control"}
            ]
            await send({"type": "http.response.start", "status": response.status_code, "headers": out})
            async for chunk in response.aiter_raw():
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b""})
        finally:
            await response.aclose()

    return app


if __name__ == "__main__":
    uvicorn.run(relay_app(sys.argv[2]), host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
