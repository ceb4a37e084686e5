"""A raw HTTP MCP server that speaks both eras, correct by default, with one defect per flag.

``python era_server.py PORT [flags]``. By default it answers the ``initialize`` handshake
(2025-11-25) and the stateless wire (2026-07-28) on ``/mcp``, declares tools with
``listChanged`` and serves ``subscriptions/listen``, refuses a foreign Origin or Host, and
answers -32601 to prompts and resources, which it does not declare. Written without an SDK so
that each flag can break exactly one rule the checker enforces:

--only-2026-listed  discover lists only 2026-07-28 although initialize is served
--ttl-zero          lists say ttlMs 0 and tools are declared without listChanged
--long-ttl          lists say a TTL of 30 days
--no-listen         listChanged declared, subscriptions/listen answers -32601
--lax-envelope      a request without _meta is answered
--bad-discover      discover's ttlMs is negative (a schema violation)
--bad-ping          ping answers {"_meta": 5} (a schema violation on the handshake era)
--no-stateless      2026-07-28 requests are refused (unsupported version)
--quiet-2026        tools.listChanged declared on the handshake only
--no-handshake      only 2026-07-28: initialize is refused
--auth              401 without a bearer token (any token is taken: no audience check),
                    RFC 9728 metadata served at the well-known address
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import uvicorn

MODERN = "2026-07-28"
HANDSHAKE = "2025-11-25"
TOOLS = [
    {
        "name": "echo",
        "description": "Return the text it is given, unchanged, so a client can test a round trip.",
        "inputSchema": {
            "type": "object",
            "properties": {"text": {"type": "string", "description": "What to send back."}},
            "required": ["text"],
            "additionalProperties": False,
        },
        "annotations": {"readOnlyHint": True},
    }
]

FLAGS: argparse.Namespace


def _caps(modern: bool = False) -> dict[str, Any]:
    return {"tools": {"listChanged": not FLAGS.ttl_zero and not (modern and FLAGS.quiet_2026)}}


def _hints() -> dict[str, Any]:
    ttl = 0 if FLAGS.ttl_zero else 30 * 24 * 3600 * 1000 if FLAGS.long_ttl else 60_000
    return {"ttlMs": ttl, "cacheScope": "public", "resultType": "complete"}


def _modern(method: str, params: dict[str, Any]) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """(result, error) of one stateless request."""
    if method == "server/discover":
        versions = [MODERN] if FLAGS.only_2026_listed else [MODERN, HANDSHAKE]
        result = {
            "supportedVersions": versions,
            "capabilities": _caps(modern=True),
            **_hints(),
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "era-server", "version": "1"}},
        }
        if FLAGS.bad_discover:
            result["ttlMs"] = -5
        return result, None
    if method == "tools/list":
        return {"tools": TOOLS, **_hints()}, None
    if method == "tools/call":
        answer, error = _call(params)
        return (None if answer is None else {**answer, "resultType": "complete"}), error
    return None, {"code": -32601, "message": "Method not found"}


def _call(params: dict[str, Any]) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """``tools/call`` of ``echo``, the same on both eras."""
    if params.get("name") != "echo":
        return None, {"code": -32602, "message": f"Unknown tool: {params.get('name')}"}
    arguments = params.get("arguments") or {}
    if set(arguments) - {"text"}:
        return {"content": [{"type": "text", "text": "unexpected argument"}], "isError": True}, None
    return {"content": [{"type": "text", "text": str(arguments.get("text", ""))}]}, None


def _handshake(method: str, params: dict[str, Any]) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    if method == "initialize":
        return {
            "protocolVersion": HANDSHAKE,
            "capabilities": _caps(),
            "serverInfo": {"name": "era-server", "version": "1"},
        }, None
    if method == "ping":
        return ({"_meta": 5} if FLAGS.bad_ping else {}), None
    if method == "tools/list":
        return {"tools": TOOLS}, None
    if method == "tools/call":
        return _call(params)
    return None, {"code": -32601, "message": "Method not found"}


async def _send(send: Any, status: int, body: Any, ctype: str = "application/json", **headers: str) -> None:
    data = b"" if body is None else json.dumps(body).encode()
    raw = [(b"content-type", ctype.encode())] + [
        (k.replace("_", "-").encode(), v.encode()) for k, v in headers.items()
    ]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": data})


async def _listen(receive: Any, send: Any, wanted: dict[str, Any]) -> None:
    """An SSE stream: the acknowledgement, then nothing until the client goes away."""
    await send(
        {"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]}
    )
    ack = {
        "jsonrpc": "2.0",
        "method": "notifications/subscriptions/acknowledged",
        "params": {"notifications": {k: True for k in wanted if k == "toolsListChanged"}},
    }
    await send(
        {"type": "http.response.body", "body": f"data: {json.dumps(ack)}\n\n".encode(), "more_body": True}
    )
    while (await receive())["type"] != "http.disconnect":
        pass  # held open until the client goes away


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
    path = scope["path"]
    if path.startswith("/.well-known/oauth-protected-resource"):
        port = scope["server"][1]
        doc = {
            "resource": f"http://127.0.0.1:{port}/mcp",
            "authorization_servers": [f"http://127.0.0.1:{port}"],
        }
        await _send(send, 200, doc)
        return
    if path.startswith("/.well-known/oauth-authorization-server"):
        port = scope["server"][1]
        await _send(
            send, 200, {"issuer": f"http://127.0.0.1:{port}", "token_endpoint": "http://127.0.0.1/token"}
        )
        return
    if headers.get("origin", "").endswith(".invalid") or not headers.get("host", "").startswith("127.0.0.1"):
        await _send(send, 403, None, "text/plain")
        return
    if FLAGS.auth and not headers.get("authorization", "").lower().startswith("bearer "):
        port = scope["server"][1]
        where = f"http://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp"
        await _send(send, 401, None, "text/plain", www_authenticate=f'Bearer resource_metadata="{where}"')
        return
    if scope["method"] == "DELETE":
        await _send(send, 200, None, "text/plain")
        return
    if scope["method"] != "POST":
        await _send(send, 405, None, "text/plain", allow="POST")
        return
    body = b""
    while True:
        event = await receive()
        body += event.get("body", b"")
        if not event.get("more_body"):
            break
    message = json.loads(body)
    method, params = message.get("method"), message.get("params") or {}
    if "id" not in message:
        await _send(send, 202, None, "text/plain")
        return
    result: dict[str, Any] | None
    error: dict[str, Any] | None
    if headers.get("mcp-protocol-version") == MODERN:
        meta = params.get("_meta") or {}
        if FLAGS.no_stateless:
            error = {
                "code": -32000,
                "message": "Unsupported protocol version",
                "data": {"supported": [HANDSHAKE]},
            }
            await _send(send, 400, {"jsonrpc": "2.0", "id": message["id"], "error": error})
            return
        if "io.modelcontextprotocol/protocolVersion" not in meta and not FLAGS.lax_envelope:
            refusal = {"code": -32602, "message": "_meta lacks io.modelcontextprotocol/protocolVersion"}
            await _send(send, 400, {"jsonrpc": "2.0", "id": message["id"], "error": refusal})
            return
        if method == "subscriptions/listen" and not FLAGS.no_listen:
            await _listen(receive, send, params.get("notifications") or {})
            return
        result, error = _modern(method, params)
    elif FLAGS.no_handshake:
        refused = {"code": -32600, "message": "this server speaks 2026-07-28 only"}
        await _send(send, 400, {"jsonrpc": "2.0", "id": message["id"], "error": refused})
        return
    else:
        result, error = _handshake(method, params)
    answer = {
        "jsonrpc": "2.0",
        "id": message["id"],
        **({"result": result} if error is None else {"error": error}),
    }
    await _send(send, 200, answer)


def main() -> None:
    global FLAGS
    parser = argparse.ArgumentParser()
    parser.add_argument("port", type=int)
    for flag in (
        "only-2026-listed",
        "ttl-zero",
        "long-ttl",
        "no-listen",
        "lax-envelope",
        "bad-discover",
        "bad-ping",
        "no-stateless",
        "quiet-2026",
        "no-handshake",
        "auth",
    ):
        parser.add_argument(f"--{flag}", action="store_true")
    FLAGS = parser.parse_args()
    uvicorn.run(app, host="127.0.0.1", port=FLAGS.port, log_level="error")


if __name__ == "__main__":
    main()
