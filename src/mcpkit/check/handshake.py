"""Handshake checks: protocol version, serverInfo, time to initialize, clean stdout."""

from __future__ import annotations

from mcp_types.version import LATEST_HANDSHAKE_VERSION

from mcpkit.check.model import CheckFinding, CheckReport
from mcpkit.client import Session

SLOW_INIT_SECONDS = 5.0


def check_handshake(session: Session, report: CheckReport) -> None:
    init = session.initialize_result
    report.server_info = dict(session.server_info)
    report.protocol_version = session.protocol_version
    report.init_seconds = round(session.init_seconds, 4)
    info = init.get("serverInfo")
    if not isinstance(info, dict) or not info.get("name"):
        report.add(
            CheckFinding(
                "server-info-missing",
                "error",
                "handshake",
                "initialize result has no serverInfo.name",
                "Return serverInfo {name, version} so clients can show and log which server they use.",
            )
        )
    elif not info.get("version"):
        report.add(
            CheckFinding(
                "server-version-missing",
                "warning",
                "handshake",
                "serverInfo has no version",
                "Set serverInfo.version; bug reports need it.",
            )
        )
    if session.protocol_version != LATEST_HANDSHAKE_VERSION:
        report.add(
            CheckFinding(
                "protocol-not-latest",
                "info",
                "handshake",
                f"negotiated {session.protocol_version}; the client offered {LATEST_HANDSHAKE_VERSION}",
                "Upgrade the server's MCP SDK to speak the latest protocol version.",
            )
        )
    if session.init_seconds > SLOW_INIT_SECONDS:
        report.add(
            CheckFinding(
                "slow-initialize",
                "warning",
                "handshake",
                f"initialize took {session.init_seconds:.1f} s",
                "Defer expensive start-up work until the first call; clients time out start-up.",
            )
        )
    check_stdout(session, report)


def check_stdout(session: Session, report: CheckReport) -> None:
    """Anything on stdout that is not JSON-RPC breaks stricter clients (run this again at the end)."""
    if session.garbage_lines and "stdout-not-jsonrpc" not in report.rules():
        report.add(
            CheckFinding(
                "stdout-not-jsonrpc",
                "error",
                "handshake",
                f"the server wrote {session.garbage_lines} line(s) to stdout that are not JSON-RPC",
                "stdout is the protocol channel: send logs and prints to stderr.",
            )
        )
