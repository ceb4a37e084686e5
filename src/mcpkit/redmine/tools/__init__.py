r"""The Redmine tools, one module per resource, each a ``TOOLS`` tuple of ``ToolSpec``\ s.

Each handler takes the Redmine context (``handler(args, rc)``); :func:`all_tools` binds every
tool to a provider of that context (see :mod:`mcpkit.redmine.server`), and handlers stay
module-level functions a test can call directly.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from mcpkit.redmine.tools import (
    analytics,
    attachments,
    categories,
    confirm,
    custom_fields,
    edits,
    files,
    groups,
    issues,
    journals,
    memberships,
    news,
    projects,
    reference,
    relations,
    search,
    summary,
    texts,
    time_entries,
    time_import,
    users,
    versions,
    wiki,
)
from mcpkit.redmine.tools.base import Provider, RedmineContext, redmine_tool
from mcpkit.server import ToolFilter
from mcpkit.tools import ToolSpec

logger = logging.getLogger("mcpkit.redmine")

MODULES = (
    issues,
    texts,
    journals,
    relations,
    projects,
    summary,
    memberships,
    versions,
    categories,
    reference,
    time_entries,
    time_import,
    users,
    groups,
    wiki,
    news,
    search,
    attachments,
    files,
    edits,
    custom_fields,
    analytics,
)
CATEGORIES = tuple(dict.fromkeys(t.category for m in MODULES for t in m.TOOLS))

OPTIONAL_CATEGORIES = {
    "admin": "create, update and delete user accounts",
    "groups": "user groups",
    "memberships": "project members and their roles",
    "news": "project news",
}
"""Categories off unless turned on with ``REDMINE_TOOLS``: every client pays for each tool
definition on every turn (``tools/list`` stays under 40,000 bytes by default), and these serve
fewer conversations. Nothing is removed: a hidden tool's call says how to turn it on."""
ALL = "all"


@dataclass(frozen=True)
class RedmineToolFilter(ToolFilter):
    """The toolkit's filter, plus the optional categories that are off, refused with how to turn them on."""

    off: frozenset[str] = frozenset()

    def hidden_reason(self, tool: ToolSpec) -> str | None:
        reason = super().hidden_reason(tool)
        if reason is None and tool.category in self.off:
            return (
                f"its category {tool.category} is off by default; turn it on with "
                f"REDMINE_TOOLS={tool.category} in the server's environment, or REDMINE_TOOLS=all"
            )
        return reason


def tool_filter(base: ToolFilter, turned_on: frozenset[str]) -> RedmineToolFilter:
    """``base`` (the ``MCPKIT_TOOLS_*`` filter and read-only mode) with the optional categories
    not in ``turned_on`` off; ``all`` turns every one on, and so does a list of categories or
    tools to show (``MCPKIT_TOOLS_INCLUDE``, ``MCPKIT_TOOLS_ALLOW``). An unknown name is a warning."""
    known = set(CATEGORIES) | set(OPTIONAL_CATEGORIES)
    for name in sorted(turned_on - known - {ALL}):
        logger.warning(
            "REDMINE_TOOLS names unknown category %r; known categories: %s", name, ", ".join(sorted(known))
        )
    named = base.include is not None or base.allow is not None  # a list of its own: nothing is off
    off = frozenset() if ALL in turned_on or named else frozenset(OPTIONAL_CATEGORIES) - turned_on
    return RedmineToolFilter(base.include, base.exclude, base.read_only, base.allow, off)


def tool_data() -> list[ToolSpec]:
    """Every Redmine tool, not yet bound to a context, in a stable order."""
    return [tool for module in MODULES for tool in module.TOOLS]


def all_tools(provide: Provider) -> list[ToolSpec]:
    """Every Redmine tool bound to ``provide``."""
    return [confirm.by_user(tool.bind(provide)) for tool in tool_data()]


__all__ = [
    "CATEGORIES",
    "MODULES",
    "OPTIONAL_CATEGORIES",
    "Provider",
    "RedmineContext",
    "RedmineToolFilter",
    "all_tools",
    "redmine_tool",
    "tool_data",
    "tool_filter",
]
