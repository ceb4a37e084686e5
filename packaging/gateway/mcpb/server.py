"""The extension's entry point: `mcpkit gateway` over stdio."""

from mcpkit.cli import app

app(['gateway'], prog_name="mcpkit")
