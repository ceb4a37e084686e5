"""Every face agrees with the one declaration of the archive's methods (archive/methods.py).

Walks :data:`METHODS`: the API refuses just outside each declared range with upstream's text
and code and takes every declared choice; the MCP tools' schemas, the CLI's click parameters,
the shell's help and the docs' method table carry the same limits, choices and defaults.
"""

from __future__ import annotations

import typing
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any, Literal

import pytest
import typer.main
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from mcpkit.archive.methods import METHODS, Method, Param, markdown_table
from mcpkit.archive.settings import OFFSET_MAX
from mcpkit.jsonrpc import INVALID_PARAMS, JsonRpcError

ROOT = Path(__file__).resolve().parents[2]

# which CLI command answers which method, and which option carries which parameter
CLI_COMMANDS = {
    "search_similar": "search",
    "search_posts_by_text": "text",
    "get_user_stats": "users",
    "get_thread": "thread",
    "get_database_stats": "stats",
}
CLI_NAMES = {
    "includes": "user",
    "excludes": "exclude_user",
    "threshold_min": "min_posts",
    "threshold_max": "max_posts",
    "from": "date_from",
    "to": "date_to",
}


# declared parameters a command does not offer yet (a paging option of users is not asked for)
NOT_OPTIONS = {("get_user_stats", "offset")}


def _leaves(method: Method) -> Iterator[Param]:
    """The parameters a flat face (the MCP tools, the CLI) offers: ``settings`` unfolded."""
    for param in method.params:
        if param.name == "settings":
            yield from param.fields
        else:
            yield param


def _required_args(method: Method) -> dict[str, Any]:
    return {param.name: "| x" if param.name == "query" else "x" for param in method.params if param.required}


@pytest.fixture
async def api(tmp_path: Path) -> AsyncIterator[Any]:
    from mcpkit.archive.api import ArchiveAPI

    opened = ArchiveAPI.open(tmp_path / "a.db")
    yield opened
    opened.close()


def test_the_api_serves_exactly_the_declared_methods() -> None:
    from mcpkit.archive.api import ArchiveAPI

    api = ArchiveAPI.__new__(ArchiveAPI)
    ArchiveAPI.__init__(api, engine=None)  # type: ignore[arg-type]
    assert api.methods() == list(METHODS)
    for name, method in METHODS.items():
        assert api.is_streaming(name) == method.streaming


@pytest.mark.anyio
async def test_the_api_checks_every_declared_range_and_choice(api: Any) -> None:
    checked = 0
    for method in METHODS.values():
        base = _required_args(method)
        for param in _leaves(method):
            if param.minimum is not None and param.maximum is not None:
                for bad in (param.minimum - 1, param.maximum + 1):
                    with pytest.raises(JsonRpcError) as info:
                        await api.call(method.name, {**base, param.name: bad})
                    assert (info.value.code, info.value.message) == (
                        INVALID_PARAMS,
                        f"{param.name} must be between {param.minimum} and {param.maximum}, got {bad}",
                    )
                    checked += 1
            if param.choices:
                with pytest.raises(JsonRpcError) as info:
                    await api.call(method.name, {**base, param.name: "sideways"})
                assert info.value.code == INVALID_PARAMS and param.name in info.value.message
                for choice in param.choices:  # taken by validation (a space may have no vectors yet)
                    try:
                        await api.call(method.name, {**base, param.name: choice})
                    except JsonRpcError as exc:  # refused for another reason, not the choice
                        assert not exc.message.startswith(f"{param.name} must"), (method.name, exc.message)
                checked += 1
    assert checked >= 16


def test_every_mcp_schema_agrees_with_the_declaration() -> None:
    from mcpkit.archive.filters import FILTER_KEYS
    from mcpkit.archive.mcp import build_archive_mcp
    from mcpkit.archive.rpc import RpcClient

    server = build_archive_mcp(RpcClient("ws://127.0.0.1:9"), websocket_url="ws://127.0.0.1:9")
    tools = {tool.name: tool for tool in server.tools}
    assert {name for name in tools if name in METHODS} == {
        "search_similar", "search_posts_by_text", "get_user_stats", "get_database_stats",
        "get_thread", "get_status", "embed_text",
    }  # fmt: skip
    for name, tool in tools.items():
        if name not in METHODS:
            continue
        method = METHODS[name]
        schema = tool.input_schema
        leaves = list(_leaves(method))
        extra = FILTER_KEYS if method.filters else ()
        assert list(schema["properties"]) == [p.name for p in leaves] + list(extra), name
        assert schema.get("required", []) == [p.name for p in leaves if p.required], name
        for param in leaves:
            _agrees(schema["properties"][param.name], param, f"{name}.{param.name}")


def _agrees(prop: dict[str, Any], param: Param, where: str) -> None:
    assert prop["type"] == param.type, where
    assert prop["description"] == param.help, where
    assert prop.get("minimum") == param.minimum, where
    assert prop.get("maximum") == param.maximum, where
    assert prop.get("enum") == (list(param.choices) or None), where
    if param.default_in_help:
        assert "default" not in prop and str(param.default) in param.help, where
    else:
        assert prop.get("default") == param.default, where
    if param.items is not None:
        assert prop["items"]["type"] == param.items, where
    if param.fields:
        assert list(prop["properties"]) == [f.name for f in param.fields], where
        for field in param.fields:
            _agrees(prop["properties"][field.name], field, f"{where}.{field.name}")


