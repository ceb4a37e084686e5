"""The import flow: one export in, one write transaction, one summary line out.

Whatever the format, :func:`import_export` takes an :class:`~.base.ExportReader` and writes
its records into the store:

* **One transaction per export.** A format error halfway through (a truncated zip, a
  malformed ``tweets.js``), Ctrl-C or a killed process leaves the archive as it was before
  this export; the rerun then imports it whole, and re-importing what is stored changes
  nothing. That is what makes an interrupted import resumable with nothing lost or
  duplicated, without any bookkeeping of how far it got.
* **Two threads, bounded memory.** A reader thread pulls records into batches of distinct
  posts (a post met again is merged by the writer with what it holds, one record after another:
  :func:`~mcpkit.archive.store.merge_posts`) and turns each batch into
  sorted rows (:class:`~mcpkit.archive.store.BatchBuilder`); the calling thread writes them
  (Python's sqlite3 releases the GIL while a statement runs, so both make progress). At most
  :data:`QUEUE` batches wait between the two. Beyond the batches, only the ids of the
  export's posts are kept (to count a post the export holds twice once).
* **Counts per post.** ``new`` (not stored before), ``updated`` (stored, and the export had
  something richer: see :mod:`mcpkit.archive.store._merge`), ``unchanged``; each post of the
  export is counted once however often the export repeats it.
* **The export is recorded** in the ``exports`` table with its summary, in the same
  transaction (the web app finds media files through the export's path).
"""

from __future__ import annotations

import operator
import sqlite3
import tarfile
import zipfile
import zlib
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from mcpkit.archive import messages as m
from mcpkit.archive.errors import ImportFormatError
from mcpkit.archive.importers.base import (
    ExportReader,
    Progressive,
    ReadSummary,
    RowReader,
    kind_counts_text,
    skipped_text,
)
from mcpkit.archive.importers.detect import declared
from mcpkit.archive.importers.pipeline import PostTally, no_cyclic_gc, produced
from mcpkit.archive.messages import Lang
from mcpkit.archive.posts import Post
from mcpkit.archive.store import (
    BatchBuilder,
    JoinedRow,
    PostBatch,
    PostWriter,
    Store,
    TwilogRow,
    joined_rows,
)

__all__ = ["BATCH", "QUEUE", "ExportResult", "FlowFinishing", "FlowProgress", "import_export"]

BATCH = 16384
"""Posts per batch handed from the reader thread to the writer."""
_FIRST_BATCH = 1024  # the batch size doubles up to BATCH, so that the writer starts early
QUEUE = 4
"""Batches prepared ahead of the writer."""

T = TypeVar("T")

FlowProgress = Callable[[int, int, int], None]
"""``progress(records, done, total)``: records read so far, and bytes read of the export's
total when the reader knows them (``0, 0`` otherwise). Called on the importing thread."""
FlowFinishing = Callable[[], None]
"""``finishing()``: every record is written and the transaction is being completed (the text
index written or copied in, the commit, its checkpoint): at ten million posts about 13 s in
which no record moves, so a progress display can say what is happening. Called once, on the
importing thread, only when the export was read to its end."""


