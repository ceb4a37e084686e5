"""The rate limit on the HTTP face: a caller past its limit gets 429 with ``Retry-After``.

Sits behind the access checks (the caller is known) and in front of the hot path and the SDK's
app, so every ``tools/call`` is counted once, whichever of them would answer it. The caller is
the OAuth access token's subject (``sub``), else its client id; without OAuth (no token, or the
one shared ``--token``), the client's address. Nothing is read when no limit is configured.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from mcpkit.gateway.controls import retry_after
from mcpkit.gateway.http_front import App, Receive, Scope, Send, _read_body, _replaying

if TYPE_CHECKING:
    from mcpkit.gateway.core import Gateway


def limit_calls(app: App, gateway: Gateway, *, path: str) -> App:
    """``app`` with each caller's ``tools/call`` requests counted against ``gateway.limiter``."""

    async def limited(scope: Scope, receive: Receive, send: Send) -> None:
        limiter = gateway.limiter
        if (
            not limiter.active
            or scope.get("type") != "http"
            or scope.get("method") != "POST"
            or scope.get("path") != path
        ):
            await app(scope, receive, send)
            return
        body, complete = await _read_body(receive)
        calls = _calls(body) if complete else 0
        waits = [w for w in (limiter.take(caller_of(scope)) for _ in range(calls)) if w is not None]
        if waits:
            await _too_many(send, limiter.refusal(max(waits)), max(waits))
            return
        await app(scope, _replaying(body, complete, receive), send)

    return limited


def caller_of(scope: Scope) -> str:
    """Who is calling: the token's subject or client id, else the client's address."""
    user = scope.get("user")
    access = getattr(user, "access_token", None)
    if access is not None:
        claims = getattr(access, "claims", None) or {}
        subject = claims.get("sub") if isinstance(claims, dict) else None
        if isinstance(subject, str) and subject:
            return f"sub:{subject}"
        client_id = getattr(access, "client_id", None)
        if isinstance(client_id, str) and client_id:
            return f"client:{client_id}"
    client = scope.get("client")
    return f"addr:{client[0]}" if client else "addr:?"


def _calls(body: bytes) -> int:
    """How many ``tools/call`` requests the body holds (a batch counts each)."""
    try:
        message: Any = json.loads(body)
    except ValueError:
        return 0  # the SDK's path answers it with a parse error
    messages = message if isinstance(message, list) else [message]
    return sum(1 for m in messages if isinstance(m, dict) and m.get("method") == "tools/call")


async def _too_many(send: Send, text: str, wait: float) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": 429,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"retry-after", str(retry_after(wait)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": (text + "\n").encode()})
