"""Shared test set-up: the anyio backend. Paths and helpers live in tests/support/."""

from __future__ import annotations

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
