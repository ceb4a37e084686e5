"""Hand-written tools that break exactly one rule, and a near twin that does not.

Every rule in every profile has at least one case here (a test checks that), so a new rule
cannot land without its positive and negative example.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

DRAFT_07 = "http://json-schema.org/draft-07/schema#"
DRAFT_04 = "http://json-schema.org/draft-04/schema#"


def tool(
    name: str = "show-user",
    description: str = "Show one user account: name, roles and last login.",
    **schema: Any,
) -> dict[str, Any]:
    """A clean tool; keyword arguments replace parts of the definition."""
    out: dict[str, Any] = {
        "name": name,
        "description": description,
        "inputSchema": {"type": "object", "properties": {"id": {"type": "string", "description": "User id"}}},
    }
    for key, value in schema.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = value
    return out


def params(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


@dataclass
class Case:
    """``bad`` breaks ``rule`` at ``pointer`` (for tool ``tool``); ``good`` is the same idea, fixed."""

    rule: str
    profile: str
    bad: list[dict[str, Any]]
    pointer: str
    good: list[dict[str, Any]]
    server_name: str | None = None
    tool: str | None = "show-user"
    fixable: bool = True

    @property
    def id(self) -> str:
        return f"{self.rule}:{self.pointer or 'set'}"


LONG = "x" * 65
S = {"type": "string"}

CASES: list[Case] = [
    # -- mcp-spec
    Case("spec-tool-fields", "mcp-spec", [tool(name="")], "/name", [tool()], tool=""),
    Case("spec-tool-fields", "mcp-spec", [tool(name=None)], "/name", [tool()], tool="#0", fixable=False),
    Case("spec-tool-fields", "mcp-spec", [tool(description=5)], "/description", [tool()]),
    Case(
        "spec-name-format",
        "mcp-spec",
        [tool(name="show user")],
        "/name",
        [tool(name="a.b-c_D9")],
        tool="show user",
    ),
    Case(
        "spec-name-format",
        "mcp-spec",
        [tool(name="a" * 129)],
        "/name",
        [tool(name="a" * 128)],
        tool="a" * 129,
    ),
    Case("spec-unique-names", "mcp-spec", [tool(), tool()], "/name", [tool(), tool(name="other")]),
    Case("spec-input-schema-object", "mcp-spec", [tool(inputSchema=None)], "/inputSchema", [tool()]),
    Case(
        "spec-input-schema-object",
        "mcp-spec",
        [tool(inputSchema={"properties": {}})],
        "/inputSchema/type",
        [tool()],
    ),
    Case(
        "spec-input-schema-object",
        "mcp-spec",
        [tool(inputSchema={"type": "string"})],
        "/inputSchema/type",
        [tool()],
        fixable=False,
    ),
    Case(
        "spec-output-schema-object",
        "mcp-spec",
        [tool(outputSchema={"type": "array", "items": S})],
        "/outputSchema/type",
        [tool(outputSchema=params(n={"type": "number"}))],
    ),
    Case(
        "spec-schema-valid",
        "mcp-spec",
        [tool(inputSchema=params(id={"type": "strin"}))],
        "/inputSchema/properties/id/type",
        # draft-04 spelling is valid because $schema declares draft-04
        [
            tool(
                inputSchema={
                    "$schema": DRAFT_04,
                    **params(n={"type": "number", "minimum": 0, "exclusiveMinimum": True}),
                }
            )
        ],
        fixable=False,
    ),
    # -- claude-desktop-2025 (seed 000)
    Case(
        "desktop-name",
        "claude-desktop-2025",
        [tool(name="show.user")],
        "/name",
        [tool(name="show_user-2")],
        tool="show.user",
    ),
    Case("desktop-name", "claude-desktop-2025", [tool(name=LONG)], "/name", [tool(name="x" * 64)], tool=LONG),
    Case(
        "desktop-description-parentheses",
        "claude-desktop-2025",
        [tool(description="List users (requires admin privileges)")],
        "/description",
        [tool(description="List users. Requires admin privileges.")],
    ),
    Case(
        "desktop-description-parentheses",
        "claude-desktop-2025",
        [
            tool(
                inputSchema=params(
                    filter={
                        "type": "object",
                        "properties": {"q": {"type": "string", "description": "Query (text)"}},
                    }
                )
            )
        ],
        "/inputSchema/properties/filter/properties/q/description",
        # a parenthesis in a default, a title or a property name is not a description
        [tool(inputSchema=params(**{"q(x)": {"type": "string", "default": "(a)", "title": "(b)"}}))],
    ),
    Case(
        "desktop-description-parentheses",
        "claude-desktop-2025",
        [
            tool(
                outputSchema={
                    "type": "object",
                    "properties": {"n": {"type": "number", "description": "Count (total)"}},
                }
            )
        ],
        "/outputSchema/properties/n/description",
        [
            tool(
                outputSchema={
                    "type": "object",
                    "properties": {"n": {"type": "number", "description": "Total count"}},
                }
            )
        ],
    ),
    Case(
        "desktop-description-underscores",
        "claude-desktop-2025",
        [tool(description="Additional data like time_entries, custom_fields")],
        "/description",
        [tool(description="Additional data like time tracking records, custom fields")],
    ),
    Case(
        "desktop-description-underscores",
        "claude-desktop-2025",
        [tool(inputSchema=params(project_id={"type": "string", "description": "The project_id"}))],
        "/inputSchema/properties/project_id/description",
        # a parameter named description (a property name, not the keyword) is fine
        [
            tool(
                inputSchema=params(
                    project_id={"type": "string", "description": "Project number or key"}, description=S
                )
            )
        ],
    ),
    Case(
        "desktop-description-lines",
        "claude-desktop-2025",
        [tool(description="one\ntwo\nthree\nfour\nfive")],
        "/description",
        [tool(description="one\ntwo\nthree\nfour")],
    ),
    Case(
        "desktop-type-arrays",
        "claude-desktop-2025",
        [tool(inputSchema=params(id={"type": ["number", "string"], "description": "User id or current"}))],
        "/inputSchema/properties/id/type",
        [tool(inputSchema=params(id={"type": "string", "description": "User id or current"}))],
    ),
    Case(
        "desktop-type-arrays",
        "claude-desktop-2025",
        [tool(outputSchema={"type": "object", "properties": {"v": {"type": ["string", "null"]}}})],
        "/outputSchema/properties/v/type",
        [tool(outputSchema={"type": "object", "properties": {"v": S}})],
    ),
    # -- shared TypeScript SDK rules
    Case(
        "ts-sdk-input-root-object",
        "cursor",
        [tool(inputSchema={"properties": {}})],
        "/inputSchema/type",
        [tool()],
    ),
    Case(
        "ts-sdk-output-root-object",
        "claude",
        [tool(outputSchema={"type": "string"})],
        "/outputSchema/type",
        [tool(outputSchema={"type": "object"})],
    ),
    Case(
        "ts-sdk-ref-resolvable",
        "claude-desktop-2025",
        [tool(inputSchema=params(a={"$ref": "#/$defs/Missing"}))],
        "/inputSchema/properties/a/$ref",
        [tool(inputSchema={**params(a={"$ref": "#/$defs/A"}), "$defs": {"A": S}})],
        fixable=False,
    ),
    Case(
        "ts-sdk-ref-resolvable",
        "cursor",
        [tool(inputSchema=params(a={"$ref": "https://example.com/a.json"}))],
        "/inputSchema/properties/a/$ref",
        [tool(inputSchema={**params(a={"$ref": "#/definitions/A"}), "definitions": {"A": S}})],
        fixable=False,
    ),
    # -- claude
    Case(
        "claude-name-chars",
        "claude",
        [tool(name="show.user")],
        "/name",
        [tool(name="show_user")],
        tool="show.user",
    ),
    Case(
        "claude-code-name-length",
        "claude",
        [tool(name="t" * 55)],
        "/name",
        [tool(name="t" * 54)],
        server_name="srv",
        tool="t" * 55,
    ),
    Case("claude-code-name-length", "claude", [tool(name=LONG)], "/name", [tool(name="x" * 64)], tool=LONG),
    Case(
        "claude-root-combinators",
        "claude",
        [
            tool(
                inputSchema={
                    "type": "object",
                    "anyOf": [params(id=S) | {"required": ["id"]}, params(key=S) | {"required": ["key"]}],
                }
            )
        ],
        "/inputSchema/anyOf",
        [tool(inputSchema=params(id=S, key=S))],
    ),
    Case(
        "claude-schema-2020-12",
        "claude",
        [tool(inputSchema=params(pair={"type": "array", "items": [S, S]}))],
        "/inputSchema/properties/pair/items",
        [tool(inputSchema=params(pair={"type": "array", "prefixItems": [S, S]}))],
        fixable=False,
    ),
    Case(
        "claude-code-description-length",
        "claude",
        [tool(description="d" * 2049)],
        "/description",
        [tool(description="d" * 2048)],
        fixable=False,
    ),
    # -- openai, openai-strict
    Case(
        "openai-name-chars",
        "openai",
        [tool(name="show.user")],
        "/name",
        [tool(name="show-user")],
        tool="show.user",
    ),
    Case("openai-name-length", "openai", [tool(name=LONG)], "/name", [tool(name="x" * 64)], tool=LONG),
    Case(
        "openai-tool-count",
        "openai",
        [tool(name=f"t{i}") for i in range(129)],
        "",
        [tool(name=f"t{i}") for i in range(128)],
        tool=None,
        fixable=False,
    ),
    Case(
        "openai-description-length",
        "openai",
        [tool(description="d" * 1025)],
        "/description",
        [tool(description="d" * 1024)],
        fixable=False,
    ),
    Case(
        "openai-root-object",
        "openai",
        [tool(inputSchema={**params(mode=S), "enum": [{"mode": "a"}]})],
        "/inputSchema/enum",
        [tool(inputSchema=params(mode={"type": "string", "enum": ["a", "b"]}))],
    ),
    Case(
        "openai-root-object", "openai", [tool(inputSchema={"properties": {}})], "/inputSchema/type", [tool()]
    ),
    Case(
        "openai-object-properties",
        "openai",
        [tool(inputSchema=params(opts={"type": "object"}))],
        "/inputSchema/properties/opts",
        [tool(inputSchema=params(opts={"type": "object", "properties": {}}))],
    ),
    Case(
        "openai-array-items",
        "openai",
        [tool(inputSchema=params(tags={"type": "array"}))],
        "/inputSchema/properties/tags",
        [tool(inputSchema=params(tags={"type": "array", "items": S}))],
    ),
    Case(
        "strict-additional-properties",
        "openai-strict",
        [tool(inputSchema=params(id=S) | {"required": ["id"]})],
        "/inputSchema/additionalProperties",
        [tool(inputSchema=params(id=S) | {"required": ["id"], "additionalProperties": False})],
    ),
    Case(
        "strict-additional-properties",
        "openai-strict",
        [tool(inputSchema={"type": "object", "properties": {}, "additionalProperties": S})],
        "/inputSchema/additionalProperties",
        [tool(inputSchema={"type": "object", "properties": {}, "additionalProperties": False})],
        fixable=False,
    ),
    Case(
        "strict-all-required",
        "openai-strict",
        [
            tool(
                inputSchema=params(id=S, page={"type": "integer"})
                | {"required": ["id"], "additionalProperties": False}
            )
        ],
        "/inputSchema/required",
        [
            tool(
                inputSchema=params(id=S, page={"type": ["integer", "null"]})
                | {"required": ["id", "page"], "additionalProperties": False}
            )
        ],
    ),
    Case(
        "strict-forbidden-keywords",
        "openai-strict",
        [
            tool(
                inputSchema=params(id={"type": "string", "not": {"enum": ["x"]}})
                | {"required": ["id"], "additionalProperties": False}
            )
        ],
        "/inputSchema/properties/id/not",
        [tool(inputSchema=params(id=S) | {"required": ["id"], "additionalProperties": False})],
    ),
    Case(
        "strict-limits",
        "openai-strict",
        [
            tool(
                inputSchema=params(c={"type": "string", "enum": [str(i) for i in range(1001)]})
                | {"required": ["c"], "additionalProperties": False}
            )
        ],
        "/inputSchema",
        [
            tool(
                inputSchema=params(c={"type": "string", "enum": [str(i) for i in range(1000)]})
                | {"required": ["c"], "additionalProperties": False}
            )
        ],
        fixable=False,
    ),
    # -- gemini
    Case("gemini-name", "gemini", [tool(name="3d-view")], "/name", [tool(name="_3d-view")], tool="3d-view"),
    Case("gemini-name", "gemini", [tool(name="a:b")], "/name", [tool(name="a.b")], tool="a:b"),
    Case(
        "gemini-cli-name-length",
        "gemini",
        [tool(name="t" * 30)],
        "/name",
        [tool(name="t" * 29)],
        server_name="s" * 29,
        tool="t" * 30,
    ),
    Case(
        "gemini-type-arrays",
        "gemini",
        [tool(inputSchema=params(v={"type": ["string", "null"]}))],
        "/inputSchema/properties/v/type",
        [tool(inputSchema=params(v={"type": "string", "nullable": True}))],
    ),
    Case(
        "gemini-refs",
        "gemini",
        [tool(inputSchema={**params(a={"$ref": "#/$defs/A"}), "$defs": {"A": S}})],
        "/inputSchema/$defs",
        [tool(inputSchema=params(a=S))],
    ),
    Case(
        "gemini-keywords",
        "gemini",
        [tool(inputSchema=params(id=S) | {"additionalProperties": False})],
        "/inputSchema/additionalProperties",
        # parameters *named* like keywords are fine
        [tool(inputSchema=params(additionalProperties=S, const=S))],
    ),
    Case(
        "gemini-keywords",
        "gemini",
        [tool(inputSchema={"$schema": DRAFT_07, **params(id=S)})],
        "/inputSchema/$schema",
        [tool()],
    ),
    Case(
        "gemini-enum-strings",
        "gemini",
        [tool(inputSchema=params(level={"type": "integer", "enum": [1, 2, 3]}))],
        "/inputSchema/properties/level/enum",
        [tool(inputSchema=params(level={"type": "string", "enum": ["1", "2", "3"]}))],
    ),
    Case(
        "gemini-required-properties",
        "gemini",
        [tool(inputSchema={"type": "object", "required": ["id"]})],
        "/inputSchema/required",
        [tool(inputSchema=params(id=S) | {"required": ["id"]})],
    ),
    Case(
        "gemini-type-with-anyof",
        "gemini",
        [
            tool(
                inputSchema=params(
                    v={"type": "string", "anyOf": [{"type": "string", "minLength": 1}, {"type": "null"}]}
                )
            )
        ],
        "/inputSchema/properties/v",
        [tool(inputSchema=params(v={"type": "string", "minLength": 1, "nullable": True}))],
    ),
    # The API now needs the type (row 12): branches that do not fold away keep it, and the warning.
    Case(
        "gemini-type-with-anyof",
        "gemini",
        [tool(inputSchema=params(v={"type": "string", "anyOf": [{"minLength": 1}, {"enum": ["-"]}]}))],
        "/inputSchema/properties/v",
        [tool(inputSchema=params(v={"type": "string", "minLength": 1}))],
        fixable=False,
    ),
    # An object's alternatives of required names (the shape adapt once broke: root type and
    # required lists dropped, then its own output quarantined).
    Case(
        "gemini-type-with-anyof",
        "gemini",
        [tool(inputSchema=params(id=S, name=S) | {"anyOf": [{"required": ["id"]}, {"required": ["name"]}]})],
        "/inputSchema",
        [tool(inputSchema=params(id=S, name=S) | {"description": "Requires id or name."})],
    ),
    Case(
        "gemini-missing-type",
        "gemini",
        [tool(inputSchema=params(limit={"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None}))],
        "/inputSchema/properties/limit",
        [tool(inputSchema=params(limit={"type": "integer", "nullable": True, "default": None}))],
    ),
    Case(
        "gemini-missing-type",
        "gemini",
        [tool(inputSchema=params(value={"description": "Any value."}))],
        "/inputSchema/properties/value",
        [tool(inputSchema=params(value={"type": "string", "description": "Any value, as JSON text."}))],
    ),
    Case(
        "gemini-boolean-schema",
        "gemini",
        [tool(inputSchema=params(extra=True))],
        "/inputSchema/properties/extra",
        [tool(inputSchema=params(extra=S))],
    ),
    Case(
        "gemini-number-format",
        "gemini",
        [tool(inputSchema=params(n={"type": "number", "format": "decimal"}))],
        "/inputSchema/properties/n/format",
        [tool(inputSchema=params(n={"type": "integer", "format": "int64"}))],
    ),
    Case(
        "gemini-missing-type",
        "gemini",
        [tool(inputSchema=params(mode={"enum": ["a", "b"]}))],
        "/inputSchema/properties/mode",
        [tool(inputSchema=params(mode={"type": "string", "enum": ["a", "b"]}))],
    ),
    Case(
        "gemini-string-format",
        "gemini",
        [tool(inputSchema=params(url={"type": "string", "format": "uri"}))],
        "/inputSchema/properties/url/format",
        [tool(inputSchema=params(at={"type": "string", "format": "date-time"}))],
    ),
    Case(
        "gemini-array-items",
        "gemini",
        [tool(inputSchema=params(tags={"type": "array"}))],
        "/inputSchema/properties/tags",
        [tool(inputSchema=params(tags={"type": "array", "items": S}))],
    ),
    Case(
        "claude-code-tool-search",
        "claude",
        [tool(name="get_user", description="Get a user, the user.")],
        "/description",
        [tool(name="get_user", description="Show one user account with its roles and last login time.")],
        tool="get_user",
        fixable=False,
    ),
    Case(
        "claude-code-tool-search",
        "claude",
        [tool(description=None)],
        "/description",
        [tool(description="Show one user account, found by login name or id.")],
        fixable=False,
    ),
    # -- cursor
    Case("cursor-name-chars", "cursor", [tool(name="show-user")], "/name", [tool(name="show_user")]),
    Case(
        "cursor-name-length",
        "cursor",
        [tool(name="t" * 31)],
        "/name",
        [tool(name="t" * 30)],
        server_name="s" * 30,
        tool="t" * 31,
    ),
    Case(
        "cursor-tool-count",
        "cursor",
        [tool(name=f"t{i}") for i in range(41)],
        "",
        [tool(name=f"t{i}") for i in range(40)],
        tool=None,
        fixable=False,
    ),
    # -- vscode
    Case(
        "vscode-tool-count",
        "vscode",
        [tool(name=f"t{i}") for i in range(129)],
        "",
        [tool(name=f"t{i}") for i in range(128)],
        tool=None,
        fixable=False,
    ),
    Case(
        "vscode-schema-draft-07",
        "vscode",
        [tool(inputSchema=params(name={"type": "string", "minLength": -1}))],
        "/inputSchema/properties/name/minLength",
        [tool(inputSchema=params(pair={"type": "array", "items": [S, S]}))],
        fixable=False,
    ),
    Case(
        "vscode-name-chars",
        "vscode",
        [tool(name="show.user")],
        "/name",
        [tool(name="Show-User_2")],
        tool="show.user",
    ),
    Case("vscode-name-length", "vscode", [tool(name=LONG)], "/name", [tool(name="x" * 64)], tool=LONG),
    Case(
        "vscode-description-missing",
        "vscode",
        [tool(description=None)],
        "/description",
        [tool(description="Show one user.")],
        fixable=False,
    ),
]
