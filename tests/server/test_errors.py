"""mcpkit's errors reach the wire as the SDK's, converted in one place (``mcpkit.server``)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcp import Client
from mcp.shared.exceptions import MCPError

from mcpkit.errors import ConfigError, JsonRpcError, ValidationError
from mcpkit.server import PromptSpec, ResourceSpec, as_sdk_error, build_server
from mcpkit.server.relay import sdk_errors
from mcpkit.tools import ToolSpec
from mcpkit.tools import params as p

pytestmark = pytest.mark.anyio


@given(
    code=st.integers(min_value=-32768, max_value=32767),
    message=st.text(max_size=40),
    data=st.none() | st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
)
def test_a_json_rpc_error_keeps_code_message_and_data(code: int, message: str, data: Any) -> None:
    sdk = as_sdk_error(JsonRpcError(code, message, data))
    assert isinstance(sdk, MCPError)
    assert (sdk.code, sdk.message, sdk.data) == (code, message, data)


def test_any_other_mcpkit_error_is_an_internal_error_with_its_one_line() -> None:
    sdk = as_sdk_error(ValidationError("limit: got -1; expected at least 1"))
    assert (sdk.code, sdk.message) == (-32603, "limit: got -1; expected at least 1")
    assert as_sdk_error(ConfigError()).message == "ConfigError"


async def test_the_wrapper_converts_and_passes_results_through() -> None:
    @sdk_errors
    async def fails(flag: bool) -> str:
        if flag:
            raise JsonRpcError(-32002, "Resource not found: x")
        return "ok"

    assert await fails(False) == "ok"
    with pytest.raises(MCPError) as caught:
        await fails(True)
    assert caught.value.code == -32002


async def _echo(args: dict[str, Any]) -> str:
    return "ok"


async def test_a_served_resource_or_prompt_refusal_reaches_the_client_with_its_code() -> None:
    async def read() -> str:
        return "text"

    async def render(args: Any) -> str:
        return "hello"

    server = build_server(
        "t",
        "1",
        [ToolSpec("echo", "Echo.", p.object_schema({}), _echo)],
        resources=[ResourceSpec("mem://a", "a", read)],
        prompts=[PromptSpec("greet", render)],
    )
    async with Client(server.lowlevel) as client:
        with pytest.raises(MCPError) as missing:
            await client.read_resource("mem://b")
        assert (missing.value.code, missing.value.message) == (-32002, "Resource not found: mem://b")
        with pytest.raises(MCPError) as unknown:
            await client.get_prompt("nope")
        assert (unknown.value.code, unknown.value.message) == (-32602, "Unknown prompt: nope")
