"""Each install channel, derived from :data:`~mcpkit.channels.servers.SERVERS`.

Pure functions from a :class:`ServerEntry` to the text a channel reads: nothing here reads the
disk or the environment, so the tests can compare what ``mcpkit package`` wrote with what these
return, and every link, line and manifest agrees with the others by construction.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote, urlencode

from mcpkit.channels.servers import (
    DISTRIBUTION,
    PYTHON_REQUIRES,
    SERVERS,
    VERSION,
    ServerEntry,
    Setting,
)

REGISTRY_SCHEMA = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"
PLUGIN_SCHEMA = "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json"
PLUGIN_MCP_SCHEMA = "https://agent-plugins.org/schemas/1.0.0/mcp.schema.json"
MCPB_MANIFEST_VERSION = "0.4"
AUTHOR = "mcpkit developers"
LICENSE = "Apache-2.0"


# -- the command ------------------------------------------------------------------------------------


def uvx_args(entry: ServerEntry, *, pinned: bool = False) -> list[str]:
    """`uvx` arguments that start ``entry`` over stdio: ``--from DIST[extra] mcpkit ARGS``."""
    requirement = entry.requirement + (f"=={VERSION}" if pinned else "")
    return ["--from", requirement, "mcpkit", *entry.args]


def _shell_word(word: str) -> str:
    """``word`` as a POSIX shell reads it (quoted only when it must be)."""
    if word and all(c.isalnum() or c in "-_./:=@%+,~" for c in word):
        return word
    return "'" + word.replace("'", "'\"'\"'") + "'"


def shell_line(words: Iterable[str]) -> str:
    return " ".join(_shell_word(word) for word in words)


def _asked(entry: ServerEntry) -> list[Setting]:
    """The settings a README line or a link spells out: the required ones."""
    return [s for s in entry.settings if s.required]


# -- the official registry --------------------------------------------------------------------------


def _registry_input(setting: Setting) -> dict[str, Any]:
    fmt = {"boolean": "boolean", "number": "number", "file": "filepath", "directory": "filepath"}
    out: dict[str, Any] = {"name": setting.env, "description": setting.description}
    if setting.kind in fmt:
        out["format"] = fmt[setting.kind]
    if setting.required:
        out["isRequired"] = True
    if setting.secret:
        out["isSecret"] = True
    if isinstance(setting.default, bool):
        out["default"] = "true" if setting.default else "false"
    elif setting.default is not None and "${" not in setting.default:
        out["default"] = setting.default
    return out


def server_json(entry: ServerEntry) -> dict[str, Any]:
    """The registry's ``server.json``. A registry client runs ``uvx [runtime args] DIST==VERSION
    [package args]``: the console script named like the distribution is ``mcpkit`` itself, and
    ``--with`` brings the extra (an identifier cannot carry one)."""
    package: dict[str, Any] = {
        "registryType": "pypi",
        "registryBaseUrl": "https://pypi.org",
        "identifier": DISTRIBUTION,
        "version": VERSION,
        "runtimeHint": "uvx",
        "transport": {"type": "stdio"},
    }
    if entry.extra:
        package["runtimeArguments"] = [
            {"type": "named", "name": "--with", "value": f"{entry.requirement}=={VERSION}"}
        ]
    package["packageArguments"] = [{"type": "positional", "value": arg} for arg in entry.args]
    if entry.settings:
        package["environmentVariables"] = [_registry_input(s) for s in entry.settings]
    return {
        "$schema": REGISTRY_SCHEMA,
        "name": entry.registry_name,
        "title": entry.title,
        "description": entry.description,
        "version": VERSION,
        "packages": [package],
    }


def registry_command(document: dict[str, Any]) -> list[str]:
    """The command line a registry client builds from a ``server.json``'s first package."""
    package = document["packages"][0]
    words = [package["runtimeHint"]]
    for argument in package.get("runtimeArguments", []):
        words.append(f"{argument['name']}={argument['value']}")
    words.append(f"{package['identifier']}=={package['version']}")
    words.extend(argument["value"] for argument in package.get("packageArguments", []))
    return words


