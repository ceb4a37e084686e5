"""Typer option types every ``... mcp`` command shares, so all servers take the same flags."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer


class TransportChoice(StrEnum):
    """Where the server talks: stdio for a client that spawns it, http for a URL."""

    stdio = "stdio"
    http = "http"


TransportOpt = Annotated[
    TransportChoice, typer.Option("--transport", help="stdio for a spawning client, http for a URL.")
]
HostOpt = Annotated[str, typer.Option("--host", help="Address to bind for --transport http.")]
PortOpt = Annotated[int, typer.Option("--port", min=1, max=65535, help="Port for --transport http.")]
