"""Vector spaces on disk: one memory-mapped float32 matrix per space, exact top-k with masks.

Layout of a space directory (``<db>.vectors/<space>/``)::

    meta.json     {"space", "model", "dim", "count", "format": 1}   <- the commit point
    ids.i64       post ids, int64, one per row
    vectors.f32   unit vectors, float32, row-major (count x dim)

Appending writes rows past the committed ``count``, fsyncs, then replaces ``meta.json``
atomically. A writer killed mid-batch leaves only bytes beyond ``count``, which readers ignore
and the next writer truncates: embedding is resumable and never half-visible.

Exact search here: one BLAS matrix-vector product over the mapped matrix, then
``argpartition`` for the top k (never a full sort); filters are boolean masks applied before
selection, so a filtered top-k is as exact as an unfiltered one. Large spaces add a quantised
first pass on top of this (:mod:`mcpkit.archive.scan_index`).

Self-checking: a space is checked whenever it is opened (meta.json readable and whole, each file
at least as long as meta.json promises; a few ``stat`` calls). A damaged one raises
:class:`DamagedSpaceError`, one line saying what is wrong and that ``mcpkit archive embed
--repair`` rebuilds it; search had failed with numpy's "mmap length is greater than file size"
and embed with a 48-line traceback. :func:`repair_space` keeps every intact row and drops the
rest, for ``embed`` to embed again.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from mcpkit.archive import messages as m
from mcpkit.archive.errors import ArchiveError, DamagedSpaceError, ModelMismatchError
from mcpkit.archive.messages import Lang

FloatArray = npt.NDArray[np.float32]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

_FORMAT = 1
_GATHER_FRACTION = 0.05


def vectors_root(db_path: Path) -> Path:
    """Where the spaces of the archive at ``db_path`` live."""
    return Path(str(db_path) + ".vectors")


@dataclass(frozen=True, slots=True)
class SpaceInfo:
    space: str
    model: str
    dim: int
    count: int


def repair_hint(space: str) -> str:
    return f"run `mcpkit archive embed --space {space} --repair` to rebuild it"


def _damaged(directory: Path, what: str) -> DamagedSpaceError:
    space = directory.name
    return DamagedSpaceError(
        f"the {space} vector store at {directory} is damaged: {what}; {repair_hint(space)}"
    )


def _parse_meta(directory: Path) -> SpaceInfo | str | None:
    """The committed state, ``None`` when there is no space, or what is wrong with meta.json."""
    try:
        text = (directory / "meta.json").read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"meta.json cannot be read ({exc.strerror or exc})"
    try:
        raw = json.loads(text)
    except (ValueError, RecursionError):
        return "meta.json is not JSON"
    if not isinstance(raw, dict):
        return "meta.json is not a JSON object"
    fields = {"space": str, "model": str, "dim": int, "count": int}
    for name, kind in fields.items():
        value = raw.get(name)
        if not isinstance(value, kind) or isinstance(value, bool):
            return f"meta.json has no valid {name}"
    if raw["dim"] < 1 or raw["count"] < 0 or not raw["model"]:
        return f"meta.json says {raw['count']} rows of {raw['dim']} dimensions"
    return SpaceInfo(raw["space"], raw["model"], raw["dim"], raw["count"])


def _file_rows(path: Path, row_bytes: int) -> int:
    try:
        return path.stat().st_size // row_bytes
    except FileNotFoundError:
        return 0


def _read_meta(directory: Path) -> SpaceInfo | None:
    """The committed state of the space in ``directory`` (``None``: none there), checked: a
    meta.json that cannot be read or files shorter than it promises raise
    :class:`DamagedSpaceError`. Longer files are fine: a killed writer's tail, never read."""
    info = _parse_meta(directory)
    if info is None:
        return None
    if isinstance(info, str):
        raise _damaged(directory, info)
    if info.count:
        ids = _file_rows(directory / "ids.i64", 8)
        rows = _file_rows(directory / "vectors.f32", 4 * info.dim)
        if ids < info.count:
            raise _damaged(directory, f"ids.i64 holds {ids:,} of the {info.count:,} rows meta.json promises")
        if rows < info.count:
            raise _damaged(
                directory, f"vectors.f32 holds {rows:,} of the {info.count:,} rows meta.json promises"
            )
    return info


