"""The checker's message verdicts (the SDK's generated models) agree with each revision's schema.json.

The checker validates with ``mcp_types`` so that nothing needs a schema file at run time; this
holds those models to the published schema on a handful of messages, good and broken, of both
eras. The schemas live outside the repository (../shared/mcp-schema/<rev>/schema.json): without
them the test is skipped.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import jsonschema
import pytest

from mcpkit.check.schema import frame_problem, result_problem
from tests.support.env import SHARED

SCHEMAS = SHARED / "mcp-schema"

DISCOVER = {
    "supportedVersions": ["2026-07-28", "2025-11-25"],
    "capabilities": {"tools": {"listChanged": True}},
    "ttlMs": 60000,
    "cacheScope": "public",
    "resultType": "complete",
}
TOOLS_2026 = {
    "tools": [{"name": "echo", "inputSchema": {"type": "object"}}],
    "ttlMs": 0,
    "cacheScope": "private",
    "resultType": "complete",
}
INITIALIZE = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "s", "version": "1"},
}

# (revision, schema definition, method, message, whether it is valid)
RESULTS: list[tuple[str, str, str, dict[str, Any], bool]] = [
    ("2026-07-28", "DiscoverResult", "server/discover", DISCOVER, True),
    ("2026-07-28", "DiscoverResult", "server/discover", {**DISCOVER, "ttlMs": -5}, False),
    ("2026-07-28", "DiscoverResult", "server/discover", {**DISCOVER, "cacheScope": "everyone"}, False),
    (
        "2026-07-28",
        "DiscoverResult",
        "server/discover",
        {k: v for k, v in DISCOVER.items() if k != "supportedVersions"},
        False,
    ),
    ("2026-07-28", "ListToolsResult", "tools/list", TOOLS_2026, True),
    (
        "2026-07-28",
        "ListToolsResult",
        "tools/list",
        {k: v for k, v in TOOLS_2026.items() if k != "ttlMs"},
        False,
    ),
    ("2025-11-25", "InitializeResult", "initialize", INITIALIZE, True),
    ("2025-11-25", "InitializeResult", "initialize", {**INITIALIZE, "serverInfo": {"version": "1"}}, False),
    ("2025-11-25", "InitializeResult", "initialize", {**INITIALIZE, "capabilities": {"tools": "yes"}}, False),
    (
        "2025-11-25",
        "ListToolsResult",
        "tools/list",
        {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]},
        True,
    ),
    ("2025-11-25", "ListToolsResult", "tools/list", {"tools": [{"inputSchema": {"type": "object"}}]}, False),
]

ACK = {
    "method": "notifications/subscriptions/acknowledged",
    "params": {"notifications": {"toolsListChanged": True}},
}
FRAMES: list[tuple[str, str, dict[str, Any], bool]] = [
    ("2026-07-28", "SubscriptionsAcknowledgedNotification", ACK, True),
    ("2026-07-28", "SubscriptionsAcknowledgedNotification", {**ACK, "params": {}}, False),
    ("2025-11-25", "ToolListChangedNotification", {"method": "notifications/tools/list_changed"}, True),
    (
        "2025-11-25",
        "LoggingMessageNotification",
        {"method": "notifications/message", "params": {"level": "loud", "data": "x"}},
        False,
    ),
]


@cache
def _schema(revision: str) -> dict[str, Any]:
    path = SCHEMAS / revision / "schema.json"
    if not path.is_file():
        pytest.skip(f"{path} is not here (the schemas are test data outside the repository)")
    return dict(json.loads(path.read_text()))


def _schema_says(revision: str, definition: str, message: dict[str, Any]) -> bool:
    root = _schema(revision)
    validator = jsonschema.Draft202012Validator({**root, "$ref": f"#/$defs/{definition}"})
    return validator.is_valid(message)


@pytest.mark.parametrize(("revision", "definition", "method", "message", "valid"), RESULTS)
def test_result_verdicts_match_the_schema(
    revision: str, definition: str, method: str, message: dict[str, Any], valid: bool
) -> None:
    assert _schema_says(revision, definition, message) is valid
    assert (result_problem(method, revision, message) is None) is valid


@pytest.mark.parametrize(("revision", "definition", "message", "valid"), FRAMES)
def test_notification_verdicts_match_the_schema(
    revision: str, definition: str, message: dict[str, Any], valid: bool
) -> None:
    assert _schema_says(revision, definition, {"jsonrpc": "2.0", **message}) is valid
    assert (frame_problem(message, revision) is None) is valid
