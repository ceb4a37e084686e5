r"""The Redmine tools, one module per resource, each a ``TOOLS`` tuple of ``ToolSpec``\ s.

Each handler takes the Redmine context (``handler(args, rc)``); :func:`all_tools` binds every
tool to a provider of that context (see :mod:`mcpkit.redmine.server`), and handlers stay
module-level functions a test can call directly.
"""

from __future__ import annotations

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
    users,
    versions,
    wiki,
)
from mcpkit.redmine.tools.base import Provider, RedmineContext, redmine_tool
from mcpkit.tools import ToolSpec

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


def tool_data() -> list[ToolSpec]:
    """Every Redmine tool, not yet bound to a context, in a stable order."""
    return [tool for module in MODULES for tool in module.TOOLS]


def all_tools(provide: Provider) -> list[ToolSpec]:
    """Every Redmine tool bound to ``provide``."""
    return [confirm.by_user(tool.bind(provide)) for tool in tool_data()]


__all__ = ["CATEGORIES", "MODULES", "Provider", "RedmineContext", "all_tools", "redmine_tool", "tool_data"]