def _write_meta(directory: Path, info: SpaceInfo) -> None:
    tmp = directory / "meta.json.tmp"
    payload = {
        "space": info.space,
        "model": info.model,
        "dim": info.dim,
        "count": info.count,
        "format": _FORMAT,
    }
    with open(tmp, "w", encoding="utf-8") as handle:
        json.dump(payload, handle)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, directory / "meta.json")
    _fsync_dir(directory)


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class VectorSpace:
    """A read view of one space at the moment it was opened (``count`` rows)."""

    def __init__(self, directory: Path, info: SpaceInfo) -> None:
        self.directory = directory
        self.info = info
        self.ids: IntArray
        self.matrix: FloatArray
        if info.count:
            self.ids = np.memmap(directory / "ids.i64", dtype=np.int64, mode="r", shape=(info.count,))
            self.matrix = np.memmap(
                directory / "vectors.f32", dtype=np.float32, mode="r", shape=(info.count, info.dim)
            )
        else:
            self.ids = np.zeros(0, dtype=np.int64)
            self.matrix = np.zeros((0, info.dim), dtype=np.float32)
        self._sorted: tuple[IntArray, IntArray] | None = None

    @classmethod
    def open(cls, root: Path, space: str) -> VectorSpace | None:
        directory = root / space
        info = _read_meta(directory)
        return None if info is None else cls(directory, info)

    @property
    def model(self) -> str:
        return self.info.model

    @property
    def dim(self) -> int:
        return self.info.dim

    def __len__(self) -> int:
        return self.info.count

    def rows_of(self, post_ids: npt.ArrayLike) -> IntArray:
        """Row of each post id in this space, -1 where absent (binary search on a sorted copy)."""
        if self._sorted is None:
            order = np.argsort(self.ids, kind="stable").astype(np.int64)
            self._sorted = (np.asarray(self.ids)[order], order)
        keys, order = self._sorted
        wanted = np.asarray(post_ids, dtype=np.int64)
        if len(keys) == 0:
            return np.full(wanted.shape, -1, dtype=np.int64)
        pos = np.searchsorted(keys, wanted)
        pos_clipped = np.minimum(pos, len(keys) - 1)
        found = keys[pos_clipped] == wanted
        return np.where(found, order[pos_clipped], -1).astype(np.int64)

    def check_query(self, query: npt.ArrayLike) -> FloatArray:
        """``query`` as a flat float32 vector, refused when its dimension is not the space's."""
        q = np.asarray(query, dtype=np.float32).reshape(-1)
        if q.shape[0] != self.dim:
            raise ModelMismatchError(
                f"query vector has {q.shape[0]} dimensions but space {self.info.space!r} has {self.dim}"
            )
        return q

    def read_rows(self, rows: IntArray) -> FloatArray:
        """Rows ``rows`` copied with positioned reads, not through the mapping.

        On kernels that cache files in large folios a fault maps up to megabytes around each
        touched row: gathering 100 scattered rows through the mapping made 175 MB resident.
        Reads copy exactly the rows asked for (about 10 us per row).

        When the rows are not in the page cache (a space larger than the memory beside the
        process, or the first queries after a start), each read waits on the disk in turn: at
        ten million rows the first pass over a cold cache took 24-34 ms per query against 11 warm.
        So every row's read is announced first (``POSIX_FADV_WILLNEED``, which queues it without
        waiting) and the reads then find the rows arriving together; the kernel's readahead
        around each row is turned off for this handle (``POSIX_FADV_RANDOM``), as the
        neighbours of a candidate are rarely candidates.
        """
        out = np.empty((len(rows), self.dim), dtype=np.float32)
        if not len(rows):
            return out
        size = self.dim * 4
        view = out.data.cast("B")
        wanted = np.asarray(rows, dtype=np.int64).tolist()
        with open(self.directory / "vectors.f32", "rb", buffering=0) as handle:
            fd = handle.fileno()
            if len(wanted) > 1 and hasattr(os, "posix_fadvise"):
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
                for row in wanted:
                    if 0 <= row < len(self):
                        os.posix_fadvise(fd, row * size, size, os.POSIX_FADV_WILLNEED)
            for i, row in enumerate(wanted):
                if not 0 <= row < len(self):
                    raise IndexError(f"row {row} outside a space of {len(self)} rows")
                if os.preadv(fd, [view[i * size : (i + 1) * size]], row * size) != size:
                    raise ArchiveError(f"{self.directory / 'vectors.f32'} is shorter than its meta.json says")
        return out

    def scores(self, query: FloatArray) -> FloatArray:
        """Cosine of every row with ``query`` (rows are unit vectors)."""
        return np.asarray(self.matrix @ self.check_query(query), dtype=np.float32)


