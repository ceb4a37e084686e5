"""Client profiles: what each MCP client accepts in a tool definition, checked and repaired.

A tool definition the spec allows can still crash a client: parentheses in a description and a
``type`` array crashed Claude Desktop in 2025. This part names those client behaviours as
rules, each with a severity and a citation, groups them into profiles, and offers two
operations:

* :func:`lint` reports every finding for a list of tools (ToolSpecs or raw ``tools/list``
  dicts from any server), including tool-count and name-length budgets;
* :func:`adapt` / :func:`adapt_all` rewrite what can be rewritten safely and list each change.

>>> from mcpkit.compat import lint, adapt
>>> tool = {"name": "show_user", "description": "Show a user (admin only)",
...         "inputSchema": {"type": "object", "properties": {"id": {"type": ["number", "string"]}}}}
>>> sorted({f.rule for f in lint([tool], "claude-desktop-2025")})
['desktop-description-parentheses', 'desktop-type-arrays']
>>> fixed, changes = adapt(tool, "claude-desktop-2025")
>>> lint([fixed], "claude-desktop-2025")
[]
"""

from mcpkit.compat._adapt import AdaptResult, adapt, adapt_all
from mcpkit.compat._lint import errors, lint
from mcpkit.compat._model import Finding, NameConstraint, Profile, Rewrite, Rule, Severity
from mcpkit.compat._names import name_hash
from mcpkit.compat._profiles import (
    DEFAULT_PROFILES,
    PROFILES,
    UnknownProfileError,
    get_profile,
    get_profiles,
    profiles_in_use,
)
from mcpkit.compat._table import markdown_table

__all__ = [
    "DEFAULT_PROFILES",
    "PROFILES",
    "AdaptResult",
    "Finding",
    "NameConstraint",
    "Profile",
    "Rewrite",
    "Rule",
    "Severity",
    "UnknownProfileError",
    "adapt",
    "adapt_all",
    "errors",
    "get_profile",
    "get_profiles",
    "lint",
    "markdown_table",
    "name_hash",
    "profiles_in_use",
]
