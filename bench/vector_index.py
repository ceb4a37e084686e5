"""Vector index comparison: which index the archive uses, measured side by side on one machine.

    python bench/vector_index.py --rows 200000                    # a couple of minutes on 2 cores
    python bench/vector_index.py --rows 1000000 --work /tmp/vi    # the data kept for the next run

Every backend answers the same queries over the same unit vectors (dim 512, the default model's);
recall@10 is against the exact top-10 (numpy brute force). Two kinds of data:

* ``clustered``: real-like. Anchors are real embeddings, by the default model, of the evaluation
  corpus (tests/search_quality: 3,022 posts in Japanese and English) and queries are its 100
  judged queries; each post vector mixes two anchors with noise, so posts form topics that blend
  into each other as real posts do. The data's own statistics (mean cosine of two posts, of a
  post's 10th nearest neighbour) are printed beside the real corpus's. The anchors are embedded
  once per work directory (about 10 s on a quiet machine) and kept there.
* ``random``: Gaussian unit vectors, the worst case for any index (no structure to exploit).

Backends: numpy matmul + argpartition (exact); the archive's quantised scan (8-bit codes,
exact re-score; scan_index); faiss IVF whose 4-bit fast-scan codes nominate, 8-bit codes
re-rank and float32 rows decide (what :mod:`mcpkit.archive.vector_index` builds) at several
nprobe; faiss HNSW; usearch (int8 + exact
re-score) and hnswlib when installed (neither is a dependency). The load average is printed
before and after: the figures mean something only beside it.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mcpkit.archive import scan_index, vector_index
from mcpkit.archive.embedders import normalize_rows
from mcpkit.archive.vectors import SpaceWriter, VectorSpace

DIM = 512
K = 10


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


# -- data ------------------------------------------------------------------------------------------


def anchors(work: Path) -> tuple[np.ndarray, np.ndarray]:
    """Real embeddings of the evaluation corpus's posts and queries (cached in ``work``)."""
    docs, queries = work / "anchors-docs.npy", work / "anchors-queries.npy"
    if not docs.exists():
        from mcpkit.archive.embedders import create_embedder
        from tests.search_quality.corpus import build_corpus

        corpus = build_corpus()
        embedder = create_embedder(None)
        t0 = time.perf_counter()
        d = normalize_rows(embedder.embed_documents([text for _, _, text in corpus.rows]))
        q = normalize_rows(np.vstack([embedder.embed_query(j.query) for j in corpus.queries]))
        print(f"embedded the anchors in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
        np.save(queries, q)
        np.save(docs, d)
    return np.load(docs), np.load(queries)


def clustered(
    rows: int, queries: int, work: Path, seed: int
) -> tuple[Callable[[int, int], np.ndarray], np.ndarray]:
    """A generator of rows ``[lo, hi)`` (deterministic per chunk) and the query vectors."""
    docs, real_queries = anchors(work)

    def chunk(lo: int, hi: int) -> np.ndarray:
        rng = np.random.default_rng([seed, lo])
        n = hi - lo
        a = docs[rng.integers(0, len(docs), n)]
        b = docs[rng.integers(0, len(docs), n)]
        mix = rng.uniform(0.0, 0.5, (n, 1)).astype(np.float32)
        noise = rng.standard_normal((n, DIM), dtype=np.float32) * np.float32(0.55 / np.sqrt(DIM))
        return normalize_rows((1 - mix) * a + mix * b + noise)

    rng = np.random.default_rng([seed, 2**40])
    picked = real_queries[rng.integers(0, len(real_queries), queries)]
    noise = rng.standard_normal((queries, DIM), dtype=np.float32) * np.float32(0.3 / np.sqrt(DIM))
    return chunk, normalize_rows(picked + noise)


def random_data(rows: int, queries: int, seed: int) -> tuple[Callable[[int, int], np.ndarray], np.ndarray]:
    def chunk(lo: int, hi: int) -> np.ndarray:
        return normalize_rows(
            np.random.default_rng([seed, lo]).standard_normal((hi - lo, DIM), dtype=np.float32)
        )

    rng = np.random.default_rng([seed, 2**40])
    return chunk, normalize_rows(rng.standard_normal((queries, DIM), dtype=np.float32))


def write_space(root: Path, rows: int, chunk: Callable[[int, int], np.ndarray]) -> VectorSpace:
    """The rows as an archive vector space (reused when already written)."""
    space = VectorSpace.open(root, "content")
    if space is not None and len(space) == rows:
        return space
    from mcpkit.archive.vectors import drop_space

    drop_space(root, "content")
    writer = SpaceWriter(root, "content", "bench", DIM)
    step = 100_000
    for lo in range(0, rows, step):
        hi = min(rows, lo + step)
        writer.append(np.arange(lo + 1, hi + 1, dtype=np.int64), chunk(lo, hi))
    opened = VectorSpace.open(root, "content")
    assert opened is not None
    return opened


def statistics(space: VectorSpace, queries: np.ndarray) -> str:
    sample = np.asarray(space.read_rows(np.linspace(0, len(space) - 1, 2000).astype(np.int64)))
    s = sample @ sample.T
    np.fill_diagonal(s, np.nan)
    pair = float(np.nanmean(s))
    head = np.asarray(space.matrix[: min(len(space), 200_000)])
    tenth = float(np.mean(np.sort(sample[:200] @ head.T, axis=1)[:, -11]))  # itself is first
    q = np.sort(queries[:50] @ head.T, axis=1)
    return f"mean cosine of two posts {pair:.2f}; of a post's 10th neighbour (in 200k) {tenth:.2f}; query's best {float(q[:, -1].mean()):.2f}"


def exact(space: VectorSpace, queries: np.ndarray) -> np.ndarray:
    """Top-10 rows per query by brute force, read in chunks."""
    best_s = np.full((len(queries), K), -np.inf, dtype=np.float32)
    best_r = np.zeros((len(queries), K), dtype=np.int64)
    step = 200_000
    for lo in range(0, len(space), step):
        part = np.asarray(space.matrix[lo : lo + step]) @ queries.T  # rows x queries
        s = np.concatenate([best_s, part.T], axis=1)
        r = np.concatenate(
            [best_r, np.broadcast_to(np.arange(lo, lo + len(part)), (len(queries), len(part)))], axis=1
        )
        pick = np.argsort(-s, axis=1, kind="stable")[:, :K]
        best_s = np.take_along_axis(s, pick, axis=1)
        best_r = np.take_along_axis(r, pick, axis=1)
    return best_r


# -- backends: each returns (build seconds, search(query) -> rows, note) ----------------------------


Search = Callable[[np.ndarray], np.ndarray]


def numpy_brute(space: VectorSpace) -> tuple[float, Search, str]:
    t0 = time.perf_counter()
    matrix = np.array(space.matrix)
    built = time.perf_counter() - t0

    def search(q: np.ndarray) -> np.ndarray:
        scores = matrix @ q
        top = np.argpartition(-scores, K)[:K]
        return top[np.argsort(-scores[top])]

    return built, search, "float32 in memory"


def quantised_scan(space: VectorSpace) -> tuple[float, Search, str]:
    t0 = time.perf_counter()
    scan = scan_index.QuantisedScan.build(space)
    built = time.perf_counter() - t0
    return built, lambda q: scan_index.search(space, scan, q, K, None)[0], "today's first pass"


def as_built(space: VectorSpace) -> tuple[float, Search, str]:
    """What the archive builds: the inverted file with its calibrated nprobe, or the flat scan."""
    t0 = time.perf_counter()
    index = scan_index.build_index(space)
    built = time.perf_counter() - t0
    if isinstance(index, vector_index.IvfIndex):
        note = f"IVF{index.nlist} nprobe {index.nprobe} (sample recall {index.recall:.3f})"
    else:
        note = index.kind
    return built, lambda q: index.search(space, q, K, None)[0], note


def ivf(space: VectorSpace, nprobes: tuple[int, ...]) -> list[tuple[str, float, Search, str]]:
    t0 = time.perf_counter()
    index = vector_index.IvfIndex.build(space)
    built = time.perf_counter() - t0
    out = []
    for nprobe in nprobes:
        out.append(
            (
                f"faiss IVF{index.nlist},PQ4 fast scan nprobe {nprobe} + SQ8 + re-score",
                built,
                (lambda q, p=nprobe: index.search(space, q, K, None, nprobe=p)[0]),
                f"{index.code_bytes / 2**20:,.0f} MiB codes",
            )
        )
    return out


def faiss_hnsw(space: VectorSpace, efs: tuple[int, ...]) -> list[tuple[str, float, Search, str]]:
    import faiss

    faiss.omp_set_num_threads(cores())
    index = faiss.IndexHNSWSQ(DIM, faiss.ScalarQuantizer.QT_8bit, 32, faiss.METRIC_INNER_PRODUCT)
    t0 = time.perf_counter()
    index.train(np.asarray(space.matrix[: min(len(space), 65536)]))
    for lo in range(0, len(space), 65536):
        index.add(np.asarray(space.matrix[lo : lo + 65536]))
    built = time.perf_counter() - t0
    out = []
    for ef in efs:

        def search(q: np.ndarray, ef: int = ef) -> np.ndarray:
            params = faiss.SearchParametersHNSW(efSearch=ef)
            _, found = index.search(q.reshape(1, -1), 4 * K, params=params)
            rows = found[0][found[0] >= 0].astype(np.int64)
            rows.sort()
            scores = space.read_rows(rows) @ q
            return rows[np.argsort(-scores, kind="stable")[:K]]

        out.append((f"faiss HNSW32,SQ8 ef {ef} + re-score", built, search, ""))
    return out


def usearch_index(space: VectorSpace, efs: tuple[int, ...]) -> list[tuple[str, float, Search, str]]:
    from usearch.index import Index

    index = Index(ndim=DIM, metric="ip", dtype="i8", connectivity=16)
    t0 = time.perf_counter()
    for lo in range(0, len(space), 65536):
        part = np.asarray(space.matrix[lo : lo + 65536])
        index.add(np.arange(lo, lo + len(part)), part, threads=cores())
    built = time.perf_counter() - t0
    out = []
    for ef in efs:
        index.expansion_search = ef

        def search(q: np.ndarray, ef: int = ef) -> np.ndarray:
            index.expansion_search = ef
            rows = np.sort(np.asarray(index.search(q, 4 * K).keys, dtype=np.int64))
            scores = space.read_rows(rows) @ q
            return rows[np.argsort(-scores, kind="stable")[:K]]

        out.append((f"usearch HNSW16 i8 ef {ef} + re-score", built, search, ""))
    return out


def hnswlib_index(space: VectorSpace, efs: tuple[int, ...]) -> list[tuple[str, float, Search, str]]:
    import hnswlib

    index = hnswlib.Index(space="ip", dim=DIM)
    index.init_index(max_elements=len(space), ef_construction=100, M=16)
    index.set_num_threads(cores())
    t0 = time.perf_counter()
    for lo in range(0, len(space), 65536):
        part = np.asarray(space.matrix[lo : lo + 65536])
        index.add_items(part, np.arange(lo, lo + len(part)))
    built = time.perf_counter() - t0
    index.set_num_threads(1)
    out = []
    for ef in efs:

        def search(q: np.ndarray, ef: int = ef) -> np.ndarray:
            index.set_ef(max(ef, K))
            labels, _ = index.knn_query(q, k=K)
            return labels[0].astype(np.int64)

        out.append((f"hnswlib HNSW16 f32 ef {ef}", built, search, "float32 in memory"))
    return out


BACKENDS = ("numpy", "scan", "mcpkit", "ivf", "hnsw", "usearch", "hnswlib")


def backend(key: str, space: VectorSpace, args: argparse.Namespace) -> list[tuple[str, float, Search, str]]:
    if key == "numpy":
        return [("numpy matmul + argpartition (exact)", *numpy_brute(space))]
    if key == "scan":
        return [("quantised scan + re-score (today)", *quantised_scan(space))]
    if key == "mcpkit":
        return [("mcpkit's index as built (calibrated)", *as_built(space))]
    if key == "ivf":
        return ivf(space, tuple(args.nprobe))
    if key == "hnsw":
        return faiss_hnsw(space, (32, 64, 128))
    if key == "usearch":
        return usearch_index(space, (64, 128, 256))
    return hnswlib_index(space, (64, 128, 256))


# -- measurement -------------------------------------------------------------------------------------


def measure(search: Search, queries: np.ndarray, truth: np.ndarray) -> tuple[float, float, float]:
    search(queries[0])
    times, hits = [], 0
    for i, q in enumerate(queries):
        t0 = time.perf_counter()
        rows = search(q)
        times.append(time.perf_counter() - t0)
        hits += len(set(np.asarray(rows[:K]).tolist()) & set(truth[i].tolist()))
    times.sort()
    p = lambda f: times[min(len(times) - 1, round(f * (len(times) - 1)))] * 1000  # noqa: E731
    return p(0.5), p(0.99), hits / (K * len(queries))


def thread_scaling(
    query: Callable[[int], object], count: int, index: object, rounds: int = 3
) -> dict[str, Any]:
    """One search's p50 and CPU time with the inverted file forced onto 1, 2, ... cores (up to
    this process's), interleaved over ``rounds`` so a burst of other load falls on all counts;
    and the count :func:`vector_index.search_threads` picks for ``index``'s unfiltered search.
    ``query(i)`` runs the i-th timed query (through the engine)."""
    policy = index.threads(index.nprobe) if isinstance(index, vector_index.IvfIndex) else None
    counts = sorted({1, cores()})
    walls: dict[int, list[float]] = {n: [] for n in counts}
    cpus: dict[int, list[float]] = {n: [] for n in counts}
    chosen = vector_index.search_threads
    try:
        for _ in range(rounds):
            for n in counts:
                vector_index.search_threads = lambda rows, cores=None, n=n: n  # type: ignore[misc]
                for i in range(count):
                    t0, c0 = time.perf_counter(), time.process_time()
                    query(i)
                    walls[n].append(time.perf_counter() - t0)
                    cpus[n].append(time.process_time() - c0)
    finally:
        vector_index.search_threads = chosen
    return {
        "policy_threads": policy,
        "p50_ms": {n: float(np.median(walls[n])) * 1000 for n in counts},
        "cpu_ms": {n: float(np.mean(cpus[n])) * 1000 for n in counts},
    }


def thread_line(scaling: dict[str, Any]) -> str:
    """One line for a bench's report: the threads a query used, and p50/CPU per forced count."""
    forced = ", ".join(
        f"{n} thread{'s' if n > 1 else ''} p50 {scaling['p50_ms'][n]:.1f} ms (CPU {scaling['cpu_ms'][n]:.1f} ms)"
        for n in scaling["p50_ms"]
    )
    return f"vector search threads per query: {scaling['policy_threads']} (the policy's); forced: {forced}"


def run(args: argparse.Namespace, work: Path) -> None:
    print(
        f"rows {args.rows:,}  dim {DIM}  cores {cores()}  load average {load()}  faiss threads: per backend"
    )
    for kind in args.data:
        root = work / f"{kind}-{args.rows}.vectors"
        chunk, queries = (
            clustered(args.rows, args.queries, work, args.seed)
            if kind == "clustered"
            else random_data(args.rows, args.queries, args.seed)
        )
        t0 = time.perf_counter()
        space = write_space(root, args.rows, chunk)
        truth = exact(space, queries)
        print(f"\n[{kind}] data ready in {time.perf_counter() - t0:.0f} s; {statistics(space, queries)}")
        print(f"{'backend':46} {'build s':>8} {'p50 ms':>7} {'p99 ms':>7} {'recall@10':>9}  notes")
        for key in BACKENDS:
            if key not in args.backends:
                continue
            try:
                variants = backend(key, space, args)
            except ImportError as exc:
                print(f"{key:46} not installed ({exc.name})")
                continue
            for name, built, search, note in variants:
                p50, p99, recall = measure(search, queries, truth)
                print(f"{name:46} {built:>8.1f} {p50:>7.2f} {p99:>7.2f} {recall:>9.3f}  {note}", flush=True)
            del variants
        print(f"load average after: {load()}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--data", nargs="+", default=["clustered", "random"], choices=["clustered", "random"])
    parser.add_argument(
        "--backends", nargs="+", default=list(BACKENDS), choices=BACKENDS,
    )  # fmt: skip
    parser.add_argument("--nprobe", type=int, nargs="+", default=[8, 16, 32, 64])
    parser.add_argument("--work", type=Path, default=None, help="keep the data here and reuse it")
    args = parser.parse_args()
    with contextlib.ExitStack() as stack:
        if args.work is None:
            work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="mcpkit-vi-")))
        else:
            work = args.work
            work.mkdir(parents=True, exist_ok=True)
        run(args, work)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
