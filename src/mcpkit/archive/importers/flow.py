"""The import flow: one export in, one write transaction, one summary line out.

Whatever the format, :func:`import_export` takes an :class:`~.base.ExportReader` and writes
its records into the store:

* **One transaction per export.** A format error halfway through (a truncated zip, a
  malformed ``tweets.js``), Ctrl-C or a killed process leaves the archive as it was before
  this export; the rerun then imports it whole, and re-importing what is stored changes
  nothing. That is what makes an interrupted import resumable with nothing lost or
  duplicated, without any bookkeeping of how far it got.
* **Two threads, bounded memory.** A reader thread pulls records, folds repeats of one post
  within a batch together (:func:`~mcpkit.archive.store.merge_posts`) and turns each batch into
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

import queue
import sqlite3
import tarfile
import threading
import zipfile
import zlib
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcpkit.archive.errors import ImportFormatError
from mcpkit.archive.importers.base import (
    FORMAT_NAMES,
    ExportReader,
    Progressive,
    ReadSummary,
    RowReader,
    kind_counts_text,
)
from mcpkit.archive.importers.twilog_csv import _no_cyclic_gc
from mcpkit.archive.posts import Post
from mcpkit.archive.store import (
    BatchBuilder,
    PostBatch,
    PostWriter,
    Store,
    TwilogRow,
    merge_posts,
    normalized,
)

__all__ = ["BATCH", "QUEUE", "ExportResult", "FlowProgress", "import_export"]

BATCH = 16384
"""Posts per batch handed from the reader thread to the writer."""
_FIRST_BATCH = 1024  # the batch size doubles up to BATCH, so that the writer starts early
QUEUE = 4
"""Batches prepared ahead of the writer."""

FlowProgress = Callable[[int, int, int], None]
"""``progress(records, done, total)``: records read so far, and bytes read of the export's
total when the reader knows them (``0, 0`` otherwise). Called on the importing thread."""


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
            "skipped": dict(read.skipped),
            "malformed": read.malformed,
            "malformed_samples": list(read.samples),
        }

    def line(self) -> str:
        """``X archive of @name: 12,408 posts, 3,120 likes; 12,000 new, 400 updated, 3,128
        unchanged; skipped: 3 records (dmConversation)``: what the export held, what the
        archive made of it, and what was left out by the reader (record types it does not
        import, such as unknown ones or direct messages, named as the export names them)."""
        name = FORMAT_NAMES.get(self.format, self.format)
        head = f"{name} of {self.account}" if self.account else name
        text = (
            f"{head}: {kind_counts_text(self.read.kinds)}; "
            f"{self.new:,} new, {self.updated:,} updated, {self.unchanged:,} unchanged"
        )
        repeats = self.read.records - self.posts
        if repeats > 0:
            text += f"; {repeats:,} record{'s' if repeats != 1 else ''} repeating a post"
        skipped = self.read.skipped
        if skipped:
            total = sum(skipped.values())
            names = ", ".join(name for name, _ in skipped.most_common(5))
            more = ", ..." if len(skipped) > 5 else ""
            text += f"; skipped: {total:,} record{'s' if total != 1 else ''} ({names}{more})"
        if self.read.malformed:
            sample = f" ({self.read.samples[0]})" if self.read.samples else ""
            text += f"; malformed: {self.read.malformed:,}{sample}"
        return text


def import_export(
    reader: ExportReader,
    path: Path,
    store: Store,
    *,
    progress: FlowProgress | None = None,
    batch_size: int = BATCH,
) -> ExportResult:
    """Import everything ``reader`` yields into ``store`` in one transaction; see the module
    docstring. Raises :class:`ImportFormatError` for an export that cannot be read to its
    end (the transaction is then rolled back), and whatever else the reader raises."""
    try:
        return _import(reader, Path(path), store, progress, batch_size)
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
    reader: ExportReader, path: Path, store: Store, progress: FlowProgress | None, batch_size: int
) -> ExportResult:
    with _no_cyclic_gc(), store.transaction() as conn, store.bulk_writer(conn) as writer:
        account = reader.account
        builder = BatchBuilder(store.write_base(conn), account)
        result = ExportResult(path, reader.format, account, ReadSummary())
        seen: set[int] = set()
        out: queue.Queue[object] = queue.Queue(maxsize=QUEUE)
        stop = threading.Event()
        thread = threading.Thread(
            target=_produce,
            args=(reader, builder, account, seen, out, stop, batch_size),
            name=f"{reader.format}-reader",
            daemon=True,
        )
        thread.start()
        try:
            _write(reader, store, conn, writer, out, result, progress)
        finally:
            stop.set()
            thread.join()
        result.read = reader.summary()
        late = reader.account
        if late and not account:
            # the reader named the account only once it had read the export (account.js
            # after tweets.js in the zip): its records get it now
            writer.flush()
            _set_account(conn, late, seen)
            result.account = late
        result.export_id = store.record_export(
            conn, format=reader.format, account=result.account, path=path, summary=result.as_dict()
        )
    return result


@dataclass(slots=True)
class _Batch:
    batch: PostBatch
    repeats: list[int]  # ids an earlier batch of this export already wrote
    records: int


def _produce(
    reader: ExportReader,
    builder: BatchBuilder,
    account: str,
    seen: set[int],
    out: queue.Queue[object],
    stop: threading.Event,
    batch_size: int,
) -> None:
    """The reader thread: batches, then ``None``; or the exception that stopped it."""
    batches = _batches(reader, builder, account, seen, batch_size)
    try:
        for item in batches:
            if not _put(out, item, stop):
                return
        _put(out, None, stop)
    except BaseException as exc:  # handed to the writer, which raises it
        _put(out, exc, stop)
    finally:
        batches.close()  # and with it the reader's generator, which closes its files


def _batches(
    reader: ExportReader, builder: BatchBuilder, account: str, seen: set[int], batch_size: int
) -> Generator[_Batch, None, None]:
    """Batches of distinct posts; a post the batch holds twice is merged into one, a post an
    earlier batch held is sent again as a repeat (the writer merges it with what it wrote)."""
    if isinstance(reader, RowReader):
        yield from _row_batches(reader, builder, seen, batch_size)
        return
    size = min(_FIRST_BATCH, batch_size)
    pending: dict[int, Post] = {}
    repeats: list[int] = []
    count = 0
    for post in reader.records():
        count += 1
        key = post.post_id
        previous = pending.get(key)
        if previous is not None:
            pending[key] = merge_posts(normalized(previous, account), normalized(post, account))
            continue
        if key in seen:
            repeats.append(key)
        else:
            seen.add(key)
        pending[key] = post
        if len(pending) >= size:
            yield _Batch(builder.batch(pending.values()), repeats, count)
            pending, repeats, count = {}, [], 0
            size = min(2 * size, batch_size)
    yield _Batch(builder.batch(pending.values()), repeats, count)


def _row_batches(
    reader: RowReader, builder: BatchBuilder, seen: set[int], batch_size: int
) -> Iterator[_Batch]:
    """:func:`_batches` for Twilog rows; between two rows of one post the larger log_type wins,
    the first on a tie, as :func:`merge_posts` decides between Twilog rows."""
    size = min(_FIRST_BATCH, batch_size)
    pending: dict[int, TwilogRow] = {}
    repeats: list[int] = []
    count = 0
    for row in reader.rows():
        count += 1
        key = row[0]
        previous = pending.get(key)
        if previous is not None:
            if row[5] > previous[5]:
                pending[key] = row
            continue
        if key in seen:
            repeats.append(key)
        else:
            seen.add(key)
        pending[key] = row
        if len(pending) >= size:
            yield _Batch(builder.twilog_batch(pending.values()), repeats, count)
            pending, repeats, count = {}, [], 0
            size = min(2 * size, batch_size)
    yield _Batch(builder.twilog_batch(pending.values()), repeats, count)


def _put(out: queue.Queue[object], item: object, stop: threading.Event) -> bool:
    """Queue ``item`` unless the writer gave up (then nobody would ever take it)."""
    while not stop.is_set():
        try:
            out.put(item, timeout=0.05)
        except queue.Full:
            continue
        return True
    return False


def _write(
    reader: ExportReader,
    store: Store,
    conn: sqlite3.Connection,
    writer: PostWriter,
    batches: queue.Queue[object],
    result: ExportResult,
    progress: FlowProgress | None,
) -> None:
    """The writer (the calling thread): write each batch as it comes, keep the counts."""
    unchanged_ids: set[int] = set()  # posts of this export counted unchanged, for repeats
    records = 0
    while True:
        item = batches.get()
        if item is None:
            break
        if isinstance(item, BaseException):
            raise item
        assert isinstance(item, _Batch)
        batch = item.batch
        if item.repeats:
            batch.check = sorted({*batch.check, *item.repeats})
        if batch.users:
            store.add_users(conn, batch.users)
        counts, unchanged = writer.write_posts(batch)
        new, updated, same = counts.new, counts.updated, counts.unchanged
        repeats = set(item.repeats)
        if repeats:
            same_now = set(unchanged)
            for post_id in repeats:
                # counted already by an earlier batch: count the post once, as what the
                # export as a whole made of what was stored before it
                if post_id in same_now:
                    same -= 1
                elif post_id in unchanged_ids:
                    result.unchanged -= 1  # unchanged before, updated now: an update
                    unchanged_ids.discard(post_id)
                else:
                    updated -= 1  # new or updated before: it stays that
        unchanged_ids.update(i for i in unchanged if i not in repeats)
        result.new += new
        result.updated += updated
        result.unchanged += same
        records += item.records
        if progress is not None:
            done, total = reader.position() if isinstance(reader, Progressive) else (0, 0)
            progress(records, done, total)


def _set_account(conn: sqlite3.Connection, account: str, ids: set[int]) -> None:
    ordered = sorted(ids)
    for start in range(0, len(ordered), 500):
        part = ordered[start : start + 500]
        marks = ",".join("?" * len(part))
        conn.execute(
            f"UPDATE posts SET account = ? WHERE account = '' AND post_id IN ({marks})", [account, *part]
        )