def ownership_lines() -> list[str]:
    """The README lines the registry reads on PyPI to tie each server name to the package."""
    return [f"<!-- mcp-name: {entry.registry_name} -->" for entry in SERVERS]


# -- Claude Desktop extension (MCPB) ----------------------------------------------------------------


def _user_config(setting: Setting) -> dict[str, Any]:
    out: dict[str, Any] = {
        "type": setting.kind,
        "title": setting.title,
        "description": setting.description,
        "required": setting.required,
    }
    if setting.secret:
        out["sensitive"] = True
    if setting.default is not None:
        out["default"] = setting.default
    return out


def mcpb_manifest(entry: ServerEntry) -> dict[str, Any]:
    """``manifest.json``: a ``uv`` server whose ``pyproject.toml`` pins this release."""
    manifest: dict[str, Any] = {
        "manifest_version": MCPB_MANIFEST_VERSION,
        "name": f"mcpkit-{entry.key}",
        "display_name": entry.title,
        "version": VERSION,
        "description": entry.description,
        "author": {"name": AUTHOR},
        "license": LICENSE,
        "keywords": list(entry.keywords),
        "server": {
            "type": "uv",
            "entry_point": "server.py",
            "mcp_config": {
                "command": "uv",
                "args": ["run", "--quiet", "--directory", "${__dirname}", "server.py"],
                "env": {s.env: f"${{user_config.{s.key}}}" for s in entry.settings},
            },
        },
        "compatibility": {
            "platforms": ["darwin", "linux", "win32"],
            "runtimes": {"python": PYTHON_REQUIRES},
        },
    }
    if entry.settings:
        manifest["user_config"] = {s.key: _user_config(s) for s in entry.settings}
    return manifest


def mcpb_pyproject(entry: ServerEntry) -> str:
    return (
        "# What `uv run` installs for this extension: one pinned release of mcpkit, with its extra.\n"
        "[project]\n"
        f'name = "mcpkit-{entry.key}-extension"\n'
        f'version = "{VERSION}"\n'
        f'requires-python = "{PYTHON_REQUIRES}"\n'
        f'dependencies = ["{entry.requirement}=={VERSION}"]\n'
        "\n"
        "[tool.uv]\n"
        "package = false\n"
    )


def mcpb_server_py(entry: ServerEntry) -> str:
    command = shell_line(["mcpkit", *entry.args])
    return (
        f'"""The extension\'s entry point: `{command}` over stdio."""\n'
        "\n"
        "from mcpkit.cli import app\n"
        "\n"
        f'app({list(entry.args)!r}, prog_name="mcpkit")\n'
    )


# -- Agent Plugins 1.0 ------------------------------------------------------------------------------


def plugin_json(entry: ServerEntry) -> dict[str, Any]:
    return {
        "$schema": PLUGIN_SCHEMA,
        "name": f"mcpkit-{entry.key}",
        "version": VERSION,
        "description": entry.description,
        "author": {"name": AUTHOR},
        "license": LICENSE,
        "keywords": list(entry.keywords),
    }


def plugin_mcp_json(entry: ServerEntry) -> dict[str, Any]:
    """The plugin's servers. Settings come from the environment the client starts from: the
    format has no way to ask a person, and a placeholder would reach the server as a value."""
    server = {"type": "stdio", "command": "uvx", "args": uvx_args(entry, pinned=True)}
    return {"$schema": PLUGIN_MCP_SCHEMA, "mcpServers": {entry.key: server}}


# -- client configs, links and lines ----------------------------------------------------------------


def client_config(entry: ServerEntry) -> dict[str, Any]:
    """The ``mcpServers`` entry Claude Desktop, Cursor and most clients take."""
    config: dict[str, Any] = {"command": "uvx", "args": uvx_args(entry)}
    env = {s.env: s.example for s in _asked(entry)}
    if env:
        config["env"] = env
    return config


