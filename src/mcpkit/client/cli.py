"""``mcpkit tools``, ``mcpkit call`` and ``mcpkit shell``: use any MCP server from a terminal.

Exit codes: 0 success; 1 the tool reported an error (``isError``), the server failed, crashed
or timed out (message on stderr); 2 usage errors (no or two targets, bad ``--args``).
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import anyio
import anyio.to_thread
import typer
from rich.console import Console
from rich.table import Table

from mcpkit.cli_kit import JsonOpt, print_json
from mcpkit.client._args import parse_json_args, parse_pairs
from mcpkit.client._config import ServerConfig
from mcpkit.client._options import DEFAULT_TIMEOUT, SessionOptions
from mcpkit.client._session import Session
from mcpkit.client._signals import SignalledError, run_command
from mcpkit.client._wire import Tool
from mcpkit.client.target_cli import (
    ConfigOpt,
    EnvOpt,
    HeaderOpt,
    MaxBodyOpt,
    ProtocolChoice,
    ProtocolOpt,
    ServerOpt,
    TimeoutOpt,
    TraceOpt,
    UrlOpt,
    build_target,
    fail,
    open_tracer,
    quiet_logs,
    split_pairs,
    usage,
)
from mcpkit.errors import CallError, ToolError, ValidationError
from mcpkit.jsonrpc import JsonRpcError

T = TypeVar("T")
_CTX = {"allow_extra_args": False, "ignore_unknown_options": False}


def register(app: typer.Typer) -> None:
    """Add ``tools``, ``call`` and ``shell`` to ``app``."""
    app.command("tools", context_settings=_CTX)(tools_command)
    app.command("call", context_settings=_CTX)(call_command)
    app.command("shell", context_settings=_CTX)(shell_command)


def run_session(
    target: ServerConfig,
    trace: str | None,
    timeout: float | None,
    body: Callable[[Session], Awaitable[T]],
    max_body_mb: float = 64.0,
    protocol: ProtocolChoice = ProtocolChoice.auto,
) -> T:
    """Open a session, run ``body`` in it, and turn client errors into exit code 1."""
    quiet_logs(trace)

    async def main() -> T:
        options = SessionOptions(
            timeout=timeout,
            tracer=open_tracer(trace),
            max_body=int(max_body_mb * 1024 * 1024) if max_body_mb > 0 else None,
            protocol=protocol.value,
        )
        async with Session(target, options) as session:
            return await body(session)

    try:
        return run_command(main)
    except SignalledError as exc:
        typer.echo(f"interrupted: {exc}", err=True)
        raise typer.Exit(exc.exit_code) from None
    except JsonRpcError as exc:
        fail(f"the server answered JSON-RPC error {exc.code}: {exc.message}")
    except CallError as exc:
        fail(str(exc))
    except KeyboardInterrupt:
        typer.echo("interrupted", err=True)
        raise typer.Exit(130) from None


def tools_command(
    command: Annotated[list[str] | None, typer.Argument(help="Server command line, after --.")] = None,
    url: UrlOpt = None,
    server: ServerOpt = None,
    config: ConfigOpt = None,
    header: HeaderOpt = None,
    env: EnvOpt = None,
    as_json: JsonOpt = False,
    trace: TraceOpt = None,
    timeout: TimeoutOpt = None,
    max_body: MaxBodyOpt = 64.0,
    protocol: ProtocolOpt = ProtocolChoice.auto,
) -> None:
    """List a server's tools, e.g. mcpkit tools -- uvx mcp-server-time."""
    target = build_target(url, server, config, command or [], header, env)
    found = run_session(
        target, trace, timeout or DEFAULT_TIMEOUT, lambda s: s.list_tools(), max_body, protocol
    )
    if as_json:
        print_json(found)
        return
    table = Table(title=f"{len(found)} tools")
    table.add_column("name", style="bold")
    table.add_column("read-only")
    table.add_column("description")
    for tool in found:
        ann = tool.get("annotations")
        ann = ann if isinstance(ann, dict) else {}
        desc = str(tool.get("description") or "").strip().splitlines()
        table.add_row(
            str(tool.get("name")), "yes" if ann.get("readOnlyHint") else "", desc[0] if desc else ""
        )
    Console().print(table)


