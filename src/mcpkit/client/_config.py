"""Server configuration: the config files of Claude Desktop, VS Code and Codex, and targets.

One file names many servers, in any of three layouts (JSON or TOML alike)::

    {"mcpServers": {"time": {"command": "uvx", "args": ["mcp-server-time"], "env": {}, "cwd": "/tmp"},
                    "docs": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}}}}

    {"servers": {"time": {"type": "stdio", "command": "uvx", "args": ["mcp-server-time"]}}}   # VS Code

    [mcp_servers.time]                     # Codex config.toml
    command = "uvx"
    args = ["mcp-server-time"]

Optional keys: ``type`` (``stdio``, ``http``, ``sse``), ``timeout`` (seconds per call; Codex's
``tool_timeout_sec``), ``restart`` (``"on-failure"``), VS Code's ``envFile``, Codex's
``http_headers``, ``env_http_headers``, ``bearer_token_env_var`` and ``enabled``.
``${VAR}``, ``${env:VAR}`` and ``${VAR:-default}`` are read from the environment mapping the
loader is given (a variable that is not set is an error naming it), so secrets can stay out
of the file. Nothing here reads the environment on its own initiative: a CLI passes
``os.environ`` to :func:`default_config_path` and :func:`load_config`; a session never looks
for a config file (a name is resolved only against the ``config`` it is given).

Where the default file is (first that exists): ``$MCPKIT_CONFIG``;
``$XDG_CONFIG_HOME/mcpkit/servers.toml`` then ``servers.json`` (``XDG_CONFIG_HOME`` defaults
to ``~/.config``); Claude Desktop's own ``claude_desktop_config.json``
(``~/.config/Claude/`` on Linux, ``~/Library/Application Support/Claude/`` on macOS,
``%APPDATA%\\Claude\\`` on Windows).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from mcpkit.errors import ConfigError, ConnectError

Transport = Literal["stdio", "http", "sse", "auto"]
CONFIG_ENV = "MCPKIT_CONFIG"
_VAR = re.compile(r"\$\{([^}]*)\}")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class ServerConfigError(ConfigError, ConnectError):
    """The server configuration file is missing, unreadable or malformed."""


@dataclass(frozen=True)
class ServerConfig:
    """How to reach one server: a command line (stdio) or a URL (HTTP)."""

    name: str
    command: list[str] = field(default_factory=list)
    url: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    transport: Transport = "auto"
    timeout: float | None = None
    restart: str | None = None
    source: str | None = field(default=None, compare=False)
    """The config file this entry came from (None: built from a URL or command line)."""
    line: int | None = field(default=None, compare=False)
    """The line of that file where the entry starts, when it could be found."""
    app: Any = field(default=None, compare=False, repr=False)
    """A server in this process (see :mod:`mcpkit.client._memory`); set by :meth:`in_process`."""

    @classmethod
    def in_process(cls, app: object, name: str | None = None) -> ServerConfig:
        """A server object of this process: an SDK low-level ``Server`` or mcpkit's own."""
        return cls(name=name or str(getattr(app, "name", None) or type(app).__name__), app=app)

    @property
    def kind(self) -> Literal["stdio", "http", "sse", "memory"]:
        """The transport this entry really uses."""
        if self.app is not None:
            return "memory"
        if self.transport in ("http", "sse"):
            return self.transport
        return "stdio" if self.command else "http"


def is_url(text: str) -> bool:
    return text.startswith(("http://", "https://"))


