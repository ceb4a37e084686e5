"""``mcpkit.server`` exports what an app author uses; a relay's extras live in ``mcpkit.server.relay``.

The root once exported 55 names, the SDK-assumption helpers and 13 task functions among them,
for the gateway alone. The names an app author uses are listed in docs/toolkit.md ("What
mcpkit.server exports"); the root exports exactly those, and what only a relay needs is
reached through ``mcpkit.server.relay``, nowhere else.
"""

from __future__ import annotations

import re

import mcpkit.server
import mcpkit.server.relay
from tests.support.env import REPO

TOOLKIT = REPO / "docs" / "toolkit.md"


def _documented() -> set[str]:
    """The names in the table under the heading "What mcpkit.server exports"."""
    text = TOOLKIT.read_text()
    start = text.index("### What `mcpkit.server` exports")
    section = text[start : text.index("\n#", start + 1)]
    rows = [line for line in section.splitlines() if line.startswith("| ") and "---" not in line][1:]
    return {name for row in rows for name in re.findall(r"`(\w+)`", row.split("|")[2])}


def test_the_root_exports_exactly_the_documented_app_author_api() -> None:
    assert sorted(mcpkit.server.__all__) == sorted(_documented())


def test_no_name_is_exported_by_both_the_root_and_the_relay_module() -> None:
    assert set(mcpkit.server.__all__) & set(mcpkit.server.relay.__all__) == set()


def test_no_task_plumbing_or_sdk_internal_is_an_app_author_name() -> None:
    relay_only = {"declare_tasks", "task_owner", "task_answer", "connection_of", "request_outbound_of"}
    assert relay_only <= set(mcpkit.server.relay.__all__)
    assert relay_only & set(mcpkit.server.__all__) == set()


def test_every_relay_name_is_used_by_the_gateway() -> None:
    """The relay module is the gateway's import path, not a second public API to grow."""
    gateway = "\n".join(p.read_text() for p in (REPO / "src" / "mcpkit" / "gateway").glob("*.py"))
    unused = [n for n in mcpkit.server.relay.__all__ if not re.search(rf"\b{n}\b", gateway)]
    assert unused == []