def vscode_config(entry: ServerEntry) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """VS Code's server config and its ``inputs``: VS Code asks for each required setting
    (a secret one masked) and keeps it in its secret storage."""
    config: dict[str, Any] = {"type": "stdio", "command": "uvx", "args": uvx_args(entry)}
    inputs = [
        {
            "type": "promptString",
            "id": s.key,
            "description": s.description,
            **({"password": True} if s.secret else {}),
        }
        for s in _asked(entry)
    ]
    if inputs:
        config["env"] = {s.env: f"${{input:{s.key}}}" for s in _asked(entry)}
    return config, inputs


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def vscode_link(entry: ServerEntry) -> str:
    config, inputs = vscode_config(entry)
    query = {"name": entry.key, "config": _compact(config)}
    if inputs:
        query["inputs"] = _compact(inputs)
    return "https://vscode.dev/redirect/mcp/install?" + urlencode(query, quote_via=quote)


def cursor_link(entry: ServerEntry) -> str:
    encoded = base64.b64encode(_compact(client_config(entry)).encode()).decode("ascii")
    return "https://cursor.com/en/install-mcp?" + urlencode(
        {"name": entry.key, "config": encoded}, quote_via=quote
    )


def claude_code_line(entry: ServerEntry) -> str:
    words = ["claude", "mcp", "add", entry.key]
    for setting in _asked(entry):
        words += ["-e", f"{setting.env}={setting.example}"]
    return shell_line([*words, "--", "uvx", *uvx_args(entry)])


def _toml_string(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a TOML basic string


def codex_toml(entry: ServerEntry) -> str:
    lines = [
        f"[mcp_servers.{entry.key}]",
        'command = "uvx"',
        "args = [" + ", ".join(_toml_string(a) for a in uvx_args(entry)) + "]",
    ]
    env = client_config(entry).get("env", {})
    if env:
        lines.append("env = { " + ", ".join(f"{k} = {_toml_string(v)}" for k, v in env.items()) + " }")
    return "\n".join(lines)


def claude_desktop_json() -> str:
    return json.dumps(
        {"mcpServers": {entry.key: client_config(entry) for entry in SERVERS}}, indent=2, ensure_ascii=False
    )


def install_lines() -> str:
    """The README's per-client install block (between its ``channels`` markers)."""
    out = ["Claude Desktop, Cursor (`~/.cursor/mcp.json`) and most clients take this shape:", ""]
    out += ["```json", claude_desktop_json(), "```", ""]
    out += ["Claude Code:", "", "```bash"]
    out += [claude_code_line(entry) for entry in SERVERS]
    out += ["```", "", "Codex (`~/.codex/config.toml`):", "", "```toml"]
    out += ["\n\n".join(codex_toml(entry) for entry in SERVERS), "```", ""]
    out += ["One click:", "", "| server | VS Code | Cursor |", "|---|---|---|"]
    for entry in SERVERS:
        out.append(f"| {entry.key} | [install]({vscode_link(entry)}) | [install]({cursor_link(entry)}) |")
    return "\n".join(out) + "\n"


# -- every file ---------------------------------------------------------------------------------


def _json_text(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def channel_files() -> dict[str, str]:
    """Every file ``mcpkit package`` writes, by its path under the output folder."""
    files: dict[str, str] = {}
    for entry in SERVERS:
        base = entry.key
        files[f"{base}/server.json"] = _json_text(server_json(entry))
        files[f"{base}/mcpb/manifest.json"] = _json_text(mcpb_manifest(entry))
        files[f"{base}/mcpb/pyproject.toml"] = mcpb_pyproject(entry)
        files[f"{base}/mcpb/server.py"] = mcpb_server_py(entry)
        files[f"{base}/plugin/plugin.json"] = _json_text(plugin_json(entry))
        files[f"{base}/plugin/mcp.json"] = _json_text(plugin_mcp_json(entry))
    files["install.md"] = install_lines()
    return files
