"""Importers: bring exports (Twilog CSV, X archive, Mastodon archive, Bluesky CAR) and upstream
vectors and enrichments into the archive store.

:func:`open_reader` recognises an export by its content and opens its reader
(:mod:`.base` says what every reader gives); :func:`import_export` writes a reader's records in
one transaction and says what it did. :func:`import_csv` is the Twilog CSV on its own.
"""

from mcpkit.archive.importers.base import ExportReader, ReadLimits, ReadSummary
from mcpkit.archive.importers.detect import detect, open_reader
from mcpkit.archive.importers.flow import ExportResult, import_export
from mcpkit.archive.importers.twilog_csv import ImportSummary, import_csv, parse_twilog_csv

__all__ = [
    "ExportReader",
    "ExportResult",
    "ImportSummary",
    "ReadLimits",
    "ReadSummary",
    "detect",
    "import_csv",
    "import_export",
    "open_reader",
    "parse_twilog_csv",
]
