"""HTTP under the SDK's streamable-HTTP and SSE transports, made safe for any peer.

The SDK frames MCP over HTTP well, but three things it does not do are what a client that
must never hang or blow up needs (issue 11):

* a response body is read whole (``aread``), so a 1 GB answer takes gigabytes of memory;
  here a body over ``max_body`` bytes is refused from its Content-Length, or as soon as the
  stream passes the limit, without buffering it;
* an HTTP failure (connection refused, TLS, a 502 with an HTML page, a web server answering
  200 with ``text/html``) reaches the caller as a bare "connection closed" or a traceback;
  here every such answer to a request becomes a JSON-RPC error whose ``data`` carries the
  URL, the status and what to do, so :mod:`mcpkit.client._session` can raise one line;
* a request abandoned on timeout keeps its response stream open until the server ends it
  (forever, for a stream that never ends); here the ``notifications/cancelled`` the
  dispatcher sends on timeout also closes that request's stream.

The guard wraps the httpx2 transports of the client (the default one and any proxy mounts),
so proxies from the environment keep working.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import anyio
import httpx2

from mcpkit.client._options import DEFAULT_MAX_BODY as DEFAULT_MAX_BODY  # larger answers are refused unread
from mcpkit.errors import CallError, ResponseTooLargeError

logger = logging.getLogger("mcpkit.client._http")

HTTP_FAILURE = -32098
"""JSON-RPC code of the errors the guard synthesizes (server-defined range, never sent by us)."""
DATA_KEY = "mcpkitHttp"
"""Key in a synthesized error's ``data`` holding the :class:`HttpProblem` fields."""
NO_STREAMABLE_HTTP = frozenset({400, 404, 405})
"""Statuses that, answering the first ``initialize`` POST with no JSON-RPC body, mean the
endpoint has no streamable HTTP, so the legacy SSE transport is worth a try (spec 2025-03-26,
"Backwards Compatibility": a 4xx such as 405 or 404)."""
_SNIPPET = 4096
DRAIN_SECONDS = 0.5
"""How long closing a response waits for the rest of its body (see :class:`_GuardedStream`)."""
DRAIN_BYTES = 1 << 20


@dataclass(frozen=True)
class HttpProblem:
    """Why an HTTP exchange is not an MCP answer, in words a user can act on."""

    url: str
    kind: str
    """refused, tls, timeout, network, status, content-type, too-large"""
    status: int | None = None
    content_type: str = ""
    detail: str = ""

    @property
    def message(self) -> str:
        """One line: the URL, what happened, and what to do."""
        if self.kind == "refused":
            return f"cannot connect to {self.url}: connection refused; is the server running on that port?"
        if self.kind == "tls":
            return (
                f"TLS handshake with {self.url} failed ({self.detail}); check the certificate, "
                "or use http:// for a server without TLS"
            )
        if self.kind in ("network", "timeout"):
            return f"cannot reach {self.url}: {self.detail}; check the host name and the network"
        if self.kind == "too-large":
            return (
                f"{self.url} sent a response body over the {self.detail} limit; refused unread "
                "(raise max_body / --max-body if you expect answers this big)"
            )
        what = "an HTML page" if "html" in self.content_type else (self.content_type or "no content type")
        if self.kind == "content-type":
            return (
                f"{self.url} answered HTTP {self.status} with {what}, not MCP (JSON or an event stream); "
                "check the URL: it must be the server's MCP endpoint, often ending in /mcp"
            )
        hint = _status_hint(self.status or 0)
        return f"{self.url} answered HTTP {self.status} with {what}{self.detail}; {hint}"

    def to_data(self) -> dict[str, Any]:
        return {
            DATA_KEY: {
                "url": self.url,
                "kind": self.kind,
                "status": self.status,
                "contentType": self.content_type,
                "detail": self.detail,
            }
        }

    @classmethod
    def from_data(cls, data: Any) -> HttpProblem | None:
        """The problem carried by a synthesized error's ``data``, else None."""
        if not isinstance(data, Mapping) or not isinstance(data.get(DATA_KEY), Mapping):
            return None
        d = data[DATA_KEY]
        status = d.get("status")
        return cls(
            url=str(d.get("url", "")),
            kind=str(d.get("kind", "status")),
            status=status if isinstance(status, int) else None,
            content_type=str(d.get("contentType", "")),
            detail=str(d.get("detail", "")),
        )

    @property
    def means_no_streamable_http(self) -> bool:
        """Whether the legacy SSE transport is worth trying after this answer to initialize."""
        return self.kind == "status" and self.status in NO_STREAMABLE_HTTP


def _status_hint(status: int) -> str:
    if status in (401, 403):
        return "the server wants credentials: pass them with --header 'Authorization: Bearer ...'"
    if status == 404:
        return "check the URL path (MCP endpoints usually end in /mcp)"
    if status in (405, 400):
        return "this URL does not speak MCP over streamable HTTP; check the path"
    if status == 429:
        return "the server is rate limiting; retry later"
    if 500 <= status < 600:
        return "the server or a proxy in front of it failed; see the server's log"
    return "check the URL and the server"


