"""What each Redmine request needs: one table from action to permission, for every tool.

Redmine answers a request the key's roles do not allow with an empty 403. The client
(:mod:`mcpkit.redmine.api`) looks the refused request up here by its method and path, so every
tool's 403 names the permission it needed, as an administrator sees it in Administration, Roles
and permissions ("add_issue_watchers (Add watchers)"). The checks made *before* a write
(:mod:`mcpkit.redmine.permissions`) name permissions with the same words.

The rules follow Redmine 5's permission map (``lib/redmine/preparation.rb``): the controller
action each REST path reaches and the permissions that allow it. ``ADMIN`` marks what only an
administrator may do.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

ADMIN = "administrator"

# Redmine's own labels (config/locales/en.yml, permission_*), what an administrator ticks.
LABELS = {
    "view_issues": "View Issues",
    "add_issues": "Add issues",
    "edit_issues": "Edit issues",
    "edit_own_issues": "Edit own issues",
    "copy_issues": "Copy issues",
    "manage_issue_relations": "Manage issue relations",
    "manage_subtasks": "Manage subtasks",
    "set_issues_private": "Set issues public or private",
    "set_own_issues_private": "Set own issues public or private",
    "add_issue_notes": "Add notes",
    "edit_issue_notes": "Edit notes",
    "edit_own_issue_notes": "Edit own notes",
    "set_notes_private": "Set notes as private",
    "delete_issues": "Delete issues",
    "add_issue_watchers": "Add watchers",
    "delete_issue_watchers": "Delete watchers",
    "manage_categories": "Manage issue categories",
    "manage_versions": "Manage versions",
    "manage_members": "Manage members",
    "view_members": "View members",
    "add_project": "Create project",
    "add_subprojects": "Create subprojects",
    "edit_project": "Edit project",
    "close_project": "Close / reopen the project",
    "delete_project": "Delete the project",
    "log_time": "Log spent time",
    "view_time_entries": "View spent time",
    "edit_time_entries": "Edit time logs",
    "edit_own_time_entries": "Edit own time logs",
    "view_news": "View news",
    "manage_news": "Manage news",
    "view_files": "View files",
    "manage_files": "Manage files",
    "view_wiki_pages": "View wiki",
    "edit_wiki_pages": "Edit wiki pages",
    "rename_wiki_pages": "Rename wiki pages",
    "delete_wiki_pages": "Delete wiki pages",
}


@dataclass(frozen=True)
class PermissionRule:
    """Requests with ``method`` whose path matches ``path`` (and that carry ``param``) need one of ``needs``."""

    method: str
    path: str  # a regular expression for the whole path, compiled on first use (not at start-up)
    needs: tuple[str, ...]
    param: str | None = None

    def matches(self, method: str, path: str, params: Mapping[str, str]) -> bool:
        if self.method != method or (self.param is not None and self.param not in params):
            return False
        return _compiled(self.path).fullmatch(path) is not None


@functools.cache
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def _rules(*rows: tuple[str, str, tuple[str, ...], str | None]) -> tuple[PermissionRule, ...]:
    """Rules from rows of (methods joined by ``|``, path pattern without ``.json``, needs, param)."""
    return tuple(
        PermissionRule(method, rf"{path}\.json", needs, param)
        for methods, path, needs, param in rows
        for method in methods.split("|")
    )


_ID = r"\d+"
_PROJECT = r"projects/[^/]+"
_WIKI = rf"{_PROJECT}/wiki/.+"
_ATTACHING = ("add_issues", "edit_issues", "add_issue_notes", "edit_wiki_pages", "manage_files")

# First match wins: the more specific paths come first.
RULES = _rules(
    ("POST", rf"issues/{_ID}/watchers", ("add_issue_watchers",), None),
    ("DELETE", rf"issues/{_ID}/watchers/{_ID}", ("delete_issue_watchers",), None),
    ("POST", rf"issues/{_ID}/relations", ("manage_issue_relations",), None),
    ("GET", rf"issues/{_ID}/relations", ("view_issues",), None),
    ("DELETE", rf"relations/{_ID}", ("manage_issue_relations",), None),
    ("GET", rf"relations/{_ID}", ("view_issues",), None),
    ("POST", "issues", ("copy_issues",), "copy_from"),
    ("POST", "issues", ("add_issues",), None),
    ("PUT", rf"issues/{_ID}", ("edit_issues", "edit_own_issues", "add_issue_notes"), None),
    ("DELETE", rf"issues/{_ID}", ("delete_issues",), None),
    ("GET", rf"(issues|{_PROJECT}/issues)(/{_ID})?", ("view_issues",), None),
    ("PUT", rf"journals/{_ID}", ("edit_issue_notes", "edit_own_issue_notes"), None),
    ("POST", rf"{_PROJECT}/versions", ("manage_versions",), None),
    ("PUT|DELETE", rf"versions/{_ID}", ("manage_versions",), None),
    ("POST", rf"{_PROJECT}/issue_categories", ("manage_categories",), None),
    ("PUT|DELETE", rf"issue_categories/{_ID}", ("manage_categories",), None),
    ("POST", rf"{_PROJECT}/memberships", ("manage_members",), None),
    ("PUT|DELETE", rf"memberships/{_ID}", ("manage_members",), None),
    ("GET", rf"({_PROJECT}/memberships|memberships/{_ID})", ("view_members",), None),
    ("PUT", rf"{_WIKI}", ("edit_wiki_pages",), None),
    ("DELETE", rf"{_WIKI}", ("delete_wiki_pages",), None),
    ("GET", rf"{_PROJECT}/wiki(/.+)?", ("view_wiki_pages",), None),
    ("POST", rf"{_PROJECT}/files", ("manage_files",), None),
    ("GET", rf"{_PROJECT}/files", ("view_files",), None),
    ("POST", rf"{_PROJECT}/news", ("manage_news",), None),
    ("PUT|DELETE", rf"news/{_ID}", ("manage_news",), None),
    ("GET", rf"(news|{_PROJECT}/news|news/{_ID})", ("view_news",), None),
    ("POST", "time_entries", ("log_time",), None),
    ("PUT|DELETE", rf"time_entries/{_ID}", ("edit_time_entries", "edit_own_time_entries"), None),
    ("GET", rf"time_entries(/{_ID})?", ("view_time_entries",), None),
    ("POST", "uploads", _ATTACHING, None),
    ("PUT|DELETE", rf"attachments/{_ID}", ("edit_issues", "edit_wiki_pages", "manage_files"), None),
    ("PUT", rf"{_PROJECT}/(close|reopen)", ("close_project",), None),
    ("PUT", rf"{_PROJECT}/(archive|unarchive)", (ADMIN,), None),
    ("POST", "projects", ("add_project", "add_subprojects"), None),
    ("PUT", _PROJECT, ("edit_project",), None),
    ("DELETE", _PROJECT, ("delete_project",), None),
    ("GET", "users", (ADMIN,), None),
    ("POST|PUT|DELETE", r"(users|groups|custom_fields|roles|trackers|issue_statuses)(/.*)?", (ADMIN,), None),
    ("GET", r"(groups|custom_fields)(/.*)?", (ADMIN,), None),
)


def named(permissions: Sequence[str]) -> str:
    """``add_issue_watchers (Add watchers)``, several joined by ``or``."""
    return " or ".join(f"{p} ({LABELS[p]})" if p in LABELS else p for p in permissions)


def needed(method: str, path: str, params: Mapping[str, str] | None = None) -> tuple[str, ...] | None:
    """The permissions any one of which allows ``method path`` (relative to Redmine's root), if known."""
    path, method, params = path.strip("/"), method.upper(), params or {}
    return next((rule.needs for rule in RULES if rule.matches(method, path, params)), None)


def refusal(method: str, path: str, params: Mapping[str, str] | None = None) -> str:
    """Why Redmine answered 403, in words: the permission the request needed, or an administrator."""
    needs = needed(method, path, params)
    if needs is None:
        return "the key's user lacks the permission for it, or it needs an administrator"
    if needs == (ADMIN,):
        return "only an administrator may do this"
    if len(needs) == 1:
        return f"the key's user lacks the permission {named(needs)} in this project; ask an administrator for a role with it"
    return (
        f"the key's user lacks every permission that allows it ({named(needs)}) in this project; "
        "ask an administrator for a role with one of them"
    )
