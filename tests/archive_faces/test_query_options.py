"""The query commands take one declared set of filter options and one of target options
(``PostFilters`` and ``Target`` in the archive CLI): each lists the same flags with the same
help, so a filter added once reaches search, text, stats and users, and the hidden ``--server``
spelling of ``--url`` works wherever ``--url`` does (``thread`` lacked it)."""

from __future__ import annotations

from typing import Any

import click
import pytest
import typer.main
from typer.testing import CliRunner

from mcpkit.archive.cli import app

FILTER_FLAGS = {"--kind", "--platform", "--account", "--has-media", "--no-media", "--visibility"}
TARGET_FLAGS = {"--url", "--db", "--server"}
FILTERED = ["search", "text", "stats", "users"]
TARGETED = [*FILTERED, "thread", "shell"]


def _options(name: str, flags: set[str]) -> list[tuple[Any, ...]]:
    group: Any = typer.main.get_command(app)
    command: click.Command = group.get_command(click.Context(group), name)
    return sorted(
        (tuple(p.opts), tuple(p.secondary_opts), p.help, repr(p.default), p.hidden, p.multiple)
        for p in command.params
        if p.param_type_name == "option" and set(p.opts) & flags
    )


def test_every_query_command_lists_the_same_filter_options() -> None:
    first = _options(FILTERED[0], FILTER_FLAGS)
    assert {opt for opts, *_ in first for opt in opts} == FILTER_FLAGS - {"--no-media"}
    for name in FILTERED[1:]:
        assert _options(name, FILTER_FLAGS) == first, name


@pytest.mark.parametrize("name", TARGETED)
def test_every_query_command_takes_the_same_target_options(name: str) -> None:
    options = _options(name, TARGET_FLAGS)
    assert {opt for opts, *_ in options for opt in opts} == TARGET_FLAGS
    assert options == _options("search", TARGET_FLAGS)


def test_thread_reaches_the_server_named_by_the_old_server_spelling(tmp_path: Any) -> None:
    """``--server URL`` names the server to ask, as in every other query command: with no server
    answering there and no archive at --db the command says so, instead of "No such option"."""
    missing = tmp_path / "none.db"
    done = CliRunner().invoke(
        app, ["thread", "123", "--server", "ws://127.0.0.1:9", "--db", str(missing)], env={"COLUMNS": "200"}
    )
    assert "No such option" not in done.output
    assert done.exit_code == 1 and f"no archive at {missing}" in done.output
