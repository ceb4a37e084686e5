"""The TARGET options every client command shares: ``--url``, ``--server``/``--config``, or
a command line after ``--``; plus ``--header``, ``--env`` and ``--trace``.

Kept apart from the commands so ``mcpkit check`` parses a target exactly like ``mcpkit call``.
"""

from __future__ import annotations

import logging
import os
import re
import sys
from collections.abc import Sequence
from dataclasses import replace
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from mcpkit.cli_kit import TraceToOpt, fail, log_level, logging_from_env, usage
from mcpkit.client._config import ServerConfig, ServerConfigError, default_config_path, is_url, load_config
from mcpkit.client._trace import Tracer, tracer_for

UrlOpt = Annotated[str | None, typer.Option("--url", help="Server URL (streamable HTTP, SSE fallback).")]
ServerOpt = Annotated[str | None, typer.Option("--server", "-s", help="Server name from the config file.")]
ConfigOpt = Annotated[
    Path | None,
    typer.Option(
        "--config", "-c", help="Config file (JSON or TOML); default: $MCPKIT_CONFIG or ~/.config/mcpkit/."
    ),
]
HeaderOpt = Annotated[list[str] | None, typer.Option("--header", "-H", help="HTTP header 'Name: value'.")]
EnvOpt = Annotated[
    list[str] | None, typer.Option("--env", "-e", help="Environment for the server, KEY=VALUE.")
]
TraceOpt = TraceToOpt
TimeoutOpt = Annotated[
    float | None,
    typer.Option("--timeout", "-t", help="Seconds for start-up and for each call (default 60)."),
]
MaxBodyOpt = Annotated[
    float, typer.Option("--max-body", help="Largest HTTP response body read, in MB (default 64).")
]


class ProtocolChoice(StrEnum):
    """Which wire a client speaks: the stateless one where offered, or one revision only."""

    auto = "auto"
    stateless = "2026-07-28"
    handshake = "2025-11-25"


ProtocolOpt = Annotated[
    ProtocolChoice,
    typer.Option(
        "--protocol",
        help="auto: the stateless 2026-07-28 wire where the server offers it, else the 2025-11-25 handshake.",
    ),
]

_KV = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*=")


__all__ = [
    "ConfigOpt",
    "EnvOpt",
    "HeaderOpt",
    "MaxBodyOpt",
    "ProtocolChoice",
    "ProtocolOpt",
    "ServerOpt",
    "TimeoutOpt",
    "TraceOpt",
    "UrlOpt",
    "build_target",
    "fail",
    "open_tracer",
    "quiet_logs",
    "split_pairs",
    "stdout_is_terminal",
    "usage",
]


def split_pairs(rest: Sequence[str]) -> tuple[list[str], list[str]]:
    """Leading ``key=value`` words are arguments; the rest is the server's command line.

    Click forgets where ``--`` was, but an executable's name never looks like ``key=value``,
    so the first word that does not is where the command line starts.
    """
    pairs: list[str] = []
    for i, word in enumerate(rest):
        if not _KV.match(word):
            return pairs, list(rest[i:])
        pairs.append(word)
    return pairs, []


def build_target(
    url: str | None,
    server: str | None,
    config: Path | None,
    command: Sequence[str],
    headers: Sequence[str] | None = None,
    env: Sequence[str] | None = None,
) -> ServerConfig:
    """Exactly one of URL, server name or command line, as a ServerConfig (usage error otherwise)."""
    given = [name for name, v in (("--url", url), ("--server", server), ("a command after --", command)) if v]
    if len(given) != 1:
        usage(
            "give exactly one target: --url URL, --server NAME, or a command line after --"
            + (f" (got {' and '.join(given)})" if given else "")
        )
    extra_headers = dict(_split(h, ":", "--header") for h in headers or [])
    extra_env = dict(_split(e, "=", "--env") for e in env or [])
    if url:
        if not is_url(url):
            usage(f"--url must start with http:// or https://, got {url!r}")
        return ServerConfig(name=url, url=url, headers=extra_headers)
    if server:
        path = config or default_config_path(os.environ)
        if path is None:
            usage("--server needs --config FILE (no default config found; see 'mcpkit call --help')")
        try:
            servers = load_config(path)
        except ServerConfigError as exc:
            usage(str(exc))
        if server not in servers:
            usage(f"no server {server!r} in {path} (known: {', '.join(sorted(servers)) or 'none'})")
        base = servers[server]
        return replace(base, env={**base.env, **extra_env}, headers={**base.headers, **extra_headers})
    return ServerConfig(name=Path(command[0]).name, command=list(command), env=extra_env)


def _split(text: str, sep: str, flag: str) -> tuple[str, str]:
    key, found, value = text.partition(sep)
    if not found or not key.strip():
        usage(f"{flag} expects NAME{sep}VALUE, got {text!r}")
    return key.strip(), value.strip() if sep == ":" else value


def quiet_logs(trace: str | None) -> None:
    """Log to stderr at ``MCPKIT_LOG``; the SDK's own tracebacks only with --trace or debug.

    Every failure reaches the user as one line from the client; the SDK logs the same failure
    again, with a traceback, which is noise unless someone is debugging.
    """
    logging_from_env()
    debugging = bool(trace) or log_level() == "debug"
    for name in ("mcp", "httpx2", "httpcore", "mcp_types"):
        logging.getLogger(name).setLevel(logging.DEBUG if debugging else logging.CRITICAL)


def open_tracer(trace: str | None) -> Tracer | None:
    """``--trace`` wins over ``MCPKIT_TRACE``."""
    return tracer_for(trace, os.environ)


def stdout_is_terminal() -> bool:
    return sys.stdout.isatty()
