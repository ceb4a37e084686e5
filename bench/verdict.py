"""The "no good match" verdict on real exports and on the synthetic set, in every search mode.

    python bench/verdict.py                  # the figures (about 2 min on 2 cores: builds and embeds)
    python bench/verdict.py --work DIR       # build the archives in DIR once and reuse them
    python bench/verdict.py --cost           # also: what the verdict adds to a search's time
    python bench/verdict.py --fit            # refit the model's thresholds (every set together),
                                             # print each language held out of the fit, write to
                                             # src/mcpkit/archive/data/calibration.json

Archives: each real export alone (tests/search_quality/real: an English and a Chinese Mastodon
archive, imported as the tar.gz people download), the two merged, and the synthetic evaluation
set (tests/search_quality). Questions: tests/search_quality/real/judged.py and the synthetic
set's judged queries. Every search goes through the archive API as the faces call it (mcpkit's
request: ``kind`` sent), top 10:

* ``meaning``: ``search_similar`` in the default (content) mode;
* ``hybrid``: ``search_similar`` in mcpkit's hybrid mode;
* ``text``: ``search_posts_by_text``; when no post holds every word, the verdict is the one the
  faces then show, hybrid's (a literal hit is a match by definition).

The verdict of a search is "match" when any of its results is one. Per set and language: how
often "no good match" is said for questions without an answer (higher is better) and for
questions with one (lower is better), and hit@5 (an answer among the first five results).
``before``: the rule this replaced (one cosine cut of 0.39, hybrid only; no verdict in meaning or
text mode), from the same searches.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the judged sets live in tests/

from mcpkit.archive import ranking
from mcpkit.archive.api import ArchiveAPI
from mcpkit.archive.filters import request_filters
from tests.search_quality.corpus import build_archive, build_corpus
from tests.search_quality.real.judged import QUESTIONS, status_id
from tests.search_quality.real.judged import build_archive as build_real_archive

TOP = 10
HIT_AT = 5
MODES = ("meaning", "hybrid", "text")
BEFORE = ranking.Calibration("before", similarity=0.3917, coverage=0.5)
GOAL_NONE = 0.8  # "no good match" for at least 8 in 10 questions without an answer
GOAL_SOME = 1 / 25  # and for at most 1 in 25 with one, per export, in every archive and mode


@dataclass(frozen=True)
class Asked:
    """One question of one set: what it is, and how to tell an answer."""

    group: str  # the language of the question (or its class in the synthetic set)
    query: str
    is_answer: Callable[[dict[str, Any]], bool]
    answerable: bool
    export: str = ""  # the language of the export asked (real sets): the goal holds per export


@dataclass
class Outcome:
    asked: Asked
    results: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # mode -> results
    literal: bool = False  # text mode: some post holds every word

    def hits(self, mode: str) -> list[dict[str, Any]]:
        return self.results.get(mode, [])

    def hit_at(self, mode: str, k: int = HIT_AT) -> bool:
        return any(self.asked.is_answer(r["post"]) for r in self.hits(mode)[:k])


def verdict(outcome: Outcome, mode: str, calibration: ranking.Calibration | None = None) -> bool | None:
    """True: a match; False: "no good match"; None: no verdict. ``calibration`` re-decides each
    hit from its measured features (fitting); None: the API's own ``match``."""

    def matched(results: Iterable[dict[str, Any]]) -> bool | None:
        flags = [
            r.get("match")
            if calibration is None
            else calibration.is_match(r.get("similarity"), r.get("text_match"), r.get("hubness"))
            for r in results
        ]
        if any(flag is None for flag in flags):
            return None
        return any(flags)

    if mode == "text":
        return True if outcome.literal else matched(outcome.hits("hybrid"))
    return matched(outcome.hits(mode))


def before(outcome: Outcome, mode: str) -> bool | None:
    """The replaced rule: hybrid's best hit against one cut; no verdict in the other modes."""
    if mode == "text":
        return True if outcome.literal else None
    if mode != "hybrid":
        return None
    best = outcome.hits("hybrid")[:1]
    return bool(best) and BEFORE.is_match(best[0].get("similarity"), best[0].get("text_match"))


# -- the sets ------------------------------------------------------------------------------------


