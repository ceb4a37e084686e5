"""A result as the JSON dict the SDK sends, so tests validate what a client really receives."""

from __future__ import annotations

from typing import Any

import mcp_types
from mcp_types.methods import serialize_server_result


def to_wire(result: mcp_types.CallToolResult, *, protocol_version: str | None = None) -> dict[str, Any]:
    """The result dumped the way the SDK's server runner does (by alias, no ``None``, JSON mode).

    With ``protocol_version`` the SDK's per-version sieve is applied as well (fields the
    version's schema lacks, such as ``resultType`` before 2026-07-28, are dropped), which is the
    exact body sent on a session of that version. Raises what the SDK raises for a result it
    would refuse to send (``pydantic.ValidationError``) or an unknown version (``ValueError``).
    """
    dumped: dict[str, Any] = result.model_dump(by_alias=True, mode="json", exclude_none=True)
    if protocol_version is None:
        return dumped
    return serialize_server_result("tools/call", protocol_version, dumped)
