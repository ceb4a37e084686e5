"""``python -m mcpkit.redmine`` runs ``mcpkit redmine`` directly (the same Typer app mcpkit.cli mounts)."""

from mcpkit.redmine.cli import app

app(prog_name="mcpkit redmine")
