"""Every tool is called end to end by the Redmine integration tests.

Two checks: the test sources name every tool in a call (holds however pytest distributes the
tests), and, when all these tests run in one process, every tool the server listed was in fact
called (this file's name sorts it last).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from mcpkit.redmine.tools import tool_data
from tests.integration.redmine.redmine_session import CALLED, LISTED

# A call names its tool first (s.ok("get_issue", ...)), or a loop names the tools it calls.
CALL = re.compile(r"""(?:\.ok|\.error|\.raw|\bcall)\(\s*(?:\w+,\s*)?"([a-z_]+)\"""")
LOOP = re.compile(r"for \w+ in \(([^)]*)\):")


def test_the_tests_call_every_tool() -> None:
    named: set[str] = set()
    for source in Path(__file__).parent.glob("test_*.py"):
        text = source.read_text()
        named.update(CALL.findall(text))
        for names in LOOP.findall(text):
            named.update(re.findall(r'"([a-z_]+)"', names))
    missing = sorted({tool.name for tool in tool_data()} - named)
    assert not missing, f"no integration test calls: {missing}"


def test_every_listed_tool_was_exercised() -> None:
    if os.environ.get("PYTEST_XDIST_WORKER") or not LISTED:
        pytest.skip("the tests ran in several processes, or the tool list test did not run here")
    missing = sorted(LISTED - CALLED)
    assert not missing, f"tools never called end to end: {missing}"
