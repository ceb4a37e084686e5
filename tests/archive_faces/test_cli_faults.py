"""The command line on wrong files and wrong databases: exit 1, one line, nothing created."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.archive.helpers import csv_text, row
from tests.archive_faces.conftest import cli

pytestmark = pytest.mark.slow


def _one_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    return lines[0]


@pytest.mark.parametrize(
    ("name", "data", "says"),
    [
        ("people.csv", b"name,age\nalice,30\n", "expected a Twilog CSV export"),
        ("photo.png", b"\x89PNG\r\n\x1a\n" + bytes(64), "found a PNG image"),
    ],
)
def test_import_refuses_what_is_not_an_export(tmp_path: Path, name: str, data: bytes, says: str) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    db = tmp_path / "new.db"
    done = cli("import", str(path), "--db", str(db))
    assert done.returncode == 1 and says in _one_line(done.stderr)
    assert not list(tmp_path.glob("new.db*"))  # nothing written, not even an empty archive


def test_import_of_shift_jis_reads_japanese(tmp_path: Path) -> None:
    path = tmp_path / "sjis.csv"
    path.write_bytes(csv_text([row(1, "alice", "日本語の投稿です")]).encode("cp932"))
    db = tmp_path / "a.db"
    assert cli("import", str(path), "--db", str(db)).returncode == 0
    done = cli("text", "日本語", "--db", str(db), "--json")
    assert done.returncode == 0 and "日本語の投稿です" in done.stdout


@pytest.mark.parametrize(
    "args",
    [
        ["embed"],
        ["stats"],
        ["text", "x"],
        ["serve", "--port", "0"],
    ],
)
def test_a_missing_db_is_not_created(tmp_path: Path, args: list[str]) -> None:
    """(``mcp`` serves a missing archive instead, saying how to import: tests/archive_faces/test_first_run.py.)"""
    db = tmp_path / "typo.db"
    done = cli(*args, "--db", str(db))
    assert done.returncode == 1
    assert f"no archive at {db}" in _one_line(done.stderr.replace("in-process on", ""))
    assert not db.exists()


def test_directory_as_db(tmp_path: Path) -> None:
    export = tmp_path / "e.csv"
    export.write_text(csv_text([row(1, "a", "x")]))
    done = cli("import", str(export), "--db", str(tmp_path))
    assert done.returncode == 1 and "is a directory, not an archive database" in _one_line(done.stderr)


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes read-only files")
def test_read_only_db(tmp_path: Path) -> None:
    export = tmp_path / "e.csv"
    export.write_text(csv_text([row(1, "a", "x")]))
    db = tmp_path / "a.db"
    assert cli("import", str(export), "--db", str(db)).returncode == 0
    db.chmod(0o444)
    export.write_text(csv_text([row(2, "a", "y")]))
    done = cli("import", str(export), "--db", str(db))
    assert done.returncode == 1 and "read-only" in _one_line(done.stderr)


def test_migration_without_its_csv_and_with_csv(tmp_path: Path) -> None:
    import json

    import numpy as np

    from mcpkit.archive import safetensors_io

    base = tmp_path / "twilog-search"
    (base / "embeddings").mkdir(parents=True)
    part = {"post_ids": np.array([1], dtype=np.int64), "vectors": np.ones((1, 4), dtype=np.float32) / 2}
    (base / "embeddings" / "0000.safetensors").write_bytes(safetensors_io.dumps(part))
    meta = {"model": "m", "embedding_dim": 4, "chunks": 1, "source_path": "gone.csv"}
    (base / "embeddings" / "meta.json").write_text(json.dumps(meta))
    db = tmp_path / "a.db"
    done = cli("import-twilog-search", str(base), "--db", str(db))
    assert done.returncode == 1 and "--csv PATH" in _one_line(done.stderr)
    assert not db.exists()
    export = tmp_path / "e.csv"
    export.write_text(csv_text([row(1, "a", "x")]))
    done = cli("import-twilog-search", str(base), "--csv", str(export), "--db", str(db), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["csv"]["new"] == 1
