"""build_server in-process: registration checks, argument validation, filters, output schemas."""

from __future__ import annotations

import logging
import os
from typing import Any

import mcp_types
import pytest

from mcpkit.errors import ValidationError
from mcpkit.results import text_result, to_wire, validate_result
from mcpkit.server import ToolDefinitionError, ToolFilter, build_server
from mcpkit.tools import ToolSpec
from mcpkit.tools import params as p

pytestmark = pytest.mark.anyio


async def _ok(args: dict[str, Any]) -> str:
    return "ok"


def tool(name: str = "ok", **kw: Any) -> ToolSpec:
    base: dict[str, Any] = {
        "description": "Say ok.",
        "input_schema": p.object_schema(),
        "handler": _ok,
        "read_only": True,
    }
    base.update(kw)
    return ToolSpec(name=name, **base)


def test_duplicate_names_refused() -> None:
    with pytest.raises(ToolDefinitionError, match="duplicate tool name 'ok'"):
        build_server("s", "1", [tool(), tool()], tool_filter=ToolFilter())


def test_lint_errors_fail_fast_when_strict() -> None:
    bad = tool(description="List time_entries (admin only)")
    with pytest.raises(ToolDefinitionError) as info:
        build_server("s", "1", [bad], strict=True, tool_filter=ToolFilter())
    assert info.value.findings
    assert all(f.tool == "ok" for f in info.value.findings)


def test_lint_errors_only_warn_when_not_strict(caplog: pytest.LogCaptureFixture) -> None:
    bad = tool(description="List time_entries (admin only)")
    with caplog.at_level(logging.WARNING, logger="mcpkit.server"):
        server = build_server("s", "1", [bad], strict=False, tool_filter=ToolFilter())
        assert "tool definition problem" not in caplog.text, "linting waits until the server serves"
        assert [t.name for t in server.tools] == ["ok"]
        assert any(f.severity == "error" for f in server.findings)
    assert "tool definition problem" in caplog.text


def test_strict_comes_from_the_environment_which_the_pytest_plugin_sets(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert os.environ.get("MCPKIT_STRICT") == "1", "the mcpkit.testing plugin turns strict mode on"
    with pytest.raises(ToolDefinitionError):
        build_server("s", "1", [tool(description="a_b")], tool_filter=ToolFilter())
    monkeypatch.setenv("MCPKIT_STRICT", "0")
    server = build_server("s", "1", [tool(description="a_b")], tool_filter=ToolFilter())
    assert [t.name for t in server.tools] == ["ok"]


def test_capabilities_are_exactly_tools() -> None:
    server = build_server("s", "1", [tool()], tool_filter=ToolFilter())
    assert server.capabilities() == {"tools": {"listChanged": False}}


async def test_handler_result_kinds_are_valid() -> None:
    async def structured(args: dict[str, Any]) -> mcp_types.CallToolResult:
        return text_result("3", structured={"n": 3})

    async def broken(args: dict[str, Any]) -> mcp_types.CallToolResult:
        return text_result("x", structured={"n": "three"})

    async def missing(args: dict[str, Any]) -> str:
        return "no structure"

    schema = p.object_schema({"n": p.integer("A count")}, required=["n"])
    server = build_server(
        "s",
        "1",
        [
            tool("plain"),
            tool("structured", handler=structured, output_schema=schema),
            tool("broken", handler=broken, output_schema=schema),
            tool("missing", handler=missing, output_schema=schema),
        ],
        tool_filter=ToolFilter(),
    )
    for name in ("plain", "structured", "broken", "missing"):
        raw = to_wire(await server.call(name, {}))
        assert validate_result(raw, "2025-11-25", output_schema=schema if name != "plain" else None) == [], (
            name
        )
    assert (await server.call("structured", {})).structured_content == {"n": 3}
    assert (await server.call("broken", {})).is_error is True
    assert (await server.call("missing", {})).is_error is True


async def test_validation_error_message_reaches_client() -> None:
    async def picky(args: dict[str, Any]) -> str:
        raise ValidationError("Invalid value 'x': must be a number")

    server = build_server("s", "1", [tool("picky", handler=picky)], tool_filter=ToolFilter())
    result = await server.call("picky", {})
    assert result.is_error is True
    assert result.content[0].text == "Invalid value 'x': must be a number"  # type: ignore[union-attr]


def test_filter_parse_and_merge() -> None:
    f = ToolFilter.parse("a, b", "b", "yes")
    assert f.include == frozenset({"a", "b"}) and f.exclude == frozenset({"b"}) and f.read_only
    g = ToolFilter.parse(None, "c", None).merged(f)
    assert g.exclude == frozenset({"b", "c"}) and g.include == frozenset({"a", "b"}) and g.read_only
    assert ToolFilter.from_env({}) == ToolFilter()
    assert ToolFilter.from_env({"MCPKIT_READ_ONLY": "0"}).read_only is False


def test_filter_reasons() -> None:
    writer = tool("writer", read_only=False, category="edit")
    reader = tool("reader", category="view")
    visible, hidden = ToolFilter(read_only=True).apply([writer, reader])
    assert [t.name for t in visible] == ["reader"]
    assert "read-only" in hidden["writer"]
    visible, hidden = ToolFilter(include=frozenset({"edit"}), exclude=frozenset({"edit"})).apply(
        [writer, reader]
    )
    assert visible == [] and set(hidden) == {"writer", "reader"}
