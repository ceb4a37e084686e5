"""The data of the compat part: rules, profiles, findings and changes.

A *rule* is one thing a client is known to reject, crash on or degrade (see
``docs/toolkit-compat.md``); a *profile* is the list of rules for one client. Rules are
plain values so the same rule can sit in several profiles (the TypeScript SDK rules apply to
every client built on it) and be reported once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

Severity = Literal["error", "warning"]
"""``error``: the client rejects the tool (or the whole list) or crashes. ``warning``: degraded."""

Definition = dict[str, Any]
"""A tool in wire form, as ``tools/list`` sends it (mutable: fixers edit a private copy)."""


@dataclass(frozen=True)
class Issue:
    """What a check found, before lint attaches the rule, tool and profile."""

    pointer: str
    message: str
    hint: str = ""
    tool: str | None = None


@dataclass(frozen=True)
class Finding:
    """One rule violated by one tool (or by the tool set, then ``tool`` is None).

    ``pointer`` is a JSON pointer into the tool's wire definition, such as
    ``/inputSchema/properties/id/description``; ``""`` means the tool (or set) as a whole.
    """

    rule: str
    severity: Severity
    tool: str | None
    pointer: str
    message: str
    hint: str
    profile: str
    client: str

    def __str__(self) -> str:
        where = f"{self.tool}{self.pointer}" if self.tool is not None else (self.pointer or "(tool set)")
        return f"{self.severity}: {self.rule} [{self.profile}] {where}: {self.message}"


@dataclass(frozen=True)
class Edit:
    """One rewrite a fixer made (or could not make) in a definition."""

    pointer: str
    action: str
    detail: str
    applied: bool = True


@dataclass(frozen=True)
class Rewrite:
    """One rewrite :func:`mcpkit.compat._adapt` made to a tool, and the rule that asked for it.

    ``applied`` is False when the problem could not be rewritten safely (a cyclic ``$ref``, a
    schema that is not valid JSON Schema): the tool is left as it was in that spot and lint
    keeps reporting the rule, so nothing is hidden.
    """

    tool: str
    rule: str
    pointer: str
    action: str
    detail: str
    applied: bool = True

    def __str__(self) -> str:
        state = "" if self.applied else " (left as is)"
        return f"{self.tool}{self.pointer}: {self.action}{state}: {self.detail}"


@dataclass(frozen=True)
class NameConstraint:
    """What a client accepts as a tool name; used by the checks and by the renamer.

    ``chars`` is a regex character-class body (``A-Za-z0-9_-``), ``first`` the class the
    first character must be in, ``max_len`` applies to ``template`` filled with the server
    and tool names (``mcp__{server}__{tool}`` for Claude Code). When the template names the
    server and no server name is known, the bare tool name must fit on its own.
    """

    chars: str | None = None
    first: str | None = None
    max_len: int | None = None
    template: str = "{tool}"

    def budget(self, server_name: str | None) -> int | None:
        """How many characters the tool name itself may have."""
        if self.max_len is None:
            return None
        if server_name is None or "{server}" not in self.template:
            return self.max_len
        overhead = len(self.template.format(server=server_name, tool=""))
        return self.max_len - overhead


@dataclass(frozen=True)
class FixContext:
    """What a fixer may know besides the definition: the profile and the server name."""

    profile: Profile
    server_name: str | None


ToolCheck = Callable[[Definition, "CheckContext"], Iterable[Issue]]
SetCheck = Callable[[Sequence[Definition], "CheckContext"], Iterable[Issue]]
Fixer = Callable[[Definition, FixContext], list[Edit]]


@dataclass(frozen=True)
class CheckContext:
    """What a check may know besides the definition."""

    server_name: str | None = None


@dataclass(frozen=True)
class Rule:
    """One client behaviour, as a check (and, when a safe rewrite exists, a fixer).

    ``citation`` names where the behaviour was observed (issue threads, docs, source files);
    ``summary`` says what the client does, including any doubt about it; ``adapt`` says what
    :func:`mcpkit.compat._adapt` does about it ("" when it cannot help).
    """

    id: str
    severity: Severity
    client: str
    citation: str
    summary: str
    check: ToolCheck | None = None
    set_check: SetCheck | None = None
    fix: Fixer | None = None
    adapt: str = ""
    name_constraint: NameConstraint | None = None
    tool_limit: int | None = None
    """The most tools the client takes, for a tool-count rule (``mcpkit check`` reports the cost)."""


@dataclass(frozen=True)
class Profile:
    """A named client target: its rules, in the order they are checked and fixed."""

    name: str
    client: str
    description: str
    rules: tuple[Rule, ...]
    in_use: bool = True
    """False for a profile no known client applies (``openai-strict``): "every profile"
    (``mcpkit check --profile all``) leaves it out, so its verdict never fails a server that
    every real client loads; it is still there by name."""

    def name_constraints(self) -> list[NameConstraint]:
        """Every name constraint of the profile, so one rename satisfies all of them."""
        return [r.name_constraint for r in self.rules if r.name_constraint is not None]