def real_questions(langs: Sequence[str]) -> list[Asked]:
    out = []
    for q in QUESTIONS:
        if q.lang in langs:
            relevant = q.relevant
            out.append(
                Asked(
                    q.asked_in if q.asked_in == q.lang else f"{q.asked_in}->{q.lang}",
                    q.query,
                    lambda post, relevant=relevant: status_id(post) in relevant,
                    q.answerable,
                    q.lang,
                )
            )
    return out


def synthetic_questions() -> list[Asked]:
    corpus = build_corpus()
    return [
        Asked(
            j.query_class,
            j.query,
            lambda post, relevant=j.relevant: int(post["post_id"]) in relevant,
            bool(j.relevant),
        )
        for j in corpus.queries
    ]


def archives(work: Path) -> dict[str, tuple[Path, list[Asked]]]:
    """Each set's archive (built in ``work`` unless already there) and its questions."""
    sets: dict[str, tuple[Path, list[Asked]]] = {}
    for name, langs in (("real-en", ["en"]), ("real-zh", ["zh"]), ("real-merged", ["en", "zh"])):
        db = work / name / "archive.db"
        if not db.exists():
            db.parent.mkdir(parents=True, exist_ok=True)
            build_real_archive(db, langs)
        sets[name] = (db, real_questions(langs))
    synthetic = work / "synthetic"
    if not (synthetic / "quality.db").exists():
        synthetic.mkdir(parents=True, exist_ok=True)
        build_archive(synthetic)
    sets["synthetic"] = (synthetic / "quality.db", synthetic_questions())
    return sets


# -- running -------------------------------------------------------------------------------------


async def ask(api: ArchiveAPI, questions: Sequence[Asked]) -> list[Outcome]:
    kinds = request_filters()
    out = []
    for asked in questions:
        outcome = Outcome(asked)
        for mode, api_mode in (("meaning", "content"), ("hybrid", ranking.HYBRID)):
            params = {"query": asked.query, "settings": {"top_k": TOP}, "mode": api_mode, **kinds}
            outcome.results[mode] = await api.call("search_similar", params)
        literal = await api.call("search_posts_by_text", {"search_term": asked.query, "limit": TOP, **kinds})
        outcome.results["text"] = [{"post": post} for post in literal]
        outcome.literal = bool(literal)
        out.append(outcome)
    return out


def with_hubness(api: ArchiveAPI, outcomes: Sequence[Outcome]) -> None:
    """Each result's hubness, so a fit can re-decide it (the API reports the verdict only)."""
    engine = api.engine
    space = engine.require_space("content")
    hubs = engine.hub_scores(space)
    for outcome in outcomes:
        for mode in ("meaning", "hybrid"):
            results = outcome.hits(mode)
            rows = space.rows_of([r["post"]["post_id"] for r in results])
            values = hubs.for_rows(space, rows[rows >= 0]).tolist() if len(rows) else []
            it = iter(values)
            for result, row in zip(results, rows, strict=True):
                result["hubness"] = next(it) if row >= 0 else 0.0


def run(sets: dict[str, tuple[Path, list[Asked]]]) -> dict[str, list[Outcome]]:
    out = {}
    for name, (db, questions) in sets.items():
        api = ArchiveAPI.open(db, exact=True)
        try:
            outcomes = anyio.run(ask, api, questions)
            with_hubness(api, outcomes)
        finally:
            api.close()
        out[name] = outcomes
    return out


# -- reports -------------------------------------------------------------------------------------


Decide = Callable[[Outcome, str], bool | None]


def said_no(outcomes: Iterable[Outcome], mode: str, decide: Decide) -> tuple[int, int, int]:
    """(said "no good match", said nothing, total)."""
    chosen = list(outcomes)
    verdicts = [decide(o, mode) for o in chosen]
    return sum(v is False for v in verdicts), sum(v is None for v in verdicts), len(chosen)


