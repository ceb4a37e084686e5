"""Raw 2026-07-28 requests over HTTP, for tests that must see an answer exactly as sent."""

from __future__ import annotations

import json
from typing import Any

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"


class Stateless:
    """Raw 2026-07-28 requests over HTTP, envelope and headers written out, so the test sees
    the answer exactly as sent (the SDK's client would parse the shapes away)."""

    def __init__(self, url: str, client: Any, *, tasks: bool = True, elicitation: bool = False) -> None:
        self.url, self.client, self.tasks, self.elicitation = url, client, tasks, elicitation
        self.ids = 0

    async def send(self, method: str, params: dict[str, Any], **headers: str) -> dict[str, Any]:
        self.ids += 1
        caps: dict[str, Any] = {"extensions": {TASKS_EXTENSION: {}}} if self.tasks else {}
        if self.elicitation:
            caps["elicitation"] = {}
        meta = {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": caps,
        }
        body = {"jsonrpc": "2.0", "id": self.ids, "method": method, "params": {**params, "_meta": meta}}
        sent = {
            "accept": "application/json, text/event-stream",
            "mcp-protocol-version": "2026-07-28",
            "mcp-method": method,
            **{k.replace("_", "-"): v for k, v in headers.items()},
        }
        if method == "tools/call":
            sent["mcp-name"] = params["name"]
        answer = await self.client.post(self.url, json=body, headers=sent)
        text = answer.text
        if text.startswith("event:") or "data:" in text[:20]:
            text = next(line[5:] for line in text.splitlines() if line.startswith("data:"))
        return dict(json.loads(text))
