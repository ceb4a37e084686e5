"""``lint``: check tool definitions against client profiles and report every finding.

Findings come out per tool, in profile and rule order, then the tool-set findings (count,
uniqueness). A rule shared by two selected profiles (the TypeScript SDK rules) reports once.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from mcpkit.compat._model import CheckContext, Definition, Finding, Issue, Profile, Rule
from mcpkit.compat._profiles import get_profiles
from mcpkit.compat._rules.names import display_name
from mcpkit.compat._tooldef import as_definition


class _Collector:
    def __init__(self) -> None:
        self.findings: list[Finding] = []
        self._seen: set[tuple[str, str | None, str, str]] = set()

    def add(self, profile: Profile, rule: Rule, tool: str | None, issue: Issue) -> None:
        key = (rule.id, tool, issue.pointer, issue.message)
        if key in self._seen:
            return
        self._seen.add(key)
        self.findings.append(
            Finding(
                rule=rule.id,
                severity=rule.severity,
                tool=tool,
                pointer=issue.pointer,
                message=issue.message,
                hint=issue.hint,
                profile=profile.name,
                client=rule.client,
            )
        )


def lint_definitions(
    definitions: Sequence[Definition], profiles: Sequence[Profile], *, server_name: str | None = None
) -> list[Finding]:
    """Lint wire definitions that are already plain dicts (nothing is copied or changed)."""
    ctx = CheckContext(server_name=server_name)
    out = _Collector()
    for index, definition in enumerate(definitions):
        tool = display_name(definition, index)
        for profile in profiles:
            for rule in profile.rules:
                if rule.check is not None:
                    for issue in rule.check(definition, ctx):
                        out.add(profile, rule, tool, issue)
    for profile in profiles:
        for rule in profile.rules:
            if rule.set_check is not None:
                for issue in rule.set_check(definitions, ctx):
                    out.add(profile, rule, issue.tool, issue)
    return out.findings


def lint(
    tools: Iterable[Any],
    profiles: str | Profile | Iterable[str | Profile],
    *,
    server_name: str | None = None,
) -> list[Finding]:
    """Every way ``tools`` break the clients in ``profiles``.

    ``tools`` are :class:`~mcpkit.tools.ToolSpec` objects or wire dicts as any server's
    ``tools/list`` returns them. ``server_name`` enables the budgets that count the server
    name (Claude Code's ``mcp__server__tool``, Cursor's server + tool). Errors are what the
    client rejects or crashes on; warnings are degraded behaviour.

    >>> [f.rule for f in lint([{"name": "a.b", "inputSchema": {"type": "object"}}], "claude-desktop-2025")]
    ['desktop-name']
    """
    return lint_definitions(
        [as_definition(t) for t in tools], get_profiles(profiles), server_name=server_name
    )


def errors(findings: Iterable[Finding]) -> list[Finding]:
    """Only the findings a client rejects or crashes on."""
    return [f for f in findings if f.severity == "error"]
