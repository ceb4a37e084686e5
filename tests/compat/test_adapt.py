"""adapt and adapt_all: what each rewrite produces, and what it refuses to do."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from mcpkit.compat import adapt, adapt_all, errors, lint
from mcpkit.compat._names import name_hash
from mcpkit.tools import ToolSpec
from mcpkit.tools import params as p
from tests.compat.cases import params, tool

S = {"type": "string"}


def test_seed_000_show_user_becomes_a_string_id() -> None:
    bad = tool(
        name="show_user",
        description="Show a user (requires admin privileges)",
        inputSchema=params(
            id={"type": ["number", "string"], "description": "User ID as number or 'current'"}
        ),
    )
    fixed, changes = adapt(bad, "claude-desktop-2025")
    prop = fixed["inputSchema"]["properties"]["id"]
    assert prop["type"] == "string"
    assert prop["description"] == "User ID as number or 'current'. Accepts a number or text, sent as text."
    assert fixed["description"] == "Show a user, requires admin privileges"
    assert {c.rule for c in changes} == {"desktop-type-arrays", "desktop-description-parentheses"}
    assert lint([fixed], "claude-desktop-2025") == []


def test_nullable_type_array_keeps_its_type_and_gemini_says_nullable() -> None:
    bad = tool(inputSchema=params(v={"type": ["integer", "null"]}))
    desktop, _ = adapt(bad, "claude-desktop-2025")
    assert desktop["inputSchema"]["properties"]["v"] == {"type": "integer"}
    gem, _ = adapt(bad, "gemini")
    assert gem["inputSchema"]["properties"]["v"] == {"type": "integer", "nullable": True}


def test_output_type_array_is_widened_not_narrowed() -> None:
    bad = tool(outputSchema={"type": "object", "properties": {"v": {"type": ["string", "null"]}}})
    fixed, _ = adapt(bad, "claude-desktop-2025")
    v = fixed["outputSchema"]["properties"]["v"]
    assert "type" not in v and v["description"] == "Either text or null."
    validator = jsonschema.Draft202012Validator(fixed["outputSchema"])
    assert validator.is_valid({"v": None}) and validator.is_valid({"v": "x"})


def test_gemini_inlines_references_and_keeps_meaning() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"$ref": "#/$defs/Pair"},
            "b": {"$ref": "#/definitions/Name", "description": "B"},
        },
        "$defs": {"Pair": {"type": "object", "properties": {"left": {"$ref": "#/definitions/Name"}}}},
        "definitions": {"Name": {"type": "string", "minLength": 1}},
    }
    fixed, changes = adapt(tool(inputSchema=schema), "gemini")
    out = fixed["inputSchema"]
    assert "$defs" not in out and "definitions" not in out
    assert out["properties"]["a"]["properties"]["left"] == {"type": "string", "minLength": 1}
    assert out["properties"]["b"] == {"type": "string", "minLength": 1, "description": "B"}
    assert any(c.action == "inline-refs" and c.applied for c in changes)
    before, after = jsonschema.Draft202012Validator(schema), jsonschema.Draft202012Validator(out)
    for instance in ({"a": {"left": ""}}, {"a": {"left": "x"}}, {"b": ""}, {"b": "y"}, {"a": {"left": 3}}):
        assert before.is_valid(instance) == after.is_valid(instance), instance


def test_cyclic_reference_is_left_and_reported() -> None:
    schema = {
        "type": "object",
        "properties": {"root": {"$ref": "#/$defs/Node"}},
        "$defs": {"Node": {"type": "object", "properties": {"child": {"$ref": "#/$defs/Node"}}}},
    }
    fixed, changes = adapt(tool(inputSchema=schema), "gemini")
    assert fixed["inputSchema"]["$defs"] == schema["$defs"]
    left = [c for c in changes if not c.applied]
    assert [c.rule for c in left] == ["gemini-refs"]
    assert "cyclic reference #/$defs/Node" in left[0].detail
    assert "gemini-refs" in {f.rule for f in errors(lint([fixed], "gemini"))}


def test_reference_with_contradicting_sibling_is_left() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/A", "type": "integer"}},
        "$defs": {"A": S},
    }
    fixed, changes = adapt(tool(inputSchema=schema), "gemini")
    assert fixed["inputSchema"]["properties"]["a"]["$ref"] == "#/$defs/A"
    assert any("contradicts" in c.detail and not c.applied for c in changes)


def test_gemini_rewrites_keywords_into_the_subset() -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "n": {"type": "integer", "exclusiveMinimum": 0},
            "mode": {"const": "fast"},
            "x": {"oneOf": [{"type": "string"}, {"type": "number"}]},
        },
    }
    fixed, _ = adapt(tool(inputSchema=schema), "gemini")
    out = fixed["inputSchema"]
    assert "$schema" not in out and "additionalProperties" not in out
    assert out["properties"]["n"] == {"type": "integer", "minimum": 1}
    assert out["properties"]["mode"] == {"enum": ["fast"], "type": "string"}
    # anyOf without a type is refused by the API (row 12): text that names both, parsed back
    assert out["properties"]["x"] == {
        "type": "string",
        "description": "Accepts text or a number, sent as text.",
    }
    assert errors(lint([fixed], "gemini")) == []


def test_strict_makes_optional_properties_nullable_and_required() -> None:
    schema = params(
        id=S,
        level={"type": "string", "enum": ["a", "b"]},
        opts={"type": "object", "properties": {"deep": {"type": "boolean"}}},
    ) | {"required": ["id"]}
    fixed, _ = adapt(tool(inputSchema=schema), "openai-strict")
    out = fixed["inputSchema"]
    assert out["required"] == ["id", "level", "opts"]
    assert out["additionalProperties"] is False
    assert out["properties"]["level"] == {"type": ["string", "null"], "enum": ["a", "b", None]}
    opts = out["properties"]["opts"]
    assert opts["type"] == ["object", "null"]
    assert opts["required"] == ["deep"] and opts["additionalProperties"] is False
    assert opts["properties"]["deep"]["type"] == ["boolean", "null"]
    validator = jsonschema.Draft202012Validator(out)
    assert validator.is_valid({"id": "1", "level": None, "opts": None})


def test_root_anyof_branches_fold_into_flat_properties() -> None:
    schema = {
        "type": "object",
        "anyOf": [
            {"type": "object", "properties": {"id": S, "q": S}, "required": ["id", "q"]},
            {"type": "object", "properties": {"key": S, "q": S}, "required": ["key", "q"]},
        ],
    }
    fixed, changes = adapt(tool(inputSchema=schema), "claude")
    out = fixed["inputSchema"]
    assert "anyOf" not in out
    assert sorted(out["properties"]) == ["id", "key", "q"]
    assert out["required"] == ["q"]  # only what every branch requires
    assert [c.action for c in changes] == ["fold-branches"]


def test_root_branch_that_is_not_an_object_is_left() -> None:
    schema = {"type": "object", "oneOf": [{"type": "string"}, {"type": "object"}]}
    _, changes = adapt(tool(inputSchema=schema), "claude")
    assert [(c.rule, c.applied) for c in changes] == [("claude-root-combinators", False)]


def test_long_names_get_a_stable_hash_suffix() -> None:
    long_a, long_b = "list_" + "a" * 70, "list_" + "a" * 69 + "b"
    result = adapt_all([tool(name=long_a), tool(name=long_b)], "claude", server_name="redmine")
    names = [t["name"] for t in result.tools]
    budget = 64 - len("mcp__redmine__")
    assert all(len(n) <= budget for n in names)
    assert names[0].endswith("_" + name_hash(long_a)) and names[1].endswith("_" + name_hash(long_b))
    assert names[0] != names[1]
    again = adapt_all([tool(name=long_a)], "claude", server_name="redmine")
    assert again.tools[0]["name"] == names[0]
    assert result.name_map == {names[0]: long_a, names[1]: long_b}


def test_sanitised_names_that_collide_are_made_unique() -> None:
    result = adapt_all([tool(name="a_b"), tool(name="a.b"), tool(name="a b")], "claude")
    names = [t["name"] for t in result.tools]
    assert names[0] == "a_b" and len(set(names)) == 3
    assert result.renamed == {"a.b": names[1], "a b": names[2]}
    assert any(c.rule == "spec-unique-names" for c in result.changes)


def test_server_name_too_long_for_any_tool_name_is_reported() -> None:
    _, changes = adapt(tool(name="t"), "claude", server_name="s" * 60)
    assert any(c.rule == "claude-code-name-length" and not c.applied for c in changes)


async def _handler(args: dict[str, Any]) -> str:
    return "ok"


def test_toolspec_in_toolspec_out_with_the_same_handler() -> None:
    spec = ToolSpec(
        name="time.entries",
        description="List time_entries (paged)",
        input_schema=p.object_schema({"project": p.string("Project id (number or key)")}),
        handler=_handler,
        category="time",
        read_only=True,
    )
    fixed, changes = adapt(spec, "claude-desktop-2025")
    assert isinstance(fixed, ToolSpec)
    assert fixed.handler is _handler and fixed.category == "time" and fixed.read_only
    assert fixed.name == "time_entries"
    assert fixed.description == "List time entries, paged"
    assert fixed.input_schema["properties"]["project"]["description"] == "Project id, number or key"
    assert spec.name == "time.entries"  # the input is untouched
    assert lint([fixed], ["mcp-spec", "claude-desktop-2025"]) == []
    assert sorted((c.rule, c.pointer) for c in changes) == [
        ("desktop-description-parentheses", "/description"),
        ("desktop-description-parentheses", "/inputSchema/properties/project/description"),
        ("desktop-description-underscores", "/description"),
        ("desktop-name", "/name"),
    ]


def test_sdk_tool_models_are_accepted() -> None:
    import mcp_types

    model = mcp_types.Tool.model_validate(tool(name="a.b"))
    assert [f.rule for f in lint([model], "claude")] == ["claude-name-chars"]


@pytest.mark.parametrize("profile", ["mcp-spec", "claude-desktop-2025"])
def test_clean_mcpkit_tool_passes_default_profiles_untouched(profile: str) -> None:
    spec = ToolSpec(
        name="show-user",
        description="Show one user by number, or current for the key owner.",
        input_schema=p.object_schema({"id": p.string("User number or current")}, required=["id"]),
        handler=_handler,
    )
    assert lint([spec], profile) == []
    fixed, changes = adapt(spec, profile)
    assert changes == [] and fixed.definition() == spec.definition()


def test_change_and_finding_render_as_one_line() -> None:
    _, changes = adapt(tool(description="a_b"), "claude-desktop-2025")
    assert str(changes[0]) == 'show-user/description: rewrite-description: "a_b" -> "a b"'
    finding = lint([tool(description="a_b")], "claude-desktop-2025")[0]
    assert str(finding).startswith(
        "error: desktop-description-underscores [claude-desktop-2025] show-user/description:"
    )


def _guarded_profile(*fixes: Any) -> Any:
    """A profile whose rules fire on an ``x-flag`` keyword and fix it with ``fixes`` (in order)."""
    from mcpkit.compat import Profile, Rule
    from mcpkit.compat._model import Issue

    def check(definition: dict[str, Any], ctx: Any) -> Any:
        if "x-flag" in definition.get("inputSchema", {}):
            yield Issue("/inputSchema/x-flag", "flagged")

    rules = tuple(
        Rule(id=f"flag-{i}", severity="error", client="c", citation="c", summary="s", check=check, fix=fix)
        for i, fix in enumerate(fixes)
    )
    return Profile(name="guarded", client="c", description="d", rules=rules)


def _break_root(definition: dict[str, Any], ctx: Any) -> list[Any]:
    from mcpkit.compat._model import Edit

    del definition["inputSchema"]["type"]  # an error the spec counts: the root is no longer an object
    return [Edit("/inputSchema/type", "drop", "dropped the root type")]


def _clear_flag(definition: dict[str, Any], ctx: Any) -> list[Any]:
    from mcpkit.compat._model import Edit

    definition["inputSchema"].pop("x-flag", None)
    return [Edit("/inputSchema/x-flag", "drop", "removed x-flag")]


def test_a_rewrite_that_adds_errors_is_not_made() -> None:
    flagged = tool(inputSchema={"type": "object", "properties": {}, "x-flag": True})
    kept, changes = adapt(flagged, _guarded_profile(_break_root))
    assert kept == flagged
    assert [c for c in changes if not c.applied and "errors (spec-input-schema-object" in c.detail]
    # with a fixer that helps beside the one that harms, only the harmful one is skipped
    fixed, changes = adapt(flagged, _guarded_profile(_break_root, _clear_flag))
    assert fixed["inputSchema"] == {"type": "object", "properties": {}}
    assert any(not c.applied and c.rule == "flag-0" and c.detail.startswith("skipped") for c in changes)


def test_gemini_keeps_an_object_with_alternative_required_names() -> None:
    """The gateway once hid this tool from gemini-cli: adapt dropped the root type and the
    required lists, then its own output failed lint and was quarantined."""
    from mcpkit.gateway.views import adapt_for

    schema = {
        "type": "object",
        "properties": {"id": {"type": "string"}, "name": {"type": "string"}},
        "anyOf": [{"required": ["id"]}, {"required": ["name"]}],
    }
    adapted, reason = adapt_for(tool(inputSchema=schema), ("mcp-spec", "gemini"), "gw")
    assert reason is None
    assert adapted["inputSchema"] == {
        "type": "object",
        "properties": {"id": {"type": "string"}, "name": {"type": "string"}},
        "description": "Requires id or name.",
    }