def expand_vars(
    text: str,
    *,
    where: str = "config",
    workspace: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> str:
    """Replace ``${VAR}``, ``${VAR:-default}`` and ``${env:VAR}`` from ``environ`` (None: this
    process's environment, which is what a CLI passes).

    Also VS Code's ``${userHome}`` and ``${workspaceFolder}``. A variable that is not set and
    has no default is an error naming it: an empty token sent as ``Bearer `` fails far from
    the cause. ``${input:...}`` (VS Code prompts) cannot be asked here and is an error too.
    """

    def one(match: re.Match[str]) -> str:
        body = match.group(1)
        if body == "userHome":
            return str(Path.home())
        if body == "workspaceFolder":
            return str(workspace or Path.cwd())
        if body.startswith("input:"):
            raise ServerConfigError(
                f"{where}: ${{{body}}} asks VS Code to prompt, which mcpkit cannot; "
                "put the value in an environment variable and write ${env:NAME}"
            )
        name, has_default, default = body.removeprefix("env:").partition(":-")
        if not _NAME.fullmatch(name):
            raise ServerConfigError(f"{where}: unknown variable ${{{body}}}")
        value = (os.environ if environ is None else environ).get(name)
        if value is not None:
            return value
        if has_default:
            return default
        raise ServerConfigError(f"{where}: environment variable {name} is not set (used as ${{{body}}})")

    return _VAR.sub(one, text)


def default_config_path(environ: Mapping[str, str]) -> Path | None:
    """The user's config file, or None when none of the documented places has one.

    Only a CLI calls this, with ``os.environ``: library code is given its config path."""
    explicit = environ.get(CONFIG_ENV)
    if explicit:
        return Path(explicit).expanduser()
    for candidate in config_candidates(environ):
        if candidate.is_file():
            return candidate
    return None


def config_candidates(environ: Mapping[str, str]) -> list[Path]:
    """Every place the default config is looked for, in order."""
    home = Path.home()
    xdg = Path(environ.get("XDG_CONFIG_HOME") or home / ".config")
    out = [xdg / "mcpkit" / "servers.toml", xdg / "mcpkit" / "servers.json"]
    if sys.platform == "darwin":
        out.append(home / "Library" / "Application Support" / "Claude" / "claude_desktop_config.json")
    elif sys.platform == "win32":
        out.append(Path(environ.get("APPDATA", home)) / "Claude" / "claude_desktop_config.json")
    else:
        out.append(xdg / "Claude" / "claude_desktop_config.json")
    return out


def load_config(path: str | Path, environ: Mapping[str, str] | None = None) -> dict[str, ServerConfig]:
    """Read a JSON or TOML config file into ``{name: ServerConfig}`` (every supported layout).

    ``${VAR}`` references are read from ``environ`` (None: this process's environment, what
    a CLI passes). This is the one loader every part uses (the client, ``mcpkit check`` and
    the gateway): keep its name and signature stable.
    """
    p = Path(path).expanduser()
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ServerConfigError(f"cannot read config {p}: {exc.strerror or exc}") from exc
    is_toml = p.suffix.lower() == ".toml"
    try:
        data: Any = tomllib.loads(text) if is_toml else json.loads(text)
    except (ValueError, tomllib.TOMLDecodeError) as exc:
        raise ServerConfigError(f"config {p} is not valid {p.suffix.lstrip('.') or 'JSON'}: {exc}") from exc
    servers = parse_config(data, source=str(p), workspace=_workspace_of(p), environ=environ)
    lines = text.splitlines()
    return {name: replace(cfg, line=_line_of(lines, name, is_toml)) for name, cfg in servers.items()}


def parse_config(
    data: Any,
    *,
    source: str = "config",
    workspace: str | Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> dict[str, ServerConfig]:
    """Build one ServerConfig per entry of whichever server table ``data`` has.

    ``mcpServers`` (Claude Desktop, Cursor, ...), ``servers`` (VS Code's mcp.json) or
    ``mcp_servers`` (Codex's config.toml). ``workspace`` is what VS Code's
    ``${workspaceFolder}`` means (default: the current directory).
    """
    if not isinstance(data, Mapping):
        raise ServerConfigError(f"{source}: expected a table at the top level")
    key = next((k for k in LAYOUTS if isinstance(data.get(k), Mapping)), None)
    if key is None:
        raise ServerConfigError(
            f"{source}: expected a top-level 'mcpServers' table (Claude Desktop), 'servers' (VS Code) "
            "or 'mcp_servers' (Codex)"
        )
    context = _Context(source, Path(workspace) if workspace else Path.cwd(), environ)
    out: dict[str, ServerConfig] = {}
    for name, entry in data[key].items():
        if isinstance(entry, Mapping) and entry.get("enabled") is False:
            continue  # Codex: a server switched off stays in the file
        out[str(name)] = _entry(str(name), entry, context)
    return out


LAYOUTS = ("mcpServers", "servers", "mcp_servers")
"""Top-level keys that hold servers: Claude Desktop style, VS Code, Codex."""


@dataclass(frozen=True)
class _Context:
    source: str
    workspace: Path
    environ: Mapping[str, str] | None


def _workspace_of(path: Path) -> Path:
    """VS Code keeps mcp.json in ``<workspace>/.vscode/``; elsewhere the file's own folder."""
    folder = path.resolve().parent
    return folder.parent if folder.name == ".vscode" else folder


def _line_of(lines: list[str], name: str, is_toml: bool) -> int | None:
    """1-based line where server ``name`` is defined (for SARIF locations), if it can be found."""
    quoted = json.dumps(name)
    for number, line in enumerate(lines, 1):
        text = line.strip()
        if is_toml:
            if text.startswith("[") and (
                text.rstrip("]").endswith(f".{name}") or text.endswith(f".{quoted}]")
            ):
                return number
        elif text.startswith(quoted) and text[len(quoted) :].lstrip().startswith(":"):
            return number
    return None


def _entry(name: str, entry: Any, ctx: _Context) -> ServerConfig:
    where = f"{ctx.source}: server {name!r}"
    if not isinstance(entry, Mapping):
        raise ServerConfigError(f"{where} must be a table")
    command, url = entry.get("command"), entry.get("url") or entry.get("serverUrl")
    if bool(command) == bool(url):
        raise ServerConfigError(f"{where} needs exactly one of 'command' or 'url'")
    args = entry.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise ServerConfigError(f"{where}: 'args' must be a list of strings")
    transport = str(entry.get("type") or entry.get("transport") or "auto").lower()
    transport = {"streamable-http": "http", "streamable_http": "http", "streamablehttp": "http"}.get(
        transport, transport
    )
    if transport not in ("stdio", "http", "sse", "auto"):
        raise ServerConfigError(f"{where}: unknown type {transport!r} (stdio, http or sse)")
    timeout = entry.get("timeout", entry.get("tool_timeout_sec"))
    if timeout is not None and (not isinstance(timeout, int | float) or timeout <= 0):
        raise ServerConfigError(f"{where}: 'timeout' must be a positive number of seconds")

    def expand(text: Any) -> str:
        return expand_vars(str(text), where=where, workspace=ctx.workspace, environ=ctx.environ)

    env = _env_file(entry, where, expand)
    env.update({str(k): expand(v) for k, v in _table(entry, "env", where).items()})
    headers = {str(k): expand(v) for k, v in _table(entry, "headers", where).items()}
    headers.update({str(k): expand(v) for k, v in _table(entry, "http_headers", where).items()})
    for header, var in _table(entry, "env_http_headers", where).items():
        headers[str(header)] = _required_env(str(var), where, ctx.environ)
    if entry.get("bearer_token_env_var"):
        headers["Authorization"] = "Bearer " + _required_env(
            str(entry["bearer_token_env_var"]), where, ctx.environ
        )
    return ServerConfig(
        name=name,
        command=[expand(command), *(expand(a) for a in args)] if command else [],
        url=expand(url) if url else None,
        env=env,
        cwd=expand(entry["cwd"]) if entry.get("cwd") else None,
        headers=headers,
        transport=transport,  # type: ignore[arg-type]
        timeout=float(timeout) if timeout is not None else None,
        restart=str(entry["restart"]) if entry.get("restart") else None,
        source=ctx.source,
    )


def _env_file(entry: Mapping[str, Any], where: str, expand: Any) -> dict[str, str]:
    """VS Code's ``envFile``: KEY=VALUE lines (``#`` comments, optional quotes)."""
    if not entry.get("envFile"):
        return {}
    path = Path(expand(entry["envFile"])).expanduser()
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ServerConfigError(f"{where}: cannot read envFile {path}: {exc.strerror or exc}") from exc
    out: dict[str, str] = {}
    for line in text.splitlines():
        key, found, value = line.strip().removeprefix("export ").partition("=")
        if found and key.strip() and not key.lstrip().startswith("#"):
            out[key.strip()] = value.strip().strip("'\"")
    return out


def _required_env(var: str, where: str, environ: Mapping[str, str] | None) -> str:
    value = (os.environ if environ is None else environ).get(var)
    if value is None:
        raise ServerConfigError(f"{where}: environment variable {var} is not set")
    return value


def _table(entry: Mapping[str, Any], key: str, where: str) -> Mapping[str, Any]:
    value = entry.get(key) or {}
    if not isinstance(value, Mapping):
        raise ServerConfigError(f"{where}: {key!r} must be a table of strings")
    return value


def resolve_target(
    target: str | Sequence[str] | ServerConfig | object, *, config: str | Path | None = None
) -> ServerConfig:
    """Turn what the user gave into a ServerConfig.

    Order: a ServerConfig as is; a server object of this process (an SDK low-level
    ``Server``, or mcpkit's own) is served in memory; a list is an argv; a string URL is
    HTTP; a string naming a server in ``config`` is that entry; any other string is a
    command line split like a shell would. The user's default config file is a CLI's
    business (:func:`default_config_path`): a library call that named a server without
    ``config`` must not depend on which files the user happens to have.
    """
    if isinstance(target, ServerConfig):
        return target
    if not isinstance(target, str) and not isinstance(target, Sequence):
        return ServerConfig.in_process(target)
    if not isinstance(target, str):
        argv = [str(a) for a in target]
        if not argv:
            raise ConnectError("empty command line")
        return ServerConfig(name=Path(argv[0]).name, command=argv)
    if is_url(target):
        return ServerConfig(name=target, url=target)
    if config:
        path = Path(config).expanduser()
        servers = load_config(path)
        if target in servers:
            return servers[target]
        if not any(c.isspace() for c in target):
            raise ServerConfigError(
                f"no server {target!r} in {path} (known: {', '.join(sorted(servers)) or 'none'})"
            )
    argv = shlex.split(target)
    if not argv:
        raise ConnectError("empty target")
    return ServerConfig(name=Path(argv[0]).name, command=argv)