def problem_from_exception(url: str, exc: BaseException) -> HttpProblem:
    """Classify a transport-level failure (no HTTP answer at all)."""
    text = str(exc) or type(exc).__name__
    low = text.lower()
    if "ssl" in low or "certificate" in low or "tls" in low:
        return HttpProblem(url, "tls", detail=_first_line(text))
    if isinstance(exc, httpx2.TimeoutException):
        return HttpProblem(url, "timeout", detail="timed out connecting")
    if isinstance(exc, httpx2.ConnectError) and ("refused" in low or "all connection attempts failed" in low):
        return HttpProblem(url, "refused")
    return HttpProblem(url, "network", detail=_first_line(text))


def describe_http_exception(url: str, exc: BaseException) -> str | None:
    """One line for an httpx2 failure raised out of a transport (e.g. the SSE GET), else None."""
    if isinstance(exc, httpx2.HTTPStatusError):
        ctype = exc.response.headers.get("content-type", "")
        return HttpProblem(url, "status", exc.response.status_code, ctype).message
    if isinstance(exc, httpx2.TransportError):
        return problem_from_exception(url, exc).message
    return None


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0][:200].rstrip(".") if text.strip() else text


class BodyLimitError(ResponseTooLargeError, httpx2.StreamError):
    """A response stream passed the body limit (raised inside httpx2, seen by the SDK transport)."""

    MARKER = "limit; refused unread"
    """Words of the message the session recognises when the SDK hands it back as a parse error."""


class StreamAbortedError(CallError, httpx2.StreamError):
    """The request this response belongs to was cancelled; its stream is closed."""


class _GuardedStream(httpx2.AsyncByteStream):
    """A response body that counts bytes against a limit and can be aborted from another task.

    Closing it reads what is left of the body first, briefly: the SDK closes an SSE answer as
    soon as the response event arrives, a few bytes before the body's end, and a connection
    closed mid-body cannot be reused, so every call paid a new TCP (over HTTPS, TLS)
    connection. The result has already been delivered by then, so the drain adds no latency.
    """

    def __init__(
        self, inner: httpx2.AsyncByteStream, limit: int | None, url: str, on_close: Callable[[], None]
    ) -> None:
        self._inner = inner
        self._on_close = on_close
        self._limit = limit
        self._url = url
        self._seen = 0
        self._scope: anyio.CancelScope | None = None
        self._chunks: AsyncIterator[bytes] | None = None
        self._ended = False
        self.aborted = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        chunks = self._chunks = self._inner.__aiter__()
        while True:
            if self.aborted:
                raise StreamAbortedError("request cancelled; response stream closed")
            with anyio.CancelScope() as scope:
                self._scope = scope
                try:
                    chunk = await chunks.__anext__()
                except StopAsyncIteration:
                    self._ended = True
                    return
                finally:
                    self._scope = None
            if scope.cancelled_caught:
                raise StreamAbortedError("request cancelled; response stream closed")
            self._seen += len(chunk)
            if self._limit is not None and self._seen > self._limit:
                raise BodyLimitError(
                    HttpProblem(self._url, "too-large", detail=_mb(self._limit)).message, url=self._url
                )
            yield chunk

    def abort(self) -> None:
        self.aborted = True
        if self._scope is not None:
            self._scope.cancel()

    async def aclose(self) -> None:
        self._on_close()
        try:
            await self._drain()
        finally:  # cancelled while draining: the stream is still closed
            await self._inner.aclose()

    async def _drain(self) -> None:
        """Read the rest of a body that is about to end anyway, so its connection stays open."""
        chunks = self._chunks
        if chunks is None or self._ended or self.aborted:
            return
        left = DRAIN_BYTES
        with anyio.move_on_after(DRAIN_SECONDS):
            try:
                while left > 0:
                    left -= len(await chunks.__anext__())
            except StopAsyncIteration:
                self._ended = True
            except (httpx2.HTTPError, OSError):
                pass  # the connection is closed below either way


def _mb(size: int) -> str:
    return f"{size / (1024 * 1024):g} MB"


class HttpGuard:
    """State shared by the guarded transports of one connection: limits and open streams."""

    def __init__(self, *, max_body: int | None = DEFAULT_MAX_BODY, timeout: float | None = 30.0) -> None:
        self.max_body = max_body
        self.timeout = timeout
        self._open: dict[Any, _GuardedStream] = {}

    def install(self, client: httpx2.AsyncClient) -> httpx2.AsyncClient:
        """Wrap the client's transports (default and proxy mounts) in this guard."""
        client._transport = _GuardedTransport(client._transport, self)
        client._mounts = {
            pattern: (_GuardedTransport(t, self) if t is not None else None)
            for pattern, t in client._mounts.items()
        }
        return client

    def abort(self, request_id: Any) -> None:
        stream = self._open.pop(request_id, None)
        if stream is not None:
            stream.abort()

    @property
    def open_streams(self) -> int:
        """Response streams not yet closed (0 when every request has settled)."""
        return len(self._open)

    def _forget(self, request_id: Any, stream: _GuardedStream) -> None:
        if self._open.get(request_id) is stream:
            del self._open[request_id]