def eligible_scores(
    space: VectorSpace, query: FloatArray, mask: BoolArray | None
) -> tuple[IntArray | None, FloatArray]:
    """Exact scores of the rows ``mask`` keeps: ``(rows, scores)``, rows None meaning all.

    Unlike :meth:`VectorSpace.scores` nothing is padded to the full length, so a selective
    filter costs its own rows, not a top-k over a million ``-inf``.
    """
    if mask is None:
        return None, space.scores(query)
    selected = np.flatnonzero(mask).astype(np.int64)
    q = space.check_query(query)
    if len(selected) < _GATHER_FRACTION * len(space):
        # einsum, not BLAS: OpenBLAS runs this small product on every core, and on a machine
        # whose cores are busy its threads wait for each other: scoring 3,788 rows took 23 ms
        # at the median and 52 ms at p99 (0.06 ms when the cores were free), einsum's own loop
        # 0.3 ms (2 shared cores, load 12). This was the filtered search's p99.
        return selected, np.einsum("ij,j->i", space.matrix[selected], q).astype(np.float32, copy=False)
    return selected, np.asarray(space.matrix @ q, dtype=np.float32)[selected]


def top_k(scores: FloatArray, k: int | None, mask: BoolArray | None = None) -> IntArray:
    """Indices of the ``k`` best finite scores (where ``mask`` allows), best first.

    Selection is O(n), never a full sort; only the k winners are sorted. Rows tied with the
    k-th score are taken in index order, so results never depend on the selection's whims.
    ``k=None`` means every eligible row (a full sort, as the caller asked for everything).
    """
    keyed = scores if mask is None else np.where(mask, scores, np.float32(-np.inf))
    count = len(keyed) if k is None else min(k, len(keyed))
    if count <= 0:
        return np.zeros(0, dtype=np.int64)
    if count < len(keyed):
        pool = _above_sampled_threshold(keyed, count)
        sub = keyed if pool is None else keyed[pool]
        kth = sub[np.argpartition(-sub, count - 1)[count - 1]]
        above = np.flatnonzero(sub > kth)
        level = np.flatnonzero(sub == kth)[: count - len(above)]
        chosen = np.concatenate([above, level])
        if pool is not None:
            chosen = pool[chosen]
    else:
        chosen = np.arange(len(keyed))
    chosen = chosen[np.isfinite(keyed[chosen])]
    order = np.lexsort((chosen, -keyed[chosen]))
    result: IntArray = chosen[order].astype(np.int64)
    return result


_SAMPLE_STRIDE = 64


