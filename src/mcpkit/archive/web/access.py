"""Who may use the web app, and the headers every answer carries.

The archive is private. The web app takes the archive server's rules (:mod:`mcpkit.archive.rpc.
security`): loopback by default, a token required to bind anywhere else (refused at start
without one), browser origins other than the app's own refused. On a loopback bind the ``Host``
header must name a local host (the MCP SDK's DNS-rebinding rule, ``mcpkit.server.is_local_host``):
a page on an attacker's domain that resolves to 127.0.0.1 cannot read the archive through the
person's browser.

With a token, a request passes with ``Authorization: Bearer TOKEN`` (the JSON mirror, scripts),
with ``?token=TOKEN`` once (the link printed at start; answered with a cookie and a redirect
to the same URL without it), or with that cookie (``HttpOnly``, ``SameSite=Strict``); a
browser without any gets the login form.

Guessing the token is throttled per client address (:class:`LoginThrottle`): after
``FREE_FAILURES`` wrong tokens (the login form, a bearer header or ``?token=``) every request
from that address answers 429 with ``Retry-After`` until the wait is over, the wait doubling
with each further wrong token up to ``MAX_WAIT`` seconds; the right token resets it.

Every answer carries a Content-Security-Policy that allows scripts from the app's own files
only (no inline script, no eval), no remote anything, and no framing.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode

from websockets.datastructures import Headers
from websockets.http11 import Request as HandshakeRequest

from mcpkit.archive.rpc.security import AccessPolicy, is_loopback
from mcpkit.server import is_local_host

__all__ = ["COOKIE", "CSP", "LoginThrottle", "WebAccess"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

COOKIE = "mcpkit_archive"
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; media-src 'self'; "
    "connect-src 'self'; font-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
]
_LOGIN_PATH = "/login"


class LoginThrottle:
    """Wrong tokens per client address, and how long each must wait before the next try.

    The first :attr:`FREE_FAILURES` wrong tokens cost nothing (a typo, a stale bookmark); each
    one after waits twice as long as the one before, from one second up to :attr:`MAX_WAIT`.
    At most :attr:`MAX_CLIENTS` addresses are remembered (the oldest forgotten first), so a
    flood of addresses cannot grow the table without bound."""

    FREE_FAILURES = 5
    MAX_WAIT = 300.0
    MAX_CLIENTS = 4096

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._clients: OrderedDict[str, tuple[int, float]] = OrderedDict()  # failures, until

    def wait(self, client: str) -> int:
        """Whole seconds ``client`` must still wait (0: it may try now)."""
        with self._lock:
            failures, until = self._clients.get(client, (0, 0.0))
        left = until - self._clock()
        return math.ceil(left) if failures > self.FREE_FAILURES - 1 and left > 0 else 0

    def failed(self, client: str) -> None:
        with self._lock:
            failures = self._clients.pop(client, (0, 0.0))[0] + 1
            extra = failures - self.FREE_FAILURES
            wait = 0.0 if extra < 0 else min(self.MAX_WAIT, 2.0**extra)
            self._clients[client] = (failures, self._clock() + wait)
            while len(self._clients) > self.MAX_CLIENTS:
                self._clients.popitem(last=False)

    def succeeded(self, client: str) -> None:
        with self._lock:
            self._clients.pop(client, None)


@dataclass(frozen=True)
class WebAccess:
    """The checks for one bind: Host (loopback binds), Origin, and the token when set."""

    host: str
    port: int
    policy: AccessPolicy
    throttle: LoginThrottle = field(default_factory=LoginThrottle, compare=False)

    @classmethod
    def for_bind(
        cls, host: str, port: int, token: str | None, allowed_origins: tuple[str, ...] = ()
    ) -> WebAccess:
        """Refuses (``SecurityConfigError``) a non-loopback bind without a token; the app's
        own origins are allowed besides ``allowed_origins``."""
        names = ["127.0.0.1", "localhost", "[::1]"] if is_loopback(host) else [_bracketed(host)]
        own = [f"http://{name}:{port}" for name in names]
        return cls(host, port, AccessPolicy.for_bind(host, token, [*own, *allowed_origins]))

    @property
    def token(self) -> str | None:
        return self.policy.token

    def cookie_value(self) -> str:
        """What the session cookie holds: a keyed hash of the token, never the token itself."""
        assert self.token is not None
        return hmac.new(self.token.encode(), b"mcpkit archive web session", hashlib.sha256).hexdigest()

    def _host_ok(self, headers: dict[str, str]) -> bool:
        if not is_loopback(self.host):
            return True  # reachable by name from elsewhere: the token is the protection
        return is_local_host(headers.get("host", ""))

    def _token_state(self, scope: Scope, headers: dict[str, str]) -> str:
        """``ok``, ``query`` (the right token in the URL: set the cookie), ``missing``, or
        ``wrong`` (a token given, in a bearer header or the URL, that is not the token)."""
        if self.token is None:
            return "ok"
        cookies = _cookies(headers.get("cookie", ""))
        if hmac.compare_digest(cookies.get(COOKIE, ""), self.cookie_value()):
            return "ok"
        path = scope.get("path", "/")
        query = scope.get("query_string", b"").decode("latin-1")
        bearer_only = Headers({k: v for k, v in headers.items() if k == "authorization"})
        if self.policy.token_ok(HandshakeRequest(path, bearer_only)):
            return "ok"
        if self.policy.token_ok(HandshakeRequest(f"{path}?{query}", Headers())):
            return "query"
        given = "authorization" in headers or "token" in dict(parse_qsl(query))
        return "wrong" if given else "missing"

    def wrap(self, app: App) -> App:
        """``app`` behind the checks, every answer with the security headers."""

        async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
            if scope.get("type") != "http":
                await app(scope, receive, send)
                return
            headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}

            async def send_secured(message: Message) -> None:
                if message["type"] == "http.response.start":
                    message["headers"] = [*message.get("headers", []), *SECURITY_HEADERS]
                await send(message)

            if not self._host_ok(headers):
                await _plain(send_secured, 421, "This server answers only to localhost, 127.0.0.1 or [::1].")
                return
            if not self.policy.origin_ok(headers.get("origin")):
                await _plain(send_secured, 403, f"Origin {headers.get('origin')} may not use this archive.")
                return
            # the app's own CSS and script are the package's files, not archive data
            public = str(scope.get("path", "")).startswith("/static/")
            client = str((scope.get("client") or ("",))[0])
            if self.token is not None and not public:
                wait = self.throttle.wait(client)
                if wait:
                    await _plain(
                        send_secured,
                        429,
                        f"Too many wrong tokens from this address: try again in {wait} s.",
                        [(b"retry-after", str(wait).encode())],
                    )
                    return
            if scope.get("path") == _LOGIN_PATH and self.token is not None:
                await self._login(scope, receive, send_secured, client)
                return
            state = "ok" if public else self._token_state(scope, headers)
            if state == "wrong":
                self.throttle.failed(client)
                state = "missing"
            elif state == "query" or (
                state == "ok" and self.token is not None and "authorization" in headers
            ):
                self.throttle.succeeded(client)
            if state == "query":
                pairs = [
                    (k, v) for k, v in parse_qsl(scope.get("query_string", b"").decode()) if k != "token"
                ]
                target = scope.get("path", "/") + (f"?{urlencode(pairs)}" if pairs else "")
                await _redirect(send_secured, target, self._set_cookie())
                return
            if state == "missing":
                if str(scope.get("path", "")).startswith("/api/") or "text/html" not in headers.get(
                    "accept", ""
                ):
                    await _plain(send_secured, 401, "This archive needs Authorization: Bearer TOKEN.")
                else:
                    await _login_form(send_secured, scope, 401)
                return
            await app(scope, receive, send_secured)

        return guarded

    def _set_cookie(self) -> bytes:
        return f"{COOKIE}={self.cookie_value()}; Path=/; HttpOnly; SameSite=Strict".encode()

    async def _login(self, scope: Scope, receive: Receive, send: Send, client: str) -> None:
        if scope.get("method") != "POST":
            await _login_form(send, scope, 200)
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if len(body) > 8192:
                await _plain(send, 413, "The login form is too large.")
                return
            if not message.get("more_body"):
                break
        fields = dict(parse_qsl(body.decode("utf-8", "replace")))
        given = fields.get("token", "")
        target = fields.get("next", "/")
        if not target.startswith("/") or target.startswith("//"):
            target = "/"
        assert self.token is not None
        if hmac.compare_digest(given.encode(), self.token.encode()):
            self.throttle.succeeded(client)
            await _redirect(send, target, self._set_cookie())
        else:
            self.throttle.failed(client)
            await _login_form(send, scope, 401, wrong=True)


def _bracketed(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def _cookies(raw: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in raw.split(";"):
        name, _, value = part.strip().partition("=")
        if name:
            out[name] = value
    return out


async def _plain(send: Send, status: int, text: str, extra: list[tuple[bytes, bytes]] | None = None) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"text/plain; charset=utf-8"), *(extra or [])],
        }
    )
    await send({"type": "http.response.body", "body": (text + "\n").encode()})


async def _redirect(send: Send, target: str, cookie: bytes) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": 303,
            "headers": [
                (b"location", target.encode()),
                (b"set-cookie", cookie),
                (b"cache-control", b"no-store"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": b""})


async def _login_form(send: Send, scope: Scope, status: int, *, wrong: bool = False) -> None:
    """The one page shown before login: a labelled password field, no script."""
    from markupsafe import escape

    path = str(scope.get("path", "/"))
    query = scope.get("query_string", b"").decode("latin-1")
    target = "/" if path == _LOGIN_PATH else path + (f"?{query}" if query else "")
    note = '<p role="alert">That token is not right.</p>' if wrong else ""
    page = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="color-scheme" content="light dark"><title>Archive: log in</title>'
        '<link rel="stylesheet" href="/static/app.css"></head><body><main id="main" class="login">'
        "<h1>Log in to the archive</h1>"
        f"{note}"
        '<form method="post" action="/login"><label for="token">Access token</label>'
        '<input id="token" name="token" type="password" autocomplete="current-password" required>'
        f'<input type="hidden" name="next" value="{escape(target)}">'
        '<button type="submit">Log in</button></form></main></body></html>'
    )
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"text/html; charset=utf-8")],
        }
    )
    await send({"type": "http.response.body", "body": page.encode()})
