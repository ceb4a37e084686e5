"""Twilog CSV export -> store.

The export has no header and five quoted fields ``post_id, url, timestamp, content,
log_type``; content spans lines and carries HTML entities. Plain, gzip- or zip-compressed files
are accepted (sniffed by magic bytes, not by name). The whole file goes in one transaction, so an
interrupted import leaves the archive as it was, and re-importing adds nothing twice.

Why two threads: about half the work is Python (CSV, entities, user ids, timestamps, folding)
and half is SQLite (the posts table and, mostly, FTS5 trigram indexing), and Python's sqlite3
releases the GIL while a statement runs. So a parser thread turns the file into sorted batches
of rows while the calling thread writes the previous ones (:class:`~mcpkit.archive.store.PostWriter`
makes each batch a few large statements, so the GIL changes hands per batch, not per row);
the threads and the counts across batches are :mod:`~mcpkit.archive.importers.pipeline`'s,
shared with the import flow. The calling thread stays the one that owns the transaction and
calls ``progress``: an exception there (Ctrl-C included) stops the parser and rolls everything
back; an exception in the parser is handed over and raised by the caller. Only the ids seen so far stay in memory, not the rows.
On 2 cores (``bench/archive.py``) this took a million-row import from about 40k to 60-65k
rows/s, and an export in newest-first order from about 19k to 60k (FTS5 gets every batch in
ascending rowid order; see the store).

Junk: a file that is not an export may still begin with a valid row, then hold millions of
lines that are none (a 20 KB ``.csv.gz`` expands to 10M lines). Malformed rows are therefore
counted, and only the first :data:`MALFORMED_SAMPLES` kept with their line and reason (a list
of every one took 3.7 GB for such a file, and reporting them ended in a MemoryError after the
commit); and a file whose malformed records outnumber its rows, beyond :data:`JUNK_FLOOR` of
them, is refused at its end, before the transaction commits, so nothing of it is written.
"""

from __future__ import annotations

import csv
import html
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from mcpkit.archive.errors import ImportFormatError
from mcpkit.archive.importers.export_file import ReadLimits, open_export
from mcpkit.archive.importers.pipeline import PostTally, no_cyclic_gc, produced
from mcpkit.archive.posts import Post, twilog_kind, user_from_url
from mcpkit.archive.store import BatchBuilder, JoinedRow, PostBatch, PostWriter, Store, joined_rows

ProgressFn = Callable[[str, int, int], None]
"""``progress(stage, done, total)``: stage ``"read"`` counts file bytes, ``"write"`` posts.

Both advance together; the number of posts is known once the file is read, until then the
``"write"`` total is estimated from the bytes read so far. Called on the importing thread.
"""

_BATCH = 16384  # posts per batch from the parser thread to the writer
_FIRST_BATCH = 1024  # the batch size doubles up to _BATCH
_QUEUE = 6  # batches parsed ahead of the writer (it writes the index FTS_CHUNK posts at a time)
_MAX_FIELD = 1 << 24
MALFORMED_SAMPLES = 20
"""Malformed rows described (line and reason) in a summary; the others are only counted."""
JUNK_FLOOR = 1000
"""A file with more malformed records than rows is refused once it has more than this many
(below it, a small export with a few damaged rows is still imported, each one reported)."""


@dataclass(slots=True)
class Malformed:
    line: int
    reason: str


@dataclass(slots=True)
class ImportSummary:
    """What an import did; ``malformed_rows`` counts the rows that were skipped and
    ``malformed`` describes the first :data:`MALFORMED_SAMPLES` of them (line, reason)."""

    rows: int = 0
    new: int = 0
    updated: int = 0
    unchanged: int = 0
    duplicates_in_file: int = 0
    malformed: list[Malformed] = field(default_factory=list)
    malformed_rows: int = 0

    def as_dict(self) -> dict[str, object]:
        return {
            "rows": self.rows,
            "new": self.new,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "duplicates_in_file": self.duplicates_in_file,
            "malformed": self.malformed_rows,
            "malformed_lines": [{"line": m.line, "reason": m.reason} for m in self.malformed],
        }


Parsed = tuple[int, str, str, str, str, int]
"""A valid record in :class:`Post` field order: post_id, user, timestamp, url, content, log_type."""


_LOG_TYPES = {"1": 1, "2": 2, "3": 3}


def _parse_row(fields: list[str]) -> Parsed | str:
    """The record's fields, or the reason the row is malformed.

    Written for the common row (a tenth of an import's CPU time is here): fields already
    stripped skip the strip, text without ``&`` skips the entity decoder."""
    if len(fields) != 5:
        return f"expected 5 fields, got {len(fields)}"
    raw_id, url, timestamp, content, raw_type = fields
    if not (raw_id.isdigit() and raw_id.isascii()):
        raw_id = raw_id.strip()
        if not raw_id.isdigit() or not raw_id.isascii():
            return f"post_id is not a number: {raw_id[:30]!r}"
    log_type = _LOG_TYPES.get(raw_type)
    if log_type is None:
        raw_type = raw_type.strip()
        log_type = _LOG_TYPES.get(raw_type)
        if log_type is None:
            return f"log_type must be 1, 2 or 3, got {raw_type[:10]!r}"
    post_id = int(raw_id)
    if post_id >= 2**63:
        return "post_id is too large"
    url = url.strip()
    return (
        post_id,
        user_from_url(url, post_id),
        timestamp.strip(),
        url,
        html.unescape(content) if "&" in content else content,
        log_type,
    )