def _above_sampled_threshold(keyed: FloatArray, count: int) -> IntArray | None:
    """Rows scoring at least a threshold read off a strided sample, when at least ``count``
    do (else None). The exact selection then runs on those few rows: at a million scores
    ``argpartition`` costs ~13 ms, one comparison ~1 ms. Every row tied with the k-th best
    is kept (the k-th best is at or above the threshold), so the answer is unchanged."""
    n = len(keyed)
    sample_size = n // _SAMPLE_STRIDE
    wanted = 4 * count // _SAMPLE_STRIDE + 2  # about 4x count rows expected above it
    if sample_size < 256 or wanted >= sample_size // 4:
        return None
    sample = keyed[::_SAMPLE_STRIDE]
    threshold = np.partition(sample, len(sample) - wanted)[len(sample) - wanted]
    if not np.isfinite(threshold):
        return None
    pool = np.flatnonzero(keyed >= threshold)
    return pool if len(pool) >= count else None


@contextmanager
def _locked(directory: Path) -> Iterator[None]:
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / "lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


class SpaceWriter:
    """Appends rows to a space; one writer at a time (file lock), every batch atomic."""

    def __init__(self, root: Path, space: str, model: str, dim: int) -> None:
        self.directory = root / space
        self.space = space
        self.model = model
        self.dim = dim

    def existing_ids(self) -> IntArray:
        info = _read_meta(self.directory)
        if info is None or info.count == 0:
            return np.zeros(0, dtype=np.int64)
        return np.array(np.memmap(self.directory / "ids.i64", dtype=np.int64, mode="r", shape=(info.count,)))

    def check_model(self) -> SpaceInfo | None:
        info = _read_meta(self.directory)
        if info is not None and info.count and (info.model != self.model or info.dim != self.dim):
            raise ModelMismatchError(
                f"space {self.space!r} was built with model {info.model!r} ({info.dim} dims); "
                f"refusing to add vectors of {self.model!r} ({self.dim} dims). "
                f"Use --model {info.model} to add to it, or re-embed every post with the new model: "
                f"mcpkit archive embed --space {self.space} --model {self.model} --fresh"
            )
        return info

    def append(self, ids: npt.ArrayLike, vectors: npt.ArrayLike) -> int:
        """Commit ``vectors`` (n x dim, unit rows) for ``ids``; returns the new row count."""
        id_array = np.ascontiguousarray(ids, dtype=np.int64).reshape(-1)
        matrix = np.ascontiguousarray(vectors, dtype=np.float32).reshape(len(id_array), -1)
        if matrix.shape[1] != self.dim:
            raise ModelMismatchError(f"vectors have {matrix.shape[1]} dimensions, space expects {self.dim}")
        with _locked(self.directory):
            info = self.check_model()
            count = 0 if info is None else info.count
            _append_file(self.directory / "ids.i64", count * 8, id_array.tobytes())
            _append_file(self.directory / "vectors.f32", count * 4 * self.dim, matrix.tobytes())
            count += len(id_array)
            _write_meta(self.directory, SpaceInfo(self.space, self.model, self.dim, count))
        return count


def _append_file(path: Path, committed: int, data: bytes) -> None:
    """Drop anything past the committed length (a killed writer's tail), append, fsync."""
    with open(path, "ab+") as handle:
        handle.truncate(committed)
        handle.seek(committed)
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())


def drop_space(root: Path, space: str) -> bool:
    """Delete a space's vectors (for ``embed --fresh``); False when there were none.

    meta.json goes first, so a reader meanwhile sees no space rather than a half-deleted one.
    """
    directory = root / space
    if not directory.exists():
        return False
    with _locked(directory):
        (directory / "meta.json").unlink(missing_ok=True)
        for child in directory.iterdir():
            if child.name != "lock" and child.is_file():
                child.unlink()
    shutil.rmtree(directory, ignore_errors=True)
    return True


def describe(root: Path) -> dict[str, dict[str, Any]]:
    """``{space: {model, dim, count}}`` for every space present; a damaged one says so under
    ``damaged`` (status shows it rather than failing)."""
    out: dict[str, dict[str, Any]] = {}
    if root.is_dir():
        for child in sorted(root.iterdir()):
            if not child.is_dir():
                continue
            try:
                info = _read_meta(child)
            except DamagedSpaceError as exc:
                out[child.name] = {"model": None, "dim": None, "count": 0, "damaged": str(exc)}
                continue
            if info is not None:
                out[info.space] = {"model": info.model, "dim": info.dim, "count": info.count}
    return out


