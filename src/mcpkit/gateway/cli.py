"""``mcpkit gateway``: serve, ``names`` and ``status``.

Exit codes: 0 ok (serving ended because the client closed stdin), 1 failure (a downstream
could not start for ``names``/``status``), 2 usage or configuration error, 128 + N after
serving was stopped by signal N (143 for SIGTERM, 130 for SIGINT), as ``mcpkit call`` exits.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import anyio
import anyio.to_thread
import typer

from mcpkit.cli_kit import JsonOpt, ServingOptions, logging_from_env, print_json, usage, with_option_sets
from mcpkit.client import default_config_path
from mcpkit.errors import ConfigError
from mcpkit.gateway.config import GatewayConfig, load_gateway_config
from mcpkit.gateway.errors import GatewayConfigError
from mcpkit.gateway.sealing import read_keys
from mcpkit.gateway.status import default_status_path, read_live

if TYPE_CHECKING:
    import anyio.abc

    from mcpkit.gateway.core import Gateway

# Only light modules above: serving starts the stdio servers first and then loads the SDK, the
# profiles and the gateway itself (see mcpkit.gateway.prestart).

app = typer.Typer(
    help="Many MCP servers behind one, with each tool list rewritten for the client that connects.",
    no_args_is_help=False,
    add_completion=False,
    pretty_exceptions_enable=False,
)

ConfigOpt = Annotated[
    Path | None,
    typer.Option("--config", "-c", help="Servers file: mcpServers JSON or TOML; default as for mcpkit call."),
]
StatusOpt = Annotated[
    Path | None, typer.Option("--status-file", help="Where the running gateway writes its status.")
]


def _config(path: Path | None) -> GatewayConfig:
    where = path or default_config_path(os.environ)
    if where is None:
        usage("no --config given and no default config file found")
    try:
        return load_gateway_config(where)
    except ConfigError as exc:
        usage(str(exc))


def _gateway(
    config: GatewayConfig, profile: str = "auto", spawned: Mapping[str, anyio.abc.Process] | None = None
) -> Gateway:
    from mcpkit.gateway.core import Gateway

    try:
        keys = read_keys(config.state_keys, os.environ)
        return Gateway(config, profile=profile, spawned=spawned, state_keys=keys)
    except GatewayConfigError as exc:
        usage(str(exc))


@app.callback(invoke_without_command=True)
@with_option_sets
def serve(
    *,
    ctx: typer.Context,
    config: ConfigOpt = None,
    profile: Annotated[
        str, typer.Option("--profile", help="auto: from clientInfo.name; or force one compat profile.")
    ] = "auto",
    serving: ServingOptions,
    status_file: StatusOpt = None,
    sessions: Annotated[
        bool,
        typer.Option(
            "--sessions",
            help="HTTP: give handshake (2025) clients a session, so their servers can ask them "
            "(elicitation, sampling, roots); replicas then need sticky sessions.",
        ),
    ] = False,
) -> None:
    """Serve the configured servers as one MCP server (stdio, or HTTP with --transport http)."""
    if ctx.invoked_subcommand is not None:
        return
    if profile != "auto":  # only a forced profile needs the profiles loaded before the start
        _check_profile(profile)
    from mcpkit.server import OAuthOptions

    http = serving.http_changes(OAuthOptions)
    logging_from_env()
    cfg = _config(config)

    async def main() -> None:
        from mcpkit.gateway.prestart import spawn_stdio

        spawned = await spawn_stdio(cfg)
        # The servers start up while the gateway loads the SDK and the profiles here.
        from mcpkit.gateway.run import run_http, run_stdio

        gateway = _gateway(cfg, profile, spawned)
        if not serving.http:
            await run_stdio(gateway, status_file)
        else:
            await run_http(
                gateway,
                serving.host,
                serving.port,
                origins=serving.origins,
                token=http["bearer_token"],
                oauth=http["oauth"],
                status_path=status_file,
                sessions=sessions,
            )

    try:
        anyio.run(main)
    except KeyboardInterrupt:
        raise typer.Exit(130) from None
    from mcpkit.server.relay import stop_signal_received

    stopped = stop_signal_received()
    if stopped is not None:  # stopped cleanly, by a signal: 128 + its number, as mcpkit call exits
        raise typer.Exit(128 + stopped)


def _check_profile(profile: str) -> None:
    from mcpkit.gateway.clients import check_forced

    try:
        check_forced(profile)
    except ValueError as exc:
        usage(str(exc))


async def _once(gateway: Gateway, *, views: bool = True) -> dict[str, Any]:
    """Start every downstream, take the name map and the health (with ``views``, the
    per-profile status too: adapting every tool for every profile), stop them all."""
    async with anyio.create_task_group() as tg:
        await gateway.start(tg)
        servers = [d.status() for d in gateway.downstreams.values()]
        status = await anyio.to_thread.run_sync(gateway.status) if views else {"servers": servers}
        out = {"status": status, "names": gateway.name_map()}
        gateway.stop()
        tg.cancel_scope.cancel()
    return out


@app.command("names")
def names(
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Print every public tool name and the server and tool it leads to."""
    logging_from_env()
    found = anyio.run(lambda: _once(_gateway(_config(config)), views=False))
    table: dict[str, dict[str, str]] = found["names"]
    if as_json:
        print_json(table)
    else:
        for public, route in table.items():
            typer.echo(f"{public}\t{route['server']}\t{route['tool']}")
    failed = [s for s in found["status"]["servers"] if s["state"] != "ready"]
    for s in failed:
        typer.echo(f"warning: {s['server']} is {s['state']}: {s['error']}", err=True)
    if failed:
        raise typer.Exit(1)


@app.command("status")
def status(
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
    status_file: StatusOpt = None,
) -> None:
    """Each server's health, tool count and restarts, and quarantined tools per profile.

    Reads a running gateway's status for this config; with none running, starts the servers once.
    """
    logging_from_env()
    cfg = _config(config)
    live = read_live(status_file or default_status_path(cfg.source))
    data = live if live is not None else anyio.run(_once, _gateway(cfg))["status"]
    data = {"live": live is not None, **data}
    if as_json:
        print_json(data)
    else:
        _print_status(data)
    if any(s["state"] != "ready" for s in data["servers"]):
        raise typer.Exit(1)


def _print_status(data: dict[str, Any]) -> None:
    where = "running gateway" if data["live"] else "one-off start"
    typer.echo(f"gateway {data['gateway']} ({where}): {data['tools']} tools")
    for s in data["servers"]:
        line = f"  {s['server']:<16} {s['state']:<10} {s['tools']:>4} tools  {s['restarts']} restarts"
        typer.echo(line + (f"  {s['error']}" if s["error"] else ""))
    for profile, view in data["profiles"].items():
        extra = " (meta-tools: " + str(view["over_limit"]) + ")" if view["meta_tools"] else ""
        typer.echo(f"  profile {profile}: {view['tools']} tools{extra}")
        for tool, reason in view["quarantined"].items():
            typer.echo(f"    quarantined {tool}: {reason}")
