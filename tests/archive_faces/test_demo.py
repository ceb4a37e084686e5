"""`make demo` as a test: the script runs end to end and shows what the issue asks for."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.support.env import REPO


def test_demo_runs(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "archive_demo.py"), "--dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    out = done.stdout
    assert done.returncode == 0, done.stderr[-2000:]
    assert "330 new" in out and "0 new" in out
    english = out.split("An English query finds Japanese posts")[1].split("===")[0]
    assert "富士山" in english  # cross-lingual: English query, Japanese posts
    assert '🔍 Search results: 3 (query: "猫が日向で寝ている")' in out
    assert "📝 Text search results" in out and "👥" in out
    # stats cover what the accounts wrote, and every breakdown counts those same posts
    assert "Posts: 330\nUsers: 4\n" in out and "By kind: post 330, like 36, bookmark 37\n" in out
    assert "mcpkit archive start" in out and "mcpkit archive mcp" in out
