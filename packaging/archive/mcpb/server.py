"""The extension's entry point: `mcpkit archive mcp` over stdio."""

from mcpkit.cli import app

app(['archive', 'mcp'], prog_name="mcpkit")
