"""Helpers for the Redmine unit tests: a recording stand-in for Redmine and schema strategies.

The stand-in (an ``httpx2.MockTransport``) exists because property tests send thousands of
argument combinations, which a real Redmine cannot answer within a unit-test budget; every
tool also runs against the real Redmine in tests/integration/redmine.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx2
from hypothesis import strategies as st

from mcpkit.redmine.config import RedmineConfig
from mcpkit.redmine.server import build
from mcpkit.server import McpkitServer, ServerOptions

KEY = "feedfacefeedfacefeedfacefeedfacefeedface"


@dataclass
class Recorder:
    """Answers like a permissive Redmine and records every request it sees.

    Like Redmine, it keeps what a write sent: the next read of any entity shows the plain
    fields (and the uploads) of the last body written, so verify-after-write sees them applied.
    """

    requests: list[httpx2.Request] = field(default_factory=list)
    status: int = 200
    written: dict[str, Any] = field(default_factory=dict)

    def remember(self, request: httpx2.Request) -> None:
        try:
            body = json.loads(request.content or b"{}")
        except ValueError:
            return
        for value in body.values() if isinstance(body, dict) else ():
            if isinstance(value, dict):
                for key, item in value.items():
                    if key == "uploads":
                        self.written["attachments"] = [
                            {"id": 9, "filename": u.get("filename")} for u in item if isinstance(u, dict)
                        ]
                    elif isinstance(item, str | int | float | bool):
                        self.written[key] = item

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        path = request.url.path
        if path.endswith("/users/current.json"):
            return httpx2.Response(
                200, json={"user": {"id": 1, "login": "admin", "admin": True, "api_key": KEY}}
            )
        if self.status != 200:
            return httpx2.Response(self.status, json={"errors": ["Subject cannot be blank"]})
        if path.endswith("/uploads.json"):
            return httpx2.Response(201, json={"upload": {"id": 1, "token": "1.abc"}})
        if "/attachments/download/" in path:
            return httpx2.Response(
                200, content=b"plain text <content>", headers={"content-type": "text/plain"}
            )
        if request.method in ("PUT", "POST"):
            self.remember(request)
        if request.method == "PUT" or request.method == "DELETE":
            return httpx2.Response(204)
        body: dict[str, Any] = {
            "issue": {"id": 5, "subject": "x", "api_key": KEY, **self.written},
            "project": {"id": 3, "identifier": "p", "name": "P", **self.written},
            "user": {"id": 2, "login": "u", "api_key": KEY, **self.written},
            "total_count": 0,
        }
        return httpx2.Response(200 if request.method == "GET" else 201, content=json.dumps(body).encode())


def make_server(
    recorder: Recorder,
    *,
    read_only: bool = False,
    attachments_dir: Any = None,
    text_limit: int = 2000,
    tools: frozenset[str] = frozenset({"all"}),
) -> McpkitServer:
    """A server on the stand-in with every category on unless ``tools`` says otherwise."""
    config = RedmineConfig(
        url="http://redmine.invalid/sub",
        api_key=KEY,
        read_only=read_only,
        attachments_dir=attachments_dir,
        text_limit=text_limit,
        tools=tools,
    )
    return build(config, options=ServerOptions(strict=True), transport=httpx2.MockTransport(recorder))


TRICKY_STRINGS = st.sampled_from(
    [
        "me",
        "current",
        "*",
        "open",
        "closed",
        "12",
        "0",
        "-3",
        "1.5",
        " 7 ",
        "my-project",
        "a/../b",
        "..",
        "%2e%2e",
        "",
        "x" * 300,
        ">=2025-01-01",
        "><2025-01-01|2025-02-01",
        "id:desc",
        "<script>",
        KEY[:10],
    ]
)


def strategy_for(schema: Mapping[str, Any]) -> st.SearchStrategy[Any]:
    """Values for one JSON Schema node: mostly valid, often tricky, sometimes wrong-typed."""
    kind = schema.get("type")
    if "enum" in schema:
        return st.one_of(st.sampled_from(schema["enum"]), TRICKY_STRINGS)
    if kind == "string":
        return st.one_of(st.text(max_size=40), TRICKY_STRINGS)
    if kind == "integer":
        return st.integers(min_value=-3, max_value=10**12)
    if kind == "number":
        return st.one_of(st.integers(-3, 1000), st.floats(allow_nan=False, allow_infinity=False, width=32))
    if kind == "boolean":
        return st.booleans()
    if kind == "array":
        return st.lists(strategy_for(schema.get("items", {})), max_size=3)
    if kind == "object":
        return arguments_for(schema)
    return st.none()


def arguments_for(schema: Mapping[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    """Argument objects for a tool: required names always present, others optional."""
    props = schema.get("properties", {})
    required = set(schema.get("required", []))
    return st.fixed_dictionaries(
        {k: strategy_for(v) for k, v in props.items() if k in required},
        optional={k: strategy_for(v) for k, v in props.items() if k not in required},
    )
