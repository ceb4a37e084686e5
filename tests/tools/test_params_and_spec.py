"""Param helpers emit only portable schema keywords; ToolSpec's wire form and annotations."""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema import Draft202012Validator

from mcpkit.tools import ToolSpec
from mcpkit.tools import params as p


async def _noop(args: dict[str, Any]) -> str:
    return ""


def test_object_schema_is_strict_and_valid() -> None:
    schema = p.object_schema(
        {
            "name": p.string("Name", min_length=1, max_length=20, pattern="^[a-z]+$"),
            "count": p.integer("How many", minimum=1, maximum=100, default=10),
            "ratio": p.number("Share", minimum=0, maximum=1),
            "flag": p.boolean("Switch", default=False),
            "mode": p.enum("Mode", ["a", "b"], default="a"),
            "tags": p.array(p.string("Tag"), "Tags", min_items=0, max_items=5),
            "filter": p.obj({"from": p.string("Start date", format="date")}, "Filter", required=["from"]),
        },
        required=["name"],
    )
    Draft202012Validator.check_schema(schema)
    assert schema["type"] == "object" and schema["additionalProperties"] is False
    assert schema["required"] == ["name"]
    validator = Draft202012Validator(schema)
    assert validator.is_valid({"name": "abc", "count": 5, "mode": "b", "filter": {"from": "2025-01-01"}})
    assert not validator.is_valid({"name": "abc", "count": 0})
    assert not validator.is_valid({"name": "abc", "unknown": 1})
    assert not validator.is_valid({"count": 1})


def test_no_type_arrays_anywhere() -> None:
    def walk(node: Any) -> None:
        if isinstance(node, dict):
            assert not isinstance(node.get("type"), list)
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(p.object_schema({"a": p.array(p.obj({"b": p.integer()}))}))


def test_enum_and_required_checks() -> None:
    with pytest.raises(ValueError, match="at least one value"):
        p.enum("x", [])
    with pytest.raises(ValueError, match="default"):
        p.enum("x", ["a"], default="b")
    with pytest.raises(ValueError, match="required names"):
        p.object_schema({"a": p.string()}, required=["b"])


def test_spec_definition_and_annotations() -> None:
    reader = ToolSpec("get-thing", "Get a thing.", p.object_schema(), _noop, read_only=True)
    writer = ToolSpec(
        "set-thing", "Set a thing.", p.object_schema(), _noop, idempotent=True, destructive=False
    )
    deleter = ToolSpec("delete-thing", "Delete a thing.", p.object_schema(), _noop)
    assert reader.definition()["annotations"] == {"readOnlyHint": True}
    assert writer.annotations() == {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": True}
    assert deleter.annotations() == {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False}
    assert reader.to_mcp().name == "get-thing"
    definition = reader.definition()
    definition["inputSchema"]["properties"]["x"] = {}
    assert "x" not in reader.input_schema.get("properties", {})  # definition() is a copy


def test_with_definition_keeps_handler() -> None:
    spec = ToolSpec("a", "A.", p.object_schema(), _noop, output_schema=p.object_schema())
    other = spec.with_definition({"name": "b", "description": "B.", "inputSchema": {"type": "object"}})
    assert other.name == "b" and other.handler is _noop and other.output_schema is None


@pytest.mark.anyio
async def test_a_tool_with_an_application_context_is_served_only_once_bound() -> None:
    from dataclasses import dataclass

    from mcpkit.server import ServerOptions, ToolDefinitionError, build_server
    from mcpkit.tools import ToolContext

    @dataclass(frozen=True)
    class Account:
        owner: str

    async def whoami(args: dict[str, Any], account: Account) -> str:
        return f"{account.owner} asks for {args['what']}"

    spec = ToolSpec.with_context(
        whoami,
        name="whoami",
        description="Say who asks.",
        input_schema=p.object_schema({"what": p.string()}, required=["what"]),
    )
    assert spec.needs_context
    with pytest.raises(ToolDefinitionError, match="bind it"):
        build_server("s", "1", [spec], options=ServerOptions())

    async def provide(ctx: ToolContext) -> Account:
        return Account(ctx.request_headers.get("x-user", "nobody"))

    bound = spec.bind(provide)
    assert bound.definition() == spec.definition() and not bound.needs_context
    server = build_server("s", "1", [bound], options=ServerOptions())
    result = await server.call("whoami", {"what": 12}, ToolContext(request_headers={"x-user": "ada"}))
    assert result.content[0].text == "ada asks for 12"  # type: ignore[union-attr]
    with pytest.raises(TypeError):
        bound.bind(provide)
