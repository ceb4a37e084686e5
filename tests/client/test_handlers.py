"""Roots, sampling and elicitation against the real server-everything (TypeScript SDK).

It reports a refused request as an isError result (ToolError) over stdio.

It lists its roots, sampling and elicitation tools only to clients that declare those
capabilities; the defaults must refuse clearly, and handlers a caller installs must be used.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mcpkit.client import ClientHandlers, JsonRpcError, SessionOptions, ToolError, connect
from mcpkit.client._handlers import ELICITATION_REFUSED, SAMPLING_REFUSED
from tests.support.env import THIRD_PARTY, require

pytestmark = [pytest.mark.anyio, pytest.mark.thirdparty, pytest.mark.slow]
EVERYTHING = THIRD_PARTY / "node" / "node_modules" / ".bin" / "mcp-server-everything"


def _need() -> None:
    require(EVERYTHING.exists(), "server-everything is not installed (bash scripts/third-party.sh)")


async def test_defaults_declare_roots_only() -> None:
    """No handler, no capability: the server hides the tools that would ask for sampling or
    elicitation (they could only fail), and the roots it asks for are the configured ones."""
    _need()
    async with connect([str(EVERYTHING)], SessionOptions(timeout=60)) as s:
        names = {t["name"] for t in await s.list_tools()}
        assert "get-roots-list" in names
        assert not names & {"trigger-sampling-request", "trigger-elicitation-request"}
        roots = await s.call("get-roots-list", {})
        assert "no roots are currently configured" in roots.text


async def test_a_server_that_asks_anyway_is_refused_clearly() -> None:
    """A handler that refuses (declared, so the server offers the tools) is heard as it says;
    the built-in refusals say why in words."""
    _need()

    async def no_model(params: dict[str, Any]) -> dict[str, Any]:
        raise JsonRpcError(-32600, SAMPLING_REFUSED)

    async def no_user(params: dict[str, Any]) -> dict[str, Any]:
        raise JsonRpcError(-32600, ELICITATION_REFUSED)

    handlers = ClientHandlers(sampling=no_model, elicitation=no_user)
    async with connect([str(EVERYTHING)], SessionOptions(timeout=60, handlers=handlers)) as s:
        with pytest.raises((JsonRpcError, ToolError)) as info:
            await s.call("trigger-sampling-request", {"prompt": "hi"})
        assert SAMPLING_REFUSED in str(info.value)
        with pytest.raises((JsonRpcError, ToolError)) as info:
            await s.call("trigger-elicitation-request", {})
        assert ELICITATION_REFUSED in str(info.value)


async def test_installed_handlers_answer_the_server(tmp_path: Path) -> None:
    _need()
    seen: list[dict[str, Any]] = []

    async def sample(params: dict[str, Any]) -> dict[str, Any]:
        seen.append(params)
        return {"role": "assistant", "model": "test-model", "content": {"type": "text", "text": "forty-two"}}

    async def elicit(params: dict[str, Any]) -> dict[str, Any]:
        assert "name" in params["requestedSchema"]["properties"]
        return {"action": "accept", "content": {"name": "Ada", "check": True}}

    handlers = ClientHandlers(roots=[tmp_path], sampling=sample, elicitation=elicit)
    async with connect([str(EVERYTHING)], SessionOptions(timeout=60, handlers=handlers)) as s:
        out = await s.call("trigger-sampling-request", {"prompt": "meaning of life?"})
        assert "forty-two" in out.text and "test-model" in out.text
        assert "meaning of life?" in seen[0]["messages"][-1]["content"]["text"]
        roots = await s.call("get-roots-list", {})
        assert tmp_path.as_uri() in roots.text
        answer = await s.call("trigger-elicitation-request", {})
        assert "- Name: Ada" in answer.text and "Agreed to terms: true" in answer.text


async def test_a_handler_that_fails_or_answers_nonsense_is_a_clear_error() -> None:
    _need()

    async def broken(params: dict[str, Any]) -> dict[str, Any]:
        raise RuntimeError("model offline")

    async def nonsense(params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "maybe"}

    async with connect(
        [str(EVERYTHING)],
        SessionOptions(timeout=60, handlers=ClientHandlers(sampling=broken, elicitation=nonsense)),
    ) as s:
        with pytest.raises((JsonRpcError, ToolError), match="sampling handler failed: model offline"):
            await s.call("trigger-sampling-request", {"prompt": "x"})
        with pytest.raises((JsonRpcError, ToolError), match="elicitation handler returned an invalid result"):
            await s.call("trigger-elicitation-request", {})


async def test_roots_asked_each_time_from_a_source(tmp_path: Path) -> None:
    """``roots_from`` is asked on every ``roots/list``; a nonsense answer is a clear error."""
    _need()
    current = [{"uri": (tmp_path / "a").as_uri(), "name": "a"}]

    async def source(params: dict[str, Any]) -> dict[str, Any]:
        return {"roots": list(current)}

    handlers = ClientHandlers(roots=[tmp_path / "ignored"], roots_from=source)
    assert handlers.capabilities()["roots"] == {"listChanged": True}
    async with connect([str(EVERYTHING)], SessionOptions(timeout=60, handlers=handlers)) as s:
        listed = (await s.call("get-roots-list", {})).text
        assert (tmp_path / "a").as_uri() in listed and "ignored" not in listed

    async def nonsense(params: dict[str, Any]) -> dict[str, Any]:
        return {"roots": [{"name": "no uri"}]}

    async with connect(
        [str(EVERYTHING)], SessionOptions(timeout=60, handlers=ClientHandlers(roots_from=nonsense))
    ) as s:
        listed = (await s.call("get-roots-list", {})).text
        assert "no uri" not in listed  # the server got an error, not a root without a URI
