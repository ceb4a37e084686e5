"""A stand-in ``mcpkit`` for tests: a Typer app with the client (and check) commands registered.

The lead mounts the same ``register`` functions in ``mcpkit.cli``; this entry lets the CLI be
tested as a real process before (and independently of) that wiring.
"""

from __future__ import annotations

import typer

from mcpkit.client.cli import register as register_client


def build_app() -> typer.Typer:
    app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, no_args_is_help=True)
    register_client(app)
    try:
        from mcpkit.check.cli import register as register_check
    except ImportError:  # pragma: no cover - check not written yet
        pass
    else:
        register_check(app)
    return app


if __name__ == "__main__":
    build_app()()
