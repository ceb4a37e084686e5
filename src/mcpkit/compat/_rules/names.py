"""Rules about tool names and the tool set: charset and length, uniqueness, tool count."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from mcpkit.compat._model import CheckContext, Definition, Edit, FixContext, Issue, NameConstraint, Rule
from mcpkit.compat._names import fit, violations


def rename(definition: Definition, ctx: FixContext) -> list[Edit]:
    """Rename the tool so every name constraint of the profile holds at once."""
    name = definition.get("name")
    if not isinstance(name, str):
        return [Edit("/name", "rename", "the tool has no name to rewrite", applied=False)]
    new = fit(name, ctx.profile.name_constraints(), ctx.server_name)
    if new is None:
        return [
            Edit(
                "/name",
                "rename",
                f"server name {ctx.server_name!r} leaves no room for any tool name",
                applied=False,
            )
        ]
    if new == name:
        return []
    definition["name"] = new
    return [Edit("/name", "rename", f"{name!r} -> {new!r}")]


def name_rule(constraint: NameConstraint, **meta: Any) -> Rule:
    """A tool name must match a charset, a first character and a length budget."""

    def check(definition: Definition, ctx: CheckContext) -> Iterator[Issue]:
        name = definition.get("name")
        if not isinstance(name, str):
            return
        problems = violations(name, constraint, ctx.server_name)
        if problems:
            suggestion = fit(name, [constraint], ctx.server_name)
            hint = f"rename it, for example to {suggestion!r}" if suggestion else "use a shorter server name"
            yield Issue("/name", f"name {name!r} " + "; ".join(problems), hint)

    return Rule(
        check=check,
        fix=rename,
        name_constraint=constraint,
        adapt="renames: invalid characters to _, too long names cut with a stable hash suffix",
        **meta,
    )


def tool_fields(**meta: Any) -> Rule:
    """``name`` is a non-empty string; ``description``, when present, is a string."""

    def check(definition: Definition, ctx: CheckContext) -> Iterator[Issue]:
        name = definition.get("name")
        if not isinstance(name, str) or not name:
            yield Issue("/name", f"name must be a non-empty string, got {name!r}", "give the tool a name")
        if "description" in definition and not isinstance(definition["description"], str):
            yield Issue("/description", "description must be a string", "use a string or leave it out")

    def fix(definition: Definition, ctx: FixContext) -> list[Edit]:
        edits: list[Edit] = []
        if "description" in definition and not isinstance(definition["description"], str):
            del definition["description"]
            edits.append(Edit("/description", "drop-keyword", "removed a description that was not a string"))
        name = definition.get("name")
        if name == "":
            definition["name"] = "tool"
            edits.append(Edit("/name", "rename", "'' -> 'tool': a tool needs a name to be called"))
        elif not isinstance(name, str):
            edits.append(Edit("/name", "none", "a missing name cannot be invented", applied=False))
        return edits

    return Rule(
        check=check,
        fix=fix,
        adapt="drops a non-string description, names an empty name 'tool'; a missing name stays an error",
        **meta,
    )


def display_name(definition: Any, index: int) -> str:
    """The name findings use for a tool: its name, or ``#index`` when it has none."""
    if isinstance(definition, dict) and isinstance(definition.get("name"), str):
        return str(definition["name"])
    return f"#{index}"


def unique_names(**meta: Any) -> Rule:
    """No two tools share a name: a call addresses a tool by name only."""

    def check(definitions: Sequence[Definition], ctx: CheckContext) -> Iterator[Issue]:
        seen: set[str] = set()
        for d in definitions:
            name = d.get("name")
            if not isinstance(name, str):
                continue
            if name in seen:
                yield Issue("/name", f"name {name!r} is used by more than one tool", "rename one", tool=name)
            seen.add(name)

    return Rule(
        set_check=check, adapt="adapt_all appends a stable hash suffix to the later duplicates", **meta
    )


def tool_count(limit: int, **meta: Any) -> Rule:
    """At most ``limit`` tools in one server (one request carries them all)."""

    def check(definitions: Sequence[Definition], ctx: CheckContext) -> Iterator[Issue]:
        if len(definitions) > limit:
            yield Issue(
                "",
                f"{len(definitions)} tools, over the limit of {limit}",
                "hide tools with category filters (MCPKIT_TOOLS_INCLUDE / MCPKIT_TOOLS_EXCLUDE)",
            )

    return Rule(
        set_check=check,
        adapt="none: choose fewer tools with the server's tool filters",
        tool_limit=limit,
        **meta,
    )
