"""``mcpkit check``: grade a server. Exit 0 clean, 1 findings at ``--fail-on`` or worse,
2 when the server cannot be reached or initialized (or on a usage error); with ``--json`` or
``--sarif`` stdout always holds one document, the start-up failure included."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from mcpkit.check.model import HANDSHAKE_ERA, STATELESS_ERA, CheckFinding, CheckOptions, CheckReport
from mcpkit.check.render import render_json, render_sarif, render_table
from mcpkit.check.run import check, describe_target
from mcpkit.cli_kit import JsonOpt
from mcpkit.client import CallError, SignalledError, run_command
from mcpkit.client.target_cli import (
    ConfigOpt,
    EnvOpt,
    HeaderOpt,
    ServerOpt,
    TraceOpt,
    UrlOpt,
    build_target,
    open_tracer,
    quiet_logs,
    usage,
)
from mcpkit.compat import DEFAULT_PROFILES, PROFILES, profiles_in_use
from mcpkit.errors import McpkitError


def register(app: typer.Typer) -> None:
    """Add ``check`` to ``app``."""
    app.command("check")(check_command)


def parse_profiles(text: str) -> tuple[str, ...]:
    """``"all"`` (every profile a client uses) or comma-separated names (usage error for an unknown one)."""
    if text.strip() == "all":
        return profiles_in_use()
    names = tuple(p.strip() for p in text.split(",") if p.strip())
    unknown = [n for n in names if n not in PROFILES]
    if unknown or not names:
        usage(f"unknown profile {', '.join(unknown) or '(none)'}; known: {', '.join(PROFILES)}, all")
    return names


def parse_protocol(text: str | None, sse: bool) -> tuple[str, ...] | None:
    """``--protocol``: one revision, ``both``, or None (both on HTTP, the handshake on stdio);
    ``sse``: the target speaks the legacy SSE transport, which has no stateless wire."""
    if text is None:
        return None
    choices = {
        HANDSHAKE_ERA: (HANDSHAKE_ERA,),
        STATELESS_ERA: (STATELESS_ERA,),
        "both": (HANDSHAKE_ERA, STATELESS_ERA),
    }
    if text not in choices:
        usage(f"--protocol must be {HANDSHAKE_ERA}, {STATELESS_ERA} or both, got {text!r}")
    if STATELESS_ERA in choices[text] and sse:
        usage(f"--protocol {text}: the legacy SSE transport has no {STATELESS_ERA} wire")
    return choices[text]


def check_command(
    command: Annotated[list[str] | None, typer.Argument(help="Server command line, after --.")] = None,
    url: UrlOpt = None,
    server: ServerOpt = None,
    config: ConfigOpt = None,
    header: HeaderOpt = None,
    env: EnvOpt = None,
    profile: Annotated[
        str,
        typer.Option(
            "--profile",
            "-p",
            help="Client profiles, comma-separated, or 'all' (every profile a client uses).",
        ),
    ] = ",".join(DEFAULT_PROFILES),
    probe: Annotated[
        bool, typer.Option("--probe", help="Call read-only tools and validate results.")
    ] = False,
    probe_all: Annotated[
        bool, typer.Option("--probe-all", help="Also call tools that may write (careful).")
    ] = False,
    as_json: JsonOpt = False,
    sarif: Annotated[bool, typer.Option("--sarif", help="Print the report as SARIF 2.1.0.")] = False,
    fail_on: Annotated[str, typer.Option("--fail-on", help="error or warning.")] = "error",
    timeout: Annotated[
        float, typer.Option("--timeout", "-t", help="Seconds for start-up and per request.")
    ] = 30.0,
    baseline: Annotated[
        Path | None,
        typer.Option("--baseline", help="Tool-definition hashes: recorded on the first run, compared later."),
    ] = None,
    update_baseline: Annotated[
        bool, typer.Option("--update-baseline", help="Rewrite the --baseline file with today's tools.")
    ] = False,
    trace: TraceOpt = None,
    protocol: Annotated[
        str | None,
        typer.Option(
            "--protocol",
            help=f"{HANDSHAKE_ERA} (initialize), {STATELESS_ERA} (stateless) or both; "
            "default both on HTTP, the handshake on stdio.",
        ),
    ] = None,
    foreign_token_env: Annotated[
        str | None,
        typer.Option(
            "--foreign-token-env",
            help="Environment variable holding a token issued for another resource: it must be refused.",
        ),
    ] = None,
    client_name: Annotated[
        str | None,
        typer.Option("--client-name", help="clientInfo.name to send, e.g. cursor-vscode; default mcpkit."),
    ] = None,
) -> None:
    """Grade an MCP server: handshake, capabilities, tool definitions, security, and results with --probe."""
    if as_json and sarif:
        usage("choose one of --json and --sarif")
    if fail_on not in ("error", "warning"):
        usage("--fail-on must be 'error' or 'warning'")
    if update_baseline and baseline is None:
        usage("--update-baseline needs --baseline FILE")
    target = build_target(url, server, config, command or [], header, env)
    foreign_token = None
    if foreign_token_env:
        foreign_token = os.environ.get(foreign_token_env)
        if not foreign_token:
            usage(f"--foreign-token-env {foreign_token_env}: that variable is not set")
    options = CheckOptions(
        profiles=parse_profiles(profile),
        probe=probe or probe_all,
        probe_all=probe_all,
        call_timeout=timeout,
        connect_timeout=timeout,
        baseline=str(baseline) if baseline else None,
        update_baseline=update_baseline,
        client_name=client_name,
        protocols=parse_protocol(protocol, target.kind == "sse"),
        foreign_token=foreign_token,
    )
    quiet_logs(trace)

    async def main() -> CheckReport:
        return await check(target, options, tracer=open_tracer(trace))

    progress = Console(stderr=True)
    code = 0
    try:
        # A probe of a big server takes a while: show that it is working (terminals only).
        if progress.is_terminal and not (as_json or sarif):
            with progress.status("checking the server..."):
                report = run_command(main)
        else:
            report = run_command(main)
    except SignalledError as exc:  # before McpkitError, which it also is
        typer.echo(f"interrupted: {exc}", err=True)
        raise typer.Exit(exc.exit_code) from None
    except McpkitError as exc:
        # Still one document on stdout for --json and --sarif, with the reason in it.
        report = CheckReport(target=describe_target(target), source=target.source, line=target.line)
        report.error = str(exc)
        if isinstance(exc, CallError):
            report.add(
                CheckFinding(
                    "server-unreachable",
                    "error",
                    "handshake",
                    str(exc),
                    "Make the server start and answer initialize.",
                )
            )
        typer.echo(f"error: cannot check the server: {exc}", err=True)
        code = 2
    if as_json:
        typer.echo(render_json(report))
    elif sarif:
        typer.echo(render_sarif(report))
    elif code == 0:
        out = Console()
        render_table(report, out if out.is_terminal else Console(width=160))
    if code:
        raise typer.Exit(code)
    if report.fails(fail_on):
        raise typer.Exit(1)
