"""The client profiles: which rules each client needs, with severities and citations.

Every fact here comes from a research report on client rules; "row N" in a citation is the
row of its rules-by-client table, and ``docs/toolkit-compat.md`` shows all rules. Severity follows what the client does: ``error`` when it rejects the
tool, the request or the whole tool list, or crashes; ``warning`` when it degrades (renames,
truncates, drops or hides a tool) or when the report is not confirmed — the summary then says
so. The ``claude-desktop-2025`` profile holds what crashed Claude Desktop in 2025 (descriptions with
parentheses, underscores or more than four lines; type arrays) and is strict by definition.
"""

from __future__ import annotations

from collections.abc import Iterable

from mcpkit.compat._model import NameConstraint, Profile, Rule
from mcpkit.compat._rules import gemini, names, schema, strict, text
from mcpkit.compat._text import remove_parentheses, remove_underscores
from mcpkit.errors import ConfigError

TS_SDK = "TypeScript SDK clients (Claude Desktop, Claude Code, Cursor, Windsurf, Inspector)"

# -- shared by every client built on the TypeScript SDK ---------------------------------------

TS_INPUT_ROOT = schema.input_root_object(
    id="ts-sdk-input-root-object",
    severity="error",
    client=TS_SDK,
    citation="zereight/gitlab-mcp#286 (row 6)",
    summary='Zod invalid_literal when inputSchema has no "type": "object" at the root: the whole tools/list fails.',
)
TS_OUTPUT_ROOT = schema.output_root_object(
    id="ts-sdk-output-root-object",
    severity="error",
    client=TS_SDK,
    citation="anthropics/claude-code#10825 (row 15)",
    summary="invalid_literal at tools.N.outputSchema.type when the output root is not an object: tools/list fails.",
)
TS_REFS = schema.refs_resolvable(
    id="ts-sdk-ref-resolvable",
    severity="error",
    client="Claude Code, Cursor, Kiro, opencode",
    citation="gemini-cli-extensions/stitch#13; davideast/stitch-mcp#184 (row 13)",
    summary="\"can't resolve reference #/$defs/X\": the server's tools fail to load.",
)
TS_RULES = (TS_INPUT_ROOT, TS_OUTPUT_ROOT, TS_REFS)

# -- mcp-spec ---------------------------------------------------------------------------------

SPEC = "MCP specification 2025-11-25"

MCP_SPEC = Profile(
    name="mcp-spec",
    client=SPEC,
    description="The tool rules of the MCP specification, revision 2025-11-25.",
    rules=(
        names.tool_fields(
            id="spec-tool-fields",
            severity="error",
            client=SPEC,
            citation="schema/2025-11-25/schema.ts (Tool: name and inputSchema required, description optional)",
            summary="name is a required string; description is optional but must be a string.",
        ),
        names.name_rule(
            NameConstraint(chars="A-Za-z0-9_.-", max_len=128),
            id="spec-name-format",
            severity="warning",
            client=SPEC,
            citation="docs/specification/2025-11-25/server/tools.mdx (SEP-986)",
            summary="Names SHOULD be 1-128 characters of [A-Za-z0-9_.-]; the SDKs warn and still register.",
        ),
        names.unique_names(
            id="spec-unique-names",
            severity="warning",
            client=SPEC,
            citation="docs/specification/2025-11-25/server/tools.mdx (SEP-986)",
            summary="Names SHOULD be unique per server: a call reaches tools by name only.",
        ),
        schema.input_root_object(
            id="spec-input-schema-object",
            severity="error",
            client=SPEC,
            citation="schema/2025-11-25/schema.ts",
            summary='inputSchema MUST be a JSON Schema object, not null, with "type": "object" at the root.',
        ),
        schema.output_root_object(
            id="spec-output-schema-object",
            severity="error",
            client=SPEC,
            citation="schema/2025-11-25/schema.ts; anthropics/claude-code#10825",
            summary='outputSchema, when given, has "type": "object" at the root (structuredContent is an object).',
        ),
        schema.valid_schema(
            "declared",
            which=("inputSchema", "outputSchema"),
            id="spec-schema-valid",
            severity="error",
            client=SPEC,
            citation="SEP-1613 (default dialect 2020-12); schema/2025-11-25/schema.ts",
            summary="Schemas are valid JSON Schema in the dialect $schema names, 2020-12 when it names none.",
        ),
    ),
)

