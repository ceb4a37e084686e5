"""What every mcpkit command shares: option types, exits, the one JSON printer, environment reads.

Each part used to declare its own ``--host``/``--port``/``--allow-origin``/``--json`` and they
drifted: Redmine spelled the origin flag ``--allowed-origin`` where the archive and the gateway
said ``--allow-origin``, failures went to stderr with and without ``error:``, and three JSON
printers indented three ways. Declaring an option once here gives it one spelling, one help text
and one range in every part.

This module imports typer and the standard library only, never the MCP SDK: ``mcpkit archive
search`` imports it and must not pay half a second for an SDK it does not use (an import test
holds that). The CLIs are the only code that reads the environment; the helpers at the end are
how they do it, so a library function always receives values.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from enum import StrEnum
from typing import Annotated, Any, NoReturn

import typer

from mcpkit.log import ENV_LOG, setup_logging

__all__ = [
    "ENV_OAUTH_CLIENT_SECRET",
    "AllowOriginOpt",
    "HostOpt",
    "JsonOpt",
    "ListenPortOpt",
    "MaxMessageBytesOpt",
    "OAuthClientIdOpt",
    "OAuthIssuerOpt",
    "OAuthResourceOpt",
    "OAuthScopeOpt",
    "PortOpt",
    "TokenEnvOpt",
    "TraceFlagOpt",
    "TraceToOpt",
    "TransportChoice",
    "TransportOpt",
    "env_flag",
    "env_value",
    "fail",
    "log_level",
    "logging_from_env",
    "print_json",
    "token_from_env",
    "usage",
    "usage_errors",
]

# -- option types ---------------------------------------------------------------------------------


class TransportChoice(StrEnum):
    """Where a server talks: stdio for a client that spawns it, http for a URL."""

    stdio = "stdio"
    http = "http"


TransportOpt = Annotated[
    TransportChoice, typer.Option("--transport", help="stdio for a spawning client, http for a URL.")
]
HostOpt = Annotated[str, typer.Option("--host", help="Address to bind; loopback by default.")]
PortOpt = Annotated[int, typer.Option("--port", min=1, max=65535, help="Port for --transport http.")]
ListenPortOpt = Annotated[
    int, typer.Option("--port", min=0, max=65535, help="Port to listen on; 0 picks a free one.")
]
AllowOriginOpt = Annotated[
    list[str] | None,
    typer.Option("--allow-origin", help="A browser origin allowed to connect (repeatable)."),
]
TokenEnvOpt = Annotated[
    str | None,
    typer.Option("--token-env", help="Name of an environment variable holding the bearer token to require."),
]
OAuthIssuerOpt = Annotated[
    str | None,
    typer.Option(
        "--oauth-issuer",
        help="Accept OAuth access tokens from this authorization server (its issuer URL); HTTP only.",
    ),
]
OAuthResourceOpt = Annotated[
    str | None,
    typer.Option(
        "--oauth-resource",
        help="This server's public URL, the audience tokens must carry; default http://HOST:PORT/mcp.",
    ),
]
OAuthScopeOpt = Annotated[
    list[str] | None, typer.Option("--oauth-scope", help="A scope every token must hold (repeatable).")
]
OAuthClientIdOpt = Annotated[
    str | None,
    typer.Option(
        "--oauth-client-id",
        help="This server's client at the authorization server, to introspect opaque tokens; "
        "its secret in $MCPKIT_OAUTH_CLIENT_SECRET.",
    ),
]
TraceFlagOpt = Annotated[bool, typer.Option("--trace", help="Log every JSON-RPC message to stderr.")]
TraceToOpt = Annotated[
    str | None, typer.Option("--trace", help="Trace every JSON-RPC message to 'stderr' or a file path.")
]
MaxMessageBytesOpt = Annotated[
    int, typer.Option("--max-message-bytes", min=1024, help="Largest request accepted, in bytes.")
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]


# -- exits and output -----------------------------------------------------------------------------


def fail(message: str, code: int = 1) -> NoReturn:
    """A failure: ``error: message`` on stderr, exit ``code`` (1; 2 for a usage error).

    One line for a person, never a traceback: the message is the error's ``str()``.
    """
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def usage(message: str) -> NoReturn:
    """A usage error (bad flags, bad parameters): message on stderr, exit code 2."""
    fail(message, 2)


def print_json(value: Any) -> None:
    """The one JSON printer of every ``--json``: UTF-8 as is (Japanese posts stay readable),
    indented, and values JSON has no type for (paths, dates) written as their ``str()``."""
    typer.echo(json.dumps(value, ensure_ascii=False, indent=2, default=str))


# -- the environment (read here, by the CLIs, and passed on as values) -----------------------------


def env_value(name: str, environ: Mapping[str, str] | None = None) -> str | None:
    """The variable's value, or ``None`` when it is unset or empty (an empty token is no token)."""
    value = (os.environ if environ is None else environ).get(name)
    return value or None


def env_flag(name: str, environ: Mapping[str, str] | None = None) -> bool:
    """A switch: set to anything but empty or ``0`` turns it on."""
    return (env_value(name, environ) or "0") != "0"


def log_level(default: str = "warning", environ: Mapping[str, str] | None = None) -> str:
    """The level ``MCPKIT_LOG`` names, else ``default``, for :func:`mcpkit.log.setup_logging`."""
    return (env_value(ENV_LOG, environ) or default).strip().lower() or default


def token_from_env(option: str, name: str | None, environ: Mapping[str, str] | None = None) -> str | None:
    """The secret in the variable ``--token-env`` names (secrets never go in argv, where ``ps``
    shows them); a name whose variable is unset or empty is a usage error, not an open server."""
    if not name:
        return None
    value = env_value(name, environ)
    if value is None:
        usage(f"{option} {name}: the variable is unset or empty")
    return value


def logging_from_env(default: str = "warning") -> None:
    """Logging on stderr at ``$MCPKIT_LOG`` (else ``default``): the first line of a command."""
    setup_logging(log_level(default))


ENV_OAUTH_CLIENT_SECRET = "MCPKIT_OAUTH_CLIENT_SECRET"
"""The secret of ``--oauth-client-id`` (secrets never go in argv)."""


@contextmanager
def usage_errors() -> Iterator[None]:
    """A ``ValueError`` inside (a library refusing what the flags asked for) is a usage error:
    its message on stderr, exit 2, never a traceback or a server that starts open."""
    try:
        yield
    except ValueError as exc:
        usage(str(exc))
