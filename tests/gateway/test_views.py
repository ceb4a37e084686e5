"""Views, argument translation and the client table, without processes (plain definitions)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpkit.compat import PROFILES, lint
from mcpkit.gateway import SAFE_SET, profiles_for
from mcpkit.gateway.arguments import restore
from mcpkit.gateway.clients import has_tool_budget, markdown_table, match
from mcpkit.gateway.naming import Route
from mcpkit.gateway.views import build_view
from tests.compat.strategies import tools as generated_tools

DOCS = Path(__file__).resolve().parents[2] / "docs" / "gateway.md"

CHOICE = {
    "name": "s_choice",
    "description": "Pick a value (numbers or words).",
    "inputSchema": {
        "type": "object",
        "properties": {"value": {"type": ["number", "string"]}, "note": {"type": "string"}},
        "required": ["value"],
    },
}
TAGS = {
    "name": "s_tags",
    "description": "Store tags.",
    "inputSchema": {
        "type": "object",
        "properties": {"tags": {"type": "object", "additionalProperties": {"type": "string"}}},
    },
}


def _tools(*defs: dict[str, Any]) -> dict[str, tuple[Route, dict[str, Any]]]:
    return {d["name"]: (Route("s", d["name"][2:]), d) for d in defs}


@pytest.mark.parametrize("profile", list(PROFILES))
def test_a_view_lints_clean_for_its_profiles(profile: str) -> None:
    profiles = profiles_for(None, profile)
    view = build_view(_tools(CHOICE, TAGS), profiles, "gateway")
    errors = [f for f in lint(view.listed(), list(profiles), server_name="gateway") if f.severity == "error"]
    assert errors == []
    assert set(view.entries) | set(view.quarantined) == {"s_choice", "s_tags"}


def test_a_free_key_map_is_quarantined_for_openai_strict_only() -> None:
    strict = build_view(_tools(CHOICE, TAGS), profiles_for(None, "openai-strict"), "gateway")
    assert "s_tags" in strict.quarantined and "strict-additional-properties" in strict.quarantined["s_tags"]
    assert "s_tags" in build_view(_tools(TAGS), profiles_for(None, "openai"), "gateway").entries


def test_over_the_tool_limit_the_view_is_the_three_meta_tools() -> None:
    many = [
        {"name": f"s_t{i}", "description": "A tool.", "inputSchema": {"type": "object", "properties": {}}}
        for i in range(41)
    ]
    view = build_view(_tools(*many), profiles_for("cursor-vscode"), "gateway")
    assert view.meta and [t["name"] for t in view.listed()] == ["search_tools", "describe_tool", "call_tool"]
    assert "41 tools" in (view.over_limit or "")
    assert len(view.entries) == 41  # still reachable through call_tool
    small = build_view(_tools(*many[:40]), profiles_for("cursor-vscode"), "gateway")
    assert not small.meta


def test_an_unknown_client_gets_every_tool_whatever_the_count() -> None:
    """The safe set adapts to every known client's rules, but imposes none's tool limit."""
    many = [
        {"name": f"s_t{i}", "description": "A tool.", "inputSchema": {"type": "object", "properties": {}}}
        for i in range(200)
    ]
    view = build_view(_tools(*many), profiles_for(None), "gateway", tool_budget=has_tool_budget(SAFE_SET))
    assert not view.meta and len(view.listed()) == 200
    assert has_tool_budget(profiles_for("cursor-vscode")) and has_tool_budget(profiles_for(None, "cursor"))


@pytest.mark.parametrize("profiles", [SAFE_SET, ("mcp-spec", "openai-strict")])
def test_meta_tools_lint_clean(profiles: tuple[str, ...]) -> None:
    from mcpkit.gateway.metatools import meta_tools

    errors = [
        f for f in lint(meta_tools(profiles), list(profiles), server_name="gateway") if f.severity == "error"
    ]
    assert errors == []


def test_arguments_are_translated_back() -> None:
    # ["number", "boolean"] became "string" for Claude Desktop: the text is sent parsed.
    flags = {"type": "object", "properties": {"v": {"type": ["number", "boolean"]}}}
    assert restore({"v": "5"}, flags) == {"v": 5}
    assert restore({"v": "true"}, flags) == {"v": True}
    assert restore({"v": "maybe"}, flags) == {"v": "maybe"}  # the downstream says why it refuses
    schema = CHOICE["inputSchema"]
    assert restore({"value": "5"}, schema) == {"value": "5"}  # a string is valid there: sent as is
    assert restore({"value": 2, "note": None}, schema) == {"value": 2}  # strict mode's null for "left out"
    assert restore({"unknown": None}, schema) == {"unknown": None}  # not ours to judge


@settings(max_examples=200, deadline=None)
@given(value=st.one_of(st.integers(), st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=20)))
def test_a_value_the_original_accepts_is_sent_as_the_model_meant_it(value: Any) -> None:
    schema = CHOICE["inputSchema"]
    sent = restore({"value": value}, schema)["value"]
    assert sent == value or (isinstance(value, str) and json.loads(value) == sent)


def test_nested_refs_and_arrays_are_followed() -> None:
    schema = {
        "type": "object",
        "properties": {"items": {"type": "array", "items": {"$ref": "#/$defs/item"}}},
        "$defs": {
            "item": {"type": "object", "properties": {"n": {"type": "integer"}, "x": {"type": "string"}}}
        },
    }
    assert restore({"items": [{"n": "3", "x": None}]}, schema) == {"items": [{"n": 3}]}


def test_client_names_choose_profiles() -> None:
    assert profiles_for("claude-ai") == ("mcp-spec", "claude-desktop-2025", "claude")
    assert profiles_for("gemini-cli-mcp-client") == ("mcp-spec", "gemini")
    assert match("Cursor-VSCode-1.2") is not None and profiles_for("cursor-foo") == ("mcp-spec", "cursor")
    assert profiles_for("someone-new") == SAFE_SET
    assert profiles_for(None) == SAFE_SET
    assert profiles_for("claude-ai", "gemini") == ("mcp-spec", "gemini")


def test_docs_keep_the_client_table() -> None:
    assert markdown_table() in DOCS.read_text(encoding="utf-8")


@settings(max_examples=200, deadline=None)
@given(
    args=st.dictionaries(
        st.sampled_from(["value", "note", "other"]),
        st.one_of(st.none(), st.integers(), st.text(max_size=8), st.booleans()),
        max_size=3,
    )
)
def test_arguments_that_fit_pass_unchanged_and_coercion_never_breaks_a_fit(args: dict[str, Any]) -> None:
    from jsonschema import Draft202012Validator

    from mcpkit.gateway.arguments import Restorer

    schema = CHOICE["inputSchema"]
    valid = Draft202012Validator(schema).is_valid
    sent = Restorer(schema)(args)
    if valid(args):
        assert sent == args
    if valid(restore(args, schema)):
        assert valid(sent)


def test_sloppy_forms_are_coerced_like_mcpkit_servers_do() -> None:
    from mcpkit.gateway.arguments import Restorer

    schema = {
        "type": "object",
        "properties": {"flag": {"type": "boolean"}, "ids": {"type": "array", "items": {"type": "integer"}}},
    }
    assert Restorer(schema)({"flag": "yes", "ids": "1,2"}) == {"flag": True, "ids": [1, 2]}


@settings(max_examples=60, deadline=None)
@given(
    batch=st.lists(generated_tools(), min_size=1, max_size=4),
    profiles=st.sampled_from([SAFE_SET, *(profiles_for(None, p) for p in PROFILES)]),
)
def test_every_listed_tool_lints_clean_and_the_rest_is_quarantined(
    batch: list[dict[str, Any]], profiles: tuple[str, ...]
) -> None:
    """The gateway's promise for any server: what a client sees passes its rules; nothing else
    is silently lost (each tool is listed or quarantined with a reason)."""
    tools = {
        f"s_t{i}": (Route("s", str(t.get("name"))), {**t, "name": f"s_t{i}"}) for i, t in enumerate(batch)
    }
    view = build_view(tools, profiles, "gateway")
    assert set(view.entries) | set(view.quarantined) == set(tools)
    assert all(view.quarantined.values())
    errors = [f for f in lint(view.listed(), list(profiles), server_name="gateway") if f.severity == "error"]
    assert errors == []