# -- claude-desktop-2025 (what crashed Claude Desktop) ---------------------------------------

DESKTOP = "Claude Desktop (2025)"
DESKTOP_CRASHES = (
    "crash reports of a Redmine MCP server in Claude Desktop; tech.jugoya.ai/blog/2025-01-09-mcp-tool-descriptions-constraint; "
    "qiita.com/yonaka15/items/50fcce378b45a3fc7f4a (row 5)"
)
DESKTOP_DOUBT = (
    " Reported by one blog post and its repost (Jan 2025), unconfirmed since; an error here because"
    " this profile exists to keep servers clear of exactly these crashes."
)

CLAUDE_DESKTOP_2025 = Profile(
    name="claude-desktop-2025",
    client=DESKTOP,
    description="Seed 000: the descriptions and schemas that crashed Claude Desktop in 2025, plus its name rule.",
    rules=(
        names.name_rule(
            NameConstraint(chars="a-zA-Z0-9_-", max_len=64),
            id="desktop-name",
            severity="error",
            client=DESKTOP,
            citation="NetApp/netapp-dataops-toolkit#38; loomle/loomle#168; mattt/iMCP#71 (row 1)",
            summary="FrontendRemoteMcpToolDefinition.name ^[a-zA-Z0-9_-]{1,64}$: a dot or space stops the server loading.",
        ),
        text.forbidden_chars(
            "()",
            "parentheses",
            remove_parentheses,
            "turns a parenthesised remark into a comma-separated part of the sentence",
            id="desktop-description-parentheses",
            severity="error",
            client=DESKTOP,
            citation=DESKTOP_CRASHES,
            summary="Parentheses in any description, parameters included, crash the app." + DESKTOP_DOUBT,
        ),
        text.forbidden_chars(
            "_",
            "underscores",
            remove_underscores,
            "snake_case words become plain words: time_entries -> time entries",
            id="desktop-description-underscores",
            severity="error",
            client=DESKTOP,
            citation=DESKTOP_CRASHES,
            summary="Underscores in any description, parameters included, crash the app." + DESKTOP_DOUBT,
        ),
        text.max_lines(
            4,
            id="desktop-description-lines",
            severity="error",
            client=DESKTOP,
            citation=DESKTOP_CRASHES,
            summary="A description longer than 4 lines crashes the app." + DESKTOP_DOUBT,
        ),
        schema.type_arrays(
            id="desktop-type-arrays",
            severity="error",
            client=DESKTOP,
            citation=DESKTOP_CRASHES,
            summary='A type array such as ["number", "string"] anywhere in a schema crashes the app.'
            + DESKTOP_DOUBT,
        ),
        *TS_RULES,
    ),
)

# -- claude (Anthropic API, Claude Code) ------------------------------------------------------

ANTHROPIC = "Anthropic API"
CLAUDE_CODE = "Claude Code"