class _GuardedTransport(httpx2.AsyncBaseTransport):
    def __init__(self, inner: httpx2.AsyncBaseTransport, guard: HttpGuard) -> None:
        self._inner = inner
        self._guard = guard

    async def __aenter__(self) -> _GuardedTransport:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *args: Any) -> None:
        await self._inner.__aexit__(*args)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        guard = self._guard
        url = str(request.url)
        if request.method != "POST":
            # The GET listen stream may idle for ever (that is its job); a DELETE must not hang.
            read = None if request.method == "GET" else guard.timeout
            request.extensions["timeout"] = {**request.extensions.get("timeout", {}), "read": read}
            return await self._inner.handle_async_request(request)
        message = _message(request)
        rid = message.get("id") if "method" in message else None
        if message.get("method") == "notifications/cancelled":
            params = message.get("params")
            if isinstance(params, Mapping):
                guard.abort(params.get("requestId"))
        try:
            response = await self._inner.handle_async_request(request)
        except httpx2.TransportError as exc:
            if rid is None:
                raise
            return _synthesized(request, rid, problem_from_exception(url, exc))
        if rid is None:
            return response
        ctype = response.headers.get("content-type", "").lower()
        is_json = ctype.startswith("application/json")
        is_sse = ctype.startswith("text/event-stream")
        if 300 <= response.status_code < 400:
            return response  # the SDK follows a redirect that stays on the endpoint's origin
        if response.status_code >= 400 or (response.status_code != 202 and not (is_json or is_sse)):
            return await _refused(request, response, rid, url, ctype, is_json)
        length = response.headers.get("content-length", "")
        limit = None if is_sse else guard.max_body
        if limit is not None and length.isdigit() and int(length) > limit:
            await response.aclose()
            return _synthesized(request, rid, HttpProblem(url, "too-large", detail=_mb(limit)))
        assert isinstance(response.stream, httpx2.AsyncByteStream)
        stream = _GuardedStream(response.stream, limit, url, lambda: guard._forget(rid, stream))
        guard._open[rid] = stream
        return httpx2.Response(
            response.status_code,
            headers=response.headers,
            stream=stream,
            request=request,
            extensions=response.extensions,
        )


async def _refused(
    request: httpx2.Request, response: httpx2.Response, rid: Any, url: str, ctype: str, is_json: bool
) -> httpx2.Response:
    """A non-MCP answer: pass a JSON-RPC error body through as is, otherwise say what came."""
    head = b""
    try:
        async for chunk in response.aiter_raw():
            head += chunk
            if len(head) >= _SNIPPET:
                break
    except httpx2.HTTPError:
        pass
    finally:
        await response.aclose()
    if is_json and response.status_code >= 400 and len(head) < _SNIPPET:
        try:
            body = json.loads(head)
        except ValueError:
            body = None
        if isinstance(body, dict) and isinstance(body.get("error"), dict):
            # A spec-following server's JSON-RPC error at a 4xx/5xx status: keep its words.
            error = dict(body["error"])
            error["message"] = f"{error.get('message', '')} (HTTP {response.status_code} from {url})"
            return _json_response(request, {"jsonrpc": "2.0", "id": rid, "error": error})
    kind = "status" if response.status_code >= 400 else "content-type"
    detail = ""
    if kind == "status" and not is_json:
        title = _html_title(head)
        detail = f" ({title!r})" if title else ""
    return _synthesized(request, rid, HttpProblem(url, kind, response.status_code, ctype, detail))


def _html_title(head: bytes) -> str:
    text = head.decode("utf-8", "replace")
    low = text.lower()
    start = low.find("<title>")
    end = low.find("</title>", start)
    if start >= 0 and end > start:
        return " ".join(text[start + 7 : end].split())[:80]
    return ""


def _message(request: httpx2.Request) -> dict[str, Any]:
    """The JSON-RPC message a POST carries (the SDK sends one per POST), or {}."""
    try:
        data = json.loads(request.content)
    except (ValueError, httpx2.RequestNotRead):
        return {}
    return data if isinstance(data, dict) else {}


def _synthesized(request: httpx2.Request, rid: Any, problem: HttpProblem) -> httpx2.Response:
    logger.debug("%s", problem.message)
    error = {"code": HTTP_FAILURE, "message": problem.message, "data": problem.to_data()}
    return _json_response(request, {"jsonrpc": "2.0", "id": rid, "error": error})


def _json_response(request: httpx2.Request, payload: dict[str, Any]) -> httpx2.Response:
    return httpx2.Response(
        200,
        headers={"content-type": "application/json"},
        content=json.dumps(payload).encode(),
        request=request,
    )