@dataclass(frozen=True, slots=True)
class RepairReport:
    """What :func:`repair_space` did: rows kept, rows dropped, and why (empty when intact)."""

    space: str
    kept: int
    dropped: int
    problem: str | None

    @property
    def line(self) -> str:
        """The English line (:meth:`text` in any language)."""
        return self.text("en")

    def text(self, lang: Lang) -> str:
        if self.problem is None:
            return m.SPACE_INTACT(lang, space=self.space, count=f"{self.kept:,}")
        return m.SPACE_REPAIRED(
            lang, space=self.space, problem=self.problem, kept=f"{self.kept:,}", dropped=f"{self.dropped:,}"
        )


def prefix_fingerprint(space: VectorSpace, count: int) -> str:
    """A digest of the ids of rows ``[0, count)``, sampled (every 997th and the last), and of the
    model: enough to tell a space rebuilt, re-embedded or compacted by a repair from the one a
    stored result (hub scores, a saved index) was computed on."""
    if count == 0:
        return ""
    picks = np.unique(np.concatenate([np.arange(0, count, 997), [count - 1]]))
    digest = hashlib.blake2b(np.asarray(space.ids[picks], dtype=np.int64).tobytes(), digest_size=16)
    digest.update(f"{space.model}/{space.dim}".encode())
    return digest.hexdigest()


def repair_space(root: Path, space: str) -> RepairReport:
    """Make a damaged space whole again, keeping every row that is intact.

    A row is kept when both files hold it, its id is a post id (positive, first occurrence)
    and its vector is finite; the rest are dropped, compacted in place, and committed with a
    new meta.json, for ``embed`` to embed again. A meta.json that cannot be read leaves no way
    to know the model or the row width: the space is emptied and every post embedded again.
    """
    directory = root / space
    with _locked(directory):
        meta = _parse_meta(directory)
        if meta is None:
            return RepairReport(space, 0, 0, None)
        if isinstance(meta, str):
            for name in ("meta.json", "ids.i64", "vectors.f32"):
                (directory / name).unlink(missing_ok=True)
            return RepairReport(space, 0, 0, f"{meta}: every post is embedded again")
        available = min(
            meta.count,
            _file_rows(directory / "ids.i64", 8),
            _file_rows(directory / "vectors.f32", 4 * meta.dim),
        )
        problems = []
        if available < meta.count:
            problems.append(f"the files hold {available:,} of {meta.count:,} rows")
        keep = np.zeros(available, dtype=bool)
        bad = 0
        if available:
            ids = np.fromfile(directory / "ids.i64", dtype=np.int64, count=available)
            matrix = np.memmap(
                directory / "vectors.f32", dtype=np.float32, mode="r", shape=(available, meta.dim)
            )
            _, first = np.unique(ids, return_index=True)
            keep[first] = True
            keep &= ids > 0
            for start in range(0, available, 65536):  # bounded memory on a big space
                keep[start : start + 65536] &= np.isfinite(matrix[start : start + 65536]).all(axis=1)
            bad = available - int(keep.sum())
            if bad:
                problems.append(f"{bad:,} rows with a repeated or invalid id or vector")
                kept_ids, kept_rows = ids[keep], np.array(matrix[keep])
                del matrix
                _append_file(directory / "ids.i64", 0, kept_ids.tobytes())
                _append_file(directory / "vectors.f32", 0, kept_rows.tobytes())
            else:
                del matrix
        kept = int(keep.sum())
        if not problems:
            return RepairReport(space, kept, 0, None)
        if not bad:  # only missing rows: the intact ones stay where they are
            _append_file(directory / "ids.i64", kept * 8, b"")
            _append_file(directory / "vectors.f32", kept * 4 * meta.dim, b"")
        _write_meta(directory, SpaceInfo(meta.space, meta.model, meta.dim, kept))
        return RepairReport(space, kept, meta.count - kept, "; ".join(problems))
