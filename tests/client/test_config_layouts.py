"""Config files of other clients: VS Code's mcp.json and Codex's config.toml, and variables.

The same two servers written in each layout must load to the same ServerConfigs, and an
undefined ``${VAR}`` must be an error that names the variable.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpkit.client import (
    ServerConfigError,
    SessionOptions,
    connect,
    default_config_path,
    load_config,
    parse_config,
    resolve_target,
)
from mcpkit.client._config import expand_vars
from tests.client.procs import RAW

PY = json.dumps(sys.executable)


def _claude(tmp: Path) -> Path:
    path = tmp / "claude.json"
    path.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "raw": {"command": sys.executable, "args": [str(RAW)], "env": {"A": "1"}},
                    "web": {"url": "https://example.com/mcp", "headers": {"X-Team": "blue"}},
                }
            },
            indent=2,
        )
    )
    return path


def _vscode(tmp: Path) -> Path:
    folder = tmp / "project" / ".vscode"
    folder.mkdir(parents=True)
    path = folder / "mcp.json"
    path.write_text(
        json.dumps(
            {
                "inputs": [],
                "servers": {
                    "raw": {
                        "type": "stdio",
                        "command": sys.executable,
                        "args": [str(RAW)],
                        "env": {"A": "1"},
                    },
                    "web": {"type": "http", "url": "https://example.com/mcp", "headers": {"X-Team": "blue"}},
                },
            },
            indent=2,
        )
    )
    return path


def _codex(tmp: Path) -> Path:
    path = tmp / "config.toml"
    path.write_text(
        f"""model = "o3"

[mcp_servers.raw]
command = {PY}
args = [{json.dumps(str(RAW))}]
env = {{ A = "1" }}

[mcp_servers.web]
url = "https://example.com/mcp"
http_headers = {{ "X-Team" = "blue" }}

