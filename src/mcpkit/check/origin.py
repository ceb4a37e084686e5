"""Origin check on HTTP servers: a request from a foreign web page must be refused.

A local HTTP server that answers any Origin can be driven by any web page the user opens
(DNS rebinding). The spec (2025-11-25, transports, streamable HTTP, security warning) says
servers MUST validate Origin and answer 403 to an invalid one. The check sends one
``initialize`` POST with ``Origin: https://mcpkit-origin-check.invalid``; a 2xx answer is the
finding (an error for a loopback or private address, where rebinding bites; a warning for a
public one, which may knowingly allow every origin).
"""

from __future__ import annotations

import ipaddress
import json
from urllib.parse import urlsplit

import httpx2
from mcp_types.version import LATEST_HANDSHAKE_VERSION

from mcpkit import __version__
from mcpkit.check.model import CheckFinding, CheckReport
from mcpkit.client import ServerConfig

FOREIGN_ORIGIN = "https://mcpkit-origin-check.invalid"


async def check_origin(server: ServerConfig, report: CheckReport, timeout: float) -> None:
    if server.url is None or server.kind == "sse":
        return
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": LATEST_HANDSHAKE_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "mcpkit-origin-check", "version": __version__},
        },
    }
    headers = {
        **server.headers,
        "Origin": FOREIGN_ORIGIN,
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
    }
    try:
        async with httpx2.AsyncClient(timeout=timeout) as http:
            async with http.stream("POST", server.url, content=json.dumps(body), headers=headers) as response:
                status = response.status_code
                session_id = response.headers.get("mcp-session-id")
            if session_id and 200 <= status < 300:
                # Do not leave the session we just opened behind.
                await http.delete(server.url, headers={**server.headers, "mcp-session-id": session_id})
    except httpx2.HTTPError:
        return  # the client check already reports an unreachable server
    if not 200 <= status < 300:
        return
    local = _is_local(server.url)
    report.add(
        CheckFinding(
            "origin-not-checked",
            "error" if local else "warning",
            "security",
            f"a request with Origin {FOREIGN_ORIGIN} was answered HTTP {status}, not 403"
            + ("" if local else " (a public server may allow every origin on purpose)"),
            "Compare the Origin header with the origins you serve and answer 403 to any other "
            "(mcpkit servers: allowed_origins).",
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
