"""DNS rebinding checks on HTTP servers: a request from a foreign web page must be refused.

A local HTTP server that answers any Origin can be driven by any web page the user opens
(DNS rebinding). The spec (2025-11-25, transports, streamable HTTP, security warning) says
servers MUST validate Origin and answer 403 to an invalid one. A rebound page can also reach
the server under the attacker's host name, and a request that carries no Origin (a plain
navigation, some non-browser paths) is judged by its Host alone: the SDKs check Host as well
(allowed hosts), and so does the official conformance suite's DNS rebinding scenario.

Two ``initialize`` POSTs are sent: one with ``Origin: https://mcpkit-origin-check.invalid``,
one with ``Host: mcpkit-rebinding-check.invalid`` and no Origin. A 2xx answer to either is the
finding (an error for a loopback or private address, where rebinding bites; a warning for a
public one, which may knowingly allow every origin or answer under many names).
"""

from __future__ import annotations

import ipaddress
import json
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx2
from mcp_types.version import LATEST_HANDSHAKE_VERSION

from mcpkit import __version__
from mcpkit.check.model import CheckFinding, CheckReport
from mcpkit.client import ServerConfig

FOREIGN_ORIGIN = "https://mcpkit-origin-check.invalid"
FOREIGN_HOST = "mcpkit-rebinding-check.invalid"


@dataclass(frozen=True)
class InitializeAnswer:
    """The HTTP side of one ``initialize`` POST: its status and the headers the checks read."""

    status: int
    www_authenticate: str = ""


async def post_initialize(
    server: ServerConfig, url: str, extra: dict[str, str], timeout: float, *, without: tuple[str, ...] = ()
) -> InitializeAnswer | None:
    """POST one ``initialize`` to ``url`` with the target's headers, ``extra`` ones, and none
    named in ``without`` (case-insensitive); None when the server cannot be reached. A session
    it opens is closed again at once."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": LATEST_HANDSHAKE_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "mcpkit-check", "version": __version__},
        },
    }
    dropped = {name.lower() for name in without}
    base = {k: v for k, v in server.headers.items() if k.lower() not in dropped}
    headers = {
        **base,
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        **extra,
    }
    try:
        async with httpx2.AsyncClient(timeout=timeout) as http:
            async with http.stream("POST", url, content=json.dumps(body), headers=headers) as response:
                answer = InitializeAnswer(response.status_code, response.headers.get("www-authenticate", ""))
                session_id = response.headers.get("mcp-session-id")
            if session_id and 200 <= answer.status < 300:
                # Do not leave the session we just opened behind.
                await http.delete(url, headers={**base, **extra, "mcp-session-id": session_id})
    except httpx2.HTTPError:
        return None  # the client check already reports an unreachable server
    return answer


async def _answer(server: ServerConfig, url: str, extra: dict[str, str], timeout: float) -> int | None:
    answer = await post_initialize(server, url, extra, timeout)
    return None if answer is None else answer.status


async def check_origin(server: ServerConfig, report: CheckReport, timeout: float) -> None:
    """Send a foreign Origin and a foreign Host; report each one the server answers."""
    url = server.url
    if url is None or server.kind == "sse":
        return
    local = _is_local(url)
    public = "" if local else " (a public server may allow every origin on purpose)"
    status = await _answer(server, url, {"Origin": FOREIGN_ORIGIN}, timeout)
    if status is not None and 200 <= status < 300:
        report.add(
            CheckFinding(
                "origin-not-checked",
                "error" if local else "warning",
                "security",
                f"a request with Origin {FOREIGN_ORIGIN} was answered HTTP {status}, not 403" + public,
                "Compare the Origin header with the origins you serve and answer 403 to any other "
                "(mcpkit servers: allowed_origins).",
            )
        )
    status = await _answer(server, url, {"Host": FOREIGN_HOST}, timeout)
    if status is not None and 200 <= status < 300:
        report.add(
            CheckFinding(
                "host-not-checked",
                "error" if local else "warning",
                "security",
                f"a request with Host {FOREIGN_HOST} and no Origin was answered HTTP {status}, not refused"
                + ("" if local else " (a public server may answer under many names)"),
                "Compare the Host header with the names the server is reached by (localhost, 127.0.0.1 "
                "and its port) and answer 403 (or 421) to any other.",
            )
        )


def _is_local(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    if host in ("localhost", "localhost.localdomain") or host.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_link_local
