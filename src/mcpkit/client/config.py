"""Server configuration: Claude Desktop-style JSON, the same shape in TOML, and targets.

One file names many servers::

    {"mcpServers": {"time": {"command": "uvx", "args": ["mcp-server-time"], "env": {}, "cwd": "/tmp"},
                    "docs": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}}}}

or in TOML ``[mcpServers.time]`` with the same keys. Optional keys: ``type`` (``stdio``,
``http``, ``sse``), ``timeout`` (seconds per call) and ``restart`` (``"on-failure"``).
``${VAR}`` and ``${VAR:-default}`` in strings are read from the environment, so secrets can
stay out of the file.

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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from mcpkit.client.errors import ConnectError

Transport = Literal["stdio", "http", "sse", "auto"]
CONFIG_ENV = "MCPKIT_CONFIG"
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class ServerConfigError(ConnectError):
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

    @property
    def kind(self) -> Literal["stdio", "http", "sse"]:
        """The transport this entry really uses."""
        if self.transport in ("http", "sse"):
            return self.transport
        return "stdio" if self.command else "http"


def is_url(text: str) -> bool:
    return text.startswith(("http://", "https://"))


def expand_vars(text: str) -> str:
    """Replace ``${VAR}`` / ``${VAR:-default}`` from the environment (unset and no default: empty)."""
    return _VAR.sub(lambda m: os.environ.get(m.group(1), m.group(2) or ""), text)


def default_config_path() -> Path | None:
    """The user's config file, or None when none of the documented places has one."""
    explicit = os.environ.get(CONFIG_ENV)
    if explicit:
        return Path(explicit).expanduser()
    for candidate in config_candidates():
        if candidate.is_file():
            return candidate
    return None


def config_candidates() -> list[Path]:
    """Every place the default config is looked for, in order."""
    home = Path.home()
    xdg = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")
    out = [xdg / "mcpkit" / "servers.toml", xdg / "mcpkit" / "servers.json"]
    if sys.platform == "darwin":
        out.append(home / "Library" / "Application Support" / "Claude" / "claude_desktop_config.json")
    elif sys.platform == "win32":
        out.append(Path(os.environ.get("APPDATA", home)) / "Claude" / "claude_desktop_config.json")
    else:
        out.append(xdg / "Claude" / "claude_desktop_config.json")
    return out


def load_config(path: str | Path) -> dict[str, ServerConfig]:
    """Read a JSON or TOML config file into ``{name: ServerConfig}``."""
    p = Path(path).expanduser()
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ServerConfigError(f"cannot read config {p}: {exc.strerror or exc}") from exc
    try:
        data: Any = tomllib.loads(text) if p.suffix.lower() == ".toml" else json.loads(text)
    except (ValueError, tomllib.TOMLDecodeError) as exc:
        raise ServerConfigError(f"config {p} is not valid {p.suffix.lstrip('.') or 'JSON'}: {exc}") from exc
    return parse_config(data, source=str(p))


def parse_config(data: Any, *, source: str = "config") -> dict[str, ServerConfig]:
    """Validate the ``mcpServers`` table and build one ServerConfig per entry."""
    if not isinstance(data, Mapping) or not isinstance(data.get("mcpServers"), Mapping):
        raise ServerConfigError(f"{source}: expected a top-level 'mcpServers' table")
    return {str(name): _entry(str(name), entry, source) for name, entry in data["mcpServers"].items()}


def _entry(name: str, entry: Any, source: str) -> ServerConfig:
    where = f"{source}: server {name!r}"
    if not isinstance(entry, Mapping):
        raise ServerConfigError(f"{where} must be a table")
    command, url = entry.get("command"), entry.get("url")
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
    timeout = entry.get("timeout")
    if timeout is not None and (not isinstance(timeout, int | float) or timeout <= 0):
        raise ServerConfigError(f"{where}: 'timeout' must be a positive number of seconds")
    return ServerConfig(
        name=name,
        command=[expand_vars(str(command)), *(expand_vars(a) for a in args)] if command else [],
        url=expand_vars(str(url)) if url else None,
        env={str(k): expand_vars(str(v)) for k, v in _table(entry, "env", where).items()},
        cwd=expand_vars(str(entry["cwd"])) if entry.get("cwd") else None,
        headers={str(k): expand_vars(str(v)) for k, v in _table(entry, "headers", where).items()},
        transport=transport,  # type: ignore[arg-type]
        timeout=float(timeout) if timeout is not None else None,
        restart=str(entry["restart"]) if entry.get("restart") else None,
    )


def _table(entry: Mapping[str, Any], key: str, where: str) -> Mapping[str, Any]:
    value = entry.get(key) or {}
    if not isinstance(value, Mapping):
        raise ServerConfigError(f"{where}: {key!r} must be a table of strings")
    return value


def resolve_target(
    target: str | Sequence[str] | ServerConfig, *, config: str | Path | None = None
) -> ServerConfig:
    """Turn what the user gave into a ServerConfig.

    Order: a ServerConfig as is; a list is an argv; a string URL is HTTP; a string naming a
    server in ``config`` (or the default config) is that entry; any other string is a command
    line split like a shell would.
    """
    if isinstance(target, ServerConfig):
        return target
    if not isinstance(target, str):
        argv = [str(a) for a in target]
        if not argv:
            raise ConnectError("empty command line")
        return ServerConfig(name=Path(argv[0]).name, command=argv)
    if is_url(target):
        return ServerConfig(name=target, url=target)
    path = Path(config).expanduser() if config else default_config_path()
    if path is not None and (config or path.is_file()):
        servers = load_config(path)
        if target in servers:
            return servers[target]
        if config and not any(c.isspace() for c in target):
            raise ServerConfigError(
                f"no server {target!r} in {path} (known: {', '.join(sorted(servers)) or 'none'})"
            )
    argv = shlex.split(target)
    if not argv:
        raise ConnectError("empty target")
    return ServerConfig(name=Path(argv[0]).name, command=argv)
