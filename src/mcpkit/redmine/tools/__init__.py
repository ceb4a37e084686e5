"""The Redmine tools, one module per resource; :func:`all_tools` binds them to a context."""

from __future__ import annotations

from mcpkit.redmine.tools import (
    attachments,
    categories,
    issues,
    memberships,
    projects,
    reference,
    search,
    time_entries,
    users,
    versions,
    wiki,
)
from mcpkit.redmine.tools.base import Ctx
from mcpkit.tools import ToolSpec

MODULES = (
    issues,
    projects,
    memberships,
    versions,
    categories,
    reference,
    time_entries,
    users,
    wiki,
    search,
    attachments,
)


def all_tools(ctx: Ctx) -> list[ToolSpec]:
    """Every Redmine tool, in a stable order."""
    return [spec for module in MODULES for spec in module.tools(ctx)]


__all__ = ["MODULES", "Ctx", "all_tools"]
