"""The ``mcpkit`` command: mounts each part's sub-app and nothing else.

Each part owns its commands in its own ``cli.py``; this module only wires them together,
so adding a part never means editing another part's code. Parts are imported only when one
of their commands runs: ``mcpkit archive search`` should not pay for importing the MCP SDK,
and ``mcpkit redmine mcp`` should not pay for numpy.
"""

from __future__ import annotations

import importlib
from typing import Annotated, Any

import typer
import typer.main
from typer.core import TyperGroup

from mcpkit import __version__

# command name -> (module, attribute). The attribute is either a Typer sub-app (mounted as a
# group) or a ``register(app)`` function that adds top-level commands of that name.
_PARTS: dict[str, tuple[str, str]] = {
    "tools": ("mcpkit.client.cli", "register"),
    "call": ("mcpkit.client.cli", "register"),
    "shell": ("mcpkit.client.cli", "register"),
    "check": ("mcpkit.check.cli", "register"),
    "archive": ("mcpkit.archive.cli", "app"),
    "redmine": ("mcpkit.redmine.cli", "app"),
    "gateway": ("mcpkit.gateway.cli", "app"),
    "package": ("mcpkit.channels.cli", "register"),
}


def _load(name: str) -> Any:
    module_name, attribute = _PARTS[name]
    part: Any = getattr(importlib.import_module(module_name), attribute)
    if isinstance(part, typer.Typer):
        command = typer.main.get_command(part)
        command.name = name
        return command
    holder = typer.Typer(add_completion=False)
    part(holder)
    built = typer.main.get_command(holder)
    commands = getattr(built, "commands", None)
    if commands is not None:
        return commands.get(name)
    built.name = name  # typer returns a lone command, not a group, when register adds only one
    return built


class _PartsGroup(TyperGroup):
    """A click group that finds each part's commands on first use."""

    def list_commands(self, ctx: Any) -> list[str]:
        return [*super().list_commands(ctx), *_PARTS]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name in _PARTS:
            return _load(cmd_name)
        return super().get_command(ctx, cmd_name)


app = typer.Typer(
    name="mcpkit",
    cls=_PartsGroup,
    help="Dependable MCP servers and clients: lint tools, serve them honestly, call and grade any server.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _print_version(given: bool) -> None:
    if given:
        typer.echo(__version__)
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_print_version, is_eager=True, help="Print the mcpkit version and exit."
        ),
    ] = False,
) -> None:
    """Dependable MCP servers and clients: lint tools, serve them honestly, call and grade any server."""


@app.command()
def version() -> None:
    """Print the mcpkit version."""
    typer.echo(__version__)


def main() -> None:
    """Console-script entry point."""
    app()


if __name__ == "__main__":
    main()
