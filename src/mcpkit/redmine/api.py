"""The Redmine REST client: authentication, timeouts, TLS, pagination and error mapping.

Tools never see HTTP: they call :class:`RedmineClient` and get parsed JSON or a
:class:`RedmineError` whose message is one line saying what went wrong and what to do.

Two traps shape this module:

- A Redmine that does not require login serves a *refused* key as the anonymous user with
  200 answers, so a typo in the key silently returns public data. The key is therefore
  checked against ``/users/current.json`` before the first real request, and a refused key
  fails every call until it is fixed.
- The key travels in the ``X-Redmine-API-Key`` header only. A redirect is followed only within
  the same Redmine (a renamed wiki page's old title), never to another address (it would
  forward the header to wherever it points), and every message built
  here passes through :meth:`RedmineClient._scrub` so the key cannot leak into a result or a log.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, quote, unquote, urlencode, urljoin, urlsplit

import anyio

from mcpkit import __version__
from mcpkit.errors import CallError
from mcpkit.redmine.config import RedmineConfig

if TYPE_CHECKING:
    import httpx2

logger = logging.getLogger("mcpkit.redmine")

MAX_PAGE = 100  # Redmine caps ``limit`` at 100 per request
MAX_DOWNLOAD = 20 * 1024 * 1024
KEY_CHECK_SECONDS = 300.0  # how long a key Redmine accepted is trusted without asking again
INT64_MAX = 2**63 - 1  # Redmine's ids are 64-bit at most; a larger number is refused, not sent


class RedmineError(CallError):
    """A Redmine request failed; ``str()`` is the one-line message for the user."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class KeyRefusedError(RedmineError):
    """Redmine does not accept the configured API key (or its REST API is off)."""


def seg(value: object) -> str:
    """One URL path segment: ids pass as they are, anything else is percent-encoded."""
    return quote(str(value), safe="")


@dataclass(frozen=True)
class Page:
    """One page of a Redmine collection with its paging figures."""

    items: list[dict[str, Any]]
    total_count: int
    offset: int
    limit: int


async def read_capped(response: httpx2.Response, max_bytes: int, too_large: Exception) -> bytes:
    """The body of a streamed response, read a chunk at a time and refused with ``too_large`` as
    soon as it passes ``max_bytes``: a missing or lying Content-Length cannot fill memory."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > max_bytes:
            raise too_large
        chunks.append(chunk)
    return b"".join(chunks)


def _errors_of(response: httpx2.Response) -> str:
    """Redmine's 422 body is ``{"errors": [...]}``; join the messages into one line."""
    try:
        body = response.json()
    except ValueError:
        return ""
    errors = body.get("errors") if isinstance(body, dict) else None
    if isinstance(errors, list):
        return "; ".join(" ".join(str(e).split()) for e in errors)[:500]
    return ""


PLAIN_HTTP_REASONS = frozenset(
    {"WRONG_VERSION_NUMBER", "RECORD_LAYER_FAILURE", "PACKET_LENGTH_TOO_LONG", "UNKNOWN_PROTOCOL"}
)
"""What OpenSSL says when the other end answers a TLS handshake in plain HTTP (by version)."""


def _tls_failure(exc: BaseException) -> str | None:
    """``"plain"`` (the port speaks no TLS), ``"verify"`` (the certificate), ``"other"``, or ``None``."""
    import ssl

    seen: BaseException | None = exc
    for _ in range(6):
        if seen is None:
            return None
        if isinstance(seen, ssl.SSLCertVerificationError) or "CERTIFICATE_VERIFY_FAILED" in str(seen):
            return "verify"
        if isinstance(seen, ssl.SSLError):
            return "plain" if seen.reason in PLAIN_HTTP_REASONS else "other"
        seen = seen.__cause__ or seen.__context__
    return None


def _http_client(config: RedmineConfig, transport: httpx2.AsyncBaseTransport | None) -> httpx2.AsyncClient:
    """The connection pool; the key is not a default header but sent per request."""
    import ssl

    import httpx2

    verify: ssl.SSLContext | bool = config.verify_ssl
    if config.verify_ssl and config.ca_bundle is not None:
        verify = ssl.create_default_context(cafile=str(config.ca_bundle))
    return httpx2.AsyncClient(
        base_url=config.url + "/",
        headers={"Accept": "application/json", "User-Agent": f"mcpkit-redmine/{__version__}"},
        timeout=httpx2.Timeout(config.timeout),
        verify=verify,
        follow_redirects=False,
        transport=transport,
    )