def table(results: dict[str, list[Outcome]], decide: Decide, title: str) -> None:
    print(f"\n{title}")
    print(
        f"{'set':<12} {'questions':<10} "
        + "".join(f"{m + ' no-ans / ans':>22}" for m in MODES)
        + f"{'hit@5 hybrid':>14}{'meaning':>9}"
    )
    for name, outcomes in results.items():
        groups = [*sorted({o.asked.group for o in outcomes}), "all"]
        for group in groups:
            chosen = [o for o in outcomes if group in ("all", o.asked.group)]
            none = [o for o in chosen if not o.asked.answerable]
            some = [o for o in chosen if o.asked.answerable]
            cells = []
            for mode in MODES:
                a, silent_a, n_a = said_no(none, mode, decide)
                b, silent_b, n_b = said_no(some, mode, decide)
                cell = f"{a}/{n_a} / {b}/{n_b}" if not (silent_a or silent_b) else "no verdict"
                cells.append(f"{cell:>22}")
            hits = [sum(o.hit_at(m) for o in some) for m in ("hybrid", "meaning")]
            print(
                f"{name:<12} {group:<10} "
                + "".join(cells)
                + f"{f'{hits[0]}/{len(some)}':>14}{f'{hits[1]}/{len(some)}':>9}"
            )


# -- fitting -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Features:
    """Per question of one set and mode, the measured features of its first ``TOP`` hits (NaN
    where there is no hit) and whether it has an answer: what a fit re-decides from."""

    similarity: np.ndarray
    coverage: np.ndarray
    hubness: np.ndarray
    answerable: np.ndarray
    export: np.ndarray

    @classmethod
    def of(cls, outcomes: Sequence[Outcome], mode: str) -> Features:
        shape = (len(outcomes), TOP)
        sim, cov, hub = (np.full(shape, np.nan) for _ in range(3))
        for i, outcome in enumerate(outcomes):
            for j, r in enumerate(outcome.hits(mode)[:TOP]):
                sim[i, j], cov[i, j], hub[i, j] = r["similarity"], r["text_match"], r["hubness"]
        return cls(
            sim,
            cov,
            hub,
            np.asarray([o.asked.answerable for o in outcomes]),
            np.asarray([o.asked.export for o in outcomes]),
        )

    def said(self, c: ranking.Calibration) -> np.ndarray:
        """Per question: does some hit match?"""
        with np.errstate(invalid="ignore"):
            meaning = self.similarity >= c.similarity
            if c.neighbourhood is not None:
                stands_out = self.similarity - self.hubness >= -c.neighbourhood
                if c.clear is not None:
                    stands_out |= self.similarity >= c.clear
                meaning &= stands_out
            said: np.ndarray = (meaning | (self.coverage >= c.coverage)).any(axis=1)
        return said

    def misses(self, c: ranking.Calibration) -> int:
        """How many exports of this set miss the goal: "no good match" for fewer than 8 in 10
        of their questions without an answer, or for more than 1 in 25 of those with one."""
        said = self.said(c)
        missed = 0
        for export in {e for e in self.export if e}:
            own = self.export == export
            none, some = own & ~self.answerable, own & self.answerable
            missed += bool(none.any() and np.mean(~said[none]) < GOAL_NONE)
            missed += bool(some.any() and np.mean(~said[some]) > GOAL_SOME + 1e-9)
        return missed

    def balanced(self, c: ranking.Calibration) -> float:
        said = self.said(c)
        right_none = float(np.mean(~said[~self.answerable])) if (~self.answerable).any() else 1.0
        right_some = float(np.mean(said[self.answerable])) if self.answerable.any() else 1.0
        return (right_none + right_some) / 2


def features(results: dict[str, list[Outcome]]) -> list[Features]:
    return [Features.of(outcomes, mode) for outcomes in results.values() for mode in ("meaning", "hybrid")]


def accuracy(results: dict[str, list[Outcome]], calibration: ranking.Calibration) -> float:
    """Balanced accuracy of the question verdict, each set and mode weighing the same."""
    return float(np.mean([f.balanced(calibration) for f in features(results)]))


def grid(model: str) -> Iterable[ranking.Calibration]:
    floors = [round(0.2 + 0.01 * i, 2) for i in range(26)]
    margins: list[float | None] = [None, *(round(0.01 * i, 2) for i in range(0, 21))]
    covers = [round(0.5 + 0.05 * i, 2) for i in range(11)] + [1.01]
    clears = [0.45, 0.5, 0.55, 0.6, 0.65]
    for floor, margin, cover, clear in itertools.product(floors, margins, covers, clears):
        yield ranking.Calibration(model, floor, cover, margin, clear)


