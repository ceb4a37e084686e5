"""Context cost: what a server's tool list costs each client, against the client's tool limit.

Every tool definition is sent to the model on every turn (or, where the client defers tools
behind a search, at least its name and description), so a large list costs context and some
clients cap the count outright. For each client profile in use this computes the tools as
that client hands them to its model (the name with the client's prefix, the description,
the input schema in the model API's wrapper) and estimates their tokens; the limits are the
research report's (client-rules, row 3): OpenAI 128 per request, VS Code 128, Windsurf 100,
Cursor 40 (docs of April 2025, not confirmed since). A tool limit of a selected profile is
already a lint finding (``openai-tool-count`` ...); a client with a limit but no profile
(Windsurf) gets ``tool-count-over-limit`` here.

Tokens are estimated, not counted: no tokenizer is shipped, so the estimate is a quarter of
the characters of the compact JSON (OpenAI's rule of thumb for English; JSON Schema usually
takes somewhat more tokens, so read it as a lower bound).
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from typing import Any

from mcpkit.check.model import CheckFinding, CheckReport
from mcpkit.compat import PROFILES, profiles_in_use

CHARS_PER_TOKEN = 4


@dataclass(frozen=True)
class ClientShape:
    """How one client puts MCP tools in front of its model."""

    name: str
    """The tool name the model sees; ``{server}`` and ``{tool}`` are filled in."""
    wrap: str
    """``anthropic`` (name, description, input_schema), ``openai`` (type function, parameters),
    ``gemini`` (name, description, parameters) or ``mcp`` (the definition as listed)."""


SHAPES: dict[str, ClientShape] = {
    "mcp-spec": ClientShape("{tool}", "mcp"),
    "claude-desktop-2025": ClientShape("{tool}", "anthropic"),
    "claude": ClientShape("mcp__{server}__{tool}", "anthropic"),
    "openai": ClientShape("{tool}", "openai"),
    "openai-strict": ClientShape("{tool}", "openai"),
    "gemini": ClientShape("mcp_{server}_{tool}", "gemini"),
    "cursor": ClientShape("{tool}", "openai"),
    "vscode": ClientShape("mcp_{server}_{tool}", "openai"),
}
"""The prefixes are those the research report records (Claude Code's mcp__server__tool, Gemini
CLI's mcp_server_tool; VS Code's prefix is undocumented, so one of the same length is used)."""


@dataclass(frozen=True)
class LimitOnly:
    """A client known for a tool limit that has no profile of its own."""

    client: str
    limit: int
    citation: str


LIMIT_ONLY: tuple[LimitOnly, ...] = (
    LimitOnly(
        "Windsurf (Cascade)",
        100,
        "docs.windsurf.com/windsurf/cascade/mcp (row 3; confirmed only through mirrored copies of the docs)",
    ),
)


def estimate_tokens(value: Any) -> int:
    """Tokens of ``value`` as compact JSON, estimated at :data:`CHARS_PER_TOKEN` characters each."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def model_view(tool: dict[str, Any], shape: ClientShape, server: str) -> dict[str, Any]:
    """The tool as a client with ``shape`` sends it to its model."""
    if shape.wrap == "mcp":
        return tool
    name = shape.name.format(server=server, tool=tool.get("name", ""))
    schema = tool.get("inputSchema", {})
    description = tool.get("description", "")
    if shape.wrap == "anthropic":
        return {"name": name, "description": description, "input_schema": schema}
    if shape.wrap == "openai":
        return {
            "type": "function",
            "function": {"name": name, "description": description, "parameters": schema},
        }
    return {"name": name, "description": description, "parameters": schema}


def _limit(profile: str) -> tuple[int | None, str]:
    """The profile's tool limit (its tool-count rule) and that rule's id."""
    for rule in PROFILES[profile].rules:
        limit = rule.tool_limit
        if limit is not None:
            return limit, rule.id
    return None, ""


def check_context(tools: list[dict[str, Any]], report: CheckReport) -> None:
    """Fill ``report.context`` with a row per client profile in use, and report limit-only clients."""
    server = str(report.server_info.get("name") or "server")
    rows: list[dict[str, Any]] = []
    for profile in profiles_in_use():
        shape = SHAPES.get(profile, ClientShape("{tool}", "mcp"))
        views = [model_view(t, shape, server) for t in tools]
        limit, rule = _limit(profile)
        rows.append(
            asdict(
                ContextRow(
                    PROFILES[profile].client,
                    profile,
                    len(tools),
                    limit,
                    estimate_tokens(views),
                    max((estimate_tokens(v) for v in views), default=0),
                    rule,
                )
            )
        )
    plain = [model_view(t, ClientShape("{tool}", "openai"), server) for t in tools]
    for other in LIMIT_ONLY:
        rows.append(
            asdict(
                ContextRow(
                    other.client,
                    None,
                    len(tools),
                    other.limit,
                    estimate_tokens(plain),
                    max((estimate_tokens(v) for v in plain), default=0),
                    "tool-count-over-limit",
                )
            )
        )
        if len(tools) > other.limit:
            report.add(
                CheckFinding(
                    "tool-count-over-limit",
                    "warning",
                    "tools",
                    f"{len(tools)} tools, over the limit of {other.limit} in {other.client}: "
                    "the user must turn tools off by hand",
                    "Offer fewer tools (category filters), or serve them through mcpkit gateway's meta-tools.",
                    evidence=f"{other.client}: limit of {other.limit} total tools. Source: {other.citation}.",
                )
            )
    report.context = rows


@dataclass(frozen=True)
class ContextRow:
    """One row of the context table: a client, its tool count against its limit, tokens."""

    client: str
    profile: str | None
    tools: int
    limit: int | None
    tokens: int
    largest: int
    """Tokens of the largest single tool."""
    rule: str
    """The rule that reports going over the limit."""
