"""``python -m mcpkit`` runs the CLI (tests use it to spawn servers with the same interpreter)."""

from mcpkit.cli import main

main()
