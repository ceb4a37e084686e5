"""The interactive shell driven through real stdin, and its range parser."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpkit.archive.shell import ShellUsageError, parse_ranges
from tests.archive_faces.conftest import cli


def test_shell_session(sample_db: Path, tmp_path: Path) -> None:
    lines = [
        "/top 3",
        "猫が寝ている",
        "/next",
        "/view list",
        "/d 1-2,2",
        "/user kenji_travel",
        "/date 2024-01-01 2024-05-31",
        "旅行",
        "/mode sideways",
        "/bogus",
        "/?",
        "/q",
        "this line is never read",
    ]
    done = cli("shell", "--db", str(sample_db), input="\n".join(lines) + "\n",
               env={"MCPKIT_ARCHIVE_STATE": str(tmp_path)})  # fmt: skip
    out = done.stdout
    assert done.returncode == 0, done.stderr
    assert "  1. [" in out and "  4. [" in out  # first page then /next
    assert "top: 3" in out and "view: list" in out
    assert "includes=['kenji_travel']" in out
    assert "date: 2024-01-01 to 2024-05-31" in out
    assert "usage: /mode" in out and "unknown command /bogus" in out
    assert "/details 1-3,7" in out  # the help text
    after_filter = out.split("date: 2024-01-01")[1].split("usage: /mode")[0]
    assert "@kenji_travel" in after_filter and "@alice_reads" not in after_filter
    assert (tmp_path / "archive_history").exists()


@given(st.lists(st.tuples(st.integers(1, 50), st.integers(0, 5)), min_size=1, max_size=6))
def test_parse_ranges(parts: list[tuple[int, int]]) -> None:
    spec = ",".join(f"{a}-{a + n}" if n else str(a) for a, n in parts)
    expected: list[int] = []
    for a, n in parts:
        for k in range(a, a + n + 1):
            if k not in expected:
                expected.append(k)
    assert parse_ranges(spec) == expected


@pytest.mark.parametrize("spec", ["", "a", "3-1", "0", "1-", "-2"])
def test_parse_ranges_rejects(spec: str) -> None:
    with pytest.raises(ShellUsageError):
        parse_ranges(spec)
