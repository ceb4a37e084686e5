"""The extension's entry point: `mcpkit redmine mcp` over stdio."""

from mcpkit.cli import app

app(['redmine', 'mcp'], prog_name="mcpkit")
