"""The shared CLI kit: one spelling per option in every part, one exit rule, one JSON printer,
and ``mcpkit --version``. In process, through typer's CliRunner."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib import resources
from pathlib import Path
from typing import Any

import click
import pytest
import typer
import typer.main
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from mcpkit import __version__
from mcpkit.cli import app as root
from mcpkit.cli_kit import (
    ServingOptions,
    env_flag,
    env_value,
    fail,
    print_json,
    token_from_env,
    usage,
    with_option_sets,
)

runner = CliRunner()


def _command(*path: str) -> click.Command:
    """The click command at ``mcpkit PATH...`` (parts load on first use, as in a real run)."""
    group: Any = typer.main.get_command(root)
    ctx = click.Context(group)
    for name in path:
        group = group.get_command(ctx, name)
        assert group is not None, path
    command: click.Command = group
    return command


def _flags(command: click.Command) -> set[str]:
    return {opt for p in command.params if p.param_type_name == "option" for opt in p.opts}


def test_version_flag_prints_the_version_and_exits_0() -> None:
    done = runner.invoke(root, ["--version"])
    assert done.exit_code == 0, done.output
    assert done.stdout.strip() == __version__


# Each server command that takes a browser origin spells it the same way (Redmine used to say
# --allowed-origin, so a flag copied from the archive's docs was "No such option" there).
@pytest.mark.parametrize(
    "path", [("archive", "serve"), ("archive", "start"), ("gateway",), ("redmine", "mcp")]
)
def test_every_origin_flag_is_spelled_allow_origin(path: tuple[str, ...]) -> None:
    flags = _flags(_command(*path))
    assert "--allow-origin" in flags
    assert "--allowed-origin" not in flags


@pytest.mark.parametrize("path", [("archive", "mcp"), ("gateway",), ("redmine", "mcp")])
def test_every_mcp_server_takes_the_same_transport_flags(path: tuple[str, ...]) -> None:
    assert {"--transport", "--host", "--port"} <= _flags(_command(*path))


SERVING_FLAGS = (
    "--transport",
    "--host",
    "--port",
    "--allow-origin",
    "--token-env",
    "--oauth-issuer",
    "--oauth-resource",
    "--oauth-scope",
    "--oauth-client-id",
)
MCP_SERVERS = [("archive", "mcp"), ("redmine", "mcp"), ("gateway",)]


def _serving_help(*path: str) -> list[tuple[Any, ...]]:
    """What ``mcpkit PATH --help`` says of each serving option: its flags, help, default and type."""
    command = _command(*path)
    return sorted(
        (tuple(p.opts), p.help, repr(p.default), str(p.display_type), p.min, p.max, p.multiple)
        for p in command.params
        if p.param_type_name == "option" and set(p.opts) & set(SERVING_FLAGS)
    )


def test_every_mcp_serving_command_lists_the_same_serving_options() -> None:
    """``archive mcp`` lacked --allow-origin and --token-env and ``redmine mcp`` --token-env while
    the gateway had both: the three now take one declared set, so their help says the same."""
    helps = {path: _serving_help(*path) for path in MCP_SERVERS}
    assert [flags for flags, *_ in helps[("gateway",)]] == sorted((flag,) for flag in SERVING_FLAGS)
    for path, listed in helps.items():
        assert listed == helps[("gateway",)], path
        shown = runner.invoke(root, [*path, "--help"], terminal_width=200, env={"COLUMNS": "200"})
        assert shown.exit_code == 0, shown.output
        for flag in SERVING_FLAGS:
            assert flag in shown.stdout, (path, flag)


@pytest.mark.parametrize("path", MCP_SERVERS)
@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (["--token-env", "MCPKIT_TEST_SERVING_TOKEN"], "--token-env"),
        (["--allow-origin", "https://app.example"], "--allow-origin"),
    ],
)
def test_an_http_only_option_on_stdio_is_a_usage_error(
    path: tuple[str, ...], flags: list[str], named: str
) -> None:
    """A token or an origin given to a stdio server would guard nothing: said, not ignored."""
    env = {
        "MCPKIT_TEST_SERVING_TOKEN": "s3cret",
        "REDMINE_URL": "http://redmine.invalid",
        "REDMINE_API_KEY": "a" * 40,
    }
    done = runner.invoke(root, [*path, *flags], env=env)
    assert done.exit_code == 2, done.output
    assert (
        done.stderr
        == f"error: {named} is for --transport http (a stdio server is reached only by its parent)\n"
    )


def test_an_option_set_is_taken_whole_and_given_back_as_one_value() -> None:
    got: list[ServingOptions] = []
    app = typer.Typer()

    @app.command()
    @with_option_sets
    def go(*, name: str = "x", serving: ServingOptions) -> None:
        assert name == "n"
        got.append(serving)

    done = runner.invoke(
        app, ["--name", "n", "--port", "9", "--allow-origin", "https://a", "--allow-origin", "https://b"]
    )
    assert done.exit_code == 0, done.output
    assert got == [ServingOptions(port=9, allow_origin=["https://a", "https://b"])]
    assert got[0].origins == ("https://a", "https://b") and not got[0].http


def test_two_option_sets_naming_one_option_fail_at_declaration() -> None:
    def twice(*, host: str = "h", serving: ServingOptions) -> None:
        pass

    with pytest.raises(TypeError, match="host"):
        with_option_sets(twice)


@pytest.mark.parametrize(
    "path",
    [
        ("tools",),
        ("call",),
        ("check",),
        ("archive", "search"),
        ("archive", "stats"),
        ("archive", "status"),
        ("gateway", "names"),
        ("gateway", "status"),
        ("redmine", "check-config"),
    ],
)
def test_every_command_that_prints_data_takes_json(path: tuple[str, ...]) -> None:
    assert "--json" in _flags(_command(*path))


def _kit_app() -> typer.Typer:
    app = typer.Typer()

    @app.command()
    def go(kind: str) -> None:
        if kind == "fail":
            fail("the thing broke")
        if kind == "usage":
            usage("give --x")
        print_json({"text": "猫", "n": 1, "path": __import__("pathlib").Path("/a/b")})

    return app


def test_fail_and_usage_are_one_line_on_stderr_with_exit_1_and_2() -> None:
    failed = runner.invoke(_kit_app(), ["fail"])
    assert failed.exit_code == 1
    assert failed.stderr == "error: the thing broke\n" and failed.stdout == ""
    wrong = runner.invoke(_kit_app(), ["usage"])
    assert wrong.exit_code == 2 and wrong.stderr == "error: give --x\n"


def test_the_json_printer_keeps_text_readable_and_writes_paths() -> None:
    done = runner.invoke(_kit_app(), ["print"])
    assert done.exit_code == 0
    assert "猫" in done.stdout  # not \\u732b
    assert json.loads(done.stdout) == {"text": "猫", "n": 1, "path": "/a/b"}


@given(st.text(max_size=20))
def test_env_value_is_none_only_when_unset_or_empty(value: str) -> None:
    assert env_value("X", {"X": value}) == (value or None)
    assert env_value("X", {}) is None
    assert env_flag("X", {"X": value}) is (value not in ("", "0"))


def test_token_from_env_refuses_an_empty_variable() -> None:
    assert token_from_env("--token-env", None, {}) is None
    assert token_from_env("--token-env", "T", {"T": "s3cret"}) == "s3cret"
    with pytest.raises(typer.Exit) as raised:
        token_from_env("--token-env", "T", {"T": ""})
    assert raised.value.exit_code == 2


_SDK = "[m for m in sys.modules if m == 'mcp' or m.startswith('mcp.')]"


@pytest.mark.parametrize(
    "module",
    ["mcpkit.cli_kit", "mcpkit.cli", "mcpkit.archive.cli", "mcpkit.gateway.cli", "mcpkit.redmine.cli"],
)
def test_importing_a_cli_loads_no_mcp_sdk(module: str) -> None:
    """``mcpkit archive search`` must not pay for the SDK: it once came in through the eager
    ``mcpkit.server`` root because the archive took its option types from there."""
    code = f"import {module}, sys; print({_SDK})"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]", done.stdout


def test_an_archive_search_in_process_loads_no_mcp_sdk(tmp_path: Path) -> None:
    """Not only the import: a whole search on a real archive runs without the SDK."""
    from mcpkit.archive.importers import import_csv
    from mcpkit.archive.store import Store

    db = tmp_path / "a.db"
    store = Store(db)
    try:
        import_csv(Path(str(resources.files("mcpkit.archive") / "data" / "sample_twilog.csv")), store)
    finally:
        store.close()
    code = (
        "import sys; from typer.testing import CliRunner; from mcpkit.archive.cli import app; "
        f"done = CliRunner().invoke(app, ['text', 'coffee', '--db', {str(db)!r}, '--json']); "
        f"assert done.exit_code == 0, done.output; print({_SDK})"
    )
    env = {**os.environ, "MCPKIT_ARCHIVE_URL": "ws://127.0.0.1:9"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]", done.stdout


def _all_commands() -> list[tuple[str, click.Command]]:
    group: Any = typer.main.get_command(root)
    ctx = click.Context(group)
    found: list[tuple[str, click.Command]] = []

    def walk(command: Any, path: str) -> None:
        found.append((path, command))
        if hasattr(command, "list_commands"):
            for name in command.list_commands(ctx):
                sub = command.get_command(ctx, name)
                if sub is not None and sub is not command:
                    walk(sub, f"{path} {name}".strip())

    walk(group, "")
    return found


def test_a_flag_means_one_thing_in_every_part() -> None:
    """The same flag has the same help wherever it is one shared option (it drifted when each
    part declared its own), and no part grows shell-completion flags the others lack (``check``
    did, mounted through a holder app that kept typer's default)."""
    helps: dict[str, set[str]] = {}
    for path, command in _all_commands():
        flags = _flags(command)
        assert not flags & {"--install-completion", "--show-completion"}, path
        for param in command.params:
            if param.param_type_name == "option":
                for opt in param.opts:
                    helps.setdefault(opt, set()).add(getattr(param, "help", "") or "")
    for shared in ("--allow-origin", "--host", "--json", "--transport", "--max-message-bytes"):
        assert len(helps[shared]) == 1, (shared, helps[shared])


def test_the_log_level_is_read_by_the_cli_and_given_to_the_library(monkeypatch: pytest.MonkeyPatch) -> None:
    import logging

    from mcpkit.cli_kit import log_level
    from mcpkit.log import setup_logging

    assert log_level("info", {}) == "info"
    assert log_level("info", {"MCPKIT_LOG": " DEBUG "}) == "debug"
    monkeypatch.setenv("MCPKIT_LOG", "debug")
    root = logging.getLogger()
    before = root.level
    try:
        setup_logging("error")  # the variable does not override what the caller passed
        assert root.level == logging.ERROR
    finally:
        root.setLevel(before)


@pytest.mark.parametrize("path", [("archive", "mcp"), ("gateway",), ("redmine", "mcp")])
def test_every_http_face_takes_the_same_oauth_flags(path: tuple[str, ...]) -> None:
    assert {"--oauth-issuer", "--oauth-resource", "--oauth-scope", "--oauth-client-id"} <= _flags(
        _command(*path)
    )


def test_a_library_value_error_is_one_usage_line(capsys: pytest.CaptureFixture[str]) -> None:
    from mcpkit.cli_kit import usage_errors

    with pytest.raises(typer.Exit) as exited, usage_errors():
        raise ValueError("--oauth-issuer is for --transport http")
    assert exited.value.exit_code == 2
    assert capsys.readouterr().err == "error: --oauth-issuer is for --transport http\n"
