"""Streamable HTTP serving: the SDK's transport behind uvicorn, with the checks a URL needs.

A server reachable by URL can be reached by any web page the user opens, so a browser request
with a foreign ``Origin`` is refused (DNS rebinding; the MCP spec says servers MUST validate it):
local origins are always allowed, others only when listed. An optional bearer token keeps
everyone else out, or OAuth (:mod:`mcpkit.server._oauth`) makes the server a protected resource
that accepts only access tokens its authorization server issued for it. ``stateless`` serves each request on its own, so replicas behind an ordinary
load balancer need no shared session state. The process owns SIGINT/SIGTERM (see
:mod:`mcpkit.server._signals`), so shutdown is graceful instead of uvicorn re-raising the signal.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import logging
import signal
from collections.abc import Awaitable, Callable, Iterator, Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import anyio

from mcpkit._sdk import authenticated_user, stdio_line_refused
from mcpkit.server._oauth import (
    OAuthOptions,
    OAuthVerifier,
    TokenRefusedError,
    challenge,
    metadata_document,
    metadata_paths,
)
from mcpkit.server._signals import STOP_SIGNALS, wait_for_stop_signal

__all__ = ["Authorize", "HttpOptions", "HttpRefusal", "answered", "guard", "origin_allowed", "serve_http"]

logger = logging.getLogger("mcpkit.server")

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

_LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "[::1]"})


@dataclass(frozen=True)
class HttpRefusal:
    """Why a request is refused before it reaches the MCP transport: a status and one line."""

    status: int
    message: str
    challenge: str | None = None
    """The ``WWW-Authenticate`` value of a 401, e.g. ``Bearer realm="redmine"``."""


Authorize = Callable[[Mapping[str, str], Mapping[str, Any] | None], Awaitable[HttpRefusal | None]]
"""A server's own check of each HTTP request: its headers (lower-case names) and, with OAuth, the
claims of the access token the guard accepted (``None`` when the request carried none). ``None``
lets it in.

With OAuth and such a check, a request with no ``Authorization`` header is not refused by the
OAuth check but handed to this one without claims (a server may accept credentials of its own
beside tokens, a per-user API key in another header); a 401 it answers without a challenge of
its own carries the OAuth challenge, so an OAuth client still finds the authorization server."""


@dataclass(frozen=True)
class HttpOptions:
    """Where and how to serve: address, path, statelessness and the access checks."""

    host: str = "127.0.0.1"
    port: int = 8000
    path: str = "/mcp"
    stateless: bool = False
    allowed_origins: tuple[str, ...] = ()
    """Origins allowed besides local ones, e.g. ``https://app.example.com`` (``*`` allows any)."""
    bearer_token: str | None = None
    oauth: OAuthOptions | None = None
    """Accept OAuth access tokens issued for this server instead of one fixed bearer token."""
    authorize: Authorize | None = None
    """A check of the server's own (a per-user API key, say), run after the Origin and token."""

    def __post_init__(self) -> None:
        if self.bearer_token and self.oauth is not None:
            raise ValueError("a server takes either a fixed bearer token or OAuth, not both")
        if self.oauth is not None and not self.oauth.checked_here and self.authorize is None:
            raise ValueError("OAuth tokens not checked here need the server's own check (authorize)")


def origin_allowed(origin: str | None, allowed: tuple[str, ...]) -> bool:
    """Whether a request with this ``Origin`` header may use the server.

    No header (a non-browser client) and local origins (any port) pass; other origins must be
    listed exactly, or ``*`` must be listed.
    """
    if not origin:
        return True
    if "*" in allowed or origin.rstrip("/") in {a.rstrip("/") for a in allowed}:
        return True
    parts = urlsplit(origin)
    return parts.scheme in ("http", "https") and (parts.hostname or "") in _LOCAL_HOSTS