CLAUDE = Profile(
    name="claude",
    client="Anthropic API and Claude Code",
    description="The Messages API's tool rules and Claude Code's mcp__server__tool names.",
    rules=(
        names.name_rule(
            NameConstraint(chars="a-zA-Z0-9_-", max_len=128),
            id="claude-name-chars",
            severity="error",
            client=ANTHROPIC,
            citation="inngest/agent-kit#108; IlyaGulya/gradle-mcp-server#2; github/copilot-cli#1879 (row 1)",
            summary="Names match ^[a-zA-Z0-9_-]{1,128}$ (64 in March 2025); anything else is a 400.",
        ),
        names.name_rule(
            NameConstraint(max_len=64, template="mcp__{server}__{tool}"),
            id="claude-code-name-length",
            severity="error",
            client=CLAUDE_CODE,
            citation="anthropics/claude-code#2485, #20643, #21050; getsentry/XcodeBuildMCP#3 (row 2)",
            summary="mcp__<server>__<tool> must be at most 64 characters, or every turn fails; "
            "without a server name the bare tool name is checked.",
        ),
        schema.root_combinators(
            ("oneOf", "anyOf", "allOf"),
            id="claude-root-combinators",
            severity="error",
            client=ANTHROPIC,
            citation="makenotion/notion-mcp-server#340; aliargun/mcp-server-gemini#8 (row 6)",
            summary="input_schema does not support oneOf, allOf or anyOf at the top level.",
        ),
        schema.valid_schema(
            "2020-12",
            id="claude-schema-2020-12",
            severity="error",
            client=ANTHROPIC,
            citation="BeehiveInnovations/pal-mcp-server#241; anomalyco/opencode#2082 (row 8)",
            summary="input_schema must be valid JSON Schema draft 2020-12.",
        ),
        text.findable(
            id="claude-code-tool-search",
            severity="warning",
            client=CLAUDE_CODE,
            citation="colbymchenry/codegraph#1696 (Sept 2026)",
            summary="Claude Code defers MCP tool schemas behind ToolSearch by default: the model finds a tool "
            "by its name and description, so a missing, short or vague one leaves it unfound (alwaysLoad "
            "opts out).",
        ),
        text.max_length(
            2048,
            id="claude-code-description-length",
            severity="warning",
            client=CLAUDE_CODE,
            citation="anthropics/claude-code#41593, #87650 (row 4)",
            summary="Claude Code 2.1.84 and later cut descriptions at 2048 characters, silently.",
        ),
        *TS_RULES,
    ),
)

# -- openai and openai-strict -----------------------------------------------------------------

OPENAI = "OpenAI Chat Completions and Responses"

OPENAI_RULES: tuple[Rule, ...] = (
    names.name_rule(
        NameConstraint(chars="a-zA-Z0-9_-"),
        id="openai-name-chars",
        severity="error",
        client=OPENAI,
        citation="Vortiago/mcp-azure-devops#30; openai/codex#8174 (row 1)",
        summary="Function names match ^[a-zA-Z0-9_-]+$ (this hits Codex and mcp-use).",
    ),
    names.name_rule(
        NameConstraint(max_len=64),
        id="openai-name-length",
        severity="error",
        client=OPENAI,
        citation="nanbingxyz/5ire#403; microsoft/foundry-dev-tools#201 (row 2)",
        summary="Function names are at most 64 characters.",
    ),
    names.tool_count(
        128,
        id="openai-tool-count",
        severity="error",
        client=OPENAI,
        citation="zed-industries/zed#32946; vishalmysore/Tools4AI#16 (row 3)",
        summary="At most 128 tools per request (array_above_max_length).",
    ),
    text.max_length(
        1024,
        id="openai-description-length",
        severity="warning",
        client=OPENAI,
        citation="getsentry/sentry-mcp#106; OpenHands/OpenHands#4838; langchain-ai/open_deep_research#80 (row 4)",
        summary="Chat Completions rejects descriptions over 1024 characters (string_above_max_length); "
        "a warning because it is unconfirmed for the Responses API and newer models (section D).",
    ),
    schema.root_combinators(
        ("oneOf", "anyOf", "allOf", "enum", "not"),
        require_type=True,
        id="openai-root-object",
        severity="error",
        client=OPENAI,
        citation="langchain-ai/langchainjs#9804 (row 6)",
        summary="The schema must have type object and no oneOf/anyOf/allOf/enum/not at the top level.",
    ),
    schema.object_properties(
        id="openai-object-properties",
        severity="error",
        client=OPENAI,
        citation="openai/openai-agents-python#449, PR#454; containers/kubernetes-mcp-server#717 (row 7)",
        summary='"object schema missing properties"; the Agents SDK and VS Code add properties: {} themselves.',
    ),
    schema.array_items(
        id="openai-array-items",
        severity="warning",
        client=OPENAI,
        citation="openai/openai-agents-python#449 (row 7, by analogy)",
        summary="An array without items is refused like an object without properties; "
        "not in the research table, so a warning.",
    ),
)

OPENAI_PROFILE = Profile(
    name="openai",
    client=OPENAI,
    description="OpenAI function calling without strict mode.",
    rules=OPENAI_RULES,
)

