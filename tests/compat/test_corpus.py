"""Lint and adapt on real servers' tools (fetched over stdio by the conftest fixture).

The expected findings are pinned per server and profile: the server versions are pinned in
third_party/, so a change here means either the rules or the servers changed, and both
deserve a look. The reasons are spelled out next to each expectation.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import mcp_types
import pytest

from mcpkit.compat import PROFILES, adapt_all, errors, lint

EVERYTHING = [
    "echo",
    "get-annotated-message",
    "get-env",
    "get-resource-links",
    "get-resource-reference",
    "get-structured-content",
    "get-sum",
    "get-tiny-image",
    "gzip-file-as-resource",
    "toggle-simulated-logging",
    "toggle-subscriber-updates",
    "trigger-long-running-operation",
    "simulate-research-query",
]

EXPECTED: dict[str, dict[str, dict[str, set[str]]]] = {
    "time": {
        # "IANA timezone name (e.g., 'America/New_York' ...)", "24-hour format (HH:MM)"
        "claude-desktop-2025": {
            "desktop-description-parentheses": {"get_current_time", "convert_time"},
            "desktop-description-underscores": {"get_current_time", "convert_time"},
        },
        "openai-strict": {"strict-additional-properties": {"get_current_time", "convert_time"}},
    },
    "fetch": {
        # max_length, start_index and raw are optional; url has format "uri"
        "openai-strict": {"strict-additional-properties": {"fetch"}, "strict-all-required": {"fetch"}},
        "gemini": {"gemini-string-format": {"fetch"}},
    },
    "everything": {
        # "Number of resource links to return (1-10)"; "(triggers input_required status)"
        "claude-desktop-2025": {
            "desktop-description-parentheses": {"get-resource-links", "simulate-research-query"},
            "desktop-description-underscores": {"simulate-research-query"},
        },
        # every inputSchema declares "$schema": draft-07; gzip's data has format "uri"
        "gemini": {"gemini-keywords": set(EVERYTHING), "gemini-string-format": {"gzip-file-as-resource"}},
        "openai-strict": {
            "strict-additional-properties": set(EVERYTHING),
            "strict-all-required": {
                "get-annotated-message",
                "get-resource-links",
                "get-resource-reference",
                "gzip-file-as-resource",
                "trigger-long-running-operation",
                "simulate-research-query",
            },
        },
        # hyphens: Cursor's 2026 message allows letters, digits and underscores only
        "cursor": {"cursor-name-chars": set(EVERYTHING) - {"echo"}},
    },
}

SERVER_NAMES = list(EXPECTED)


def _by_rule(findings: list[Any]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = defaultdict(set)
    for f in findings:
        out[f.rule].add(f.tool)
    return dict(out)


@pytest.mark.thirdparty
@pytest.mark.parametrize("server", SERVER_NAMES)
def test_corpus_is_what_the_pinned_servers_list(server: str, real_tools: Any) -> None:
    tools = real_tools(server)
    names = [t["name"] for t in tools]
    expected = {"time": ["get_current_time", "convert_time"], "fetch": ["fetch"], "everything": EVERYTHING}[
        server
    ]
    assert sorted(names) == sorted(expected)


@pytest.mark.thirdparty
@pytest.mark.parametrize("profile", list(PROFILES))
@pytest.mark.parametrize("server", SERVER_NAMES)
def test_expected_findings_per_real_server(server: str, profile: str, real_tools: Any) -> None:
    findings = lint(real_tools(server), profile, server_name=server)
    assert _by_rule(findings) == EXPECTED[server].get(profile, {})


@pytest.mark.thirdparty
def test_real_findings_point_at_the_text(real_tools: Any) -> None:
    findings = lint(real_tools("everything"), "claude-desktop-2025")
    pointers = {(f.tool, f.pointer) for f in findings}
    assert ("get-resource-links", "/inputSchema/properties/count/description") in pointers
    assert ("simulate-research-query", "/inputSchema/properties/ambiguous/description") in pointers
    gem = lint(real_tools("everything"), "gemini")
    assert {f.pointer for f in gem if f.rule == "gemini-keywords"} == {"/inputSchema/$schema"}


@pytest.mark.thirdparty
@pytest.mark.parametrize("profile", list(PROFILES))
@pytest.mark.parametrize("server", SERVER_NAMES)
def test_adapt_makes_real_tools_error_free(server: str, profile: str, real_tools: Any) -> None:
    tools = real_tools(server)
    result = adapt_all(tools, profile, server_name=server)
    assert result.ok, [str(c) for c in result.changes if not c.applied]
    assert errors(lint(result.tools, profile, server_name=server)) == []
    for tool in result.tools:  # still a valid MCP Tool for the SDK
        mcp_types.Tool.model_validate(tool)
    assert sorted(result.name_map.values()) == sorted(t["name"] for t in tools)


@pytest.mark.thirdparty
def test_adapt_rewrites_real_descriptions_in_plain_words(real_tools: Any) -> None:
    result = adapt_all(real_tools("time"), "claude-desktop-2025")
    convert = next(t for t in result.tools if t["name"] == "convert_time")
    assert (
        convert["inputSchema"]["properties"]["time"]["description"]
        == "Time to convert in 24-hour format, HH:MM"
    )
    tz = convert["inputSchema"]["properties"]["source_timezone"]["description"]
    assert tz.startswith("Source IANA timezone name, e.g., 'America/New York'")
    # property names keep their underscores: only descriptions are text
    assert "source_timezone" in convert["inputSchema"]["properties"]


@pytest.mark.thirdparty
def test_adapt_for_cursor_renames_and_maps_back(real_tools: Any) -> None:
    result = adapt_all(real_tools("everything"), "cursor", server_name="everything")
    assert result.renamed["get-sum"] == "get_sum"
    assert result.name_map["get_sum"] == "get-sum"
    assert result.name_map["echo"] == "echo"
