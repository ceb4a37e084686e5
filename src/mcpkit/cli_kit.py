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

import dataclasses
import functools
import inspect
import json
import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, TypeVar, get_type_hints

import typer

from mcpkit.log import ENV_LOG, setup_logging

if TYPE_CHECKING:  # a type only: this module sits below the server and never imports it
    from mcpkit.server._oauth import OAuthOptions

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
    "ServingOptions",
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
    "option_set",
    "print_json",
    "token_from_env",
    "usage",
    "usage_errors",
    "with_option_sets",
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


# -- option sets: a group of options declared once, taken whole by every command that needs it ----

C = TypeVar("C")
_OPTION_SET = "__mcpkit_option_set__"


def option_set(cls: type[C]) -> type[C]:
    """Mark a frozen dataclass whose fields are typer options (``Annotated[T, typer.Option(...)]``
    with a default) as an option set: a command parameter annotated with it becomes every one of
    those options under :func:`with_option_sets`, and the command receives one built value.

    This is how sqlite-utils and llm share their option groups: the options are declared once,
    so a command cannot lack one or spell it its own way."""
    setattr(cls, _OPTION_SET, True)
    return cls


def _is_option_set(annotation: Any) -> bool:
    return isinstance(annotation, type) and getattr(annotation, _OPTION_SET, False)


def with_option_sets(command: Callable[..., None]) -> Callable[..., None]:
    """``command`` with each parameter annotated with an :func:`option_set` replaced by the set's
    options (in the set's order, at the parameter's place); typer reads the new signature, and
    the command is called with the set built from those options. Two sets naming one option
    fail here, at import, not at a user's first run."""
    hints = get_type_hints(command, include_extras=True)
    params: list[inspect.Parameter] = []
    annotations: dict[str, Any] = {}
    sets: dict[str, tuple[type[Any], tuple[str, ...]]] = {}
    for param in inspect.signature(command).parameters.values():
        annotation = hints.get(param.name, param.annotation)
        if not _is_option_set(annotation):
            params.append(param.replace(kind=inspect.Parameter.KEYWORD_ONLY, annotation=annotation))
            annotations[param.name] = annotation
            continue
        fields = get_type_hints(annotation, include_extras=True)
        names = tuple(f.name for f in dataclasses.fields(annotation))
        for field in dataclasses.fields(annotation):
            params.append(
                inspect.Parameter(
                    field.name,
                    inspect.Parameter.KEYWORD_ONLY,
                    default=field.default,
                    annotation=fields[field.name],
                )
            )
            annotations[field.name] = fields[field.name]
        sets[param.name] = (annotation, names)
    taken = [p.name for p in params]
    doubled = {name for name in taken if taken.count(name) > 1}
    if doubled:
        raise TypeError(f"{command.__name__}: option sets name {', '.join(sorted(doubled))} twice")

    @functools.wraps(command)
    def run(**values: Any) -> None:
        for name, (cls, names) in sets.items():
            values[name] = cls(**{n: values.pop(n) for n in names})
        command(**values)

    run.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    run.__annotations__ = annotations
    del run.__wrapped__  # typer must read the new signature, not the command's
    return run


@option_set
@dataclasses.dataclass(frozen=True)
class ServingOptions:
    """Where and to whom a server answers: the options every MCP-serving command takes
    (``mcpkit archive mcp``, ``mcpkit redmine mcp``, ``mcpkit gateway``), declared once.

    The values are the flags as given; :meth:`token`, :meth:`oauth` and :meth:`http_changes`
    read what they name (the environment, for secrets) and check that they agree, each failure
    a usage error (exit 2), never a server that starts open. This module sits below the server
    in the layers, so the command hands in the server's ``OAuthOptions`` class to build with."""

    transport: TransportOpt = TransportChoice.stdio
    host: HostOpt = "127.0.0.1"
    port: PortOpt = 8000
    allow_origin: AllowOriginOpt = None
    token_env: TokenEnvOpt = None
    oauth_issuer: OAuthIssuerOpt = None
    oauth_resource: OAuthResourceOpt = None
    oauth_scope: OAuthScopeOpt = None
    oauth_client_id: OAuthClientIdOpt = None

    path = "/mcp"
    """Where the MCP endpoint is served over HTTP (the default resource of OAuth)."""

    @property
    def http(self) -> bool:
        """Whether the server is reached by URL (``--transport http``)."""
        return self.transport == TransportChoice.http

    @property
    def origins(self) -> tuple[str, ...]:
        """The browser origins allowed besides local ones."""
        return tuple(self.allow_origin or ())

    def token(self) -> str | None:
        """The bearer token every HTTP request must carry, from the variable ``--token-env`` names."""
        return token_from_env("--token-env", self.token_env)

    def oauth(self, options: type[OAuthOptions]) -> OAuthOptions | None:
        """The OAuth ``options`` the ``--oauth-*`` flags ask for, or ``None`` without ``--oauth-issuer``."""
        with usage_errors():
            return options.from_flags(
                self.oauth_issuer,
                self.oauth_resource,
                self.oauth_scope,
                self.oauth_client_id,
                env_value(ENV_OAUTH_CLIENT_SECRET),
                served=(self.host, self.port, self.path) if self.http else None,
                token=self.token(),
            )

    def http_changes(self, oauth: type[OAuthOptions]) -> dict[str, Any]:
        """The HTTP options these flags set, for ``ServerOptions.with_http(**changes)``; ``oauth``
        is :class:`mcpkit.server.OAuthOptions`. A token or an origin given to a stdio server
        would guard nothing, so it is a usage error rather than ignored."""
        if not self.http:
            for flag, value in (("--token-env", self.token_env), ("--allow-origin", self.allow_origin)):
                if value:
                    usage(f"{flag} is for --transport http (a stdio server is reached only by its parent)")
        return {
            "host": self.host,
            "port": self.port,
            "path": self.path,
            "allowed_origins": self.origins,
            "bearer_token": self.token(),
            "oauth": self.oauth(oauth),
        }