STRICT = "OpenAI structured outputs (strict: true)"
STRICT_CITATION = (
    "jsonschemaprofiles.unitvectorylabs.com/schemas/openai (third-party summary of the OpenAI docs; row 10)"
)

OPENAI_STRICT = Profile(
    name="openai-strict",
    client=STRICT,
    description="OpenAI function calling with strict: true (a closed schema subset). No client is known to "
    "send MCP tools in strict mode, so 'all' leaves it out; name it to use it.",
    in_use=False,
    rules=(
        *OPENAI_RULES,
        strict.closed_objects(
            id="strict-additional-properties",
            severity="error",
            client=STRICT,
            citation=STRICT_CITATION,
            summary="additionalProperties: false on every object.",
        ),
        strict.all_required(
            id="strict-all-required",
            severity="error",
            client=STRICT,
            citation=STRICT_CITATION + "; community.openai.com/t/918388 (row 9)",
            summary='Every property is in required; ["T", "null"] is the documented way to make one optional.',
        ),
        strict.forbidden_keywords(
            id="strict-forbidden-keywords",
            severity="error",
            client=STRICT,
            citation=STRICT_CITATION + "; makenotion/notion-mcp-server#102",
            summary="allOf, not, dependentRequired, dependentSchemas and if/then/else are not allowed.",
        ),
        strict.limits(
            5000,
            10,
            1000,
            120_000,
            id="strict-limits",
            severity="warning",
            client=STRICT,
            citation=STRICT_CITATION,
            summary="5000 properties, 10 nesting levels, 1000 enum values, 120k characters; numbers from a "
            "third-party copy, not the primary doc (the older doc said 100 properties and 5 levels).",
        ),
    ),
)

# -- gemini -----------------------------------------------------------------------------------

GEMINI = "Gemini API and Vertex AI (function parameters)"
GEMINI_CLI = "Gemini CLI"
VERTEX_DOC = "cloud.google.com/vertex-ai/docs/reference/rest/v1/Schema"

