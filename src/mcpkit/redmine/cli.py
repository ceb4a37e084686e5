"""``mcpkit redmine``: run the Redmine MCP server, or check its configuration.

Configuration errors are reported before any MCP traffic, on stderr, with exit code 2.
"""

from __future__ import annotations

import os
import sys

import anyio
import typer

from mcpkit.cli_kit import JsonOpt, ServingOptions, fail, print_json, usage, with_option_sets
from mcpkit.redmine.api import RedmineClient, RedmineError
from mcpkit.redmine.config import RedmineConfig, RedmineConfigError

app = typer.Typer(
    name="redmine",
    help="Redmine MCP server: the Redmine REST API as safe MCP tools with XML results.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _config(*, require_key: bool = True) -> RedmineConfig:
    try:
        return RedmineConfig.from_environ(os.environ, require_key=require_key)
    except RedmineConfigError as exc:
        usage(str(exc))


@app.command()
@with_option_sets
def mcp(serving: ServingOptions) -> None:
    """Serve the Redmine tools over stdio (default) or streamable HTTP for a whole team.

    Over HTTP the server is stateless (run as many replicas as you like behind a load balancer)
    and each request may carry its sender's own key; REDMINE_API_KEY is then optional. With
    --token-env, every request must also carry that token (Authorization: Bearer), and a
    sender's own key goes in X-Redmine-API-Key. With --oauth-issuer, single sign-on: a token
    from that provider acts as its holder's own Redmine user through the administrator key in
    REDMINE_ADMIN_API_KEY.
    """
    from mcpkit.redmine.server import build
    from mcpkit.server import OAuthOptions, ServerOptions, serve

    http = serving.http_changes(OAuthOptions)
    config = _config(require_key=not serving.http)
    options = ServerOptions.from_environ(os.environ).with_http(stateless=serving.http, **http)
    try:
        server = build(config, options=options, team=serving.http)
    except RedmineConfigError as exc:
        usage(str(exc))
    serve(server, serving.transport.value)


@app.command("check-config")
def check_config(
    as_json: JsonOpt = False,
) -> None:
    """Check the environment and that Redmine accepts the API key; exit 1 when it does not."""
    config = _config()

    async def probe() -> dict[str, object]:
        client = RedmineClient(config)
        try:
            user = await client.check_key()
        finally:
            await client.aclose()
        return {"url": config.url, "login": user.get("login"), "admin": bool(user.get("admin"))}

    try:
        info = anyio.run(probe)
    except RedmineError as exc:
        if as_json:
            print_json({"ok": False, "url": config.url, "error": str(exc)})
            raise typer.Exit(1) from None
        fail(str(exc))
    if as_json:
        print_json({"ok": True, **info, "read_only": config.read_only})
    else:
        role = "an administrator" if info["admin"] else "a regular user"
        mode = ", read-only mode" if config.read_only else ""
        typer.echo(f"ok: {config.url} accepts the key of {info['login']}, {role}{mode}")
    sys.stdout.flush()
