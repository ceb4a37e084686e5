"""Runs after the other Redmine integration files (by name): every listed tool was called end to end."""

from __future__ import annotations

import pytest

from tests.integration.redmine.redmine_session import CALLED, LISTED


def test_every_listed_tool_was_exercised() -> None:
    if not LISTED:
        pytest.skip("the tool list test did not run in this process")
    missing = sorted(LISTED - CALLED)
    assert not missing, f"tools never called end to end: {missing}"
