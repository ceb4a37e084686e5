"""Arguments as models send them: build_server accepts everything the SDK's MCPServer accepts, and more.

The same tool is served twice, by the SDK's high-level ``MCPServer`` (pydantic lax mode plus its
JSON-string pre-parsing) and by ``build_server``, and the official SDK client calls both in
process with each argument form. The table shows, per form, what each server did; the test
asserts the superset and the value the mcpkit handler received.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp import Client
from mcp.server.mcpserver import MCPServer
from pydantic import Field

from mcpkit.server import build_server
from mcpkit.server._arguments import INT64_MAX, ArgumentError, ArgumentValidator, coerce_arguments
from mcpkit.tools import ToolSpec
from mcpkit.tools import params as p

pytestmark = pytest.mark.anyio

SCHEMA = p.object_schema(
    {
        "id": p.integer("Issue number", minimum=1),
        "include": p.array(p.string(), "Extra parts"),
        "flag": p.boolean("A switch"),
        "ratio": p.number("A ratio"),
        "ids": p.array(p.integer(), "Numbers"),
        "filters": p.obj({"status": p.string("Status"), "limit": p.integer("Limit")}, "Filters"),
        "fields": p.array(
            p.obj({"id": p.integer("Field"), "value": p.string("Value")}, required=["id"]), "Fields"
        ),
        "name": p.string("Free text"),
    },
    required=["id"],
)


async def _echo(args: dict[str, Any]) -> str:
    return json.dumps(args, sort_keys=True)


def _mcpkit_server() -> Any:
    spec = ToolSpec(name="get_issue", description="Show one issue.", input_schema=SCHEMA, handler=_echo)
    return build_server("forms", "1", [spec]).lowlevel


def _sdk_server() -> MCPServer:
    server = MCPServer("forms-sdk")

    @server.tool()
    def get_issue(
        id: Annotated[int, Field(ge=1)],
        include: list[str] | None = None,
        flag: bool = False,
        ratio: float | None = None,
        ids: list[int] | None = None,
        filters: dict[str, Any] | None = None,
        name: str | None = None,
        fields: list[dict[str, Any]] | None = None,
    ) -> str:
        """Show one issue."""
        return "ok"

    return server


# (label, arguments, what the mcpkit handler must receive; None = must be refused)
FORMS: list[tuple[str, dict[str, Any], dict[str, Any] | None]] = [
    ("integer", {"id": 12}, {"id": 12}),
    ("numeric string", {"id": "12"}, {"id": 12}),
    ("padded numeric string", {"id": " 12 "}, {"id": 12}),
    ("whole float", {"id": 12.0}, {"id": 12}),
    ("fraction for integer", {"id": "2.5"}, None),
    ("word for integer", {"id": "twelve"}, None),
    ("beyond int64", {"id": str(INT64_MAX + 1)}, None),
    ("below minimum", {"id": "0"}, None),
    ("number from string", {"id": 1, "ratio": "2.5"}, {"id": 1, "ratio": 2.5}),
    ("bool true", {"id": 1, "flag": True}, {"id": 1, "flag": True}),
    ('"true"', {"id": 1, "flag": "true"}, {"id": 1, "flag": True}),
    ('"YES"', {"id": 1, "flag": "YES"}, {"id": 1, "flag": True}),
    ('"0"', {"id": 1, "flag": "0"}, {"id": 1, "flag": False}),
    ('"maybe"', {"id": 1, "flag": "maybe"}, None),
    ("list", {"id": 1, "include": ["journals"]}, {"id": 1, "include": ["journals"]}),
    (
        "JSON list string",
        {"id": 1, "include": '["journals","watchers"]'},
        {"id": 1, "include": ["journals", "watchers"]},
    ),
    ("bare string", {"id": 1, "include": "journals"}, {"id": 1, "include": ["journals"]}),
    ("comma list", {"id": 1, "include": "journals,watchers"}, {"id": 1, "include": ["journals", "watchers"]}),
    ("comma integers", {"id": 1, "ids": "3,4"}, {"id": 1, "ids": [3, 4]}),
    ("bare integer for list", {"id": 1, "ids": 3}, {"id": 1, "ids": [3]}),
    (
        "JSON object string",
        {"id": 1, "filters": '{"status": "open", "limit": "5"}'},
        {"id": 1, "filters": {"status": "open", "limit": 5}},
    ),
    (
        "one object as JSON text for a list",
        {"id": 1, "fields": '{"id": "3", "value": "x"}'},
        {"id": 1, "fields": [{"id": 3, "value": "x"}]},
    ),
    ("JSON list of objects", {"id": 1, "fields": '[{"id": 3}]'}, {"id": 1, "fields": [{"id": 3}]}),
    ("null for optional", {"id": 1, "ratio": None}, {"id": 1}),
    ("null list", {"id": 1, "include": None}, {"id": 1}),
    ("string kept exactly", {"id": 1, "name": " 12, true "}, {"id": 1, "name": " 12, true "}),
    ("null for required", {"id": None}, None),
]


STRICTER = {
    "beyond int64": "an id beyond int64 is a mistake no backend can serve; the issue asks for a clear error",
}
"""Forms the SDK accepts and mcpkit refuses on purpose, with the reason."""


async def _outcome(client: Client, arguments: dict[str, Any]) -> tuple[bool, str]:
    result = await client.call_tool("get_issue", arguments)
    text = "".join(getattr(c, "text", "") for c in result.content)
    return not result.is_error, text


async def test_mcpkit_accepts_everything_the_sdk_accepts_and_more() -> None:
    rows: list[str] = []
    async with Client(_sdk_server()) as sdk, Client(_mcpkit_server()) as kit:
        for label, arguments, expected in FORMS:
            sdk_ok, _ = await _outcome(sdk, arguments)
            kit_ok, text = await _outcome(kit, arguments)
            rows.append(
                f"{label:24} sdk={'ok' if sdk_ok else 'refused':8} mcpkit={'ok' if kit_ok else 'refused'}"
            )
            if sdk_ok and label not in STRICTER:
                assert kit_ok, f"{label}: the SDK accepts {arguments} but mcpkit refused: {text}"
            if expected is None:
                assert not kit_ok, f"{label}: mcpkit accepted {arguments}"
                assert "\n" not in text and "Traceback" not in text
            else:
                assert kit_ok, f"{label}: mcpkit refused {arguments}: {text}"
                assert json.loads(text) == expected, label
    superset = [r for r in rows if "sdk=refused" in r and "mcpkit=ok" in r]
    print("\n".join(rows))
    assert superset, "mcpkit must accept forms the SDK refuses (bare and comma lists at least)"


async def test_refusals_name_the_parameter_the_value_and_an_example() -> None:
    async with Client(_mcpkit_server()) as kit:
        ok, text = await _outcome(kit, {"id": "2.5"})
        assert not ok
        assert "id" in text and '"2.5"' in text and "for example 12" in text
        ok, text = await _outcome(kit, {"id": str(INT64_MAX + 5)})
        assert not ok and "64 bits" in text
        ok, text = await _outcome(kit, {})
        assert not ok and "id is required, for example id=12" in text


scalar_schema = st.sampled_from(["integer", "number", "boolean", "string"])


@settings(max_examples=300, deadline=None)
@given(
    value=st.integers(-(2**63), 2**63 - 1),
    left=st.sampled_from(["", " ", "\t"]),
    right=st.sampled_from(["", " "]),
)
def test_numeric_strings_become_the_same_integer(value: int, left: str, right: str) -> None:
    schema = p.object_schema({"n": p.integer()})
    assert coerce_arguments(schema, {"n": f"{left}{value}{right}"}) == {"n": value}


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=50))
def test_a_string_parameter_is_never_changed(text: str) -> None:
    schema = p.object_schema({"s": p.string(), "tags": p.array(p.string())})
    assert coerce_arguments(schema, {"s": text})["s"] == text


@settings(max_examples=300, deadline=None)
@given(values=st.lists(st.integers(-(10**12), 10**12), min_size=1, max_size=8), spaced=st.booleans())
def test_comma_lists_of_integers(values: list[int], spaced: bool) -> None:
    schema = p.object_schema({"ids": p.array(p.integer())})
    joined = (", " if spaced else ",").join(str(v) for v in values)
    assert coerce_arguments(schema, {"ids": joined}) == {"ids": values}
    assert coerce_arguments(schema, {"ids": json.dumps(values)}) == {"ids": values}


valid_values = st.fixed_dictionaries(
    {"id": st.integers(1, 2**63 - 1)},
    optional={
        "include": st.lists(st.text(max_size=10), max_size=4),
        "flag": st.booleans(),
        "ratio": st.floats(allow_nan=False, allow_infinity=False),
        "ids": st.lists(st.integers(-(2**63), 2**63 - 1), max_size=4),
        "name": st.text(max_size=20),
    },
)


@settings(max_examples=300, deadline=None)
@given(arguments=valid_values)
def test_valid_arguments_pass_unchanged(arguments: dict[str, Any]) -> None:
    assert ArgumentValidator(SCHEMA).prepare(arguments) == arguments


@settings(max_examples=300, deadline=None)
@given(
    arguments=st.dictionaries(
        st.sampled_from(["id", "include", "flag", "ratio", "ids", "filters", "name", "extra"]),
        st.one_of(
            st.none(),
            st.booleans(),
            st.integers(),
            st.floats(),
            st.text(max_size=20),
            st.lists(st.text(max_size=5), max_size=3),
        ),
        max_size=6,
    )
)
def test_any_input_gives_coerced_arguments_or_one_line(arguments: dict[str, Any]) -> None:
    validator = ArgumentValidator(SCHEMA)
    try:
        prepared = validator.prepare(arguments)
    except ArgumentError as exc:
        message = str(exc)
        assert message and "\n" not in message and len(message) <= 300
    else:
        assert validator.problem(prepared) is None
        assert validator.prepare(prepared) == prepared, "coercion is idempotent"


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=12,
)
schema_like = st.recursive(
    st.fixed_dictionaries(
        {},
        optional={
            "type": st.sampled_from(["integer", "number", "boolean", "string", "array", "object", "null"])
            | json_values,
            "enum": json_values,
            "required": json_values,
            "minimum": json_values,
        },
    ),
    lambda inner: st.fixed_dictionaries(
        {"type": st.sampled_from(["object", "array"])},
        optional={
            "properties": st.dictionaries(st.text(max_size=5), inner, max_size=3) | json_values,
            "items": inner | json_values,
            "required": json_values,
        },
    ),
    max_leaves=8,
)


@settings(max_examples=400, deadline=None)
@given(schema=schema_like, arguments=st.dictionaries(st.text(max_size=5), json_values, max_size=4))
def test_coercion_never_crashes_on_any_schema_a_downstream_may_send(
    schema: dict[str, Any], arguments: dict[str, Any]
) -> None:
    """The gateway coerces for servers no one here wrote: malformed schemas must not crash it."""
    from mcpkit.server._arguments import example_for

    try:
        coerce_arguments({"type": "object", "properties": {"x": schema}}, {"x": arguments})
        coerce_arguments(schema, arguments)
    except ArgumentError as exc:
        assert "\n" not in str(exc)
    example_for(schema)
