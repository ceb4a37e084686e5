"""The Redmine tools, one module per resource, each a ``TOOLS`` tuple of :class:`Tool` data.

:func:`all_tools` binds every tool to a provider of the Redmine context (see
:mod:`mcpkit.redmine.server`); handlers stay module-level functions a test can call directly.
"""

from __future__ import annotations

from mcpkit.redmine.tools import (
    attachments,
    categories,
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
    time_entries,
    users,
    versions,
    wiki,
)
from mcpkit.redmine.tools.base import Provider, RedmineCtx, Tool
from mcpkit.tools import ToolSpec

MODULES = (
    issues,
    journals,
    relations,
    projects,
    summary,
    memberships,
    versions,
    categories,
    reference,
    time_entries,
    users,
    groups,
    wiki,
    news,
    search,
    attachments,
    files,
)
CATEGORIES = tuple(dict.fromkeys(t.category for m in MODULES for t in m.TOOLS))


def tool_data() -> list[Tool]:
    """Every Redmine tool as data, in a stable order."""
    return [tool for module in MODULES for tool in module.TOOLS]


def all_tools(provide: Provider) -> list[ToolSpec]:
    """Every Redmine tool bound to ``provide``."""
    return [tool.spec(provide) for tool in tool_data()]


__all__ = ["CATEGORIES", "MODULES", "Provider", "RedmineCtx", "Tool", "all_tools", "tool_data"]
