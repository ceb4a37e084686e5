"""Whatever a handler returns, the client gets a valid tool result, never a JSON-RPC error.

A handler that returned ``None`` (its body still ``...``, as in the README's own example), a dict,
a number or a list used to reach the SDK, which answered ``tools/call`` with JSON-RPC -32603
"Handler returned an invalid result" and printed a pydantic traceback on stderr.
"""

from __future__ import annotations

import re
import sys
import tempfile
from pathlib import Path
from typing import Any

import mcp_types
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from mcpkit.results import text_result, to_wire, validate_result
from mcpkit.server import ServerOptions, build_server
from mcpkit.tools import ToolSpec
from mcpkit.tools import params as p
from tests.support.env import REPO

pytestmark = pytest.mark.anyio

WRONG: dict[str, Any] = {
    "none": None,
    "ellipsis": ...,
    "dict": {"id": 1, "name": "Ada"},
    "wire_dict": {"content": [{"type": "text", "text": "hi"}], "isError": False},
    "int": 3,
    "list": ["a", "b"],
    "bytes": b"text",
    "content": mcp_types.TextContent(type="text", text="one item, not a result"),
}
KIND = {
    "none": "None",
    "ellipsis": "Ellipsis",
    "dict": "a dict",
    "wire_dict": "a dict",
    "int": "an int",
    "list": "a list",
    "bytes": "a bytes",
    "content": "a TextContent",
}


def _returning(value: Any) -> ToolSpec:
    async def handler(args: dict[str, Any]) -> Any:
        return value

    return ToolSpec("wrong", "Return a value.", p.object_schema({}), handler)


def _server(*tools: ToolSpec) -> Any:
    return build_server("s", "1", list(tools), options=ServerOptions())


@pytest.mark.parametrize("case", sorted(WRONG))
async def test_a_return_that_is_no_tool_result_becomes_one_error_line(
    case: str, caplog: pytest.LogCaptureFixture
) -> None:
    server = _server(_returning(WRONG[case]))
    async with Client(server.lowlevel) as client:
        result = await client.call_tool("wrong", {})
    assert result.is_error is True
    assert len(result.content) == 1
    text = result.content[0].text  # type: ignore[union-attr]
    assert "\n" not in text
    assert text.startswith(f"Tool wrong returned {KIND[case]} instead of a tool result")
    assert "Traceback" not in caplog.text


async def test_text_and_built_results_pass_unchanged() -> None:
    built = text_result("built", structured={"n": 1})
    server = _server(
        ToolSpec("text", "Text.", p.object_schema({}), _const("plain")),
        ToolSpec("built", "Built.", p.object_schema({}), _const(built)),
    )
    assert (await server.call("text", {})).content[0].text == "plain"  # type: ignore[union-attr]
    assert await server.call("built", {}) is built


def _const(value: Any) -> Any:
    async def handler(args: dict[str, Any]) -> Any:
        return value

    return handler


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(value=_JSON.filter(lambda v: not isinstance(v, str)))
def test_any_json_value_returned_is_a_valid_error_result(value: Any) -> None:
    import anyio

    server = _server(_returning(value))
    result = anyio.run(server.call, "wrong", {})
    assert result.is_error is True
    assert validate_result(to_wire(result), "2025-11-25") == []


def _readme_blocks(*headings: str) -> str:
    """The python blocks under the README's ``### <heading>`` sections, in order."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    code: list[str] = []
    for heading in headings:
        section = text.split(f"### {heading}\n", 1)[1].split("\n#", 1)[0]
        code += re.findall(r"```python\n(.*?)```", section, flags=re.S)
    return "\n".join(code)


async def test_the_readme_serve_honestly_example_answers_an_error_result_over_stdio() -> None:
    script = _readme_blocks("Define a tool", "Serve honestly")
    assert "async def show_user" in script and "serve(server" in script
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "honest.py"
        path.write_text(script, encoding="utf-8")
        errlog = Path(tmp) / "stderr.txt"
        params = StdioServerParameters(command=sys.executable, args=[str(path)], cwd=str(REPO))
        with errlog.open("w", encoding="utf-8") as err:
            async with (
                stdio_client(params, errlog=err) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                result = await session.call_tool("show_user", {"id": "current"})
        stderr = errlog.read_text(encoding="utf-8")
    assert result.is_error is True
    text = result.content[0].text  # type: ignore[union-attr]
    assert text.startswith("Tool show_user returned None instead of a tool result")
    assert "Traceback" not in stderr
    assert "pydantic" not in stderr