def fit(results: dict[str, list[Outcome]], model: str) -> ranking.Calibration:
    """The thresholds that leave the fewest (archive, export, mode) cells short of the goal,
    then of best mean balanced accuracy; ties: the narrowest neighbourhood margin (the stricter
    test), the highest ``clear`` (the judged sets hold no near-copies, so they only bound it
    from below), then the lower floor."""
    sets = features(results)

    def score(c: ranking.Calibration) -> tuple[int, float, float, float, float]:
        return (
            -sum(f.misses(c) for f in sets),
            round(float(np.mean([f.balanced(c) for f in sets])), 6),
            -(c.neighbourhood or 1.0),
            c.clear or 0.0,
            -c.similarity,
        )

    return max(grid(model), key=score)


def leave_one_out(results: dict[str, list[Outcome]], model: str) -> None:
    """Fit on every archive that does not hold one language's export, judge the archives that
    do: does the verdict hold on a language (and its archives) it was not fitted on?"""
    print("\nleave one language out (fitted on the archives without it, figures on those with it):")
    langs = sorted({o.asked.export for outcomes in results.values() for o in outcomes if o.asked.export})
    for lang in langs:
        holds = {name for name, outcomes in results.items() if any(o.asked.export == lang for o in outcomes)}
        fitted = fit({k: v for k, v in results.items() if k not in holds}, model)
        print(f"  {lang}: fitted {fitted.as_dict()}")
        held = {
            name: [o for o in results[name] if o.asked.export == lang] for name in results if name in holds
        }
        table(held, lambda o, m, c=fitted: verdict(o, m, c), f"  {lang} held out, with that fit")


def cost(db: Path, rounds: int = 3) -> None:
    """What the verdict adds to a search by meaning: the same searches with and without it,
    interleaved, each query fresh (the engine's kept query vectors cleared first)."""
    from mcpkit.archive.engine import Engine

    api = ArchiveAPI.open(db, exact=True)
    judge = Engine._judge_ranked
    times: dict[bool, list[float]] = {True: [], False: []}

    def once(query: str, verdict: bool) -> None:
        api.engine._query_vectors.clear()
        Engine._judge_ranked = judge if verdict else (lambda self, parsed, found: None)  # type: ignore[method-assign]
        started = time.perf_counter()
        anyio.run(
            api.call, "search_similar", {"query": query, "settings": {"top_k": TOP}, **request_filters()}
        )
        times[verdict].append((time.perf_counter() - started) * 1000)

    try:
        for _ in range(rounds):
            for q in QUESTIONS:
                once(q.query, True)
                once(q.query, False)
    finally:
        Engine._judge_ranked = judge  # type: ignore[method-assign]
        api.close()
    with_it, without = (float(np.median(times[v])) for v in (True, False))
    print(
        f"\ncost: meaning search, top {TOP}, {len(times[True])} searches each way: median {with_it:.1f} ms "
        f"with the verdict, {without:.1f} ms without"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--work", type=Path, help="build the archives here once and reuse them")
    parser.add_argument("--fit", action="store_true", help="refit and write the calibration file")
    parser.add_argument("--cost", action="store_true", help="also time searches with and without the verdict")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        sets = archives(args.work or Path(tmp))
        results = run(sets)
        print(
            f"{sum(len(q) for _, q in sets.values())} questions over {len(sets)} archives in {time.perf_counter() - started:.0f} s"
        )
        table(results, before, "before: one cosine cut (0.39), hybrid only")
        table(results, verdict, "now: the API's verdict")
        if args.cost:
            cost(sets["real-merged"][0])
        if args.fit:
            model = ArchiveAPI.open(sets["synthetic"][0], exact=True).engine.require_space("content").model
            leave_one_out(results, model)
            fitted = fit(results, model)
            path = ranking.calibration_path()
            data = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {"models": {}}
            data["models"][model] = {
                **{k: v for k, v in fitted.as_dict().items() if k not in ("fitted_on", "accuracy")},
                "fitted_on": "bench/verdict.py --fit: tests/search_quality (synthetic) and tests/search_quality/real (en, zh; each alone and merged)",
                "accuracy": round(accuracy(results, fitted), 3),
            }
            path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
            ranking._calibrations.cache_clear()
            print(f"\nfitted {model}: {data['models'][model]} -> {path}")
            table(results, lambda o, m: verdict(o, m, fitted), "with the fitted thresholds")


if __name__ == "__main__":
    main()
