"""Search quality on the evaluation set: MRR@10 and recall@10 per mode and query class.

    python bench/quality.py               # ~30 s on 2 cores: the table, hubs, "no good match"
    python bench/quality.py --variants    # also the fusion and hub-correction alternatives

The "no good match" thresholds are fitted on this set and on real exports together by
``python bench/verdict.py --fit``; this bench reports how the served verdict does here.

The corpus and the judged queries are tests/search_quality/ (built, imported and embedded with the
default model through the archive's own paths). Modes:

* ``text``: upstream's text search (every term, newest first) with the query as its terms;
* ``text-idf``: the hybrid's text side alone (trigram IDF coverage, :func:`ranking.text_hits`);
* ``vector``: upstream's ``content`` mode (cosine);
* ``hybrid``: mcpkit's ``hybrid`` mode as served (``Engine.search_similar``).

Classes: ja, en, cross (query and posts in different languages), mixed (code-switched posts),
keyword (a rare term written in the posts), none (no answer: MRR is not defined, the table
shows how often the best hit says "no good match" instead).
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the evaluation set lives in tests/


from mcpkit.archive import ranking
from mcpkit.archive.engine import Engine
from mcpkit.archive.posts import dedup_key
from mcpkit.archive.settings import SearchSettings
from tests.search_quality.corpus import Corpus, Judged, build_archive, build_corpus
from tests.search_quality.topics import QUERY_CLASSES

K = 10
Ranker = Callable[[Judged], list[int]]


def mrr_recall(ranked: Sequence[int], relevant: frozenset[int]) -> tuple[float, float]:
    top = list(ranked[:K])
    first = next((i for i, post_id in enumerate(top) if post_id in relevant), None)
    mrr = 0.0 if first is None else 1.0 / (first + 1)
    return mrr, len(relevant.intersection(top)) / len(relevant)


class Bench:
    def __init__(self, engine: Engine, corpus: Corpus) -> None:
        self.engine = engine
        self.corpus = corpus
        self.space = engine.require_space("content")
        self.embedder = engine.embedder_for(self.space.model)
        self.hubness = ranking.hubness(self.space.directory, self.space.matrix)
        self.matrix = np.asarray(self.space.matrix)
        self.ids = np.asarray(self.space.ids)
        self.row_of = {int(post_id): row for row, post_id in enumerate(self.ids)}
        texts = self.engine.store.posts_by_ids([int(i) for i in self.ids], enrich=False)
        self.keys = [dedup_key(texts[int(i)]["user"], texts[int(i)]["content"]) for i in self.ids]
        self.short = ranking.brevity(texts[int(i)]["content"] for i in self.ids)
        self._q: dict[str, np.ndarray] = {}
        self._hits: dict[str, ranking.TextHits] = {}
        self._served: dict[str, list[dict[str, Any]]] = {}

    # -- primitives ----------------------------------------------------------------------------

    def qvec(self, query: str) -> np.ndarray:
        if query not in self._q:
            self._q[query] = np.asarray(self.embedder.embed_query(query), dtype=np.float32).reshape(-1)
        return self._q[query]

    def hits(self, query: str) -> ranking.TextHits:
        if query not in self._hits:
            self._hits[query] = ranking.text_hits(
                self.engine.store.reader, "fts_content", query, len(self.space)
            )
        return self._hits[query]

    def served(self, query: str, mode: str) -> list[dict[str, Any]]:
        key = f"{mode}\0{query}"
        if key not in self._served:
            self._served[key] = self.engine.search_similar(query, SearchSettings(top_k=K), mode=mode)
        return self._served[key]

    def dedup(self, rows: Any) -> list[int]:
        seen: set[Any] = set()
        out: list[int] = []
        for row in rows:
            key = self.keys[row]
            if key not in seen:
                seen.add(key)
                out.append(int(self.ids[row]))
        return out

    def vector_rows(self, query: str, gamma: float, pool: int = ranking.POOL) -> np.ndarray:
        """Rows by ``cos - gamma * hubness`` (gamma 0: plain cosine), exact over every row."""
        scores = self.matrix @ self.qvec(query) - np.float32(gamma) * self.hubness
        if gamma:
            scores -= np.float32(ranking.BREVITY) * self.short
        return np.argsort(-scores, kind="stable")[:pool]

    def text_rows(self, query: str, gate: float, pool: int = ranking.POOL) -> np.ndarray:
        hits = self.hits(query)
        rows = np.asarray([self.row_of.get(int(i), -1) for i in hits.post_ids[hits.coverage >= gate]])
        return rows[rows >= 0][:pool].astype(np.int64)

    # -- rankers -------------------------------------------------------------------------------

    def modes(self, variants: bool) -> dict[str, Ranker]:
        store = self.engine.store

        def text_and(judged: Judged) -> list[int]:
            posts = self.engine.search_posts_by_text(judged.query, limit=K)
            return [int(p["post_id"]) for p in posts]

        out: dict[str, Ranker] = {
            "text": text_and,
            "text-idf": lambda j: self.dedup(self.text_rows(j.query, 0.0)),
            "vector": lambda j: [int(r["post"]["post_id"]) for r in self.served(j.query, "content")],
            "hybrid": lambda j: [int(r["post"]["post_id"]) for r in self.served(j.query, ranking.HYBRID)],
        }
        del store
        if not variants:
            return out

        def rrf(gate: float, gamma: float, k: int = ranking.RRF_K) -> Ranker:
            def rank(j: Judged) -> list[int]:
                fused = ranking.fuse(
                    len(self.ids), self.vector_rows(j.query, gamma), self.text_rows(j.query, gate), k=k
                )
                order = np.argsort(-fused, kind="stable")
                return self.dedup(order[np.isfinite(fused[order])])

            return rank

        def convex(alpha: float, gamma: float) -> Ranker:
            """alpha * min-max(vector score) + (1 - alpha) * text coverage (Bruch et al., 2022)."""

            def rank(j: Judged) -> list[int]:
                scores = self.matrix @ self.qvec(j.query) - np.float32(gamma) * self.hubness
                scores -= np.float32(ranking.BREVITY) * self.short
                low, high = float(scores.min()), float(scores.max())
                combined = alpha * (scores - low) / max(high - low, 1e-9)
                hits = self.hits(j.query)
                rows = np.asarray([self.row_of.get(int(i), -1) for i in hits.post_ids], dtype=np.int64)
                keep = rows >= 0
                combined[rows[keep]] += (1 - alpha) * hits.coverage[keep]
                return self.dedup(np.argsort(-combined, kind="stable")[: K * 3])

            return rank

        def centred(beta: float) -> Ranker:
            """Centering (Suzuki et al., 2013): rank by ``d·(q - beta·mean)``."""
            mean = self.matrix.mean(axis=0)

            def rank(j: Judged) -> list[int]:
                scores = self.matrix @ (self.qvec(j.query) - np.float32(beta) * mean)
                return self.dedup(np.argsort(-scores, kind="stable")[: K * 3])

            return rank

        gamma = ranking.HUB_GAMMA
        out.update(
            {
                "vector+hubfix": lambda j: self.dedup(self.vector_rows(j.query, gamma)),
                "vector+hubfix.5": lambda j: self.dedup(self.vector_rows(j.query, 0.5)),
                "vector+centre": centred(1.0),
                "rrf-nohub": rrf(ranking.TEXT_GATE, 0.0),
                "rrf-ungated": rrf(0.0, gamma),
                "rrf-gate.3": rrf(0.3, gamma),
                "rrf-gate.7": rrf(0.7, gamma),
                "rrf-k10": rrf(ranking.TEXT_GATE, gamma, 10),
                "rrf-k30": rrf(ranking.TEXT_GATE, gamma, 30),
                "convex.5": convex(0.5, gamma),
                "convex.7": convex(0.7, gamma),
            }
        )
        return out

    # -- reports -------------------------------------------------------------------------------

    def table(self, rankers: dict[str, Ranker]) -> dict[str, dict[str, tuple[float, float]]]:
        classes = [c for c in QUERY_CLASSES if c != "none"]
        result: dict[str, dict[str, tuple[float, float]]] = {}
        counts = {c: sum(1 for j in self.corpus.queries if j.query_class == c) for c in classes}
        counts["all"] = sum(counts.values())
        header = f"{'mode':<14}" + "".join(f"{c + f' ({counts[c]})':>16}" for c in [*classes, "all"])
        print(f"MRR@{K} / recall@{K}")
        print(header)
        for name, ranker in rankers.items():
            per: dict[str, list[tuple[float, float]]] = {c: [] for c in classes}
            for judged in self.corpus.queries:
                if judged.query_class in per:
                    per[judged.query_class].append(mrr_recall(ranker(judged), judged.relevant))
            per["all"] = [pair for c in classes for pair in per[c]]
            result[name] = {c: tuple(np.mean(v, axis=0).tolist()) for c, v in per.items()}
            print(f"{name:<14}" + "".join(f"{m:>9.3f} /{r:>5.2f}" for m, r in (result[name][c] for c in per)))
        return result

    def report_hubs(self) -> None:
        """How often hubs take the best place, and the skew of the k-occurrence distribution
        (each post used as a query against all others: a hub is in very many top-10s)."""
        hubs = self.corpus.hub_ids
        none = [j for j in self.corpus.queries if j.query_class == "none"]
        print("\nhubs (short/boilerplate posts):")
        for name, gamma in (("vector (cosine)", 0.0), ("vector csls+len", ranking.HUB_GAMMA)):
            first = sum(1 for j in none if self.dedup(self.vector_rows(j.query, gamma))[0] in hubs)
            allq = sum(
                1 for j in self.corpus.queries if self.dedup(self.vector_rows(j.query, gamma))[0] in hubs
            )
            scores = self.matrix @ self.matrix.T - np.float32(gamma) * self.hubness[:, None]
            if gamma:
                scores -= np.float32(ranking.BREVITY) * self.short[:, None]
            np.fill_diagonal(scores, -np.inf)
            top = np.argpartition(-scores, K, axis=0)[:K]
            occurrence = np.bincount(top.ravel(), minlength=len(self.ids)).astype(np.float64)
            skew = float(((occurrence - occurrence.mean()) ** 3).mean() / occurrence.std() ** 3)
            hub_rows = np.isin(self.ids, list(hubs))
            share = occurrence[hub_rows].sum() / occurrence.sum()
            print(
                f"  {name:<16} hub first for {first}/{len(none)} no-answer queries, {allq}/"
                f"{len(self.corpus.queries)} of all; k-occurrence skew {skew:.2f}; hubs hold "
                f"{share:.1%} of top-{K} places ({hub_rows.mean():.1%} of posts)"
            )
        served = sum(
            1
            for j in none
            if (self.served(j.query, ranking.HYBRID) or [{}])[0].get("post", {}).get("post_id") in hubs
        )
        print(f"  hybrid (served)  hub first for {served}/{len(none)} no-answer queries")

    def no_good_match(self) -> None:
        """How often the served verdict of the best hybrid hit is right (the thresholds:
        bench/verdict.py --fit)."""
        calibration = ranking.calibration_for(self.space.model)
        print(
            f'\n"no good match" ({self.space.model}: {calibration.as_dict() if calibration else "not calibrated"}):'
        )
        if calibration is None:
            return
        rows = []
        for judged in self.corpus.queries:
            found = self.served(judged.query, ranking.HYBRID)
            if found:
                rows.append(
                    (bool(found[0]["match"]), int(found[0]["post"]["post_id"]) in judged.relevant, judged)
                )
        for label, keep in (
            ("best hit relevant -> match", lambda f: f[1]),
            ("no-answer query -> no match", lambda f: f[2].query_class == "none"),
            ("best hit not relevant -> no match", lambda f: not f[1]),
        ):
            chosen = [f for f in rows if keep(f)]
            want = label.endswith("-> match")
            right = sum(1 for f in chosen if f[0] == want)
            print(f"  {label:<36} {right}/{len(chosen)}")


def reuse_or_build(directory: Path) -> tuple[Path, Corpus]:
    """The archive of the current corpus in ``directory``, built unless it is already there
    (a fingerprint of every row and query says whether the built one is this corpus)."""
    corpus = build_corpus()
    fingerprint = hashlib.sha256(repr((corpus.rows, corpus.queries)).encode()).hexdigest()
    directory.mkdir(parents=True, exist_ok=True)
    stamp = directory / "corpus.sha256"
    db = directory / "quality.db"
    if db.exists() and stamp.exists() and stamp.read_text() == fingerprint:
        return db, corpus
    for stale in directory.glob("quality.db*"):
        shutil.rmtree(stale) if stale.is_dir() else stale.unlink()
    db, corpus = build_archive(directory, corpus)
    stamp.write_text(fingerprint)
    return db, corpus


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--variants", action="store_true", help="also print fusion/hub alternatives")
    parser.add_argument("--work", type=Path, help="build the archive here once and reuse it")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        db, corpus = reuse_or_build(args.work or Path(tmp))
        engine = Engine.open(db, exact=True)
        bench = Bench(engine, corpus)
        print(
            f"corpus: {len(corpus.rows)} posts ({len(corpus.hub_ids)} hub-like), {len(corpus.queries)} "
            f"judged queries, model {bench.space.model}; built in {time.perf_counter() - started:.1f} s\n"
        )
        result = bench.table(bench.modes(args.variants))
        best_single = {
            c: max(result[m][c][0] for m in ("text", "text-idf", "vector")) for c in result["hybrid"]
        }
        behind = [c for c, v in result["hybrid"].items() if v[0] + 1e-9 < best_single[c]]
        print(
            f"hybrid >= best single mode (MRR@{K}) on every class: {'yes' if not behind else 'NO: ' + ', '.join(behind)}"
        )
        bench.report_hubs()
        bench.no_good_match()
        engine.close()


if __name__ == "__main__":
    main()
