"""Importers: bring posts (and upstream vectors and enrichments) into the archive store."""

from mcpkit.archive.importers.twilog_csv import ImportSummary, import_csv, parse_twilog_csv

__all__ = ["ImportSummary", "import_csv", "parse_twilog_csv"]