@dataclass(slots=True)
class ExportResult:
    """What importing one export did."""

    path: Path
    format: str
    account: str
    read: ReadSummary
    new: int = 0
    updated: int = 0
    unchanged: int = 0
    export_id: int = 0

    @property
    def posts(self) -> int:
        """Distinct posts of the export."""
        return self.new + self.updated + self.unchanged

    def as_dict(self) -> dict[str, Any]:
        read = self.read
        return {
            "path": str(self.path),
            "format": self.format,
            "account": self.account,
            "export_id": self.export_id,
            "rows": read.records,
            "kinds": dict(read.kinds),
            "new": self.new,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "duplicates_in_file": read.records - self.posts,
            "direct": read.direct,
            "skipped": dict(read.skipped),
            "malformed": read.malformed,
            "malformed_samples": list(read.samples),
        }

    def line(self, lang: Lang = "en") -> str:
        """``X archive of @name: 12,408 posts, 3,120 likes; 12,000 new, 400 updated, 3,128
        unchanged; skipped: 3 earlier versions of edited posts, 1 dmConversation record``:
        what the export held, what the archive made of it, and what the reader left out
        (:func:`~.base.skipped_text`: in its words, or record types as the export names them),
        in ``lang`` (the catalogue's :mod:`~mcpkit.archive.messages`)."""
        name = _title(self.format)
        head = m.EXPORT_OF(lang, name=name, account=self.account) if self.account else name
        text = m.IMPORT_LINE(
            lang,
            head=head,
            kinds=kind_counts_text(self.read.kinds, lang),
            new=f"{self.new:,}",
            updated=f"{self.updated:,}",
            unchanged=f"{self.unchanged:,}",
        )
        repeats = self.read.records - self.posts
        if repeats > 0:
            text += m.REPEATING_RECORDS(lang, count=repeats)
        if self.read.direct:
            text += m.DIRECT_POSTS(lang, count=self.read.direct)
        if self.read.skipped:
            text += m.SKIPPED(lang, items=skipped_text(self.read.skipped, lang=lang))
        if self.read.malformed:
            sample = f" ({self.read.samples[0]})" if self.read.samples else ""
            text += m.MALFORMED_COUNT(lang, count=f"{self.read.malformed:,}", sample=sample)
        return text


def import_export(
    reader: ExportReader,
    path: Path,
    store: Store,
    *,
    progress: FlowProgress | None = None,
    finishing: FlowFinishing | None = None,
    batch_size: int = BATCH,
) -> ExportResult:
    """Import everything ``reader`` yields into ``store`` in one transaction; see the module
    docstring. Raises :class:`ImportFormatError` for an export that cannot be read to its
    end (the transaction is then rolled back), and whatever else the reader raises."""
    try:
        return _import(reader, Path(path), store, progress, finishing, batch_size)
    except (EOFError, zlib.error, zipfile.BadZipFile, tarfile.TarError) as exc:
        # a reader that let a decompressor's complaint through: a truncated or damaged file
        raise ImportFormatError(
            f"{path}: the file is truncated or damaged ({exc or type(exc).__name__})"
        ) from exc
    except UnicodeDecodeError as exc:
        raise ImportFormatError(f"{path}: text that is not in its declared encoding ({exc.reason})") from exc
    except OSError as exc:
        raise ImportFormatError(f"{path}: cannot be read: {exc.strerror or exc}") from exc


def _import(
    reader: ExportReader,
    path: Path,
    store: Store,
    progress: FlowProgress | None,
    finishing: FlowFinishing | None,
    batch_size: int,
) -> ExportResult:
    with no_cyclic_gc(), store.transaction() as conn, store.bulk_writer(conn) as writer:
        account = reader.account
        builder = BatchBuilder(store.write_base(conn), account)
        result = ExportResult(path, reader.format, account, ReadSummary())
        seen: set[int] = set()
        with produced(
            lambda: _batches(reader, builder, seen, batch_size),
            name=f"{reader.format}-reader",
            ahead=QUEUE,
        ) as batches:
            _write(reader, store, conn, writer, batches, result, progress)
        if finishing is not None:
            finishing()
        result.read = reader.summary()
        if not result.read.records:  # a failed download or an empty account: nothing to keep
            raise ImportFormatError(_no_records(path, reader.format, result.read))
        late = reader.account
        if late and not account:
            # the reader named the account only once it had read the export (account.js
            # after tweets.js in the zip): its records get it now
            writer.flush()
            _set_account(conn, late, seen)
            store.note_post_changes(seen)
            result.account = late
        result.export_id = store.record_export(
            conn, format=reader.format, account=result.account, path=path, summary=result.as_dict()
        )
    return result


def _title(format: str) -> str:
    """How a line names the format stored as ``format`` (its declared title)."""
    declaration = declared(format)
    return format if declaration is None else declaration.title


