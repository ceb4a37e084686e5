"""A pytest plugin for projects that build servers with mcpkit (installed as ``mcpkit``).

It turns strict mode on for the whole test run (``MCPKIT_STRICT=1``, inherited by servers the
tests start as child processes), so a tool definition that a client would reject or crash on
fails the tests instead of shipping. Production servers only warn. Set ``MCPKIT_STRICT=0`` in
the environment to opt out.
"""

from __future__ import annotations

import os
from typing import Any

STRICT_ENV = "MCPKIT_STRICT"


def pytest_configure(config: Any) -> None:
    """Strict mode for every server built during the run, unless the environment says otherwise."""
    os.environ.setdefault(STRICT_ENV, "1")
