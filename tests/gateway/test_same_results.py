"""A client through the gateway and the same client direct get the same results for every tool
of server-everything (real npm server over stdio, both ways)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from mcpkit.client import ClientHandlers, JsonRpcError, ServerConfig, Session, SessionOptions
from tests.gateway.support import everything_server, gateway_session, write_config

pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.thirdparty]

# Arguments per tool: small and offline (gzip-file-as-resource reads a data: URI, not the web).
ARGS: dict[str, dict[str, Any]] = {
    "echo": {"message": "hello (gateway) time_entries"},
    "get-annotated-message": {"messageType": "success", "includeImage": True},
    "get-env": {},
    "get-resource-links": {"count": 3},
    "get-resource-reference": {"resourceType": "Text", "resourceId": 2},
    "get-structured-content": {"location": "Chicago"},
    "get-sum": {"a": 2, "b": 40.5},
    "get-tiny-image": {},
    "gzip-file-as-resource": {"name": "x.txt.gz", "data": "data:text/plain;base64,aGVsbG8="},
    "toggle-simulated-logging": {},
    "toggle-subscriber-updates": {},
    "trigger-long-running-operation": {"duration": 0.2, "steps": 2},
    "simulate-research-query": {"topic": "gateways"},
    # These ask the client for roots, sampling or elicitation; both clients refuse the same way
    # (each declares sampling and elicitation with a handler that refuses: REFUSING).
    "get-roots-list": {},
    "trigger-sampling-request": {"prompt": "hello", "maxTokens": 5},
    "trigger-elicitation-request": {},
    "trigger-url-elicitation": {},
}
# get-env prints the server's environment: the gateway's child inherits the gateway's, which
# the test sets apart from its own (MCPKIT_LOG); compared without those keys.
GATEWAY_ONLY_ENV = ("MCPKIT_LOG",)


CLOCK = re.compile(r"\d{1,2}:\d{2}:\d{2}( [AP]M)?|\d{4}-\d{2}-\d{2}T[0-9:.]+Z?")


def _timeless(value: Any) -> Any:
    """Clock readings blanked: dynamic resources embed the time they were read."""
    if isinstance(value, str):
        return CLOCK.sub("<time>", value)
    if isinstance(value, list):
        return [_timeless(v) for v in value]
    if isinstance(value, dict):
        return {k: _timeless(v) for k, v in value.items()}
    return value


def _comparable(tool: str, raw: dict[str, Any]) -> dict[str, Any]:
    # The SDK server writes the default isError false out; a missing isError means the same.
    out = {k: v for k, v in raw.items() if k != "_meta" and not (k == "isError" and v is False)}
    if tool == "get-env":
        import json

        env = json.loads(out["content"][0]["text"])
        for key in GATEWAY_ONLY_ENV:
            env.pop(key, None)
        out["content"] = [{"type": "text", "env": env}]
    return dict(_timeless(out))


async def _refuse(params: dict[str, Any]) -> dict[str, Any]:
    raise JsonRpcError(-32600, "this test client has no model and no user to ask")


REFUSING = ClientHandlers(sampling=_refuse, elicitation=_refuse)
"""Handlers that refuse: a client without any declares neither capability, and the server
would not list the tools that ask."""


async def test_every_tool_same_result_through_the_gateway(tmp_path: Path) -> None:
    entry = everything_server()
    config = write_config(tmp_path / "gw.json", {"everything": entry})
    direct_server = ServerConfig(name="everything", command=[entry["command"], *entry["args"]])
    async with (
        Session(
            direct_server,
            SessionOptions(
                timeout=60,
                raise_on_error=False,
                client_info={"name": "claude-code", "version": "1"},
                handlers=REFUSING,
            ),
        ) as direct,
        gateway_session(config, client_name="claude-code", handlers=REFUSING) as through,
    ):
        listed = {t["name"] for t in await direct.list_tools()}
        assert listed == set(ARGS), "server-everything changed its tools; update ARGS"
        gateway_names = {t["name"] for t in await through.list_tools()}
        for tool, args in ARGS.items():
            public = "everything_" + tool.replace("-", "_")
            public = next(n for n in gateway_names if n.startswith(public))
            want = await direct.request("tools/call", {"name": tool, "arguments": args})
            got = await through.request("tools/call", {"name": public, "arguments": args})
            assert _comparable(tool, got) == _comparable(tool, want), tool