GEMINI_PROFILE = Profile(
    name="gemini",
    client=GEMINI,
    description="Gemini function declarations: the OpenAPI 3.0 subset of parameters, and Gemini CLI's names.",
    rules=(
        names.name_rule(
            NameConstraint(chars="A-Za-z0-9_.-", first="A-Za-z_", max_len=64),
            id="gemini-name",
            severity="error",
            client=GEMINI,
            citation="Vertex REST FunctionDeclaration doc; wonderwhy-er/DesktopCommanderMCP#79; cline/cline#7339 (rows 1-2)",
            summary="Names start with a letter or _, use [A-Za-z0-9_.-] (the Gemini API also allows :), "
            "at most 64 characters.",
        ),
        names.name_rule(
            NameConstraint(max_len=63, template="mcp_{server}_{tool}"),
            id="gemini-cli-name-length",
            severity="warning",
            client=GEMINI_CLI,
            citation="gemini-cli packages/core/src/tools/mcp-tool.ts generateValidName (rows 1-2)",
            summary="Gemini CLI names tools mcp_<server>_<tool> and cuts anything over 63 to 30 + ... + 30.",
        ),
        schema.type_arrays(
            which=("inputSchema",),
            nullable_keyword=True,
            id="gemini-type-arrays",
            severity="error",
            client=GEMINI,
            citation="zed-industries/zed#44875; n8n-io/n8n#15553 (row 9); github/copilot-cli#4623 (row 9, 2026)",
            summary='"Proto field is not repeating, cannot start list" for a type array in parameters; '
            'a union type inside array items (["object", "null"]) is a 400 too.',
        ),
        gemini.boolean_schemas(
            id="gemini-boolean-schema",
            severity="error",
            client=GEMINI,
            citation="github/copilot-cli#4623 (row 9, 2026)",
            summary="A boolean schema such as true inside properties is rejected (GPT and Claude accept it).",
        ),
        gemini.references(
            id="gemini-refs",
            severity="error",
            client=GEMINI,
            citation=f"{VERTEX_DOC}; agent-infra/sandbox#83; gemini-cli#11393 (rows 10, 13)",
            summary="parameters has no $ref or $defs; undefined and cyclic references are rejected.",
        ),
        gemini.keyword_subset(
            id="gemini-keywords",
            severity="error",
            client=GEMINI,
            citation=f"{VERTEX_DOC}; pydantic/pydantic-ai#1250; promptfoo/promptfoo#4200, #6902; zendev-sh/zenflow#14 (row 10); "
            "kaitranntt/ccs PR#497; router-for-me/CLIProxyAPI#3777; CLIProxyAPI PR#1542 (row 10, 2026)",
            summary='Any keyword outside the subset gets "Unknown name ..." ($schema, additionalProperties, '
            "propertyNames, exclusiveMinimum, examples, $comment, enumDescriptions, $id, patternProperties, "
            "enumTitles, prefill seen).",
        ),
        gemini.enum_strings(
            id="gemini-enum-strings",
            severity="error",
            client=GEMINI,
            citation="google-gemini/gemini-cli#4415 (row 11)",
            summary="enum values must be strings; integer enums are rejected.",
        ),
        gemini.type_with_anyof(
            id="gemini-type-with-anyof",
            severity="warning",
            client=GEMINI_CLI,
            citation="google-gemini/gemini-cli#4121 (row 10)",
            summary="type and anyOf in the same node were rejected by older Gemini CLI versions; the API "
            "now requires the type (row 12), so only branches that fold away are rewritten.",
        ),
        gemini.typed(
            id="gemini-missing-type",
            severity="error",
            client=GEMINI,
            citation="P0luz/Ombre-Brain#119 (row 12, 2026); PrefectHQ/fastmcp#3680; google/mcp-security#148; "
            "arben-adm/mcp-sequential-thinking#12 (row 12)",
            summary='"schema didn\'t specify the schema type field" for a schema without type, such as the '
            "anyOf of Pydantic's Optional[X]: the whole request fails at the first one (Gemini CLI around "
            "v0.1.22 already skipped such tools).",
        ),
        gemini.required_defined(
            id="gemini-required-properties",
            severity="error",
            client="Google AI Studio",
            citation="cline/cline#11162 (row 7)",
            summary="required names without properties are rejected.",
        ),
        gemini.formats(
            ("string",),
            gemini.STRING_FORMATS,
            id="gemini-string-format",
            severity="error",
            client=GEMINI,
            citation="weave-os/router#387 (row 14, 2026); nspady/google-calendar-mcp#134",
            summary="STRING format: only enum and date-time; Gemini 3.1 refuses uri, email and uuid in "
            "production (the Vertex doc lists more).",
        ),
        gemini.formats(
            ("number", "integer"),
            gemini.NUMBER_FORMATS,
            id="gemini-number-format",
            severity="error",
            client=GEMINI,
            citation="weave-os/router#387 (row 14, 2026)",
            summary="Numbers accept only the formats float, double, int32 and int64.",
        ),
        schema.array_items(
            id="gemini-array-items",
            severity="warning",
            client=GEMINI,
            citation=f"{VERTEX_DOC} (items is the only way to type elements; row 10)",
            summary="An ARRAY without items is refused by the API; not in the research table, so a warning.",
        ),
    ),
)

# -- cursor -----------------------------------------------------------------------------------

CURSOR = "Cursor"

CURSOR_PROFILE = Profile(
    name="cursor",
    client=CURSOR,
    description="Cursor: the TypeScript SDK rules plus its name, length and tool-count budgets.",
    rules=(
        names.name_rule(
            NameConstraint(chars="A-Za-z0-9_"),
            id="cursor-name-chars",
            severity="warning",
            client=CURSOR,
            citation="webstudio-is/webstudio#5960; bavix/gripmock#875 (row 1)",
            summary='"Tool name must only contain alphanumeric characters and underscores": the tool is filtered '
            "out (2026); that hyphens are refused is not verified.",
        ),
        names.name_rule(
            NameConstraint(max_len=60, template="{server}{tool}"),
            id="cursor-name-length",
            severity="warning",
            client=CURSOR,
            citation="idosal/git-mcp#31; ComposioHQ/composio#2788; awslabs/mcp#1283 (row 2)",
            summary="Server name plus tool name over 60 characters: the tool is filtered out.",
        ),
        names.tool_count(
            40,
            id="cursor-tool-count",
            severity="warning",
            client=CURSOR,
            citation="bun913/mcp-testrail#6 (quoting the Cursor docs of April 2025; row 3)",
            summary='"will only send the first 40 tools"; not confirmed that the cap still exists.',
        ),
        *TS_RULES,
    ),
)

