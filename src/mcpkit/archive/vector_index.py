"""The vector index of large spaces: faiss IVF over 4-bit fast-scan codes, then 8-bit codes, then exact.

Why this index (``bench/vector_index.py`` measures it against the alternatives; the figures are
in docs/archive-data.md): an exact scan of 1,000,000 x 512 float32 rows reads 2 GB per query and
is bound by memory bandwidth, and an 8-bit scan of every row still reads 512 MB; neither gets
under 5 ms on 2 cores, and more cores do not bring more bandwidth. An inverted file reads only the
lists nearest the query (``nprobe`` of ``nlist``, a few percent of the rows), and its build is
two passes of BLAS (k-means on a sample, one assignment of every row): under half a minute for a
million rows on 2 cores. Graph indexes (HNSW in faiss, usearch, hnswlib) answer as fast but take
many minutes to build a million rows on 2 cores and hold their graph in memory besides the codes.

One query runs three passes, each on fewer rows and finer numbers:

1. **First pass** (faiss ``IndexIVFPQFastScan``): the probed lists' rows as 4-bit product codes
   (a quarter byte a dimension, 64 bytes a row at 512 dimensions), scored with SIMD lookup
   tables held in registers; it nominates :func:`first_pass_count` rows. Scanning 80 lists of a
   million rows takes about 1 ms on one core, where the same lists as 8-bit codes took 8-10 ms.
2. **Second pass** (numpy): those rows' 8-bit codes (one byte a dimension, kept in memory in row
   order) re-rank them, and the best :func:`candidate_count` go on. The 4-bit scores are coarse
   (a true top-10 row can sit hundreds of places down), the 8-bit ones are within about 0.002 of
   the cosine.
3. **Exact**: the float32 rows of those candidates are read and scored; every returned score and
   the order are exact.

A true top-k row is missed only when its list was not probed or the first pass ranked it below
its nominees; recall@10 against brute force is measured by the calibration, the bench and the
tests.

Filters stay exact: a mask that keeps at most :data:`EXACT_ROWS` rows is answered by the exact
scan of those rows (:func:`mcpkit.archive.scan_index.worth_scanning`); a broader one is applied
inside the first pass (faiss ``IDSelectorBitmap``, so a filtered top-k is never a cut of an
unfiltered one) with ``nprobe`` raised in proportion to the rows it removes, so about as many
eligible rows are compared as without a filter.

The index covers a prefix of the space's rows; rows appended since it was built are scored
exactly beside it, so a new post is found at once. The 4-bit codes live in memory (an eighth of
the 8-bit ones); the 8-bit codes (a quarter of the float32 file, 512 MB at a million rows) are
a read-only mapping of the saved file, once saved; the float32 rows are read only for
candidates.

Why map the 8-bit codes: at ten million rows they are 5.1 GB. Read into memory, a restart took
24-28 s to load them from a cold disk (about 210 MB/s here), and until then every search was an
exact scan of 20 GB (9-11 s for the first answer); mapped, the index is usable as soon as the
first pass is read (0.9 s warm), the pages come in as searches touch them and from a read-ahead
started at load, and they are page cache: shared, counted once, and given back under memory
pressure instead of the process being killed for them.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import importlib
import importlib.util
import json
import logging
import math
import mmap
import os
import sys
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from mcpkit.archive.vectors import BoolArray, FloatArray, IntArray, VectorSpace, prefix_fingerprint

logger = logging.getLogger("mcpkit.archive")

NPROBE = 32
"""Lists probed per query until :func:`calibrate` has measured how many this space needs."""

EXACT_EXTRA = 32
"""The second pass keeps ``k + max(32, k // 4)`` rows for a top-k, all re-scored exactly. Its
8-bit scores are within about 0.002 of the exact ones, so a small margin loses nothing: at a
million real-like rows recall@10 and recall@64 were the same keeping k + 16 rows as keeping
k + 100 (0.996 and 0.993, the misses being rows the first pass never nominated), and each row
kept costs a positioned read of its float32 row (about 5 us warm)."""

FIRST_PASS_MARGIN = 3_200
FIRST_PASS_PER_RESULT = 8
"""The first pass nominates ``3,200 + 8k`` rows for a top-k. Its 4-bit scores are coarse: at a
million real-like rows, 80 of 1,024 lists probed, recall@10 after the second pass and the exact
one was 0.954 nominating 400 rows, 0.976 at 800, 0.990 at 1,600, 0.995 at 3,200 and 0.996 at 6,400
(where lists not probed are the rest); the second pass costs about 0.3 ms a thousand rows."""

SECOND_PASS_ROW_COST = 32
"""What a row costs the second pass (gathered, widened and scored in numpy: 240-310 ns at a
million rows) in rows of the first (about 8 ns, read from the fast-scan lists)."""

ROWS_PER_THREAD = 1_048_576
"""Rows one search must scan (lists probed x rows a list) per extra thread it runs on when the
cores are busy.

A search probing many lists (a filtered one, or a space of ten million rows) splits them into
slices scanned side by side on threads of ours (faiss's fast scan runs one query on one
thread), and waits for the last slice: on cores busy with other work a slice whose thread is
not running holds up the answer (with OpenMP's barrier, a 4 ms search took 24 ms on two busy
cores). So on busy cores a search splits only when each slice has about 8 ms of scanning (the
first pass scans about 8 ns a row), well above a scheduler's time slice; concurrent searches
run on the cores side by side (faiss releases the GIL), which is how more cores serve more
queries."""

ROWS_PER_IDLE_THREAD = 131_072
"""Rows per thread when the cores are idle: each slice is then about a millisecond of scanning,
far above the tens of microseconds a thread hand-off costs."""

EXACT_ROWS = 20_000
"""A filter keeping at most this many rows is answered exactly from their float32 rows (gathering
20,000 rows costs about what probing the index costs)."""

MAX_TAIL_ROWS = 50_000
"""Rows past an index's prefix scored exactly beside it (10 ms at most); beyond this it is rebuilt."""

SAVED = "index.ivf"
SAVED_CODES = "index.codes"
SAVED_META = "index.json"
"""The built index (the first pass), the second pass's 8-bit codes (raw, row by row) and what
they were built on, beside the vectors: a start reloads them instead of building again (at ten
million rows a build took 9-10 minutes on 2 cores, a reload 26-28 s from a cold disk)."""

FORMAT = "ivf-pq4fs+sq8"
"""What :data:`SAVED` holds; an index saved in another format (the 8-bit inverted file of
earlier versions) is built again."""

_TRAIN_PER_LIST = 40  # faiss asks for at least 39 training points per list
_TRAIN_ITERATIONS = 10
_READ_ROWS = 65_536
_PQ_TRAIN_ROWS = 65_536
_PQ_BITS = 4  # the fast scan's codes are 4-bit
_PQ_MIN_TRAIN = 1 << _PQ_BITS
_SHORTLIST_BLOCK = 256


@functools.cache
def _faiss() -> Any:
    """faiss, imported on first use (about 90 ms); small spaces never need it."""
    return importlib.import_module("faiss")


@functools.cache
def available() -> bool:
    """Whether the index can be built here (faiss installed); without it every search is exact."""
    return importlib.util.find_spec("faiss") is not None


def workers() -> int:
    """Cores this process may run on (the affinity mask, not the machine's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def list_count(rows: int) -> int:
    """``nlist``: the power of two nearest ``sqrt(rows)`` (lists of about a thousand rows at a
    million), at least 16."""
    return max(16, 1 << round(math.log2(max(1.0, math.sqrt(rows)))))


def candidate_count(k: int) -> int:
    """Rows the second pass keeps for the exact one (:data:`EXACT_EXTRA`)."""
    return k + max(EXACT_EXTRA, k // 4)


def first_pass_count(k: int) -> int:
    """Rows the first pass nominates for a top-``k`` (:data:`FIRST_PASS_MARGIN`)."""
    return FIRST_PASS_MARGIN + FIRST_PASS_PER_RESULT * k


def subquantizers(dim: int) -> int:
    """Sub-vectors of a row's 4-bit product code: one per 4 dimensions (128 at 512, 64 bytes a
    row), fewer dimensions each where ``dim`` is not a multiple of 4 (faiss needs a divisor)."""
    group = next(g for g in (4, 2, 1) if dim % g == 0)
    return dim // group


_POOL: ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


def pool() -> ThreadPoolExecutor:
    """Threads that scan a search's slices side by side (faiss releases the GIL; a one-query
    search runs on one faiss thread, so the parallelism is ours). Shared by every index."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = ThreadPoolExecutor(max_workers=workers(), thread_name_prefix="mcpkit-scan")
        return _POOL


