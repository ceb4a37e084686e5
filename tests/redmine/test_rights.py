"""The one table from a Redmine request to the permission it needs (redmine/rights.py).

The real 403s of every kind are in tests/integration/redmine/test_redmine_writes.py; these pin
the table itself: each request the tools send finds its permission, with Redmine's own label.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpkit.redmine.rights import ADMIN, LABELS, RULES, needed, refusal


def test_every_permission_in_the_table_has_redmines_label() -> None:
    named = {p for rule in RULES for p in rule.needs} - {ADMIN}
    assert named <= LABELS.keys(), sorted(named - LABELS.keys())


@pytest.mark.parametrize(
    ("method", "path", "params", "permissions"),
    [
        ("POST", "issues/5/watchers.json", None, ("add_issue_watchers",)),
        ("DELETE", "issues/5/watchers/3.json", None, ("delete_issue_watchers",)),
        ("POST", "issues/5/relations.json", None, ("manage_issue_relations",)),
        ("DELETE", "relations/8.json", None, ("manage_issue_relations",)),
        ("POST", "projects/web/versions.json", None, ("manage_versions",)),
        ("PUT", "versions/2.json", None, ("manage_versions",)),
        ("PUT", "projects/web/wiki/Start page.json", None, ("edit_wiki_pages",)),
        ("DELETE", "projects/web/wiki/Plan.json", None, ("delete_wiki_pages",)),
        ("DELETE", "issues/5.json", None, ("delete_issues",)),
        ("POST", "issues.json", {"copy_from": "5"}, ("copy_issues",)),
        ("POST", "issues.json", None, ("add_issues",)),
        ("PUT", "issues/5.json", None, ("edit_issues", "edit_own_issues", "add_issue_notes")),
        ("PUT", "journals/4.json", None, ("edit_issue_notes", "edit_own_issue_notes")),
        ("POST", "time_entries.json", None, ("log_time",)),
        ("PUT", "projects/web/close.json", None, ("close_project",)),
        ("PUT", "projects/web.json", None, ("edit_project",)),
        ("POST", "users.json", None, (ADMIN,)),
    ],
)
def test_each_request_a_tool_sends_finds_its_permission(
    method: str, path: str, params: dict[str, str] | None, permissions: tuple[str, ...]
) -> None:
    assert needed(method, path, params) == permissions


def test_a_refusal_names_the_permission_and_its_label() -> None:
    assert "add_issue_watchers (Add watchers)" in refusal("POST", "issues/5/watchers.json")
    assert "edit_issues (Edit issues) or edit_own_issues" in refusal("PUT", "issues/5.json")
    assert refusal("POST", "users.json") == "only an administrator may do this"


@given(method=st.sampled_from(["GET", "POST", "PUT", "DELETE", "PATCH"]), path=st.text(max_size=80))
def test_any_request_gets_one_line_of_reason(method: str, path: str) -> None:
    reason = refusal(method, path, {"copy_from": "1"})
    assert reason and "\n" not in reason
