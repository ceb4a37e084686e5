"""The ``mcpkit`` command: mounts each part's sub-app and nothing else.

Each part owns its commands in its own ``cli.py``; this module only wires them together,
so adding a part never means editing another part's code.
"""

from __future__ import annotations

import typer

from mcpkit import __version__

app = typer.Typer(
    name="mcpkit",
    help="Dependable MCP servers and clients: lint tools, serve them honestly, call and grade any server.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.command()
def version() -> None:
    """Print the mcpkit version."""
    typer.echo(__version__)


def main() -> None:
    """Console-script entry point."""
    app()


if __name__ == "__main__":
    main()
