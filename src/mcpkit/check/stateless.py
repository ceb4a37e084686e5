"""The checker's own 2026-07-28 client: one POST per request, the envelope in ``_meta``.

The stateless revision has no ``initialize``: every request carries the protocol version,
the client's capabilities and its info in ``params._meta`` (and the version again in the
``MCP-Protocol-Version`` header, the method in ``Mcp-Method``, a tool, prompt or resource
name in ``Mcp-Name``), and ``server/discover`` says what the server is. The checker speaks it
itself rather than through a client library so that it sees every message as it came (each
one goes to the era's :class:`~mcpkit.check.schema.MessageValidator`) and can send the
requests a polite client never would (one without the envelope).

:class:`StatelessSession` answers the same ``request(method, params, timeout=)`` as the
handshake-era :class:`~mcpkit.client.Session`, so the list and capability checks run on
either era unchanged.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx2
from mcp_types import CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY, PROTOCOL_VERSION_META_KEY
from mcp_types.version import LATEST_MODERN_VERSION

from mcpkit import __version__
from mcpkit.check.schema import MessageValidator, ValidatingTracer
from mcpkit.client import (
    CallError,
    CallTimeoutError,
    HttpError,
    JsonRpcError,
    ServerConfig,
    Session,
    SessionOptions,
)

NAME_BEARING_METHODS = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
"""The param each method mirrors in the ``Mcp-Name`` header (2026-07-28, streamable HTTP); the
SDK keeps the same table in mcp.shared.inbound, which the checker does not import (the SDK
itself is imported by server/ and client/ only)."""


class _StatelessWire:
    """What both stateless sessions keep: the server, the validator, the era and the
    ``server/discover`` answer whose capabilities the checks read."""

    def __init__(
        self,
        server: ServerConfig,
        validator: MessageValidator,
        *,
        timeout: float,
        client_name: str | None = None,
        version: str = LATEST_MODERN_VERSION,
    ) -> None:
        self.server = server
        self.validator = validator
        self.timeout = timeout
        self.protocol_version = version
        self.client_info = {"name": client_name or "mcpkit-check", "version": __version__}
        self.discover_result: dict[str, Any] = {}

    @property
    def capabilities(self) -> dict[str, Any]:
        caps = self.discover_result.get("capabilities")
        return dict(caps) if isinstance(caps, dict) else {}


class StatelessSession(_StatelessWire):
    """Requests on the stateless wire to one HTTP endpoint; every answer validated."""

    def __init__(
        self,
        server: ServerConfig,
        validator: MessageValidator,
        *,
        timeout: float,
        client_name: str | None = None,
        version: str = LATEST_MODERN_VERSION,
    ) -> None:
        assert server.url is not None
        super().__init__(server, validator, timeout=timeout, client_name=client_name, version=version)
        self.url: str = server.url
        self._next_id = 0
        self._http = httpx2.AsyncClient(timeout=timeout)

    async def aclose(self) -> None:
        await self._http.aclose()

    def envelope(
        self, method: str, params: Mapping[str, Any] | None
    ) -> tuple[dict[str, Any], dict[str, str]]:
        """The JSON-RPC body and HTTP headers of one request, with the per-request envelope."""
        self._next_id += 1
        meta = {
            PROTOCOL_VERSION_META_KEY: self.protocol_version,
            CLIENT_CAPABILITIES_META_KEY: {},
            CLIENT_INFO_META_KEY: self.client_info,
        }
        body_params = {**(params or {}), "_meta": {**dict((params or {}).get("_meta") or {}), **meta}}
        body = {"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": body_params}
        headers = {
            **self.server.headers,
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
            "MCP-Protocol-Version": self.protocol_version,
            "Mcp-Method": method,
        }
        name_key = NAME_BEARING_METHODS.get(method)
        if name_key and isinstance(body_params.get(name_key), str):
            headers["Mcp-Name"] = body_params[name_key]
        return body, headers

    async def discover(self) -> dict[str, Any]:
        self.discover_result = await self.request("server/discover", None)
        return self.discover_result

    async def request(
        self, method: str, params: Mapping[str, Any] | None = None, *, timeout: float | None = None
    ) -> dict[str, Any]:
        """The result of ``method``; JsonRpcError for an error answer, HttpError for an HTTP refusal."""
        body, headers = self.envelope(method, params)
        return await self.post(body, headers, timeout=timeout)

    async def post(
        self, body: dict[str, Any], headers: Mapping[str, str], *, timeout: float | None = None
    ) -> dict[str, Any]:
        """Send one request body as it is (the envelope is the caller's) and read its answer."""
        self.validator.sent(body)
        limit = timeout or self.timeout
        try:
            with anyio.fail_after(limit):
                async with self._http.stream(
                    "POST", self.url, content=json.dumps(body), headers=dict(headers)
                ) as response:
                    answer = await self._answer(response, body["id"])
        except TimeoutError as exc:
            raise CallTimeoutError(str(body.get("method")), limit) from exc
        except httpx2.HTTPError as exc:
            raise HttpError(
                f"{self.url}: {exc.__class__.__name__}: {exc}", url=self.url, kind="network"
            ) from exc
        error = answer.get("error")
        if isinstance(error, dict):
            raise JsonRpcError(int(error.get("code", 0)), str(error.get("message", "")), error.get("data"))
        result = answer.get("result")
        if not isinstance(result, dict):
            raise CallError(f"{body.get('method')}: the answer has neither a result object nor an error")
        return result

    async def _answer(self, response: httpx2.Response, request_id: Any) -> dict[str, Any]:
        ctype = response.headers.get("content-type", "")
        if response.status_code == 401:
            raise HttpError(
                f"{self.url}: HTTP 401 (authorization required)", url=self.url, kind="status", status=401
            )
        if ctype.startswith("text/event-stream"):
            async for message in sse_messages(response):
                self.validator.received(message)
                if message.get("id") == request_id and "method" not in message:
                    return message
            raise CallError(f"{self.url}: the event stream ended without an answer")
        text = (await response.aread()).decode("utf-8", "replace")
        if ctype.startswith("application/json"):
            try:
                message = json.loads(text)
            except ValueError as exc:
                raise CallError(
                    f"{self.url}: HTTP {response.status_code} with a body that is not JSON"
                ) from exc
            if isinstance(message, dict):
                self.validator.received(message)
                return message
        raise HttpError(
            f"{self.url}: HTTP {response.status_code} ({ctype or 'no content type'}) with no JSON-RPC answer",
            url=self.url,
            kind="status",
            status=response.status_code,
        )

    @asynccontextmanager
    async def stream(
        self, method: str, params: Mapping[str, Any]
    ) -> AsyncIterator[AsyncIterator[dict[str, Any]]]:
        """A long-lived request (``subscriptions/listen``): yields its messages as they come, validated."""
        body, headers = self.envelope(method, params)
        headers["Accept"] = "text/event-stream, application/json"
        self.validator.sent(body)
        async with self._http.stream("POST", self.url, content=json.dumps(body), headers=headers) as response:
            if response.status_code >= 400 or not response.headers.get("content-type", "").startswith(
                "text/event-stream"
            ):
                answer = await self._answer(response, body["id"])
                error = answer.get("error")
                if isinstance(error, dict):
                    raise JsonRpcError(int(error.get("code", 0)), str(error.get("message", "")))
                raise CallError(
                    f"{method}: HTTP {response.status_code} answered at once, not with an event stream"
                )

            async def messages() -> AsyncIterator[dict[str, Any]]:
                async for message in sse_messages(response):
                    self.validator.received(message)
                    yield message

            yield messages()


async def sse_messages(response: httpx2.Response) -> AsyncIterator[dict[str, Any]]:
    """The JSON-RPC messages of a server-sent event stream (events without JSON data skipped)."""
    data: list[str] = []
    async for line in response.aiter_lines():
        if line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
        elif line == "" and data:
            text, data = "\n".join(data), []
            try:
                message = json.loads(text)
            except ValueError:
                continue
            if isinstance(message, dict):
                yield message


class StdioStatelessSession(_StatelessWire):
    """The stateless wire to a stdio server: the client's own :class:`~mcpkit.client.Session`
    with ``protocol="2026-07-28"`` (as ``mcpkit call`` speaks it), every message validated.

    It answers what :class:`StatelessSession` answers for the checks that hold on any
    transport (discover, the lists, caching hints, probing). The envelope and the HTTP
    headers are HTTP's, and ``subscriptions/listen`` is not opened here: those checks run on
    an HTTP target (``--url``).
    """

    def __init__(
        self,
        server: ServerConfig,
        validator: MessageValidator,
        *,
        timeout: float,
        client_name: str | None = None,
        version: str = LATEST_MODERN_VERSION,
    ) -> None:
        super().__init__(server, validator, timeout=timeout, client_name=client_name, version=version)
        self._session: Session | None = None

    async def discover(self) -> dict[str, Any]:
        """Start the server on the stateless wire; its ``server/discover`` answer (CallError
        when it does not serve it)."""
        await self.aclose()
        session = Session(
            self.server,
            SessionOptions(
                timeout=self.timeout,
                protocol=self.protocol_version,  # type: ignore[arg-type]
                tracer=ValidatingTracer(self.validator),
                raise_on_error=False,
                shutdown_grace=0.5,
                client_info=self.client_info,
            ),
        )
        await session.__aenter__()
        self._session = session
        self.discover_result = dict(session.discover_result or {})
        return self.discover_result

    async def request(
        self, method: str, params: Mapping[str, Any] | None = None, *, timeout: float | None = None
    ) -> dict[str, Any]:
        if self._session is None:
            raise CallError(f"{self.server.name}: not connected on {self.protocol_version}")
        return dict(await self._session.request(method, params, timeout=timeout or self.timeout))

    async def aclose(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            await session.aclose()


StatelessWire = StatelessSession | StdioStatelessSession
"""The stateless wire on either transport, for the checks that hold on both."""
