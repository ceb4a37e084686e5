"""Where the real dependencies of the tests live, and how to react when one is missing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"
THIRD_PARTY = REPO / ".third-party"


def require(condition: bool, reason: str) -> None:
    """Skip when a real dependency is missing on a developer machine; fail in CI.

    CI installs every server the tests need (``make test``), so a missing one there is a
    broken install step, not a reason to pass quietly.
    """
    if condition:
        return
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI must have it: make test installs it)")
    pytest.skip(reason)
