"""build_server in-process: registration checks, argument validation, filters, output schemas."""

from __future__ import annotations

import logging
import os
from typing import Any

import mcp_types
import pytest

from mcpkit.errors import ValidationError
from mcpkit.results import text_result, to_wire, validate_result
from mcpkit.server import ServerOptions, ToolDefinitionError, ToolFilter, build_server, default_options
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
        build_server("s", "1", [tool(), tool()], options=ServerOptions())


def test_lint_errors_fail_fast_when_strict() -> None:
    bad = tool(description="List time_entries (admin only)")
    with pytest.raises(ToolDefinitionError) as info:
        build_server("s", "1", [bad], options=ServerOptions(strict=True))
    assert info.value.findings
    assert all(f.tool == "ok" for f in info.value.findings)


def test_lint_errors_only_warn_when_not_strict(caplog: pytest.LogCaptureFixture) -> None:
    bad = tool(description="List time_entries (admin only)")
    with caplog.at_level(logging.WARNING, logger="mcpkit.server"):
        server = build_server("s", "1", [bad], options=ServerOptions(strict=False))
        assert "tool definition problem" not in caplog.text, "linting waits until the server serves"
        assert [t.name for t in server.tools] == ["ok"]
        assert any(f.severity == "error" for f in server.findings)
    assert "tool definition problem" in caplog.text


def test_the_pytest_plugin_makes_strict_the_default_and_the_library_never_reads_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert os.environ.get("MCPKIT_STRICT") == "1", "the mcpkit.testing plugin turns strict mode on"
    assert default_options().strict, "... and makes strict options the default of this process"
    with pytest.raises(ToolDefinitionError):
        build_server("s", "1", [tool(description="a_b")])
    monkeypatch.setenv("MCPKIT_STRICT", "0")
    monkeypatch.setenv("MCPKIT_READ_ONLY", "1")
    with pytest.raises(ToolDefinitionError):  # the environment changed; the value given did not
        build_server("s", "1", [tool(description="a_b")])
    server = build_server("s", "1", [tool(description="a_b")], options=ServerOptions())
    assert [t.name for t in server.tools] == ["ok"]


def test_options_from_the_environment_are_for_clis() -> None:
    assert ServerOptions.from_environ({}) == ServerOptions()
    env = {
        "MCPKIT_TOOLS_INCLUDE": "a, b",
        "MCPKIT_TOOLS_EXCLUDE": "b",
        "MCPKIT_READ_ONLY": "yes",
        "MCPKIT_STRICT": "on",
        "MCPKIT_LOG": "DEBUG",
    }
    options = ServerOptions.from_environ(env)
    assert options.tool_filter == ToolFilter.parse("a,b", "b", True)
    assert options.read_only and options.strict and options.log_level == "debug"
    assert ServerOptions.from_environ({"MCPKIT_STRICT": "maybe"}).strict is False
    assert ServerOptions.from_environ(env, strict=False).strict is False, "a flag wins"
    with pytest.raises(ValidationError):
        ServerOptions.from_environ({"MCPKIT_READ_ONLY": "maybe"})
    http = ServerOptions().with_http(port=9, stateless=True).http
    assert (http.host, http.port, http.stateless) == ("127.0.0.1", 9, True)


def test_capabilities_are_exactly_tools() -> None:
    server = build_server("s", "1", [tool()], options=ServerOptions())
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
        options=ServerOptions(),
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

    server = build_server("s", "1", [tool("picky", handler=picky)], options=ServerOptions())
    result = await server.call("picky", {})
    assert result.is_error is True
    assert result.content[0].text == "Invalid value 'x': must be a number"  # type: ignore[union-attr]


def test_filter_parse_and_merge() -> None:
    f = ToolFilter.parse("a, b", "b", "yes")
    assert f.include == frozenset({"a", "b"}) and f.exclude == frozenset({"b"}) and f.read_only
    g = ToolFilter.parse(None, "c", None).merged(f)
    assert g.exclude == frozenset({"b", "c"}) and g.include == frozenset({"a", "b"}) and g.read_only
    assert ToolFilter.parse(None, None, "0") == ToolFilter()


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


def test_allow_list_shows_only_the_tools_it_names() -> None:
    writer = tool("writer", read_only=False, category="edit")
    reader = tool("reader", category="view")
    allow = ToolFilter.parse(allow="reader, nothing")
    assert allow.allow == frozenset({"reader", "nothing"})
    visible, hidden = allow.apply([writer, reader])
    assert [t.name for t in visible] == ["reader"]
    assert "MCPKIT_TOOLS_ALLOW" in hidden["writer"]
    both = allow.merged(ToolFilter.parse(allow="writer,reader"))
    assert both.allow == frozenset({"reader"}), "two allow-lists: only what both allow"
    assert ToolFilter.parse(allow=" , ") == ToolFilter(), "an empty list allows everything, as unset"
    options = ServerOptions.from_environ({"MCPKIT_TOOLS_ALLOW": "reader"})
    assert options.tool_filter.allow == frozenset({"reader"})
