"""Fixtures for the Redmine integration tests (the helpers live in redmine_session.py)."""

from __future__ import annotations

import pytest

from tests.integration.redmine.redmine_session import RedmineEnv, locate_redmine


@pytest.fixture(scope="session")
def redmine() -> RedmineEnv:
    """The Redmine written down by scripts/redmine-up.sh; skip without it, fail in CI."""
    return locate_redmine()