def _records(stream: IO[str], name: str = "") -> Iterator[tuple[int, Parsed | str]]:
    """``(first line number, record or malformed reason)`` for every record of the export;
    at its end, :class:`ImportFormatError` if it was mostly junk (:func:`refuse_junk`)."""
    csv.field_size_limit(_MAX_FIELD)
    reader = csv.reader(stream, strict=False)
    line = 1
    good = bad = 0
    first_bad = ""
    while True:
        try:
            fields = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            bad += 1
            first_bad = first_bad or f"line {line}: unreadable CSV: {exc}"
            yield line, f"unreadable CSV: {exc}"
            line = reader.line_num + 1
            continue
        start, line = line, reader.line_num + 1
        if not fields or fields == [""]:
            continue
        parsed = _parse_row(fields)
        if isinstance(parsed, str):
            bad += 1
            first_bad = first_bad or f"line {start}: {parsed}"
        else:
            good += 1
        yield start, parsed
    refuse_junk(name, good, bad, first_bad)


def refuse_junk(name: str, rows: int, malformed: int, first: str) -> None:
    """Raise :class:`ImportFormatError` for a file that is mostly not Twilog rows: more
    malformed records than rows, and more than :data:`JUNK_FLOOR` of them."""
    if malformed > JUNK_FLOOR and malformed > rows:
        raise ImportFormatError(
            f"{name + ': ' if name else ''}expected a Twilog CSV export, found {malformed:,} malformed "
            f"records and {rows:,} rows ({first}); nothing was imported"
        )


def parse_twilog_csv(stream: IO[str], name: str = "") -> Iterator[tuple[int, Post | str]]:
    """Yield ``(first line number, Post or malformed reason)`` for every record of the export;
    a file that is mostly junk ends in :class:`ImportFormatError` (``name`` leads its line)."""
    for line, parsed in _records(stream, name):
        yield line, parsed if isinstance(parsed, str) else Post(*parsed)


def import_csv(
    path: Path, store: Store, *, progress: ProgressFn | None = None, limits: ReadLimits | None = None
) -> ImportSummary:
    """Import one Twilog export into ``store`` in a single transaction.

    Within the file a repeated post_id keeps the row with the larger log_type (first wins on a
    tie); against the store the same rule decides between "updated" and "unchanged". A file
    that is not a Twilog export is refused (:func:`check_export`) before anything is written.
    """
    path = Path(path)
    if not path.is_file():
        raise ImportFormatError(f"{path}: no such file")
    check_export(path, limits)
    account = export_account(path, limits)
    with no_cyclic_gc():
        return _import(path, store, progress, limits, account)


ACCOUNT_SAMPLE = 1000
"""Records read to name the account of a Twilog CSV (see :func:`first_account`)."""


def first_account(records: Iterable[Parsed | str]) -> str:
    """``@name`` of the account a Twilog CSV is the export of, or ``""``: the author its own
    posts name when all of them among the first :data:`ACCOUNT_SAMPLE` records name the same
    one. A Twilog export never names its account; likes and retweets name other authors, so
    only the posts count; a file whose posts name several authors (a CSV put together from
    several accounts, as the shipped sample is) is no one account's, and its rows keep no
    account rather than all being given to one of them. Both import paths use it, so a CSV
    gives the same rows either way.
    """
    authors: set[str] = set()
    for count, row in enumerate(records):
        if count >= ACCOUNT_SAMPLE or len(authors) > 1:
            break
        if not isinstance(row, str) and row[1] and twilog_kind(row[5], row[4]) == "post":
            authors.add(row[1])
    return f"@{authors.pop()}" if len(authors) == 1 else ""


def export_account(path: Path, limits: ReadLimits | None = None) -> str:
    """:func:`first_account` of the Twilog CSV at ``path``."""
    export = open_export(path, limits)
    try:
        return first_account(parsed for _, parsed in _records(export.text))
    finally:
        export.close()


SNIFF_RECORDS = 100
"""A file none of whose first records is a Twilog row is not a Twilog export."""