MAX_REDIRECTS = 3
"""Redirects within the same Redmine followed for one GET (a renamed page renamed again)."""
MAX_URL_CHARS = 8000
"""Longest request line sent: what nginx (8 KB header buffers) and Puma pass on to Redmine."""


def _url_too_long(what: str, size: int) -> RedmineError:
    """One line for a request whose parameters cannot travel in a URL (a search text of pages)."""
    return RedmineError(
        f"The request for {what} is too long for a URL ({size} characters of parameters, at most "
        f"{MAX_URL_CHARS}); shorten the text"
    )


class _Pool:
    """One connection pool, made on the first request: HTTP and TLS load then, not at start-up.

    A client's ``initialize`` waits for the server's start, and no Redmine request comes before
    a tool call; importing httpx2 and ssl took about a tenth of ``mcpkit redmine mcp``'s start."""

    def __init__(self, config: RedmineConfig, transport: httpx2.AsyncBaseTransport | None) -> None:
        self.config = config
        self.transport = transport
        self.client: httpx2.AsyncClient | None = None

    def get(self) -> httpx2.AsyncClient:
        if self.client is None:
            self.client = _http_client(self.config, self.transport)
        return self.client


class RedmineClient:
    """An async client for one Redmine and one API key.

    Every client made by :meth:`for_key` shares one connection pool with the client it came
    from, so a multi-user HTTP server keeps one pool for all keys. ``transport`` is for tests
    that must not reach a network (property tests feeding thousands of argument combinations);
    everything else talks to a real Redmine.
    """

    def __init__(
        self,
        config: RedmineConfig,
        *,
        transport: httpx2.AsyncBaseTransport | None = None,
        api_key: str | None = None,
        pool: _Pool | None = None,
        switch_user: str | None = None,
        bearer: bool = False,
    ) -> None:
        self.config = config
        self.api_key = config.api_key if api_key is None else api_key
        self.switch_user = switch_user
        """The login an administrator key acts as (``X-Redmine-Switch-User``), single sign-on's way."""
        self.bearer = bearer
        """``api_key`` is an OAuth access token Redmine itself issued, sent as ``Authorization: Bearer``."""
        self._owns_http = pool is None
        self._pool = pool if pool is not None else _Pool(config, transport)
        self._key_ok_until = 0.0
        self._key_lock = anyio.Lock()
        self.current_user: dict[str, Any] | None = None
        self.reference_cache: dict[str, Any] = {}

    def for_key(self, api_key: str) -> RedmineClient:
        """A client for another key on the same connection pool (nothing is checked yet)."""
        return RedmineClient(self.config, api_key=api_key, pool=self._pool)

    def as_user(self, login: str) -> RedmineClient:
        """A client for this (administrator's) key acting as ``login`` through Redmine's
        ``X-Redmine-Switch-User`` header, on the same connection pool (nothing is checked yet)."""
        return RedmineClient(self.config, api_key=self.api_key, pool=self._pool, switch_user=login)

    def for_token(self, token: str) -> RedmineClient:
        """A client for an OAuth access token Redmine issued (Redmine 6.1 and later), sent as
        ``Authorization: Bearer``, on the same connection pool (nothing is checked yet)."""
        return RedmineClient(self.config, api_key=token, pool=self._pool, bearer=True)

    @property
    def _http(self) -> httpx2.AsyncClient:
        """The connection pool every client made by :meth:`for_key` shares."""
        return self._pool.get()

    async def aclose(self) -> None:
        """Close pooled connections (only the client that made the pool closes it)."""
        if self._owns_http and self._pool.client is not None:
            await self._pool.client.aclose()

    def _scrub(self, text: str) -> str:
        """Belt and braces: no message ever carries the key, whatever produced it."""
        for key in {self.api_key, self.config.api_key}:
            if key:
                text = text.replace(key, "***")
        return text

    # -- the key check -------------------------------------------------------------------------

    async def check_key(self) -> dict[str, Any]:
        """Verify the key with ``/users/current.json``; return the key owner's user record.

        A success is remembered for ``KEY_CHECK_SECONDS`` (a revoked key would otherwise keep
        being served as the anonymous user); a refusal is not, so a fixed key recovers at once.
        """
        async with self._key_lock:
            if self.current_user is not None and time.monotonic() < self._key_ok_until:
                return self.current_user
            if not self.api_key:
                raise KeyRefusedError(
                    "No Redmine API key was given: send your key in the X-Redmine-API-Key header "
                    "or as Authorization Bearer",
                    status=401,
                )
            try:
                body = await self._send("GET", "users/current.json", what="the key owner", check=False)
            except RedmineError as exc:
                if exc.status in (401, 403):
                    raise KeyRefusedError(self._refused_message(), status=exc.status) from None
                if exc.status == 404:  # every Redmine has this path: nothing under REDMINE_URL is one
                    raise RedmineError(
                        f"There is no Redmine API at {self.config.url}: users/current.json answered 404; "
                        "check the path prefix in REDMINE_URL, the address Redmine's pages open at",
                        status=404,
                    ) from None
                raise
            user = body.get("user") if isinstance(body, dict) else None
            if not isinstance(user, dict):
                raise RedmineError(
                    f"{self.config.url}/users/current.json did not return a user: is REDMINE_URL a Redmine?"
                )
            self.current_user = user
            self._key_ok_until = time.monotonic() + KEY_CHECK_SECONDS
            return user

    def _refused_message(self) -> str:
        if self.api_key == self.config.api_key:
            return (
                "Redmine refused the API key in REDMINE_API_KEY: every tool is disabled until it is "
                "fixed; copy the key from My account, API access key, and make sure the REST API "
                "is enabled in Administration, Settings, API"
            )
        return (
            "Redmine refused the API key sent with this request: copy your key from My account, "
            "API access key, and make sure the REST API is enabled"
        )

    # -- requests ------------------------------------------------------------------------------

    async def get(self, path: str, *, what: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """GET a JSON document."""
        body = await self._send("GET", path, what=what, params=params)
        return body if isinstance(body, dict) else {}

    async def post(
        self, path: str, *, what: str, json: Any = None, params: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """POST JSON; returns the created entity document (Redmine answers 201 with it)."""
        body = await self._send("POST", path, what=what, json=json, params=params)
        return body if isinstance(body, dict) else {}

    async def put(self, path: str, *, what: str, json: Any = None) -> dict[str, Any]:
        """PUT JSON; Redmine usually answers 204 with no body, so expect ``{}``."""
        body = await self._send("PUT", path, what=what, json=json)
        return body if isinstance(body, dict) else {}

    async def delete(self, path: str, *, what: str, params: Mapping[str, Any] | None = None) -> None:
        """DELETE; Redmine answers 204."""
        await self._send("DELETE", path, what=what, params=params)

    async def page(
        self,
        path: str,
        key: str,
        *,
        what: str,
        params: Mapping[str, Any] | None = None,
        offset: int = 0,
        limit: int = 25,
    ) -> Page:
        """One page of a collection; ``key`` is the collection's name in the JSON body."""
        query = dict(params or {})
        query["offset"] = max(0, offset)
        query["limit"] = max(1, min(MAX_PAGE, limit))
        body = await self.get(path, what=what, params=query)
        items = body.get(key)
        rows = [i for i in items if isinstance(i, dict)] if isinstance(items, list) else []
        total = body.get("total_count")
        return Page(
            items=rows,
            total_count=total if isinstance(total, int) else len(rows),
            offset=body.get("offset", query["offset"])
            if isinstance(body.get("offset"), int)
            else query["offset"],
            limit=body.get("limit", query["limit"]) if isinstance(body.get("limit"), int) else query["limit"],
        )

    async def upload(self, data: bytes, filename: str) -> str:
        """Upload bytes to ``/uploads.json`` and return the token to attach them with."""
        body = await self._send(
            "POST",
            "uploads.json",
            what=f"the upload of {filename}",
            params={"filename": filename},
            content=data,
            content_type="application/octet-stream",
        )
        upload = body.get("upload") if isinstance(body, dict) else None
        token = upload.get("token") if isinstance(upload, dict) else None
        if not isinstance(token, str) or not token:
            raise RedmineError(f"Redmine accepted the upload of {filename} but returned no token")
        return token

    async def download(self, attachment_id: int, *, max_bytes: int = MAX_DOWNLOAD) -> tuple[bytes, str]:
        """The content of one attachment and its content type; refuses files over ``max_bytes``."""
        import httpx2

        await self._ensure_key()
        what = f"attachment {attachment_id}"
        path = f"attachments/download/{attachment_id}"
        try:
            with anyio.fail_after(self.config.timeout):
                return await self._read_download(path, what, max_bytes)
        except TimeoutError:
            raise self._deadline_error(what) from None
        except httpx2.HTTPError as exc:
            raise self._transport_error(exc, what) from None

    async def _read_download(self, path: str, what: str, max_bytes: int) -> tuple[bytes, str]:
        """Stream one attachment, refusing it once it passes ``max_bytes``."""
        async with self._http.stream("GET", path, headers=self._auth()) as response:
            if response.status_code >= 300:
                await response.aread()
                raise self._status_error(response, what)
            too_large = RedmineError(
                f"{what} is larger than {max_bytes // (1024 * 1024)} MB; download it in a browser"
            )
            body = await read_capped(response, max_bytes, too_large)
            return body, response.headers.get("content-type", "application/octet-stream")

    async def _ensure_key(self) -> None:
        if self.current_user is None or time.monotonic() >= self._key_ok_until:
            await self.check_key()

    def _auth(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        headers = (
            {"Authorization": f"Bearer {self.api_key}"}
            if self.bearer
            else {"X-Redmine-API-Key": self.api_key}
        )
        if self.switch_user is not None:
            headers["X-Redmine-Switch-User"] = self.switch_user
        headers.update(extra or {})
        return headers

    async def _send(
        self,
        method: str,
        path: str,
        *,
        what: str,
        params: Mapping[str, Any] | None = None,
        json: Any = None,
        content: bytes | None = None,
        content_type: str | None = None,
        check: bool = True,
    ) -> Any:
        import httpx2

        if check:
            await self._ensure_key()
        query_size = len(urlencode({k: str(v) for k, v in (params or {}).items()}))
        if query_size + len(path) > MAX_URL_CHARS:
            raise _url_too_long(what, query_size)
        headers = self._auth({"Content-Type": content_type} if content_type else None)
        started = time.monotonic()
        try:
            with anyio.fail_after(self.config.timeout):
                response = await self._http.request(
                    method,
                    path.lstrip("/"),
                    params=dict(params or {}),
                    json=json,
                    content=content,
                    headers=headers,
                )
                for _ in range(MAX_REDIRECTS):
                    moved = self._same_redmine(response, path, params) if method == "GET" else None
                    if moved is None:
                        break
                    logger.debug("GET %s moved to %s", path, moved[0])
                    path, params = moved
                    response = await self._http.request("GET", path, params=params, headers=headers)
        except TimeoutError:
            raise self._deadline_error(what) from None
        except httpx2.HTTPError as exc:
            logger.debug("%s %s failed: %s", method, path, type(exc).__name__)
            raise self._transport_error(exc, what) from None
        logger.debug(
            "%s %s -> %s in %.0f ms", method, path, response.status_code, (time.monotonic() - started) * 1000
        )
        if response.status_code >= 300:
            raise self._status_error(response, what)
        if not response.content.strip():
            return {}
        try:
            return response.json()
        except ValueError:
            raise RedmineError(
                f"Redmine answered {what} with something that is not JSON: is REDMINE_URL the Redmine root?",
                status=response.status_code,
            ) from None

    def _within(self, response: httpx2.Response) -> bool:
        """Whether a redirect points inside ``REDMINE_URL`` (same scheme, host, port and base path)."""
        target = urlsplit(urljoin(str(response.request.url), response.headers.get("location", "")))
        base = urlsplit(self.config.url + "/")
        return (target.scheme, target.netloc) == (base.scheme, base.netloc) and target.path.startswith(
            base.path
        )

    def _same_redmine(
        self, response: httpx2.Response, path: str, params: Mapping[str, Any] | None
    ) -> tuple[str, dict[str, Any]] | None:
        """Where a redirect within this Redmine points (path and parameters), else ``None``.

        Redmine redirects inside itself: the old title of a renamed wiki page answers 302 to the
        new one, without the ``.json`` the request had. Such a redirect is followed (the key goes
        to the same server), with ``.json`` put back and the request's parameters kept unless
        the target names its own. A redirect to another origin or outside ``REDMINE_URL`` is not
        followed: it is a configuration problem, reported by :meth:`_status_error`.
        """
        if not 300 <= response.status_code < 400 or "location" not in response.headers:
            return None
        target = urlsplit(urljoin(str(response.request.url), response.headers["location"]))
        base = urlsplit(self.config.url + "/")
        if not self._within(response):
            return None
        new_path = unquote(target.path[len(base.path) :])
        if path.endswith(".json") and not new_path.endswith(".json"):
            new_path += ".json"
        if not new_path or new_path == path.lstrip("/"):
            return None
        query = dict(parse_qsl(target.query)) if target.query else dict(params or {})
        return quote(new_path, safe="/"), query

    # -- error mapping -------------------------------------------------------------------------

    def _status_error(self, response: httpx2.Response, what: str) -> RedmineError:
        code = response.status_code
        if code == 401:
            message = (
                f"Redmine refused the API key for {what} with 401: check REDMINE_API_KEY and that the REST API "
                "is enabled in Administration, Settings, API"
            )
        elif code == 403:
            message = f"Redmine denied {what} with 403: {self._refusal(response)}"
        elif code == 404:
            message = (
                f"Redmine has no {what} with 404: check the id, or the key's user cannot see it "
                "or the module is disabled in the project"
            )
        elif code == 412 and self.switch_user is not None:
            message = (
                f"Redmine has no active user with the login {self.switch_user!r} to act as for {what} "
                "(412 to X-Redmine-Switch-User): the account is locked or was renamed; ask a Redmine administrator"
            )
        elif code == 412:
            message = (
                f"Redmine refused {what} with 412 Precondition Failed: the request does not fit the "
                "current state; read the entity again and retry"
            )
        elif code == 422:
            detail = _errors_of(response) or "no details given"
            message = f"Redmine rejected {what} with 422: {detail}"
        elif 300 <= code < 400 and "location" in response.headers and self._within(response):
            message = (
                f"Redmine redirected {what} to {response.headers['location']}, which was not followed "
                "for a write or after several redirects; send the request to that address"
            )
        elif 300 <= code < 400:
            target = response.headers.get("location", "another address")
            message = (
                f"Redmine redirected {what} to {target}, outside {self.config.url}: set REDMINE_URL to "
                "the final address; such redirects are not followed, so the key is never sent elsewhere"
            )
        elif code >= 500:
            message = (
                f"Redmine failed on {what} with HTTP {code}: a server-side error; check the Redmine log "
                "and retry later"
            )
        else:
            message = (
                f"Redmine answered {what} with HTTP {code}: {_errors_of(response) or 'unexpected status'}"
            )
        return RedmineError(self._scrub(message), status=code)

    def _refusal(self, response: httpx2.Response) -> str:
        """The permission a refused request needed, from the one table of them (:mod:`.rights`)."""
        from mcpkit.redmine.rights import refusal

        target = urlsplit(str(response.request.url))
        base = urlsplit(self.config.url + "/").path
        path = unquote(target.path[len(base) :] if target.path.startswith(base) else target.path)
        return refusal(response.request.method, path, dict(parse_qsl(target.query)))

    def _deadline_error(self, what: str) -> RedmineError:
        """The one deadline of a request passed: connect, headers and body together took too long."""
        return RedmineError(
            self._scrub(
                f"Redmine at {self.config.url} did not finish answering {what} within "
                f"{self.config.timeout:g} s: check the server or raise REDMINE_TIMEOUT"
            )
        )

    def _transport_error(self, exc: httpx2.HTTPError, what: str) -> RedmineError:
        import httpx2

        url = self.config.url
        if isinstance(exc, httpx2.TimeoutException):
            message = (
                f"Redmine at {url} did not answer {what} within {self.config.timeout:g} s: "
                "check the server or raise REDMINE_TIMEOUT"
            )
        elif (tls := _tls_failure(exc)) == "plain":
            port = urlsplit(url).port or 443
            message = (
                f"Redmine at {url}: port {port} does not speak TLS (a plain HTTP server answered); "
                "use http:// in REDMINE_URL, or the port where Redmine serves HTTPS"
            )
        elif tls == "verify":
            message = (
                f"TLS verification failed for {url}: set REDMINE_CA_BUNDLE to your CA certificate file, "
                "or REDMINE_VERIFY_SSL=false on a trusted test network only"
            )
        elif tls == "other":
            message = (
                f"The TLS handshake with {url} failed: {' '.join(str(exc).split())[:120]}; "
                "check that REDMINE_URL names Redmine's HTTPS address"
            )
        elif isinstance(exc, httpx2.ConnectError):
            message = (
                f"Cannot connect to Redmine at {url}: {' '.join(str(exc).split())[:120] or 'connection refused'}; "
                "check REDMINE_URL and that Redmine is running"
            )
        else:
            message = f"The request for {what} to Redmine at {url} failed: {type(exc).__name__}; retry later"
        return RedmineError(self._scrub(message))