def call_command(
    tool: Annotated[str, typer.Argument(help="Tool name.")],
    rest: Annotated[
        list[str] | None, typer.Argument(help="key=value arguments, then -- and the server command line.")
    ] = None,
    args_json: Annotated[str | None, typer.Option("--args", "-a", help="Arguments as a JSON object.")] = None,
    url: UrlOpt = None,
    server: ServerOpt = None,
    config: ConfigOpt = None,
    header: HeaderOpt = None,
    env: EnvOpt = None,
    as_json: JsonOpt = False,
    trace: TraceOpt = None,
    timeout: TimeoutOpt = None,
    max_body: MaxBodyOpt = 64.0,
    protocol: ProtocolOpt = ProtocolChoice.auto,
) -> None:
    """Call one tool and print its text, e.g. mcpkit call get_current_time timezone=UTC -- uvx mcp-server-time."""
    pairs, command = split_pairs(rest or [])
    target = build_target(url, server, config, command, header, env)
    if args_json is not None and pairs:
        usage("give arguments either as --args JSON or as key=value, not both")
    try:
        given = parse_json_args(args_json) if args_json is not None else None
    except ValidationError as exc:
        usage(str(exc))

    async def body(session: Session) -> dict[str, Any]:
        arguments = given
        if arguments is None:
            schema = None
            if pairs:
                schema = next(
                    (t.get("inputSchema") for t in await session.list_tools() if t.get("name") == tool), None
                )
            arguments = parse_pairs(pairs, schema)
        outcome = await session.call(tool, arguments, raise_on_error=False)
        return outcome.raw

    try:
        raw = run_session(target, trace, timeout or DEFAULT_TIMEOUT, body, max_body, protocol)
    except ValidationError as exc:
        usage(str(exc))
    from mcpkit.client._outcome import Outcome

    outcome = Outcome.from_raw(raw)
    if as_json:
        print_json(raw)
    elif not outcome.is_error:
        typer.echo(outcome.text)
    if outcome.is_error:
        fail(outcome.text or f"tool {tool!r} reported an error")


def shell_command(
    command: Annotated[list[str] | None, typer.Argument(help="Server command line, after --.")] = None,
    url: UrlOpt = None,
    server: ServerOpt = None,
    config: ConfigOpt = None,
    header: HeaderOpt = None,
    env: EnvOpt = None,
    trace: TraceOpt = None,
    timeout: TimeoutOpt = None,
    max_body: MaxBodyOpt = 64.0,
    protocol: ProtocolOpt = ProtocolChoice.auto,
) -> None:
    """Interactive session: list, call TOOL {json} or TOOL key=value, history, quit."""
    target = build_target(url, server, config, command or [], header, env)
    run_session(target, trace, timeout or DEFAULT_TIMEOUT, _shell, max_body, protocol)


SHELL_HELP = """commands:
  list                      the server's tools
  call TOOL {json}          call a tool with JSON arguments (also: TOOL {json}, TOOL key=value)
  schema TOOL               a tool's input schema
  history                   what you typed this session
  help, quit (or Ctrl-D)"""


async def _shell(session: Session) -> None:
    history = _History()
    info = session.server_info
    typer.echo(
        f"connected to {info.get('name', '?')} {info.get('version', '')} ({session.protocol_version}); "
        "type help",
        err=True,
    )
    while True:
        line = await anyio.to_thread.run_sync(history.read, "mcp> ", abandon_on_cancel=True)
        if line is None or line.strip() in ("quit", "exit"):
            return
        line = line.strip()
        if not line:
            continue
        history.add(line)
        try:
            await _shell_line(session, line, history)
        except ToolError as exc:
            typer.echo(f"tool error: {exc}", err=True)
        except ValidationError as exc:
            typer.echo(f"error: {exc}", err=True)
        except JsonRpcError as exc:
            typer.echo(f"error: JSON-RPC error {exc.code}: {exc.message}", err=True)
        except CallError as exc:
            typer.echo(f"error: {exc}", err=True)
            if not session.server.url and session.returncode is not None:
                return


async def _shell_line(session: Session, line: str, history: _History) -> None:
    word, _, rest = line.partition(" ")
    if word == "help":
        typer.echo(SHELL_HELP)
    elif word in ("list", "tools"):
        for tool in await session.list_tools(refresh=True):
            desc = str(tool.get("description") or "").strip().splitlines()
            typer.echo(f"{tool.get('name')}: {desc[0] if desc else ''}")
    elif word == "history":
        for i, old in enumerate(history.lines, 1):
            typer.echo(f"{i:4d}  {old}")
    elif word == "schema":
        listed = await session.list_tools()
        found: Tool | None = next((t for t in listed if t.get("name") == rest.strip()), None)
        typer.echo(json.dumps(found.get("inputSchema") if found else None, indent=2))
    else:
        if word == "call":
            word, _, rest = rest.strip().partition(" ")
        rest = rest.strip()
        if rest.startswith("{"):
            arguments = parse_json_args(rest)
        else:
            schema = next(
                (t.get("inputSchema") for t in await session.list_tools() if t.get("name") == word), None
            )
            arguments = parse_pairs(shlex.split(rest), schema)
        typer.echo((await session.call(word, arguments)).text)


class _History:
    """Line input with readline history kept in ``$XDG_STATE_HOME/mcpkit/shell_history``."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        state = Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state")
        self.path = state / "mcpkit" / "shell_history"
        self._readline: Any = None
        if sys.stdin.isatty():
            try:
                import readline

                self._readline = readline
                self.path.parent.mkdir(parents=True, exist_ok=True)
                if self.path.is_file():
                    readline.read_history_file(self.path)
            except (ImportError, OSError):
                self._readline = None

    def read(self, prompt: str) -> str | None:
        try:
            return input(prompt if sys.stdin.isatty() else "")
        except EOFError:
            return None

    def add(self, line: str) -> None:
        self.lines.append(line)
        if self._readline is not None:
            with contextlib.suppress(OSError):
                self._readline.write_history_file(self.path)
