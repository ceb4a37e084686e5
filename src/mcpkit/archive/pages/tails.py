"""The last two folded characters of every post (:class:`Tails`), kept beside the archive.

Why: a term of one or two characters is in a post when it is in one of the post's trigrams
or among its last two characters, where no trigram starts (:mod:`.text_index`). The trigrams
are in the archive's index; the last characters are read from every post's text, 3.3 s of CPU
a million posts, which the web app did again at every start and after every write to posts.
So, as the store does with its filter columns:

* the tails are saved beside the database (``<archive>-web-tails.npz``, 16 bytes a post, with
  the archive's id and the posts generation they hold), and a start loads them;
* after a write, only the posts the store's change log names are read again
  (:meth:`~mcpkit.archive.store.Store.posts_changed_since`); when the log cannot tell (a first
  import, a log that no longer reaches back), every post is read, once, and saved.

Tails are checked against the page's columns before use: the same posts in the same order, or
they are read whole.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import zipfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from mcpkit.archive.pages.columns import Columns, IntArray
from mcpkit.archive.posts import fold
from mcpkit.archive.store import Store

__all__ = ["Tails", "TailsKeeper", "read_whole", "tails_path"]

_TAIL_CHUNK = 50_000
_VARIABLES = 500


@dataclass(frozen=True)
class Tails:
    """The last two characters of every post's folded text, as code points (-1: none), in the
    columns' row order (``ids``, ascending): where a term of one or two characters can be
    without a trigram."""

    generation: int
    ids: IntArray
    before: npt.NDArray[np.int32]
    last: npt.NDArray[np.int32]

    def rows_ending(self, term: str) -> IntArray:
        """Rows whose folded text has ``term`` (one or two characters) in its last two."""
        if len(term) == 1:
            code = ord(term)
            hits = (self.last == code) | (self.before == code)
        else:
            hits = (self.before == ord(term[0])) & (self.last == ord(term[1]))
        rows: IntArray = np.flatnonzero(hits).astype(np.int64)
        return rows


def _ends(texts: Iterable[str | None]) -> tuple[list[int], list[int]]:
    """``(before, last)`` code points of each text's last two folded characters (-1: none)."""
    ends = [fold(text or "")[-2:] for text in texts]
    return [ord(e[0]) if len(e) == 2 else -1 for e in ends], [ord(e[-1]) if e else -1 for e in ends]


def read_whole(conn: sqlite3.Connection, cols: Columns) -> Tails | None:
    """Tails of ``cols``'s posts read from every post, or None when the archive changed since
    the columns were made."""
    size = len(cols)
    before = np.full(size, -1, dtype=np.int32)
    last = np.full(size, -1, dtype=np.int32)
    cursor = conn.execute("SELECT post_id, content FROM posts ORDER BY post_id")
    row = 0
    while chunk := cursor.fetchmany(_TAIL_CHUNK):
        if row + len(chunk) > size:
            return None
        ids = np.fromiter((r[0] for r in chunk), dtype=np.int64, count=len(chunk))
        if not np.array_equal(ids, cols.ids[row : row + len(chunk)]):
            return None
        before[row : row + len(chunk)], last[row : row + len(chunk)] = _ends(r[1] for r in chunk)
        row += len(chunk)
    if row != size:
        return None
    return Tails(cols.generation, cols.ids, before, last)


def _patched(conn: sqlite3.Connection, old: Tails, changed: Sequence[int], cols: Columns) -> Tails | None:
    """``old`` brought to ``cols``: the posts ``changed`` read again, the others kept; None when
    a post of ``cols`` is in neither (the columns and the log disagree: read whole)."""
    fresh: dict[int, str] = {}
    for start in range(0, len(changed), _VARIABLES):
        part = list(changed[start : start + _VARIABLES])
        marks = ",".join("?" * len(part))
        fresh.update(conn.execute(f"SELECT post_id, content FROM posts WHERE post_id IN ({marks})", part))
    ids = cols.ids
    size, known = len(ids), len(old.ids)
    pos = np.minimum(np.searchsorted(old.ids, ids), max(known - 1, 0))
    kept = (old.ids[pos] == ids) if known else np.zeros(size, dtype=bool)
    again = np.zeros(size, dtype=bool)
    if size and len(changed):
        wanted_ids = np.asarray(changed, dtype=np.int64)
        at = np.minimum(np.searchsorted(ids, wanted_ids), size - 1)
        again[at[ids[at] == wanted_ids]] = True
    before = np.where(kept, old.before[pos] if known else -1, -1).astype(np.int32)
    last = np.where(kept, old.last[pos] if known else -1, -1).astype(np.int32)
    rows = np.flatnonzero(again)
    wanted = [int(i) for i in ids[rows]]
    if any(post_id not in fresh for post_id in wanted) or not bool(np.all(kept | again)):
        return None
    before[rows], last[rows] = _ends(fresh[post_id] for post_id in wanted)
    return Tails(cols.generation, ids, before, last)


def tails_path(db: Path) -> Path:
    """Where the tails of the archive at ``db`` are saved."""
    return Path(f"{db}-web-tails.npz")


class TailsKeeper:
    """The tails of one archive: loaded, patched from the change log, or read whole, and saved.

    ``whole_reads`` counts the reads of every post (for tests and the bench)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.path = tails_path(store.path)
        self.whole_reads = 0
        self._lock = threading.Lock()

    def current(self, cols: Columns, held: Tails | None) -> Tails | None:
        """Tails of ``cols`` from ``held`` (the tails in use), the saved ones, or every post;
        None when the archive changed under the columns (the next columns build them)."""
        with self._lock:
            archive = self.store.archive_id()
            start = held if held is not None else self._load(archive)
            if start is not None and start.generation > cols.generation:
                return None  # the columns are behind the archive: the next ones get tails
            tails = self._brought(start, cols) if start is not None else None
            if tails is None:
                self.whole_reads += 1
                tails = read_whole(self.store.reader, cols)
            if tails is not None and tails is not start:
                self._save(archive, tails)
            return tails

    def _brought(self, start: Tails, cols: Columns) -> Tails | None:
        if start.generation == cols.generation:
            return start if np.array_equal(start.ids, cols.ids) else None
        changed = self.store.posts_changed_since(start.generation)
        return None if changed is None else _patched(self.store.reader, start, changed, cols)

    def _load(self, archive: str) -> Tails | None:
        try:
            with np.load(self.path, allow_pickle=False) as saved:
                if str(saved["archive_id"]) != archive:
                    return None
                tails = Tails(int(saved["generation"]), saved["ids"], saved["before"], saved["last"])
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
            return None  # none yet, damaged or of another layout: read the posts instead
        if not len(tails.ids) == len(tails.before) == len(tails.last):
            return None
        return tails

    def _save(self, archive: str, tails: Tails) -> None:
        """Atomically (a reader never sees half a file); a read-only place keeps none."""
        temp = self.path.with_name(f"{self.path.name}.{os.getpid()}.{threading.get_ident()}.tmp.npz")
        try:
            np.savez(
                temp,
                archive_id=np.array(archive),
                generation=np.array(tails.generation),
                ids=tails.ids,
                before=tails.before,
                last=tails.last,
            )
            os.replace(temp, self.path)
        except OSError:
            with contextlib.suppress(OSError):
                temp.unlink()
