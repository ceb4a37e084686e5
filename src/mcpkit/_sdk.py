"""Every assumption mcpkit makes about the MCP SDK's internals, in one place.

The gateway answers plain tool calls without the SDK's per-request machinery (see
:mod:`mcpkit.server._plain_calls`), so it must behave exactly as the SDK would have: refuse
what the SDK refuses, write the bytes the SDK writes. The client tells the SDK's own
timeouts and closed connections from a server's error answers with the same codes, which the
SDK marks only in its message texts. Each such rule is written here from the SDK (pinned in
pyproject.toml), never elsewhere, and tests/test_sdk_assumptions.py checks each one against
the SDK itself, so an SDK upgrade that changes one fails a test that names it instead of
making mcpkit quietly answer differently from the SDK (or call a server's own -32001 a
timeout). The module sits below ``server/``, ``client/`` and ``results/`` so all three read
the same copy.

1. :func:`connection_of`: a request's connection is the private ``ServerSession._connection``
   (the SDK makes a ``ServerSession`` per request; the connection is the only object that
   lives as long as the client does).
2. :func:`accepts_json_and_events`: the streamable HTTP transport's ``Accept`` rule.
3. :func:`is_local_host` and :data:`SDK_LOCAL_HOSTS`: the Host names its DNS-rebinding check
   allows for a local bind.
4. :data:`SDK_MAX_REQUEST_BODY`: its request body limit.
5. :data:`SDK_HANDSHAKE_VERSIONS`, :data:`SDK_DEFAULT_VERSION`: protocol versions its handshake era
   knows, and the one it assumes without an ``MCP-Protocol-Version`` header.
6. :func:`message_bytes`: its JSON writer (pydantic's: compact UTF-8, its float spelling,
   non-finite numbers as null), byte for byte.
7. :func:`call_result_wire`: a ``tools/call`` result as its server writes it: through the
   ``CallToolResult`` model, then the per-version field sieve; :data:`PLAIN_RESULT_VERSIONS`:
   the versions whose result surface is the 2025-11-25 ``CallToolResult`` (what
   :func:`mcpkit.results.plain_text_wire` relies on).
8. :func:`is_sdk_timeout` and :func:`is_sdk_closed`: the SDK's dispatcher reports its own
   timeout as -32001 and a closed connection as -32000, the codes servers use for their own
   errors too; only the message texts tell them apart.
9. :data:`SDK_JSON_PARSE_PREFIX` and :data:`SDK_SSE_TOO_LARGE`: the texts its HTTP client puts
   on a response it could not parse and on a server-sent event over its size limit.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import mcp_types
import pydantic_core
from mcp_types import DEFAULT_NEGOTIATED_VERSION
from mcp_types.methods import serialize_server_result
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

if TYPE_CHECKING:
    from mcp.server.connection import Connection

    SDK_MAX_REQUEST_BODY: int
    """Bytes of a request body the SDK's HTTP transport reads before it answers 413."""


def __getattr__(name: str) -> Any:
    # The body limit lives in the SDK's server package; read it when asked, so that importing
    # this module (results/ does, for PLAIN_RESULT_VERSIONS) never loads the SDK itself: the
    # archive's CLI imports results/ and must start without it.
    if name == "SDK_MAX_REQUEST_BODY":
        from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE

        return DEFAULT_MAX_REQUEST_BODY_SIZE
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


SDK_HANDSHAKE_VERSIONS: frozenset[str] = frozenset(HANDSHAKE_PROTOCOL_VERSIONS)
SDK_DEFAULT_VERSION: str = DEFAULT_NEGOTIATED_VERSION

SDK_LOCAL_HOSTS = ("127.0.0.1", "localhost", "[::1]")
"""The hosts the SDK's DNS-rebinding protection allows on a local bind, each with a port
(its patterns ``127.0.0.1:*``, ``localhost:*``, ``[::1]:*``, matched case-sensitively)."""


def connection_of(ctx: Any) -> Connection:
    """The connection behind a request context (private in the SDK)."""
    connection: Connection = ctx.session._connection
    return connection


def accepts_json_and_events(accept: str) -> bool:
    """The SDK's ``Accept`` rule for a POST (RFC 7231 wildcards): a client must accept both
    JSON and event streams; one that does not gets the SDK's 406."""
    types = {t.split(";")[0].strip().lower() for t in accept.split(",")}
    if "*/*" in types:
        return True
    return bool(types & {"application/json", "application/*"}) and bool(
        types & {"text/event-stream", "text/*"}
    )


def is_local_host(host_header: str) -> bool:
    """Whether the SDK's check lets a ``Host`` header through on a local bind. Its rule, not
    the URL's: ``localhost`` without a port, or ``LOCALHOST:80``, is refused (a copy that
    parsed the header as a URL answered those where the SDK refuses them)."""
    return any(host_header.startswith(base + ":") for base in SDK_LOCAL_HOSTS)


def message_bytes(message: dict[str, Any]) -> bytes:
    """A JSON-RPC message exactly as the SDK writes one (its models dump through pydantic's
    JSON writer). Raises ``ValueError`` for text no UTF-8 writer can send (a lone surrogate)."""
    return pydantic_core.to_json(message, inf_nan_mode="null")


def call_result_wire(result: dict[str, Any], version: str) -> dict[str, Any]:
    """A ``tools/call`` result as the SDK's server sends it for a handshake-era ``version``:
    through the ``CallToolResult`` model (which spells out defaults such as ``isError: false``),
    then the per-version field sieve. Raises pydantic's ``ValidationError`` for a result the
    model refuses."""
    dumped = mcp_types.CallToolResult.model_validate(result).model_dump(
        by_alias=True, mode="json", exclude_none=True
    )
    return serialize_server_result("tools/call", version, dumped)


PLAIN_RESULT_VERSIONS = frozenset({"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"})
"""Versions whose ``tools/call`` result surface is the SDK's 2025-11-25 ``CallToolResult``."""

SDK_JSON_PARSE_PREFIX = "Failed to parse JSON response: "
"""How the SDK's HTTP client begins the -32700 it reports for a response body it could not parse
(mcpkit's body limit, raised inside that parse, arrives wrapped in it)."""

SDK_SSE_TOO_LARGE = "Server-sent event exceeded"
"""The start of the SDK's -32000 text for one server-sent event over its size limit."""

_SDK_TIMEOUT_TEXT = re.compile(r"Request .* timed out")


def is_sdk_timeout(exc: Any) -> bool:
    """The SDK's own timeout (``Request 'tools/call' timed out``, -32001), not a server's error
    answer that happens to use code -32001."""
    return (
        getattr(exc, "code", None) == mcp_types.REQUEST_TIMEOUT
        and _SDK_TIMEOUT_TEXT.fullmatch(str(getattr(exc, "message", ""))) is not None
    )


def is_sdk_closed(exc: Any) -> bool:
    """The SDK's word that the connection ended (or an HTTP answer stream broke off), not a
    server's error answer with code -32000, the code servers use most for their own errors."""
    message = str(getattr(exc, "message", ""))
    return getattr(exc, "code", None) == mcp_types.CONNECTION_CLOSED and (
        message == "Connection closed" or message.startswith("SSE stream ")
    )
