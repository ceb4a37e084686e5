"""``python -m mcpkit.redmine`` runs ``mcpkit redmine`` (before the lead mounts it, and for tests)."""

from mcpkit.redmine.cli import app

app(prog_name="mcpkit redmine")