async def _refuse(send: Send, status: int, text: str, challenge: str | None = None) -> None:
    headers = [(b"www-authenticate", challenge.encode("latin-1"))] if challenge else []
    body = (text + "\n").encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"text/plain; charset=utf-8"), *headers],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def _metadata(send: Send, document: bytes, method: str) -> None:
    """The RFC 9728 document: public, so any origin may read it (browser clients discover the
    authorization server from it before they have a token)."""
    status = 204 if method == "OPTIONS" else 200
    headers = [
        (b"access-control-allow-origin", b"*"),
        (b"access-control-allow-methods", b"GET, OPTIONS"),
        (b"access-control-allow-headers", b"mcp-protocol-version"),
        (b"cache-control", b"public, max-age=3600"),
    ]
    if status == 200:
        headers.append((b"content-type", b"application/json"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": document if method == "GET" else b""})


def _oauth_check(options: OAuthOptions) -> Callable[[Scope, str, Send], Awaitable[Scope | None]]:
    """The OAuth check of one request: the scope with the SDK's user in it when its token is
    accepted, else ``None`` once the 401/403 (or 503 when the authorization server cannot be
    asked) is sent."""
    verifier = OAuthVerifier(options)

    async def check(scope: Scope, authorization: str, send: Send) -> Scope | None:
        scheme, _, value = authorization.partition(" ")
        if scheme.lower() != "bearer" or not value.strip():
            await _refuse(
                send,
                401,
                f"This server needs an OAuth access token (Authorization: Bearer TOKEN); see {options.metadata_url}",
                challenge(options),
            )
            return None
        try:
            access = await verifier.check(value)
        except TokenRefusedError as exc:
            logger.info("refused a token: %s", exc)
            answer = challenge(options, exc) if exc.status in (401, 403) else None
            await _refuse(send, exc.status, f"Token refused: {exc}.", answer)
            return None
        return {**scope, "user": authenticated_user(access)}

    return check


def guard(app: App, options: HttpOptions) -> App:
    """``app`` behind the Origin check and, when configured, the bearer token and ``authorize``."""
    token = options.bearer_token.encode() if options.bearer_token else None
    oauth = _oauth_check(options.oauth) if options.oauth is not None and options.oauth.checked_here else None
    well_known = metadata_paths(options.oauth) if options.oauth is not None else frozenset()
    document = metadata_document(options.oauth) if options.oauth is not None else b""

    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") != "http":
            await app(scope, receive, send)
            return
        method = str(scope.get("method", "GET"))
        if scope.get("path") in well_known and method in ("GET", "HEAD", "OPTIONS"):
            await _metadata(send, document, method)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        origin = headers.get("origin")
        if not origin_allowed(origin, options.allowed_origins):
            logger.warning("refused a request from origin %r", origin)
            await _refuse(send, 403, f"Origin {origin} is not allowed to use this server.")
            return
        if token is not None:
            given = headers.get("authorization", "")
            scheme, _, value = given.partition(" ")
            if scheme.lower() != "bearer" or not hmac.compare_digest(value.strip().encode(), token):
                await _refuse(
                    send, 401, "This server needs Authorization: Bearer TOKEN.", 'Bearer realm="mcp"'
                )
                return
        claims: Mapping[str, Any] | None = None
        if oauth is not None and ("authorization" in headers or options.authorize is None):
            checked = await oauth(scope, headers.get("authorization", ""), send)
            if checked is None:
                return
            scope = checked
            claims = scope["user"].access_token.claims or {}
        if options.authorize is not None:
            refusal = await options.authorize(headers, claims)
            if refusal is not None:
                answer = refusal.challenge
                if answer is None and refusal.status == 401 and options.oauth is not None:
                    answer = challenge(options.oauth)
                await _refuse(send, refusal.status, refusal.message, answer)
                return
        await app(scope, receive, send)

    return guarded


def answered(app: App) -> App:
    """``app`` with the SDK's answer to a JSON body that is no JSON-RPC message corrected.

    The SDK answers such a body (``[1]``, ``{"jsonrpc": "2.0", "id": 1}``) with -32602 and a
    many-line pydantic dump; JSON-RPC 2.0 says -32600 Invalid Request, and a client shows one
    line. The request body is kept as it passes (no copy, no second parse) and read again only
    to word that answer, with the request's id when it has a readable one.
    """

    async def corrected(scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") != "http" or scope.get("method") != "POST":
            await app(scope, receive, send)
            return
        body: list[bytes] = []
        start: MutableMapping[str, Any] | None = None

        async def keep(message_receive: Receive = receive) -> MutableMapping[str, Any]:
            message = await message_receive()
            if message.get("type") == "http.request":
                body.append(message.get("body", b""))
            return message

        async def watch(message: MutableMapping[str, Any]) -> None:
            nonlocal start
            if message["type"] == "http.response.start" and message.get("status") == 400 and start is None:
                start = message  # held until its body shows whether it needs correcting
                return
            if start is not None and message["type"] == "http.response.body":
                held, start = start, None
                text = _corrected(message.get("body", b""), b"".join(body))
                if text is not None:
                    headers = [(k, v) for k, v in held.get("headers", []) if k.lower() != b"content-length"]
                    headers.append((b"content-length", str(len(text)).encode()))
                    held = {**held, "headers": headers}
                    message = {**message, "body": text}
                await send(held)
            await send(message)

        await app(scope, keep, watch)

    return corrected


def _corrected(answer: bytes, request: bytes) -> bytes | None:
    """The corrected answer to ``request`` when ``answer`` is the SDK's -32602 for a body that
    is no JSON-RPC message, else ``None``."""
    try:
        data = json.loads(answer)
        error = data["error"]
        if error["code"] != -32602 or not str(error["message"]).startswith("Validation error"):
            return None
    except (ValueError, KeyError, TypeError):
        return None
    verdict = stdio_line_refused(request)
    if verdict is None:
        return None
    request_id, code, message = verdict
    fixed = {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
    return json.dumps(fixed, separators=(",", ":")).encode()


def _uvicorn_server_class() -> type[Any]:
    """uvicorn.Server whose own signal capture is switched off: the runner owns SIGINT/SIGTERM.

    uvicorn (>= 0.29) swaps the process's signal handlers during ``serve`` and re-raises the
    signal afterwards, which would kill the process instead of letting it shut down cleanly.
    """
    import uvicorn

    class ServerWithoutSignalHandlers(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            yield

    return ServerWithoutSignalHandlers


async def serve_http(
    lowlevel: Any,
    options: HttpOptions,
    *,
    name: str = "mcp",
    front: Callable[[App, bool], App] | None = None,
    stop: tuple[signal.Signals, ...] = STOP_SIGNALS,
) -> None:
    """Serve the SDK server ``lowlevel`` until one of ``stop`` (SIGINT, SIGTERM, SIGHUP) or
    cancellation, then shut down.

    ``front(app, check_host)`` may wrap the SDK's app behind the access checks, to answer some
    requests itself (the gateway's hot path); ``check_host`` says whether the SDK checks the
    ``Host`` header of this bind, which such a layer must then check too.
    """
    import uvicorn
    from mcp.server.transport_security import TransportSecuritySettings

    # Host checking is the SDK's, for local binds that list no extra origins (the SDK would refuse
    # those origins); Origin checking is ours, for every bind.
    sdk_checks = options.host in _LOCAL_HOSTS and not options.allowed_origins
    app = lowlevel.streamable_http_app(
        streamable_http_path=options.path,
        host=options.host,
        stateless_http=options.stateless,
        transport_security=None
        if sdk_checks
        else TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    served: App = front(app, sdk_checks) if front is not None else app
    config = uvicorn.Config(
        guard(answered(served), options),
        host=options.host,
        port=options.port,
        log_level="warning",
        lifespan="on",
    )
    http = _uvicorn_server_class()(config)

    async def stop_on_signal() -> None:
        await wait_for_stop_signal(stop)
        # A subscriptions/listen stream stays open until its client leaves: end each with its
        # final result first, or uvicorn's graceful shutdown would wait for them forever.
        end_listens = getattr(lowlevel, "end_listens", None)
        if end_listens is not None:
            end_listens()
        http.should_exit = True

    async with anyio.create_task_group() as tg:
        tg.start_soon(stop_on_signal)
        logger.info("serving %s on http://%s:%d%s", name, options.host, options.port, options.path)
        await http.serve()
        tg.cancel_scope.cancel()
