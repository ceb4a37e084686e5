"""The vector indexes of large spaces, built in the background, and the flat 8-bit scan.

:class:`ScanIndexes` keeps one index per space. It builds the inverted file of
:mod:`mcpkit.archive.vector_index` and keeps it when its recall, measured at build time on
queries drawn from the data (:func:`mcpkit.archive.vector_index.calibrate`), reaches 0.99 with
few enough lists probed; vectors with no structure for an inverted file to use (random ones,
as some benchmarks make) get the flat 8-bit scan below instead, which compares every row and
so never misses. Both nominate candidates that are re-scored from the float32 rows.

The flat scan: 8-bit codes nominate, float32 decides.

Why it exists: an exact scan of 1,000,000 x 512 float32 rows reads 2 GB per query and is
bound by memory bandwidth (~100 ms on 2 cores, whatever the code). The same rows as 8-bit
codes are a quarter of the bytes; faiss scans them with SIMD, in one shard per core. The scan
only *nominates* candidates, several times more than asked for; their scores are then
recomputed exactly from the float32 rows. So every score a search returns is exact and the
order is exact; the only way to differ from an exact search is for a true top-k row not to be
nominated. The 8-bit error on a cosine is about 0.002, far below the gap the candidate margin
covers; ``bench/archive.py`` measures recall@10 against brute force (1.000 at 1M random
vectors) and the tests check it on every run.

Why it is not always used: below :data:`MIN_ROWS` the exact scan is already a few
milliseconds; without faiss (an optional package) everything stays exact. An index covers a
prefix of a space's rows; rows appended since it was built are scored exactly and merged, and
a larger tail gets the index rebuilt in the background. Until an index is ready, searches are
exact: building never blocks a query. Loading does: the index a build saved beside the vectors
is loaded by the first search that needs it, and other searches of that space wait for that
load, because it reads a small fraction of what one exact scan reads (its first pass is 72
bytes a row against 2,048 a row of float32 at 512 dimensions, and the 8-bit codes are mapped,
not read): at ten million rows 0.9 s warm against 9-11 s for an exact first answer.

The codes live in memory (a quarter of the float32 file); the float32 rows are read only for
candidates, so a server's resident memory is the codes, not the matrix.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from mcpkit.archive import vector_index
from mcpkit.archive.vector_index import MAX_TAIL_ROWS, Index, rescore

__all__ = [
    "MAX_TAIL_ROWS",
    "Index",
    "QuantisedScan",
    "ScanIndexes",
    "available",
    "build_index",
    "search",
    "worth_scanning",
]
from mcpkit.archive.vectors import BoolArray, FloatArray, IntArray, VectorSpace


@functools.cache
def _faiss() -> Any:
    """faiss, imported on first use: it costs ~90 ms, and spaces under MIN_ROWS never need it."""
    return importlib.import_module("faiss")


MIN_ROWS = 200_000
"""Spaces smaller than this are always scanned exactly (the scan is then a few ms)."""

_CANDIDATE_FACTOR = 4
_MIN_CANDIDATES = 100
_MAX_CANDIDATES = 8192
_READ_ROWS = 32_768
_TRAIN_ROWS = 65_536
_RANGE_MARGIN = 0.05


@functools.cache
def available() -> bool:
    """Whether the quantised first pass can be used on this machine (faiss installed).

    Optional: without it every search is exact.
    """
    return importlib.util.find_spec("faiss") is not None


def candidate_count(k: int) -> int:
    """How many rows the quantised scan nominates for a top-``k`` (margin for 8-bit error)."""
    return max(_CANDIDATE_FACTOR * k, k + _MIN_CANDIDATES)


class QuantisedScan:
    """8-bit codes of rows ``[0, rows)`` of one vector file, in contiguous shards.

    Immutable once built, so concurrent searches need no lock.
    """

    def __init__(self, file_id: tuple[int, int], rows: int, shards: list[tuple[int, Any]]) -> None:
        self.file_id = file_id
        self.rows = rows
        self._shards = shards  # (first row, faiss index)

    @classmethod
    def build(cls, space: VectorSpace, shards: int | None = None) -> QuantisedScan:
        """Encode every committed row of ``space``, reading the file in chunks (never mapped,
        so building does not leave 2 GB of the matrix resident)."""
        if not available():
            raise RuntimeError("faiss is not installed")
        path = space.directory / "vectors.f32"
        rows, dim = len(space), space.dim
        quantizer = _trained_quantizer(space)
        count = max(1, min(shards or vector_index.workers(), rows))
        bounds = [int(b) for b in np.linspace(0, rows, count + 1)]

        def encode(lo: int, hi: int) -> tuple[int, Any]:
            index = _faiss().clone_index(quantizer)
            with open(path, "rb") as handle:
                for start in range(lo, hi, _READ_ROWS):
                    stop = min(start + _READ_ROWS, hi)
                    handle.seek(start * dim * 4)
                    chunk = np.fromfile(handle, dtype=np.float32, count=(stop - start) * dim)
                    index.add(chunk.reshape(stop - start, dim))
            return lo, index

        # its own threads, so a background build never queues searches behind it
        with ThreadPoolExecutor(max_workers=count, thread_name_prefix="mcpkit-encode") as workers:
            built = list(workers.map(encode, bounds[:-1], bounds[1:]))
        return cls(vector_index.file_id(path), rows, built)

    kind = "flat 8-bit scan"

    def search(
        self, space: VectorSpace, query: FloatArray, k: int, mask: BoolArray | None
    ) -> tuple[IntArray, FloatArray]:
        return search(space, self, query, k, mask)

    def candidates(self, query: FloatArray, n: int, mask: BoolArray | None) -> IntArray:
        """Up to ``n`` rows per shard with the best quantised scores (where ``mask`` allows)."""
        q = np.ascontiguousarray(query, dtype=np.float32).reshape(1, -1)

        def one(shard: tuple[int, Any], stop: int) -> IntArray:
            first, index = shard
            params = None
            keep_alive = None
            if mask is not None:
                keep_alive = np.packbits(mask[first:stop], bitorder="little")
                params = _faiss().SearchParameters()
                params.sel = _faiss().IDSelectorBitmap(stop - first, _faiss().swig_ptr(keep_alive))
            _, found = index.search(q, min(n, stop - first), params=params)
            del keep_alive
            hits: IntArray = np.asarray(found[0], dtype=np.int64)
            return hits[hits >= 0] + first

        stops = [first for first, _ in self._shards[1:]] + [self.rows]
        if len(self._shards) == 1:
            return one(self._shards[0], stops[0])
        parts = list(vector_index.pool().map(one, self._shards, stops))
        return np.concatenate(parts)


def _trained_quantizer(space: VectorSpace) -> Any:
    """One uniform 8-bit range for all dimensions, from a strided sample plus a margin.

    The sample is read with file reads: touching it through the mapping would leave scattered
    pages of the whole matrix resident.
    """
    assert available()
    rows, dim = len(space), space.dim
    step = max(1, rows // _TRAIN_ROWS)
    sample = np.empty((len(range(0, rows, step)), dim), dtype=np.float32)
    with open(space.directory / "vectors.f32", "rb") as handle:
        for i, row in enumerate(range(0, rows, step)):
            handle.seek(row * dim * 4)
            sample[i] = np.fromfile(handle, dtype=np.float32, count=dim)
    quantizer = _faiss().IndexScalarQuantizer(
        dim, _faiss().ScalarQuantizer.QT_8bit_uniform, _faiss().METRIC_INNER_PRODUCT
    )
    quantizer.sq.rangestat_arg = _RANGE_MARGIN
    quantizer.train(sample)
    return quantizer


class ScanIndexes:
    """The quantised scans of an engine's spaces, built in the background and kept current.

    ``min_rows=None`` turns the first pass off (every search exact). Builds start on their own
    only with ``auto_build`` (long-lived processes: a server, the shell); a one-shot command
    would pay for a build it never uses.
    """

    def __init__(self, min_rows: int | None = MIN_ROWS, *, auto_build: bool = False) -> None:
        self.min_rows = min_rows
        self.auto_build = auto_build
        self._ready: dict[str, Index] = {}
        self._building: set[str] = set()
        self._failed: dict[str, str] = {}
        self._loading: dict[str, threading.Lock] = {}  # one load of a saved index per space at a time
        self._unsaved: dict[str, tuple[tuple[int, int], int]] = {}  # (vector file, rows) with none
        self._lock = threading.Lock()

    @property
    def enabled(self) -> bool:
        return self.min_rows is not None and available()

    def usable(self, name: str, space: VectorSpace) -> Index | None:
        """The scan to use for ``space`` now, or None (search exactly); loads the saved one
        when none is in service (:meth:`_load_saved`), starts a build if due."""
        if not self.enabled or self.min_rows is None or len(space) < self.min_rows:
            return None
        self._load_saved(name, space)
        with self._lock:
            scan = self._ready.get(name)
            if scan is not None:
                fresh = scan.file_id == vector_index.file_id(
                    space.directory / "vectors.f32"
                ) and scan.rows <= len(space)
                if not fresh:
                    self._ready.pop(name)
                    scan = None
            if self.auto_build and (scan is None or len(space) - scan.rows > MAX_TAIL_ROWS):
                self._start(name, space)
            if scan is None or len(space) - scan.rows > MAX_TAIL_ROWS:
                return None
            return scan

    def _load_saved(self, name: str, space: VectorSpace) -> None:
        """Put the index saved beside ``space`` in service when none is, on this thread; a
        search arriving meanwhile waits for this load rather than scanning exactly (see the
        module's docstring). A space with no usable saved index is not looked at again until
        its vector file changes."""
        with self._lock:
            if name in self._ready:  # every search after the first: no look at the files
                return
        key = (vector_index.file_id(space.directory / "vectors.f32"), len(space))
        with self._lock:
            if name in self._ready or self._unsaved.get(name) == key:
                return
            gate = self._loading.setdefault(name, threading.Lock())
        with gate:
            with self._lock:
                if name in self._ready or self._unsaved.get(name) == key:
                    return
            loaded = vector_index.IvfIndex.load(space)
            with self._lock:
                if loaded is None:
                    self._unsaved[name] = key
                else:
                    self._ready.setdefault(name, loaded)

    def build_now(self, name: str, space: VectorSpace, *, reuse: bool = True) -> Index | None:
        """Build (or rebuild; reload a saved one with ``reuse``) synchronously; for warm-up at
        start and for the benchmark."""
        if not self.enabled or self.min_rows is None or len(space) < self.min_rows:
            return None
        index = build_index(space, reuse=reuse)
        with self._lock:
            self._ready[name] = index
        return index

    def status(self) -> dict[str, Any]:
        with self._lock:
            return {
                "enabled": self.enabled,
                "min_rows": self.min_rows,
                "auto_build": self.auto_build,
                "ready": {name: scan.rows for name, scan in self._ready.items()},
                "kinds": {name: _describe(scan) for name, scan in self._ready.items()},
                "building": sorted(self._building),
                "failed": dict(self._failed),
            }

    def _start(self, name: str, space: VectorSpace) -> None:
        if name in self._building:
            return
        self._building.add(name)

        def work() -> None:
            try:
                scan = build_index(space)
            except Exception as exc:  # a failed build leaves searches exact; say why in status
                with self._lock:
                    self._failed[name] = f"{type(exc).__name__}: {exc}"
                    self._building.discard(name)
                return
            with self._lock:
                self._ready[name] = scan
                self._failed.pop(name, None)
                self._building.discard(name)

        threading.Thread(target=work, name=f"mcpkit-index-{name}", daemon=True).start()


def search(
    space: VectorSpace, scan: QuantisedScan, query: FloatArray, k: int, mask: BoolArray | None
) -> tuple[IntArray, FloatArray]:
    """Top-``k`` rows of ``space`` best first with exact scores: nominate, then re-score."""
    prefix_mask = None if mask is None else mask[: scan.rows]
    nominated = scan.candidates(query, candidate_count(k), prefix_mask)
    return rescore(space, scan.rows, nominated, query, k, mask)


def worth_scanning(space: VectorSpace, k: int, mask: BoolArray | None, index: Index | None = None) -> bool:
    """An index pays only when k is small and the mask keeps many rows: a mask of a few
    thousand rows is cheaper to score exactly by gathering them (the flat scan reads every
    code whatever the mask, so it waits for 2% of the space; the inverted file skips the
    lists it does not probe, so :data:`~mcpkit.archive.vector_index.EXACT_ROWS` rows)."""
    if k > _MAX_CANDIDATES // _CANDIDATE_FACTOR:
        return False
    if mask is None:
        return True
    floor = vector_index.EXACT_ROWS if isinstance(index, vector_index.IvfIndex) else len(space) // 50
    return int(np.count_nonzero(mask)) > max(candidate_count(k), floor)


def _describe(index: Index) -> str:
    if isinstance(index, vector_index.IvfIndex):
        return f"{index.kind} ({index.nlist} lists, {index.nprobe} probed, recall@10 {index.recall or 0:.3f})"
    return index.kind


def build_index(space: VectorSpace, *, reuse: bool = True) -> Index:
    """The index for ``space``: the inverted file saved by an earlier build when it still fits
    the space (``reuse``), else one built now and saved when its measured recall reaches the
    target (:func:`~mcpkit.archive.vector_index.calibrate`), else the flat 8-bit scan."""
    if reuse and vector_index.available():
        saved = vector_index.IvfIndex.load(space)
        if saved is not None:
            return saved
    ivf = vector_index.IvfIndex.build(space)
    nprobe, measured = vector_index.calibrate(ivf, space)
    if nprobe is not None:
        ivf.nprobe = nprobe
        ivf.recall = measured[nprobe]
        ivf.save(space)
        return ivf
    del ivf
    return QuantisedScan.build(space)
