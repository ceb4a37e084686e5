"""The whole Redmine tool list linted against every client profile, with the result recorded.

``lint_record.json`` next to this file is the recorded result: per profile, the findings as
``severity rule -> count``, before and after :func:`mcpkit.compat.adapt_all`. A change in
either makes this test fail with the difference; after a deliberate change, regenerate it
with ``REDMINE_LINT_RECORD=1 pytest tests/redmine/test_tool_definitions.py``.

Two profiles conflict with the Claude Desktop rules by design and are met through ``adapt``: OpenAI strict
mode wants every property required (optional ones become nullable type arrays, which Claude
Desktop crashes on), and Gemini's subset has no ``additionalProperties``.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from pathlib import Path
from typing import Any

from mcpkit.compat import DEFAULT_PROFILES, PROFILES, adapt_all, lint
from mcpkit.redmine.server import NAME
from mcpkit.tools import ToolSpec
from tests.redmine.support import Recorder, make_server

RECORD = Path(__file__).with_name("lint_record.json")
ALL_TOOLS = make_server(Recorder()).tools


def summary(findings: list[Any]) -> dict[str, int]:
    return dict(sorted(Counter(f"{f.severity} {f.rule}" for f in findings).items()))


def current() -> dict[str, Any]:
    out: dict[str, Any] = {"tools": len(ALL_TOOLS), "profiles": {}}
    for profile in PROFILES:
        adapted = adapt_all(ALL_TOOLS, profile, server_name=NAME)
        out["profiles"][profile] = {
            "as_defined": summary(lint(ALL_TOOLS, profile, server_name=NAME)),
            "after_adapt": summary(lint(adapted.tools, profile, server_name=NAME)),
        }
    return out


def test_lint_result_matches_the_record() -> None:
    result = current()
    if os.environ.get("REDMINE_LINT_RECORD"):
        RECORD.write_text(json.dumps(result, indent=2) + "\n")
    recorded = json.loads(RECORD.read_text())
    assert result == recorded, "lint result changed; see the module docstring to re-record"


def test_clean_under_the_default_profiles_and_after_adapt_under_all() -> None:
    assert not lint(ALL_TOOLS, list(DEFAULT_PROFILES), server_name=NAME)
    for profile in PROFILES:
        adapted = adapt_all(ALL_TOOLS, profile, server_name=NAME)
        errors = [f for f in lint(adapted.tools, profile, server_name=NAME) if f.severity == "error"]
        assert not errors, (profile, errors[:3])


def descriptions(spec: ToolSpec) -> list[str]:
    found = [spec.description]

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("description"), str):
                found.append(node["description"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(spec.input_schema)
    return found


def test_the_claude_desktop_rules_hold_for_every_description() -> None:
    """Checked directly too, so the rules hold even if a profile changes."""
    for spec in ALL_TOOLS:
        assert re.fullmatch(r"[a-z][a-z_]*", spec.name) and len(spec.name) <= 40, spec.name
        for text in descriptions(spec):
            assert not re.search(r"[()_]", text), (spec.name, text)
            assert len(text.splitlines()) <= 4, (spec.name, text)
        assert '"type": [' not in json.dumps(spec.input_schema), spec.name


DEFAULT_TOOLS = make_server(Recorder(), tools=frozenset()).tools


def test_the_default_tool_list_stays_under_40_000_bytes_and_hides_no_capability() -> None:
    """Optional categories are off by default, and turning all on shows every tool again.

    The size as sent over stdio is checked on the real server in test_redmine_lean.py; this
    compact JSON is smaller, so a failure here is a failure there."""
    wire = json.dumps({"tools": [t.definition() for t in DEFAULT_TOOLS]}, separators=(",", ":"))
    assert len(wire.encode()) < 40_000, len(wire)
    assert {t.name for t in DEFAULT_TOOLS} < {t.name for t in ALL_TOOLS}