def _no_records(path: Path, format: str, read: ReadSummary) -> str:
    """The line refusing an export that held no post, like or bookmark."""
    name = _title(format)
    article = "an" if name[:1] in "AEIOUX" else "a"
    held = []
    if read.skipped:
        held.append(skipped_text(read.skipped))
    if read.malformed:
        held.append(f"{read.malformed:,} malformed records")
    only = f" (it holds only {', '.join(held)})" if held else ""
    return f"{path}: {article} {name} with no records; expected posts, likes or bookmarks{only}"


@dataclass(slots=True)
class _Batch:
    batch: PostBatch
    repeats: list[int]  # ids an earlier batch of this export already wrote
    records: int


def _batches(
    reader: ExportReader, builder: BatchBuilder, seen: set[int], batch_size: int
) -> Iterator[_Batch]:
    """Batches of distinct posts; a post an earlier batch held is sent again as a repeat (the
    writer merges it with what it wrote). Twilog rows are batched as rows: two rows of one post
    in a batch are folded into one (the larger log_type wins, the first on a tie, the relations
    of both are kept, as :func:`merge_posts` decides between Twilog rows: the same whatever
    else the archive holds). Any other post met twice in a batch ends the batch, and comes again
    as a repeat: merging texts depends on what the archive already holds (a cut text gives way
    to the whole one, otherwise the first stays), so the records are merged one after another
    with the stored post, as the docs promise, never among themselves first."""
    if isinstance(reader, RowReader):
        rows: Iterable[TwilogRow | JoinedRow] = reader.rows()
        return _grouped(rows, _row_id, joined_rows, builder.twilog_batch, seen, batch_size)
    return _grouped(reader.records(), _post_id, None, builder.batch, seen, batch_size)


_row_id: Callable[[TwilogRow | JoinedRow], int] = operator.itemgetter(0)
_post_id: Callable[[Post], int] = operator.attrgetter("post_id")


def _grouped(
    items: Iterable[T],
    key: Callable[[T], int],
    fold: Callable[[T, T], T] | None,
    build: Callable[[Iterable[T]], PostBatch],
    seen: set[int],
    batch_size: int,
) -> Generator[_Batch, None, None]:
    """``items`` in batches of distinct keys (see :func:`_batches`); the first batches are
    small so that the writer starts early. A key met twice in a batch is folded by ``fold``,
    or, without one, ends the batch and starts the next as a repeat."""
    size = min(_FIRST_BATCH, batch_size)
    pending: dict[int, T] = {}
    repeats: list[int] = []
    count = 0
    for item in items:
        count += 1
        post_id = key(item)
        previous = pending.get(post_id)
        if previous is not None:
            if fold is not None:
                pending[post_id] = fold(previous, item)
                continue
            yield _Batch(build(pending.values()), repeats, count - 1)
            pending, repeats, count = {}, [], 1
        if post_id in seen:
            repeats.append(post_id)
        else:
            seen.add(post_id)
        pending[post_id] = item
        if len(pending) >= size:
            yield _Batch(build(pending.values()), repeats, count)
            pending, repeats, count = {}, [], 0
            size = min(2 * size, batch_size)
    yield _Batch(build(pending.values()), repeats, count)


def _write(
    reader: ExportReader,
    store: Store,
    conn: sqlite3.Connection,
    writer: PostWriter,
    batches: Iterator[_Batch],
    result: ExportResult,
    progress: FlowProgress | None,
) -> None:
    """The writer (the calling thread): write each batch as it comes, keep the counts."""
    tally = PostTally()
    records = 0
    for item in batches:
        tally.write(store, conn, item.batch, item.repeats, writer.write_posts)
        records += item.records
        if progress is not None:
            done, total = reader.position() if isinstance(reader, Progressive) else (0, 0)
            progress(records, done, total)
    result.new, result.updated, result.unchanged = tally.new, tally.updated, tally.unchanged


def _set_account(conn: sqlite3.Connection, account: str, ids: set[int]) -> None:
    ordered = sorted(ids)
    for start in range(0, len(ordered), 500):
        part = ordered[start : start + 500]
        marks = ",".join("?" * len(part))
        conn.execute(
            f"UPDATE posts SET account = ? WHERE account = '' AND post_id IN ({marks})", [account, *part]
        )
