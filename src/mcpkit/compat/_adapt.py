"""``adapt``: rewrite a tool so a client profile accepts it, and say what changed.

The loop is lint-driven: check the tool against the profile, run the fixer of every rule
that fired (in the profile's order, so references are inlined before unknown keywords are
dropped), and repeat until nothing fires that a fixer can still help with. A fixer only
makes rewrites that keep the tool callable the way it was meant to be called (it may accept
a little more than before, never refuse a valid call silently); where no such rewrite exists
the tool is left as it was in that spot and an unapplied :class:`Rewrite` says why, so
``lint`` after ``adapt`` reports errors only where a change says "left as is". And adapt never
makes a tool worse than it found it: a rewrite that would leave more errors of any rule
(the profile's or the spec's) than the tool came with is not made.
"""

from __future__ import annotations

import copy
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from mcpkit.compat._lint import lint_definitions
from mcpkit.compat._model import CheckContext, Definition, FixContext, Profile, Rewrite, Rule
from mcpkit.compat._names import with_suffix
from mcpkit.compat._profiles import MCP_SPEC, get_profile
from mcpkit.compat._rules.names import display_name
from mcpkit.compat._tooldef import as_definition, rebuild

MAX_ROUNDS = 6
UNIQUE_RULE = "spec-unique-names"


def _fires(rule: Rule, definition: Definition, ctx: CheckContext) -> bool:
    return rule.check is not None and any(True for _ in rule.check(definition, ctx))


def _error_counts(definition: Definition, profile: Profile, server_name: str | None) -> Counter[str]:
    """Errors per rule for one tool, under ``profile`` and the spec (a rewrite must break neither)."""
    profiles = [profile] if profile is MCP_SPEC else [profile, MCP_SPEC]
    return Counter(
        f.rule
        for f in lint_definitions([definition], profiles, server_name=server_name)
        if f.severity == "error" and f.tool is not None
    )


def _worse(after: Counter[str], before: Counter[str]) -> list[str]:
    """The rules with more errors after than before (empty: no worse)."""
    return sorted(rule for rule, count in after.items() if count > before.get(rule, 0))


def _run_fixers(
    definition: Definition, profile: Profile, ctx: CheckContext, label: str, skip: frozenset[str]
) -> list[Rewrite]:
    """Run the fixers of every rule that fires, in profile order, until none helps any more."""
    fctx = FixContext(profile=profile, server_name=ctx.server_name)
    changes: list[Rewrite] = []
    done: set[str] = set(skip)
    for _ in range(MAX_ROUNDS):
        progressed = False
        for rule in profile.rules:
            if rule.fix is None or rule.id in done or not _fires(rule, definition, ctx):
                continue
            edits = rule.fix(definition, fctx)
            changes.extend(Rewrite(label, rule.id, e.pointer, e.action, e.detail, e.applied) for e in edits)
            if not edits or any(not e.applied for e in edits) or _fires(rule, definition, ctx):
                done.add(rule.id)  # it cannot do better; don't loop on it
            progressed = progressed or any(e.applied for e in edits)
        if not progressed:
            break
    return changes


def adapt_definition(
    definition: Definition, profile: Profile, *, server_name: str | None = None, tool: str | None = None
) -> list[Rewrite]:
    """Adapt a wire definition in place; returns the changes (see :func:`adapt`).

    Never worse than before: when the rewrites leave more errors of some rule (under the
    profile or the spec) than the tool had, the fixer behind them is skipped (each that
    applied anything is tried alone, in order); when skipping none of them helps, the tool is
    kept exactly as it came. Either is said by an unapplied change.
    """
    ctx = CheckContext(server_name=server_name)
    label = tool if tool is not None else display_name(definition, 0)
    original = copy.deepcopy(definition)
    candidate = copy.deepcopy(original)
    changes = _run_fixers(candidate, profile, ctx, label, frozenset())
    before = _error_counts(original, profile, server_name) if any(c.applied for c in changes) else None
    worse = _worse(_error_counts(candidate, profile, server_name), before) if before is not None else []
    if worse and before is not None:
        culprits = list(dict.fromkeys(c.rule for c in changes if c.applied))
        for culprit in culprits:
            retry = copy.deepcopy(original)
            retry_changes = _run_fixers(retry, profile, ctx, label, frozenset({culprit}))
            if not _worse(_error_counts(retry, profile, server_name), before):
                note = f"skipped: its rewrite added errors ({', '.join(worse)}), so that part stays as it was"
                candidate, changes = retry, [*retry_changes, Rewrite(label, culprit, "", "none", note, False)]
                break
        else:
            note = f"kept the tool as it was: the rewrite would add errors ({', '.join(worse)})"
            candidate, changes = copy.deepcopy(original), [Rewrite(label, worse[0], "", "none", note, False)]
    definition.clear()
    definition.update(candidate)
    left = {c.rule for c in changes if not c.applied}
    for finding in lint_definitions([definition], [profile], server_name=server_name):
        if finding.severity == "error" and finding.rule not in left and finding.tool is not None:
            changes.append(
                Rewrite(
                    label, finding.rule, finding.pointer, "none", f"no safe rewrite: {finding.message}", False
                )
            )
            left.add(finding.rule)
    return changes


