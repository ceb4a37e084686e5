"""``mcpkit archive enrich`` as a user runs it, against the local fake of a hosted LLM API."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.archive.fake_llm import MODEL, running
from tests.archive.helpers import row, write_csv
from tests.archive_faces.conftest import cli

pytestmark = pytest.mark.slow


def test_enrich_then_search_every_mode(tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    posts = [row(i, "alice", f"猫の話 その{i} coffee") for i in range(1, 11)] + [
        row(11, "bob", "BROKEN 壊れた")
    ]
    assert cli("import", str(write_csv(tmp_path / "e.csv", posts)), "--db", str(db)).returncode == 0
    assert cli("embed", "--db", str(db)).returncode == 0
    with running() as (fake, url):
        args = ["--endpoint", url, "--model", MODEL, "--db", str(db)]
        done = cli("enrich", *args, "--dry-run", "--json")
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["due"] == 11 and not fake.requests  # a dry run sends nothing
        done = cli("enrich", *args, "--concurrency", "4", "--json")
        assert done.returncode == 0, done.stderr
        report = json.loads(done.stdout)
        assert (report["enriched"], report["failed"]) == (10, 1)
        assert [e["embedded"] for e in report["embedded"]] == [10, 10]
        assert "post 11: malformed answer twice" in done.stderr
        done = cli("enrich", *args, "--dry-run")
        assert done.stdout.startswith("1 posts to enrich, 1 of them failed before (10 done, 0 imported")
    for mode in ("content", "reasoning", "summary", "average", "maximum", "minimum"):
        done = cli("search", "猫", "--mode", mode, "--db", str(db), "--json")
        assert done.returncode == 0 and len(json.loads(done.stdout)) == 10, (mode, done.stderr)
    done = cli("text", "要約", "--source", "summary", "--db", str(db), "--json")
    assert len(json.loads(done.stdout)) == 10
    stats = json.loads(cli("stats", "--db", str(db), "--json").stdout)
    assert stats["enrichment"] == {"total_posts": 11, "enriched": 10, "failed": 1}
    assert "Enriched: 10 of 11 (1 failed)" in cli("stats", "--db", str(db)).stdout
    assert "エンリッチ済み: 10 / 11件 (失敗 1件)" in cli("stats", "--db", str(db), "--lang", "ja").stdout


def test_enrich_unreachable_endpoint_is_one_line(tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    assert (
        cli("import", str(write_csv(tmp_path / "e.csv", [row(1, "a", "x y")])), "--db", str(db)).returncode
        == 0
    )
    done = cli("enrich", "--endpoint", "http://127.0.0.1:9/v1", "--db", str(db))
    assert done.returncode == 1
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "cannot reach http://127.0.0.1:9/v1" in lines[0]
