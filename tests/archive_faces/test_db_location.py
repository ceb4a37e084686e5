"""``--db`` and ``MCPKIT_ARCHIVE_DB`` name a file; a URL is refused in one line, never made a folder.

``mcpkit archive import x.csv --db postgresql://me@host/db`` once exited 0 and wrote a SQLite
archive into ``./postgresql:/me@host/db``. Every command that takes ``--db`` is run here in an
empty working directory: one ``error:`` line, exit 1, and the directory still empty.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import click
import pytest
import typer.main
from hypothesis import given
from hypothesis import strategies as st

from mcpkit.archive.cli import app
from mcpkit.archive.location import archive_path, default_db_path
from mcpkit.errors import ValidationError

URL = "postgresql://me@db.example/archive"


def _commands_taking_db() -> list[str]:
    group: Any = typer.main.get_command(app)
    context = click.Context(group)
    return sorted(
        name
        for name in group.list_commands(context)
        if any("--db" in getattr(param, "opts", ()) for param in group.get_command(context, name).params)
    )


def test_the_commands_that_take_db_are_the_ones_checked_below() -> None:
    names = _commands_taking_db()
    assert {"import", "embed", "enrich", "search", "text", "stats", "users", "thread", "mcp"} <= set(names)


@pytest.mark.parametrize("name", _commands_taking_db())
def test_a_url_given_to_db_is_refused_in_one_line_and_nothing_is_written(name: str, tmp_path: Path) -> None:
    export = tmp_path / "in" / "t.csv"
    export.parent.mkdir()
    export.write_text('"1","https://x.com/bob/status/1","2024-01-01 00:00:00","hi","bob"\n')
    work = tmp_path / "cwd"
    work.mkdir()
    args = {"import": [str(export)], "search": ["cats"], "text": ["cats"], "thread": ["1"]}.get(name, [])
    done = subprocess.run(
        [sys.executable, "-m", "mcpkit", "archive", name, *args, "--db", URL],
        cwd=work,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
        check=False,
        env={**os.environ, "MCPKIT_ARCHIVE_URL": "ws://127.0.0.1:9"},
    )
    lines = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert done.returncode == 1, done.stderr
    assert lines == [
        "error: --db postgresql://...: this release keeps an archive in a SQLite file only; "
        "give the file's path (PostgreSQL archives are not supported yet)"
    ], done.stderr
    assert list(work.iterdir()) == []


def test_the_variable_is_checked_like_the_option(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mcpkit", "archive", "stats"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={
            **os.environ,
            "MCPKIT_ARCHIVE_DB": "mysql://root@localhost/a",
            "MCPKIT_ARCHIVE_URL": "ws://127.0.0.1:9",
        },
    )
    assert done.returncode == 1
    assert (
        "error: MCPKIT_ARCHIVE_DB mysql://...: not a file path; give the archive file's path" in done.stderr
    )
    assert list(tmp_path.iterdir()) == []


def test_a_file_url_and_a_home_path_name_files(tmp_path: Path) -> None:
    assert archive_path(f"file://{tmp_path}/a.db") == tmp_path / "a.db"
    assert archive_path("~/a.db") == Path.home() / "a.db"
    assert default_db_path({"MCPKIT_ARCHIVE_DB": str(tmp_path / "x.db")}) == tmp_path / "x.db"


schemes = st.from_regex(r"[A-Za-z][A-Za-z0-9+.-]{0,12}", fullmatch=True).filter(lambda s: s.lower() != "file")


@given(scheme=schemes, rest=st.text(max_size=40))
def test_no_url_of_any_scheme_becomes_a_path(scheme: str, rest: str) -> None:
    with pytest.raises(ValidationError) as raised:
        archive_path(f"{scheme}://{rest}")
    assert "\n" not in str(raised.value) and str(raised.value).startswith(f"--db {scheme.lower()}://...")


@given(st.text(min_size=1, max_size=60).filter(lambda s: "://" not in s and s.strip()))
def test_any_text_without_a_scheme_is_the_path_it_says(text: str) -> None:
    assert archive_path(text) == Path(text).expanduser()