# -- vscode -----------------------------------------------------------------------------------

VSCODE = "VS Code Copilot Chat"

VSCODE_PROFILE = Profile(
    name="vscode",
    client=VSCODE,
    description="VS Code's MCP support: tool count, draft-07 validation, name normalisation.",
    rules=(
        names.tool_count(
            128,
            id="vscode-tool-count",
            severity="error",
            client=VSCODE,
            citation="microsoft/vscode-copilot-release#11653 (row 3)",
            summary='"Cannot have more than 128 tools per request".',
        ),
        schema.valid_schema(
            "draft-07",
            id="vscode-schema-draft-07",
            severity="warning",
            client=VSCODE,
            citation="vscode mcpServer.ts _getValidatedTools (row 8)",
            summary="inputSchema is validated against the draft-07 metaschema; invalid tools are dropped "
            "with a notification.",
        ),
        names.name_rule(
            NameConstraint(chars="A-Za-z0-9_-"),
            id="vscode-name-chars",
            severity="warning",
            client=VSCODE,
            citation="microsoft/vscode mcpServer.ts _normalizeTool; microsoft/vscode#308463 (row 1)",
            summary="Characters outside [a-z0-9_-] (any case) are replaced by _, with a warning.",
        ),
        names.name_rule(
            NameConstraint(max_len=64),
            id="vscode-name-length",
            severity="warning",
            client=VSCODE,
            citation="vscode mcpServer.ts McpTool ctor (McpToolName.MaxLength; row 2)",
            summary="The prefixed tool id is cut to 64; the prefix is not documented, so only the bare name is checked.",
        ),
        text.required_description(
            id="vscode-description-missing",
            severity="warning",
            client=VSCODE,
            citation="microsoft/vscode mcpServer.ts _normalizeTool (row 4)",
            summary="A missing description is shown as <empty>.",
        ),
    ),
)

PROFILES: dict[str, Profile] = {
    p.name: p
    for p in (
        MCP_SPEC,
        CLAUDE_DESKTOP_2025,
        CLAUDE,
        OPENAI_PROFILE,
        OPENAI_STRICT,
        GEMINI_PROFILE,
        CURSOR_PROFILE,
        VSCODE_PROFILE,
    )
}
"""Every profile by name."""

DEFAULT_PROFILES: tuple[str, ...] = ("mcp-spec", "claude-desktop-2025")
"""What mcpkit servers are linted against unless told otherwise: the spec and what crashed Claude Desktop."""


class UnknownProfileError(ConfigError, ValueError):
    """A profile name that is not in :data:`PROFILES`."""


def profiles_in_use() -> tuple[str, ...]:
    """What "all" means: every profile some client applies (``openai-strict`` is left out)."""
    return tuple(name for name, profile in PROFILES.items() if profile.in_use)


def get_profile(profile: str | Profile) -> Profile:
    """The profile named ``profile`` (a :class:`Profile` passes through)."""
    if isinstance(profile, Profile):
        return profile
    try:
        return PROFILES[profile]
    except KeyError:
        known = ", ".join(PROFILES)
        raise UnknownProfileError(f"unknown client profile {profile!r}; known: {known}") from None


def get_profiles(profiles: str | Profile | Iterable[str | Profile]) -> list[Profile]:
    """One profile, a name, or several of either, as a list of profiles without repeats."""
    items: Iterable[str | Profile] = [profiles] if isinstance(profiles, str | Profile) else profiles
    out: list[Profile] = []
    for item in items:
        profile = get_profile(item)
        if all(profile is not seen for seen in out):
            out.append(profile)
    return out


def all_rules() -> list[tuple[Profile, Rule]]:
    """Every (profile, rule) pair, in table order."""
    return [(p, r) for p in PROFILES.values() for r in p.rules]