def check_export(path: Path, limits: ReadLimits | None = None) -> str:
    """Refuse a file that is not a Twilog export, saying what was expected and what was found;
    returns the encoding the file will be read with. A file without a single record (empty,
    or blank lines only) is refused too: a failed download must not look like an export."""
    export = open_export(path, limits)
    try:
        first: list[str] | None = None
        reasons: list[str] = []
        csv.field_size_limit(_MAX_FIELD)
        reader = csv.reader(export.text, strict=False)
        while len(reasons) < SNIFF_RECORDS:
            try:
                fields = next(reader)
            except StopIteration:
                break
            except csv.Error as exc:
                reasons.append(f"unreadable CSV: {exc}")
                continue
            if not fields or fields == [""]:
                continue
            parsed = _parse_row(fields)
            if not isinstance(parsed, str):
                return export.encoding
            first = first or fields
            reasons.append(parsed)
    finally:
        export.close()
    if not reasons:
        raise ImportFormatError(
            f"{path}: expected a Twilog CSV export (rows of 5 fields: post_id, url, timestamp, content, "
            "log_type), found no records"
        )
    shown = ", ".join(repr(f[:20]) for f in (first or [])[:6])
    raise ImportFormatError(
        f"{path}: expected a Twilog CSV export (5 fields: post_id, url, timestamp, content, "
        f"log_type), found a row that is not one ({reasons[0]})" + (f": {shown}" if shown else "")
    )


@dataclass(slots=True)
class _Batch:
    """Rows ready to write (:meth:`BatchBuilder.twilog_batch`) and what the parser saw on the way."""

    batch: PostBatch
    repeats: list[int]  # ids an earlier batch of this file already wrote (a larger log_type won)
    malformed: list[Malformed]  # described ones (the first MALFORMED_SAMPLES of the file)
    malformed_rows: int  # all of this batch's
    records: int
    duplicates: int
    position: int  # bytes of the file read so far


def _batches(stream: IO[str], raw: IO[bytes], builder: BatchBuilder, name: str = "") -> Iterator[_Batch]:
    """Parse the export into write-ready batches (runs on the parser thread).

    A post_id seen again keeps the larger log_type (first wins on a tie) and the relations of
    both rows (:func:`~mcpkit.archive.store.joined_rows`: a like that is also a bookmark);
    when the earlier row already left in a previous batch, the later one goes out as a repeat
    and the writer joins it with what it wrote and corrects its counts, so the summary is the
    same as deduplicating the whole file first. The first batches are small so that the
    writer starts early.
    """
    seen: set[int] = set()
    size = _FIRST_BATCH
    pending: dict[int, Parsed | JoinedRow] = {}
    repeats: list[int] = []
    malformed: list[Malformed] = []
    described = malformed_rows = records = duplicates = 0
    for line, parsed in _records(stream, name):
        if isinstance(parsed, str):
            malformed_rows += 1
            if described < MALFORMED_SAMPLES:
                described += 1
                malformed.append(Malformed(line, parsed))
            continue
        records += 1
        post_id = parsed[0]
        if post_id in seen:
            duplicates += 1
            held = pending.get(post_id)
            if held is not None:
                pending[post_id] = joined_rows(held, parsed)
                continue
            repeats.append(post_id)
        seen.add(post_id)
        pending[post_id] = parsed
        if len(pending) >= size:
            batch = builder.twilog_batch(pending.values())
            yield _Batch(batch, repeats, malformed, malformed_rows, records, duplicates, raw.tell())
            pending, repeats, malformed, malformed_rows, records, duplicates = {}, [], [], 0, 0, 0
            size = min(2 * size, _BATCH)
    batch = builder.twilog_batch(pending.values())
    yield _Batch(batch, repeats, malformed, malformed_rows, records, duplicates, raw.tell())


def _import(
    path: Path, store: Store, progress: ProgressFn | None, limits: ReadLimits | None, account: str
) -> ImportSummary:
    summary = ImportSummary()
    export = open_export(path, limits)
    stream, raw, total = export.text, export.raw, export.size
    with raw, stream, store.transaction() as conn, store.bulk_writer(conn) as writer:
        builder = BatchBuilder(store.write_base(conn), account)
        with produced(
            lambda: _batches(stream, raw, builder, str(path)), name="twilog-csv-parser", ahead=_QUEUE
        ) as batches:
            _write(store, conn, writer, batches, summary, progress, total)
    return summary


def _write(
    store: Store,
    conn: sqlite3.Connection,
    writer: PostWriter,
    batches: Iterator[_Batch],
    summary: ImportSummary,
    progress: ProgressFn | None,
    total: int,
) -> None:
    """The writer (the calling thread): write each batch as it comes, keep the summary."""
    tally = PostTally()
    written = 0
    for item in batches:
        summary.rows += item.records
        summary.duplicates_in_file += item.duplicates
        summary.malformed.extend(item.malformed)
        summary.malformed_rows += item.malformed_rows
        if progress is not None:
            progress("read", item.position, total)
        tally.write(store, conn, item.batch, item.repeats, writer.write)
        summary.new, summary.updated, summary.unchanged = tally.new, tally.updated, tally.unchanged
        written += len(item.batch.rows)
        if progress is not None:  # the number of posts is known at the end; until then, by bytes
            estimate = written * total // item.position if item.position else written
            progress("write", written, max(written, estimate))
    if progress is not None:
        progress("read", total, total)
        progress("write", written, written)