[mcp_servers.off]
command = "never-started"
enabled = false
"""
    )
    return path


def test_three_layouts_load_the_same_servers(tmp_path: Path) -> None:
    claude, vscode, codex = (
        load_config(_claude(tmp_path)),
        load_config(_vscode(tmp_path)),
        load_config(_codex(tmp_path)),
    )
    assert claude == codex
    # VS Code spells the transport out; everything else is the same.
    assert vscode["raw"].command == claude["raw"].command and vscode["raw"].env == {"A": "1"}
    assert vscode["web"].kind == "http" and vscode["web"].headers == {"X-Team": "blue"}
    assert set(codex) == {"raw", "web"}  # enabled = false is left out


def test_the_line_of_each_server_is_known(tmp_path: Path) -> None:
    codex = load_config(_codex(tmp_path))
    assert codex["raw"].line == 3 and codex["web"].line == 8
    claude = load_config(_claude(tmp_path))
    assert claude["raw"].line == 3 and claude["raw"].source == str(tmp_path / "claude.json")


def test_codex_token_and_header_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FIGMA_TOKEN", "tok")
    monkeypatch.setenv("ORG", "acme")
    entry = {
        "url": "https://x/mcp",
        "bearer_token_env_var": "FIGMA_TOKEN",
        "env_http_headers": {"X-Org": "ORG"},
        "tool_timeout_sec": 12,
    }
    cfg = parse_config({"mcp_servers": {"figma": entry}})["figma"]
    assert cfg.headers == {"Authorization": "Bearer tok", "X-Org": "acme"} and cfg.timeout == 12
    monkeypatch.delenv("FIGMA_TOKEN")
    with pytest.raises(ServerConfigError, match="FIGMA_TOKEN is not set"):
        parse_config({"mcp_servers": {"figma": entry}})


def test_vscode_variables_and_env_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCS_TOKEN", "s3cret")
    (tmp_path / ".env").write_text("# comment\nexport FROM_FILE='yes'\nPLAIN=1\n")
    servers = {
        "s": {
            "command": "${workspaceFolder}/run",
            "args": ["${userHome}", "${env:DOCS_TOKEN}"],
            "envFile": "${workspaceFolder}/.env",
        }
    }
    cfg = parse_config({"servers": servers}, workspace=tmp_path)["s"]
    assert cfg.command == [f"{tmp_path}/run", str(Path.home()), "s3cret"]
    assert cfg.env == {"FROM_FILE": "yes", "PLAIN": "1"}
    with pytest.raises(ServerConfigError, match=r"input:token.*environment variable"):
        parse_config({"servers": {"s": {"url": "https://x", "headers": {"A": "${input:token}"}}}})


def test_undefined_variable_is_an_error_naming_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MCPKIT_TEST_UNSET", raising=False)
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"mcpServers": {"x": {"url": "https://h/mcp?k=${MCPKIT_TEST_UNSET}"}}}))
    with pytest.raises(ServerConfigError) as info:
        load_config(path)
    assert (
        "MCPKIT_TEST_UNSET" in str(info.value) and "'x'" in str(info.value) and str(path) in str(info.value)
    )
    # A default makes it fine.
    path.write_text(json.dumps({"mcpServers": {"x": {"url": "https://h/${MCPKIT_TEST_UNSET:-mcp}"}}}))
    assert load_config(path)["x"].url == "https://h/mcp"


def test_unknown_layout_says_which_ones_exist() -> None:
    with pytest.raises(ServerConfigError, match=r"mcpServers.*servers.*mcp_servers"):
        parse_config({"clients": {}})


@given(st.text(alphabet=st.characters(blacklist_characters="${}"), max_size=40))
def test_text_without_variables_is_unchanged(text: str) -> None:
    assert expand_vars(text) == text


@given(
    st.from_regex(r"[A-Z][A-Z0-9_]{0,10}", fullmatch=True),
    st.text(alphabet=st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)), max_size=20),
)
def test_a_set_variable_expands_exactly(name: str, value: str) -> None:
    environ = {name: value}
    assert expand_vars(f"<${{{name}}}|${{env:{name}}}>", environ=environ) == f"<{value}|{value}>"
    with pytest.raises(ServerConfigError, match=name):
        expand_vars(f"${{{name}}}", environ={})


def test_variables_come_from_the_mapping_the_loader_is_given(tmp_path: Path) -> None:
    path = tmp_path / "servers.json"
    path.write_text(json.dumps({"mcpServers": {"x": {"url": "https://${HOST}/mcp"}}}))
    assert load_config(path, {"HOST": "example.com"})["x"].url == "https://example.com/mcp"
    with pytest.raises(ServerConfigError, match="HOST is not set"):
        load_config(path, {})


def test_the_default_config_file_is_found_in_the_environ_given(tmp_path: Path) -> None:
    """Only a CLI looks for the user's file, and it says where to look (os.environ)."""
    chosen = tmp_path / "chosen.toml"
    assert default_config_path({"MCPKIT_CONFIG": str(chosen)}) == chosen
    xdg = tmp_path / "xdg"
    assert default_config_path({"XDG_CONFIG_HOME": str(xdg)}) is None  # (on Linux: all under it)
    (xdg / "mcpkit").mkdir(parents=True)
    (xdg / "mcpkit" / "servers.json").write_text('{"mcpServers": {}}')
    assert default_config_path({"XDG_CONFIG_HOME": str(xdg)}) == xdg / "mcpkit" / "servers.json"


def test_a_name_without_a_config_is_a_command_line() -> None:
    """A library call never looks in the user's files: without ``config`` a word is a command."""
    assert resolve_target("time").command == ["time"]


@pytest.mark.anyio
async def test_connect_by_name_from_a_codex_config(tmp_path: Path) -> None:
    async with connect("raw", SessionOptions(timeout=30), config=_codex(tmp_path)) as s:
        assert (await s.call("echo", {"text": "codex"})).text == "codex"