def adapt(tool: Any, profile: str | Profile, *, server_name: str | None = None) -> tuple[Any, list[Rewrite]]:
    """A copy of ``tool`` rewritten for ``profile``, and the list of changes made.

    ``tool`` is a :class:`~mcpkit.tools.ToolSpec` (a ToolSpec with the same handler comes
    back) or a wire dict (a dict comes back); the input is never modified. After adapting,
    ``lint([tool], profile)`` has no errors except for rules with an unapplied change.

    >>> t, ch = adapt({"name": "t", "description": "List time_entries (admin only)",
    ...                "inputSchema": {"type": "object"}}, "claude-desktop-2025")
    >>> t["description"]
    'List time entries, admin only'
    """
    prof = get_profile(profile)
    definition = as_definition(tool)
    changes = adapt_definition(definition, prof, server_name=server_name)
    return rebuild(tool, definition), changes


@dataclass
class AdaptResult:
    """The adapted tools, every change, and how names moved.

    ``name_map`` maps each adapted name to the original name (adapted names are unique, so
    a server can route a call by the name the client saw); :attr:`renamed` is the other
    direction for the tools whose name changed.
    """

    tools: list[Any]
    changes: list[Rewrite]
    name_map: dict[str, str] = field(default_factory=dict)

    @property
    def renamed(self) -> dict[str, str]:
        return {old: new for new, old in self.name_map.items() if old != new}

    @property
    def ok(self) -> bool:
        """True when every change was applied (nothing was left for a human)."""
        return all(c.applied for c in self.changes)


def adapt_all(tools: Iterable[Any], profile: str | Profile, *, server_name: str | None = None) -> AdaptResult:
    """:func:`adapt` for a whole server's tools, plus unique names across them.

    Renaming can make two names equal (``a.b`` and ``a_b`` both become ``a_b``), and a server
    may already list a name twice: every later duplicate gets a stable hash suffix.
    """
    prof = get_profile(profile)
    originals = list(tools)
    definitions = [as_definition(t) for t in originals]
    names = [display_name(d, i) for i, d in enumerate(definitions)]
    changes: list[Rewrite] = []
    for name, definition in zip(names, definitions, strict=True):
        changes.extend(adapt_definition(definition, prof, server_name=server_name, tool=name))
    changes.extend(_make_unique(definitions, names, prof, server_name))
    name_map = {display_name(d, i): names[i] for i, d in enumerate(definitions)}
    adapted = [rebuild(t, d) for t, d in zip(originals, definitions, strict=True)]
    return AdaptResult(tools=adapted, changes=changes, name_map=name_map)


def _make_unique(
    definitions: list[Definition], originals: list[str], profile: Profile, server_name: str | None
) -> list[Rewrite]:
    changes: list[Rewrite] = []
    constraints = profile.name_constraints()
    by_name: dict[str, list[int]] = defaultdict(list)
    for i, d in enumerate(definitions):
        if isinstance(d.get("name"), str):
            by_name[d["name"]].append(i)
    taken = set(by_name)
    for name, indexes in by_name.items():
        if len(indexes) < 2:
            continue
        keep = next((i for i in indexes if originals[i] == name), indexes[0])
        for i in indexes:
            if i == keep:
                continue
            salt = 0
            new = with_suffix(name, originals[i], constraints, server_name)
            while new in taken:
                salt += 1
                new = with_suffix(name, f"{originals[i]}#{i}#{salt}", constraints, server_name)
            taken.add(new)
            definitions[i]["name"] = new
            changes.append(
                Rewrite(
                    originals[i], UNIQUE_RULE, "/name", "rename", f"{name!r} -> {new!r}: names must be unique"
                )
            )
    return changes