def test_every_cli_option_agrees_with_the_declaration() -> None:
    from mcpkit.archive.cli import app

    group = typer.main.get_command(app)
    checked = 0
    for method_name, command_name in CLI_COMMANDS.items():
        command = group.commands[command_name]  # type: ignore[attr-defined]
        options = {p.name: p for p in command.params if p.opts[0].startswith("--")}
        for param in METHODS[method_name].walk():  # the CLI unfolds settings and its filters
            option = options.get(CLI_NAMES.get(param.name, param.name))
            if option is None:  # the command's argument, or an object whose members are options
                assert param.required or param.type == "object" or (method_name, param.name) in NOT_OPTIONS, (
                    f"{command_name} has no option for {param.name}"
                )
                continue
            where = f"{command_name} {option.opts[0]}"
            assert option.help.startswith(param.help), where
            annotation = option.type_descriptor.annotation
            assert (typing.get_args(annotation) if param.choices else ()) == param.choices, where
            assert (option.min, option.max) == (param.minimum, param.maximum), where
            if param.default is not None:
                assert option.default == param.default, where
            checked += 1
    assert checked >= 16
    # and click enforces them: a value outside a declared range or choice is a usage error
    ran = CliRunner().invoke(app, ["thread", "x", "--offset", str(OFFSET_MAX + 1)])
    assert ran.exit_code == 2 and "--offset" in ran.output
    ran = CliRunner().invoke(app, ["text", "x", "--source", "tags"])
    assert ran.exit_code == 2 and "--source" in ran.output


@pytest.mark.anyio
@pytest.mark.parametrize("lang", ["en", "ja"])
async def test_the_shell_help_and_commands_follow_the_declaration(lang: Literal["en", "ja"]) -> None:
    from mcpkit.archive.shell import Shell

    written: list[str] = []
    shell = Shell(None, written.append, lang)  # type: ignore[arg-type]  # no command here calls the API
    await shell.handle("/help")
    lines = written[0].splitlines()
    top_k, mode = METHODS["search_similar"].param("top_k"), METHODS["search_similar"].param("mode")
    top_line = next(line for line in lines if line.lstrip().startswith("/top N"))
    assert top_line.endswith(f"{top_k.minimum}..{top_k.maximum}")
    mode_line = next(line for line in lines if line.lstrip().startswith("/mode"))
    assert mode_line.split()[3:] == list(mode.choices)
    for value in (top_k.minimum, top_k.maximum):
        await shell.handle(f"/top {value}")
        assert shell.state.top == value
    await shell.handle(f"/top {top_k.maximum + 1}")
    assert shell.state.top == top_k.maximum and "/top" in written[-1]
    for choice in mode.choices:
        await shell.handle(f"/mode {choice}")
        assert shell.state.mode == choice


def test_the_docs_method_table_is_the_declaration() -> None:
    """docs/archive-data.md holds the table ``python -m mcpkit.archive.methods`` prints."""
    docs = (ROOT / "docs" / "archive-data.md").read_text(encoding="utf-8")
    assert markdown_table() in docs


def test_the_search_settings_parser_follows_the_declaration(monkeypatch: pytest.MonkeyPatch) -> None:
    """``parse_settings`` takes top_k's default and range and the thresholds' minimum from the
    declaration: declared otherwise, it checks otherwise (it once had them written out)."""
    import dataclasses

    from mcpkit.archive.settings import parse_settings
    from mcpkit.errors import ValidationError

    method = METHODS["search_similar"]

    def changed(param: Param) -> Param:
        if param.name == "top_k":
            return dataclasses.replace(param, default=7, minimum=3, maximum=40)
        if param.name.startswith("threshold_"):
            return dataclasses.replace(param, minimum=5)
        return dataclasses.replace(param, fields=tuple(changed(f) for f in param.fields))

    monkeypatch.setitem(
        METHODS,
        "search_similar",
        dataclasses.replace(method, params=tuple(changed(p) for p in method.params)),
    )
    assert parse_settings({}).top_k == 7
    assert parse_settings({"top_k": 40}).top_k == 40
    for refused in (2, 41):
        with pytest.raises(ValidationError, match="top_k must be between 3 and 40"):
            parse_settings({"top_k": refused})
    assert parse_settings({"user_filter": {"threshold_min": 5}}).user_filter.threshold_min == 5
    with pytest.raises(ValidationError, match=r"user_filter\.threshold_max must be an integer >= 5"):
        parse_settings({"user_filter": {"threshold_max": 4}})


@given(st.integers(min_value=-(2**40), max_value=2**40))
def test_any_top_k_is_taken_exactly_when_the_declaration_allows_it(value: int) -> None:
    from mcpkit.archive.settings import parse_settings
    from mcpkit.errors import ValidationError

    low, high = METHODS["search_similar"].param("top_k").bounds
    if low <= value <= high:
        assert parse_settings({"top_k": value}).top_k == value
    else:
        with pytest.raises(ValidationError, match=f"top_k must be between {low} and {high}"):
            parse_settings({"top_k": value})