def idle_cores(cores: int) -> int:
    """Cores no other thread wants at this instant: ``cores`` less the runnable threads the
    kernel counts now (``/proc/loadavg``'s fourth field, which counts the caller too). The
    1-minute load average lags by a minute and counts this process's own work, so it cannot tell
    a quiet machine from a busy one at the moment a search starts; 0 when unknown."""
    try:
        with open("/proc/loadavg", encoding="ascii") as handle:
            running = int(handle.read().split()[3].split("/")[0])
    except (OSError, ValueError, IndexError):
        return 0
    return max(0, cores - (running - 1))


def search_threads(scanned_rows: int, cores: int | None = None, idle: int | None = None) -> int:
    """Threads (slices of its lists) for one search scanning ``scanned_rows`` rows.

    On busy cores a thread per :data:`ROWS_PER_THREAD` rows (a slice whose thread waits for a
    core holds up the answer); on cores that are idle right now (:func:`idle_cores`) a thread
    per :data:`ROWS_PER_IDLE_THREAD` rows, up to the idle ones."""
    cores = workers() if cores is None else cores
    idle = idle_cores(cores) if idle is None else idle
    wanted = scanned_rows // ROWS_PER_THREAD
    if idle >= 2:
        wanted = max(wanted, min(idle, scanned_rows // ROWS_PER_IDLE_THREAD))
    return max(1, min(cores, wanted))


def return_freed_memory() -> None:
    """Hand the memory a build freed back to the system (glibc's ``malloc_trim``).

    Why: the staging index's lists are freed after the conversion, but the C allocator keeps
    the pages for later allocations, so a server that had just built an index held more than
    one that reloaded it (a million rows: 698 MB of anonymous memory against 600 MB; trimmed,
    624 MB). Elsewhere than glibc this does nothing."""
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # pragma: no cover - not glibc
        return
    trim(0)


def file_id(path: Path) -> tuple[int, int]:
    """Identity of a vector file: a space started afresh is a new file, not a longer one."""
    stat = path.stat()
    return (stat.st_dev, stat.st_ino)


def _read(handle: Any, dim: int, start: int, stop: int) -> FloatArray:
    """Rows ``[start, stop)`` by file reads: building through the mapping would leave the whole
    matrix resident in the serving process."""
    handle.seek(start * dim * 4)
    return np.fromfile(handle, dtype=np.float32, count=(stop - start) * dim).reshape(stop - start, dim)


_ASSIGN_ROWS = 16_384
"""Rows scored against every centroid at once (a 16,384 x lists float32 block: 64 MB at 1,024)."""


def nearest(rows: FloatArray, centroids: FloatArray) -> IntArray:
    """The centroid of highest inner product for each row.

    Why numpy and not faiss's own assignment: on the 2-core machine of these figures faiss's
    bundled BLAS multiplied at 37-43 GFLOPS and numpy's at 180-215, and the assignment of every
    row (and each k-means iteration) is one such product; the build of a million rows spent 49 of
    its 65 s in them.
    """
    out = np.empty(len(rows), dtype=np.int64)
    for start in range(0, len(rows), _ASSIGN_ROWS):
        block = rows[start : start + _ASSIGN_ROWS] @ centroids.T
        out[start : start + len(block)] = np.argmax(block, axis=1)
    return out


def spherical_kmeans(
    sample: FloatArray, k: int, iterations: int, seed: int = 1234
) -> tuple[FloatArray, IntArray]:
    """``k`` unit centroids of ``sample`` (spherical k-means, as faiss's with ``spherical``) and
    the sample's assignment to them.

    Starts from ``k`` distinct sample rows; a centroid left with no rows takes the place of a
    perturbed copy of one of the largest (faiss's rule), so every list is used.
    """
    rng = np.random.default_rng(seed)
    centroids = np.ascontiguousarray(sample[rng.choice(len(sample), size=k, replace=False)])
    assigned = nearest(sample, centroids)
    for _ in range(iterations):
        counts = np.bincount(assigned, minlength=k)
        grouped = sample[np.argsort(assigned, kind="stable")]
        sums = np.zeros_like(centroids)
        ends = np.cumsum(counts).tolist()
        # one slice sum per centroid: four times faster than ``np.add.reduceat`` over the rows
        for number, (start, stop) in enumerate(zip([0, *ends[:-1]], ends, strict=True)):
            if stop > start:
                sums[number] = grouped[start:stop].sum(axis=0)
        for empty in np.flatnonzero(counts == 0).tolist():
            donor = int(np.argmax(counts))
            noise = rng.standard_normal(int(sample.shape[1]), dtype=np.float32)
            scale = np.float32(1e-3) * np.linalg.norm(sums[donor]) / np.linalg.norm(noise)
            sums[empty] = sums[donor] + scale * noise
            sums[donor] -= scale * noise
            counts[empty] = counts[donor] // 2
            counts[donor] -= counts[empty]
        norms = np.linalg.norm(sums, axis=1, keepdims=True)
        centroids = np.ascontiguousarray(sums / np.maximum(norms, np.float32(1e-12)), dtype=np.float32)
        assigned = nearest(sample, centroids)
    return centroids, assigned


def mapped_codes(path: Path, rows: int, dim: int) -> np.ndarray:
    """The ``rows x dim`` 8-bit codes saved at ``path`` as a read-only mapping (see the
    module's docstring), read ahead on a thread of its own (a first search then finds the
    pages in memory instead of faulting each one in: 3,200 rows gathered from a cold 5 GB file
    took 5.5 s, warm 70 ms)."""
    with open(path, "rb") as handle:
        mapping = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    codes = np.frombuffer(mapping, dtype=np.uint8)
    if codes.size != rows * dim:
        raise ValueError(f"{path.name} holds {codes.size} codes, not {rows} x {dim}")
    threading.Thread(target=_read_ahead, args=(mapping,), name="mcpkit-index-read-ahead", daemon=True).start()
    return codes.reshape(rows, dim)


_MADV_POPULATE_READ = 22
"""Linux's ``MADV_POPULATE_READ`` (5.14 and later; Python's ``mmap`` does not name it yet)."""


def _read_ahead(mapping: mmap.mmap) -> None:
    """Read the whole mapping in and map its pages (best effort: the kernel may decline, and
    Windows has no ``madvise``). ``MADV_WILLNEED`` starts the reads in large sequential
    chunks; ``MADV_POPULATE_READ`` then maps every page into the process, so searches meet
    neither a read from disk nor a page fault per row (at a million rows, on a cold cache,
    searches right after a load took 7.5 ms at p50 against 3.8 once the pages were in)."""
    if not hasattr(mapping, "madvise"):
        return
    for advice in (
        getattr(mmap, "MADV_WILLNEED", None),
        _MADV_POPULATE_READ if sys.platform == "linux" else None,
    ):
        if advice is not None:
            with contextlib.suppress(OSError, ValueError):  # refused, unknown here, or the mapping is gone
                mapping.madvise(advice)


def _add_reserved(
    faiss: Any,
    index: Any,
    centroids: FloatArray,
    handle: Any,
    rows: int,
    lists: int,
    also: Callable[[int, FloatArray], None],
) -> None:
    """Add rows ``[0, rows)`` to the trained ``index``, each list allocated once at its size,
    and hand each chunk read to ``also`` (which encodes the second pass's codes).

    Why: faiss grows a list's codes as a vector, doubling its capacity, so rows added in
    chunks leave each list with up to twice the memory its codes take (at ten million rows an
    8-bit index built that way held 7.3 GB of anonymous memory against 5.8 GB read back from
    disk). So every row is assigned to its list first (the one quantizer pass ``add`` makes
    anyway), each list is reserved at its final size (grown then emptied: a vector keeps its
    capacity), and the rows are added with those assignments (``add_core``), which only encodes
    them. The cost is a second read of the float32 file. Rows are assigned by :func:`nearest`
    (numpy's BLAS).
    """
    dim = int(index.d)
    assigned = np.empty(rows, dtype=np.int64)
    for start in range(0, rows, _READ_ROWS):
        stop = min(rows, start + _READ_ROWS)
        assigned[start:stop] = nearest(_read(handle, dim, start, stop), centroids)
    invlists = faiss.downcast_InvertedLists(index.invlists)
    if hasattr(invlists, "resize"):  # the in-memory lists of a fresh index
        for number, size in enumerate(np.bincount(assigned, minlength=lists).tolist()):
            if size:
                invlists.resize(number, size)
                invlists.resize(number, 0)
    for start in range(0, rows, _READ_ROWS):
        stop = min(rows, start + _READ_ROWS)
        chunk = _read(handle, dim, start, stop)
        part = np.ascontiguousarray(assigned[start:stop])
        # swig_ptr keeps no reference: chunk and part stay bound until the call returns
        index.add_core(stop - start, faiss.swig_ptr(chunk), None, faiss.swig_ptr(part))
        also(start, chunk)


class IvfIndex:
    """An inverted file over rows ``[0, rows)`` of one vector file: the first pass's 4-bit
    fast-scan lists and the second pass's 8-bit codes (see the module's docstring). Immutable
    once built, so concurrent searches need no lock."""

    kind = "inverted file"

    def __init__(
        self, file: tuple[int, int], rows: int, index: Any, codes: np.ndarray, widths: FloatArray
    ) -> None:
        self.file_id = file
        self.rows = rows
        self._index = index
        self._codes = codes  # uint8, one row of 8-bit codes per vector row
        self._widths = widths  # each dimension's 8-bit step x 255: scores rank as codes @ (q * widths)
        self.nprobe = NPROBE  # set from :func:`calibrate`
        self.recall: float | None = None  # measured by :func:`calibrate` at that nprobe

    @property
    def nlist(self) -> int:
        return int(self._index.nlist)

    @property
    def code_bytes(self) -> int:
        """Memory the codes take: the first pass's and the second's."""
        return int(self._index.code_size) * self.rows + int(self._codes.nbytes)

    @classmethod
    def build(cls, space: VectorSpace, nlist: int | None = None) -> IvfIndex:
        """Cluster an evenly strided sample, train both codes on it, then encode every
        committed row in chunks.

        The first pass is staged as a plain ``IndexIVFPQ`` (residuals to the row's centroid,
        4-bit codes) because only it takes rows with their lists already assigned (numpy's
        BLAS assigns them, faiss's bundled one is five times slower here); faiss converts it to
        the fast-scan layout in a fraction of a second.
        """
        faiss = _faiss()
        faiss.omp_set_num_threads(workers())
        path = space.directory / "vectors.f32"
        rows, dim = len(space), space.dim
        lists = min(nlist or list_count(rows), max(1, rows // _TRAIN_PER_LIST))
        step = max(1, rows // (lists * _TRAIN_PER_LIST * 2))
        sample = space.read_rows(np.arange(0, rows, step, dtype=np.int64))
        centroids, assigned = spherical_kmeans(sample, lists, _TRAIN_ITERATIONS)
        quantizer = faiss.IndexFlatIP(dim)
        quantizer.add(centroids)
        staging = faiss.IndexIVFPQ(
            quantizer, dim, lists, subquantizers(dim), _PQ_BITS, faiss.METRIC_INNER_PRODUCT
        )
        staging.by_residual = True
        # the product codes encode residuals to the centroid (what faiss's ``train`` hands
        # ``train_encoder``), trained on at most _PQ_TRAIN_ROWS rows spread over the sample
        pick = slice(None, None, max(1, math.ceil(len(sample) / _PQ_TRAIN_ROWS)))
        residuals = sample[pick] - centroids[assigned[pick]]
        owners = assigned[pick]
        if len(residuals) < _PQ_MIN_TRAIN:  # faiss needs a row per code value; a tiny space repeats its rows
            residuals = np.resize(residuals, (_PQ_MIN_TRAIN, dim))
            owners = np.resize(owners, _PQ_MIN_TRAIN)
        residuals = np.ascontiguousarray(residuals, dtype=np.float32)
        owners = np.ascontiguousarray(owners, dtype=np.int64)
        staging.train_encoder(len(residuals), faiss.swig_ptr(residuals), faiss.swig_ptr(owners))
        staging.is_trained = True
        scalar = faiss.ScalarQuantizer(dim, faiss.ScalarQuantizer.QT_8bit)
        scalar.train(sample)
        del sample, residuals
        codes = np.empty((rows, dim), dtype=np.uint8)

        def encode(start: int, chunk: FloatArray) -> None:
            codes[start : start + len(chunk)] = scalar.compute_codes(chunk)

        with open(path, "rb") as handle:
            _add_reserved(faiss, staging, centroids, handle, rows, lists, encode)
        index = faiss.IndexIVFPQFastScan(staging)
        index.referenced_objects = [quantizer]  # the converted index shares it, without owning it
        del staging
        return_freed_memory()
        widths = np.ascontiguousarray(faiss.vector_to_array(scalar.trained)[dim:], dtype=np.float32)
        return cls(file_id(path), rows, index, codes, widths)

    def save(self, space: VectorSpace) -> bool:
        """Keep the index beside the vectors (best effort: a full or read-only disk only means
        the next start builds again); True when it was saved. The index and the codes go first
        and their description last, each through a temporary file, so a reader never pairs a
        description with another index. Once saved, the 8-bit codes are served from the file
        (:func:`mapped_codes`) and their copy in memory is let go: a built index then holds
        the memory a reloaded one does."""
        faiss = _faiss()
        directory = space.directory
        meta = {
            "format": FORMAT,
            "rows": self.rows,
            "fingerprint": prefix_fingerprint(space, self.rows),
            "nprobe": self.nprobe,
            "recall": self.recall,
            "widths": [float(w) for w in self._widths],
        }
        scratch = [directory / f".{name}.{os.getpid()}" for name in (SAVED, SAVED_CODES, SAVED_META)]
        try:
            faiss.write_index(self._index, str(scratch[0]))
            os.replace(scratch[0], directory / SAVED)
            self._codes.tofile(scratch[1])
            os.replace(scratch[1], directory / SAVED_CODES)
            scratch[2].write_text(json.dumps(meta), encoding="utf-8")
            os.replace(scratch[2], directory / SAVED_META)
        except (OSError, RuntimeError) as exc:  # faiss raises RuntimeError for its I/O
            for leftover in scratch:
                leftover.unlink(missing_ok=True)
            logger.warning("the vector index was not saved (%s); the next start builds it again", exc)
            return False
        with contextlib.suppress(OSError, ValueError):  # else the copy in memory serves
            self._codes = mapped_codes(directory / SAVED_CODES, self.rows, space.dim)
        return True

    @classmethod
    def load(cls, space: VectorSpace) -> IvfIndex | None:
        """The saved index when it was built on this space's rows, still the same (same ids at
        the sampled rows, same model), in this version's format and not too far behind (at most
        :data:`MAX_TAIL_ROWS` rows appended since); ``None`` otherwise, and the caller builds."""
        directory = space.directory
        try:
            meta = json.loads((directory / SAVED_META).read_text(encoding="utf-8"))
            rows = int(meta["rows"])
            fingerprint = str(meta["fingerprint"])
            nprobe = int(meta["nprobe"])
            recall = None if meta.get("recall") is None else float(meta["recall"])
            widths = np.asarray(meta["widths"], dtype=np.float32)
            saved_format = meta.get("format")
        except (OSError, ValueError, KeyError, TypeError):
            return None
        if saved_format != FORMAT or widths.shape != (space.dim,):
            return None
        if not 0 < rows <= len(space) or len(space) - rows > MAX_TAIL_ROWS:
            return None
        if prefix_fingerprint(space, rows) != fingerprint:
            return None
        try:
            if (directory / SAVED_CODES).stat().st_size != rows * space.dim:
                return None
            index = _faiss().read_index(str(directory / SAVED))
        except (OSError, RuntimeError, ValueError):
            return None
        if not isinstance(index, _faiss().IndexIVFPQFastScan):
            return None
        if int(index.ntotal) != rows or int(index.d) != space.dim:
            return None
        try:
            # mapped (and read ahead) only once the first pass is in and fits: the read-ahead
            # would hold up its allocations (they wait for the same address-space lock; a
            # ten-million-row first answer took 7 s), and a refused index needs no codes
            codes = mapped_codes(directory / SAVED_CODES, rows, space.dim)
        except (OSError, ValueError):
            return None
        loaded = cls(file_id(directory / "vectors.f32"), rows, index, codes, widths)
        loaded.nprobe = nprobe
        loaded.recall = recall
        return loaded

    def candidates(
        self, query: FloatArray, n: int, mask: BoolArray | None, nprobe: int, kept: int
    ) -> IntArray:
        """First pass: up to ``n`` rows of the prefix with the best 4-bit scores, among the
        ``kept`` rows ``mask`` keeps, from the ``nprobe`` lists nearest the query (more when
        ``mask`` removes rows). Many lists are split into slices scanned side by side
        (:meth:`threads`)."""
        faiss = _faiss()
        q = np.ascontiguousarray(query, dtype=np.float32).reshape(1, -1)
        bitmap = None
        if mask is not None:
            if kept == 0:
                return np.zeros(0, dtype=np.int64)
            bitmap = np.packbits(mask, bitorder="little")
        probes = self.probes(nprobe, kept)
        n = min(n, self.rows)

        def scan(lists: IntArray | None, closeness: FloatArray | None) -> tuple[FloatArray, IntArray]:
            faiss.omp_set_num_threads(1)  # per calling thread: the parallelism is the slices
            # the selector reads ``bitmap``, which stays bound until this search returns
            selector = None if bitmap is None else faiss.IDSelectorBitmap(self.rows, faiss.swig_ptr(bitmap))
            if lists is None or closeness is None:
                params = faiss.SearchParametersIVF(nprobe=probes, sel=selector)
                scores, found = self._index.search(q, n, params=params)
            else:
                params = faiss.SearchParametersIVF(nprobe=len(lists), sel=selector)
                scores = np.empty((1, n), dtype=np.float32)
                found = np.empty((1, n), dtype=np.int64)
                # the C++ call: the Python wrapper of ``search_preassigned`` takes no parameters
                # (so neither the slice's nprobe nor the filter); every array stays bound here
                self._index.search_preassigned_c(
                    1,
                    faiss.swig_ptr(q),
                    n,
                    faiss.swig_ptr(lists),
                    faiss.swig_ptr(closeness),
                    faiss.swig_ptr(scores),
                    faiss.swig_ptr(found),
                    False,
                    params,
                )
            return scores[0], found[0]

        slices = min(probes, self.threads(probes))
        if slices == 1:
            _, found = scan(None, None)
        else:
            # interleaved, so each slice gets near and far lists alike
            closeness, lists = self._index.quantizer.search(q, probes)
            parts = list(
                pool().map(
                    scan,
                    [np.ascontiguousarray(lists[0][s::slices]) for s in range(slices)],
                    [np.ascontiguousarray(closeness[0][s::slices]) for s in range(slices)],
                )
            )
            scores = np.concatenate([part[0] for part in parts])
            found = np.concatenate([part[1] for part in parts])
            if len(found) > n:
                found = found[np.argpartition(-scores, n - 1)[:n]]
        hits: IntArray = np.asarray(found, dtype=np.int64)
        return hits[hits >= 0]

    def shortlist(self, query: FloatArray, nominated: IntArray, count: int) -> IntArray:
        """Second pass: the ``count`` of the ``nominated`` rows with the best 8-bit scores.

        A row decodes to ``low + (code + 0.5) * widths / 255`` per dimension, so its score
        against ``query`` is ``codes @ (query * widths) / 255`` plus a term every row shares:
        the ranking needs one uint8 gather and one product."""
        if len(nominated) <= count:
            return nominated
        rows = np.sort(nominated)  # the codes are read front to back
        weights = np.asarray(query, dtype=np.float32) * self._widths
        approx = np.empty(len(rows), dtype=np.float32)
        # in blocks that stay in the cache: gathering and widening all 3,000-odd rows at once
        # wrote 7 MB of floats and took a third longer
        block = np.empty((_SHORTLIST_BLOCK, len(weights)), dtype=np.float32)
        for start in range(0, len(rows), _SHORTLIST_BLOCK):
            part = rows[start : start + _SHORTLIST_BLOCK]
            np.copyto(block[: len(part)], self._codes[part], casting="unsafe")
            approx[start : start + len(part)] = block[: len(part)] @ weights
        kept: IntArray = rows[np.argpartition(-approx, count - 1)[:count]]
        return kept

    def probes(self, nprobe: int, kept: int) -> int:
        """Lists to probe when a mask keeps ``kept`` of the rows: ``nprobe`` raised in
        proportion to the rows removed, so about as many eligible rows are compared."""
        return min(self.nlist, math.ceil(nprobe * self.rows / max(1, kept)))

    def scanned_rows(self, probes: int) -> int:
        """Rows the first pass compares probing ``probes`` lists (on average)."""
        return probes * self.rows // max(1, self.nlist)

    def threads(self, probes: int) -> int:
        """Slices a search probing ``probes`` lists is split into (:func:`search_threads`)."""
        return search_threads(self.scanned_rows(probes))

    def search(
        self,
        space: VectorSpace,
        query: FloatArray,
        k: int,
        mask: BoolArray | None,
        *,
        nprobe: int | None = None,
    ) -> tuple[IntArray, FloatArray]:
        """Top-``k`` rows of ``space`` best first with exact scores (rows past the prefix are all
        scored exactly: the tail is small by construction)."""
        prefix_mask = None if mask is None else mask[: self.rows]
        nprobe = nprobe or self.nprobe
        eligible = self.rows if prefix_mask is None else int(np.count_nonzero(prefix_mask))
        if prefix_mask is not None and self.codes_first(nprobe, eligible):
            nominated = np.flatnonzero(prefix_mask)
        else:
            nominated = self.candidates(query, first_pass_count(k), prefix_mask, nprobe, eligible)
        kept = self.shortlist(query, nominated, candidate_count(k))
        return rescore(space, self.rows, kept, query, k, mask)

    def codes_first(self, nprobe: int, kept: int) -> bool:
        """Whether a mask keeping ``kept`` rows skips the first pass: every kept row goes to
        the second (their 8-bit codes), which costs :data:`SECOND_PASS_ROW_COST` first-pass
        rows each but reads no other row, where the first pass probes more lists the fewer
        rows the mask keeps (every list, at ten million rows, for a mask of 28,000)."""
        return kept * SECOND_PASS_ROW_COST < self.scanned_rows(self.probes(nprobe, kept))


class Index(Protocol):
    """What the engine asks of a space's index (:class:`IvfIndex` or the flat 8-bit scan)."""

    kind: str
    file_id: tuple[int, int]
    rows: int

    def search(
        self, space: VectorSpace, query: FloatArray, k: int, mask: BoolArray | None
    ) -> tuple[IntArray, FloatArray]: ...


def rescore(
    space: VectorSpace, prefix: int, nominated: IntArray, query: FloatArray, k: int, mask: BoolArray | None
) -> tuple[IntArray, FloatArray]:
    """The best ``k`` of the ``nominated`` rows and of every row past ``prefix`` (what ``mask``
    keeps of them), best first, scored exactly.

    Nominated rows are read with positioned reads (:meth:`VectorSpace.read_rows`); the tail,
    contiguous, is scored straight from the mapping (reading 50,000 tail rows one by one took
    half a second).
    """
    q = np.asarray(query, dtype=np.float32)
    rows = np.unique(nominated)  # sorted: the file is read front to back
    scores = np.asarray(space.read_rows(rows) @ q, dtype=np.float32)
    if len(space) > prefix:
        tail = np.arange(prefix, len(space), dtype=np.int64)
        tail_scores = np.asarray(space.matrix[prefix:] @ q, dtype=np.float32)
        if mask is not None:
            keep = mask[prefix:]
            tail, tail_scores = tail[keep], tail_scores[keep]
        rows = np.concatenate([rows, tail])
        scores = np.concatenate([scores, tail_scores])
    order = np.lexsort((rows, -scores))[:k]
    return rows[order], scores[order]


# -- calibration ---------------------------------------------------------------------------------

TARGET_RECALL = 0.98
"""Recall@10 the calibration asks on its own queries, which are harder than real ones: on the
bench's real-like 200k rows, 0.98 on them came with 0.9925 on the evaluation set's real queries
(bench/vector_index.py); the goal is 0.99 on real queries."""

CALIBRATION_QUERIES = 64
MAX_PROBED_SHARE = 0.25
"""An inverted file probing more than this share of its lists is no faster than the flat scan."""

_QUERY_NOISE = 0.5


def calibration_queries(space: VectorSpace, count: int = CALIBRATION_QUERIES) -> FloatArray:
    """Queries drawn from the data, as hard as real ones: each is the midpoint of two rows far
    apart in the file (two topics: its nearest rows lie in the lists of both) moved off it by
    isotropic noise. A row itself would be too easy (its own list always holds it), and the
    evaluation set's real queries are no nearer any post than these (best cosine 0.42-0.45
    with the default model)."""
    rng = np.random.default_rng(len(space))
    n = min(count, len(space))
    first = np.linspace(0, len(space) - 1, n).astype(np.int64)
    second = (first + len(space) // 2 + 1) % len(space)
    middle = space.read_rows(first) + space.read_rows(second)
    middle /= np.maximum(np.linalg.norm(middle, axis=1, keepdims=True), 1e-12)
    noise = rng.standard_normal(middle.shape).astype(np.float32)
    noise /= np.linalg.norm(noise, axis=1, keepdims=True)
    queries = middle + np.float32(_QUERY_NOISE) * noise
    result: FloatArray = (queries / np.linalg.norm(queries, axis=1, keepdims=True)).astype(np.float32)
    return result


def exact_top(space: VectorSpace, queries: FloatArray, k: int, rows: int) -> IntArray:
    """Exact top-``k`` rows of ``[0, rows)`` per query (in no particular order), reading the
    file in chunks."""
    best_scores = np.full((len(queries), k), -np.inf, dtype=np.float32)
    best_rows = np.zeros((len(queries), k), dtype=np.int64)
    with open(space.directory / "vectors.f32", "rb") as handle:
        for start in range(0, rows, _READ_ROWS):
            stop = min(rows, start + _READ_ROWS)
            scores = queries @ _read(handle, space.dim, start, stop).T
            merged = np.concatenate([best_scores, scores], axis=1)
            ids = np.concatenate(
                [best_rows, np.broadcast_to(np.arange(start, stop), (len(queries), stop - start))], axis=1
            )
            # partition, not sort: the calibration compares sets, and sorting 65,546 scores per
            # query per chunk was most of a calibration's time (7 of 11 s at a million rows)
            pick = np.argpartition(-merged, k - 1, axis=1)[:, :k]
            best_scores = np.take_along_axis(merged, pick, axis=1)
            best_rows = np.take_along_axis(ids, pick, axis=1)
    return best_rows


def calibrate(index: IvfIndex, space: VectorSpace, k: int = 10) -> tuple[int | None, dict[int, float]]:
    """The fewest lists to probe for :data:`TARGET_RECALL` on :func:`calibration_queries`
    (``None`` when even :data:`MAX_PROBED_SHARE` of the lists falls short), and the recall
    measured at each ``nprobe`` tried."""
    queries = calibration_queries(space)
    truth = exact_top(space, queries, k, index.rows)
    measured: dict[int, float] = {}
    for nprobe in probe_steps(max(4, int(index.nlist * MAX_PROBED_SHARE))):
        hits = 0
        for q, want in zip(queries, truth, strict=True):
            rows, _ = index.search(space, q, k, None, nprobe=nprobe)
            hits += len(set(rows.tolist()) & set(want.tolist()))
        measured[nprobe] = hits / (k * len(queries))
        if measured[nprobe] >= TARGET_RECALL:
            return nprobe, measured
    return None, measured


def probe_steps(limit: int) -> list[int]:
    """The ``nprobe`` values calibration tries: 4, 5, 6, 7, 8, 10, 12, 14, 16, 20... up to
    ``limit``, quarter steps between powers of two.

    Why not doubling: a query's time is proportional to the lists it probes, and doubling
    overshoots by up to twice what the target needs (at a million rows 64 lists reached recall
    0.978 and 128 0.984, against a target of 0.98). Each step tried costs one pass of the
    calibration queries, cheap at the small steps where most are."""
    steps: list[int] = []
    nprobe = 4
    while nprobe <= limit:
        steps.extend(p for p in dict.fromkeys(nprobe * q // 4 for q in (4, 5, 6, 7)) if p <= limit)
        nprobe *= 2
    return steps
