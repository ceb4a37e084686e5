"""Hybrid ranking: keyword and meaning in one list, hub damping, and "no good match".

Three pieces, each measured on the evaluation set in ``tests/search_quality/`` by ``bench/quality.py``
(the figures and the choices they led to are in docs/archive-data.md):

* **Text ranking of a free-form query.** The FTS5 tables are trigram indexes with
  ``detail=none`` (rowids only), where ``bm25()`` returns 0 for every row, and a
  natural-language query has no operators: Japanese has no spaces, and an AND of every term
  finds nothing as soon as one word differs. So the query is cut into the trigrams of its
  words, each trigram's doclist is read from the index, and a post scores the share of the
  query's IDF mass it contains (:func:`text_hits`): BM25 with binary term frequency, which is
  what a tweet-length text has anyway. A trigram matches inflections and compounds
  ("walking"/"walk", "天気予報"/"天気") that whole-word matching misses.
* **Fusion.** Reciprocal rank fusion (:func:`fuse`) of the vector ranking and the text
  ranking, where a text hit counts only when it covers at least :data:`TEXT_GATE` of the
  query: ungated, a cross-lingual query's stray trigram hits ("ing", "です") pushed the right
  posts down (measured against plain RRF and a convex combination of scores).
* **Hubs.** Short and boilerplate posts ("ツイートのテスト", "おはよう") are near everything, so
  they come first for queries nothing answers. The vector side ranks by CSLS (Conneau et al.,
  2018): ``cos(q, d) - γ·r_d``, where ``r_d``, the post's mean cosine with its nearest posts,
  is measured once per post (:func:`hubness`), and a length prior (:func:`brevity`) takes up
  to 0.1 from posts under 16 characters, which CSLS alone did not move from the top of
  unanswerable queries (16 no-answer queries: a hub first for 3 with cosine, 3 with CSLS,
  1 with both; MRR@10 rose too). Centering on the mean vector (Suzuki et al.,
  2013), tried first, made hubs worse here: the mean is the centre of the everyday posts,
  and the short posts are far from it.
* **"No good match".** A hit is a real match by meaning when its similarity (the cosine less
  the verdict's length discount, :data:`VERDICT_SHORT`: a link with a few words is no answer)
  reaches a floor *and* stands out of the hit's own neighbourhood in this archive: it is at
  most ``neighbourhood`` below the post's hubness (its mean cosine with its nearest posts,
  measured against the same number of reference posts in every archive above
  :data:`HUB_REFERENCES`), unless it is so close (``clear``) that its neighbourhood does not
  matter (a post among near-copies of itself). A post in a crowded corner of the archive (the
  everyday posts, the replies, a language most posts are in) needs a closer query than a post
  alone on its topic, so one cosine cut no longer decides for every archive and language: on
  real exports a fixed cut said "match" for a recipe nobody posted (0.41, a barbecue post) and
  "no match" for Chinese questions whose answers score 0.32-0.37. A hit is a real match by its
  words when its text coverage reaches ``coverage``. The thresholds are fitted for the space's
  model on the synthetic evaluation set and the real exports, each alone and merged, to leave
  the fewest (archive, export, mode) cells short of the goal, then for balanced accuracy
  (:class:`Calibration`, stored in ``data/calibration.json`` by model name;
  ``python bench/verdict.py --fit``, which also prints each language held out of the fit). A
  model without a calibration answers ``match: null``.
"""

from __future__ import annotations

import json
import math
import re
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, MutableMapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from mcpkit.archive.posts import fold, strip_content
from mcpkit.archive.store import doclist, phrase, vocabulary

__all__ = [
    "HUB_GAMMA",
    "HYBRID",
    "POOL",
    "RRF_K",
    "TEXT_GATE",
    "Calibration",
    "DocFreqs",
    "TextHits",
    "annotate",
    "brevity",
    "calibration_for",
    "doc_counts",
    "fuse",
    "fused",
    "hub_adjusted",
    "hub_references",
    "hub_rerank",
    "hubness",
    "neighbour_means",
    "query_trigrams",
    "query_weights",
    "text_hits",
    "text_units",
]

HYBRID = "hybrid"
"""The mode name: mcpkit's own, so upstream's clients never send it."""

RRF_K = 60
"""RRF's rank constant (Cormack et al., 2009); 60 scored best or equal among 10, 30, 60 here."""

TEXT_GATE = 0.5
"""Share of a query's trigram IDF mass a post must contain to enter the fusion as a text hit."""

POOL = 100
"""How many posts each side contributes to the fusion at least (more when more are asked for)."""

MAX_DOC_FRACTION = 0.25
"""A trigram found in more than this share of the posts is not read (its IDF is nearly 0 and its
doclist the longest): "the", "ing", "です" cost time and move no ranking. Only a speed measure,
so never for fewer than ``SKIP_FROM`` posts, where such a trigram may be all a query has."""
SKIP_FROM = 20_000

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float32]
BoolArray = npt.NDArray[np.bool_]

_WORD_BREAK = re.compile(r"[\s\W_]+")


def query_trigrams(text: str) -> list[str]:
    """Distinct trigrams of the folded words of ``text``, in order of first appearance.

    Words are split at spaces and punctuation, so no trigram spans two words (a trigram with a
    space would favour posts spaced like the query). Words shorter than three characters have
    no trigram: the index cannot find them, and the vector side still ranks such queries.
    """
    grams: dict[str, None] = {}
    for word in _WORD_BREAK.split(fold(text)):
        for i in range(len(word) - 2):
            grams[word[i : i + 3]] = None
    return list(grams)


@dataclass(frozen=True, slots=True)
class TextHits:
    """Posts holding some of a query's trigrams, best first, and the share of the query's IDF
    mass each holds (``coverage``, 1.0 when every trigram of the query occurs in the post).

    ``grams`` and ``weights`` are the query's trigrams that count (those the index was asked
    about, each with its IDF) and ``mass`` their sum: :meth:`coverage_of` scores any text with
    them, so a post the ranking did not read (see :func:`text_hits`'s ``limit``) still gets
    its exact coverage."""

    post_ids: IntArray
    coverage: FloatArray
    grams: tuple[str, ...] = ()
    weights: tuple[float, ...] = ()
    mass: float = 0.0

    def coverage_for(self, post_ids: Sequence[int]) -> list[float]:
        """The coverage of each of ``post_ids`` (0.0 for a post this ranking does not hold)."""
        if not len(self.post_ids):
            return [0.0] * len(post_ids)
        order = np.argsort(self.post_ids)
        keys = self.post_ids[order]
        wanted = np.asarray(post_ids, dtype=np.int64)
        pos = np.minimum(np.searchsorted(keys, wanted), len(keys) - 1)
        found = keys[pos] == wanted
        return np.where(found, self.coverage[order][pos], 0.0).astype(float).tolist()  # type: ignore[no-any-return]

    def coverage_of(self, texts: Iterable[str]) -> list[float]:
        """The coverage of each text (a post's content), read from the text itself: the index
        holds the folded text's trigrams, so a trigram is in the post exactly when it is a
        substring of the folded text."""
        if self.mass <= 0:
            return [0.0 for _ in texts]
        out = []
        for text in texts:
            folded = fold(text or "")
            held = sum(w for gram, w in zip(self.grams, self.weights, strict=True) if gram in folded)
            out.append(float(np.float32(held / self.mass)))
        return out


def _idf(df: int, total: int) -> float:
    """BM25's inverse document frequency (never negative)."""
    return math.log(1.0 + (total - df + 0.5) / (df + 0.5))


READ_BUDGET = 20_000
"""Ids the text side reads from doclists before it looks for the answer another way: past it
(a query of common words), the best posts are those holding every trigram, read newest first
from the index's own AND until ``limit`` are found (see :func:`text_hits`)."""
SEEK_COST = 12
"""How many ids reading a doclist costs as much as one seek of the index's AND (measured at a
million posts: 0.12 us an id read through ``group_concat``, 1.5 us a seek)."""
DOC_FREQS = 8192
"""Trigrams whose document count a :class:`DocFreqs` keeps (per store generation)."""


class DocFreqs:
    """Documents per trigram of the FTS5 tables, kept for one store generation.

    The index counts a term's documents by walking its doclist (``fts5vocab``: 15 ms for a
    trigram in half of a million posts), and the common trigrams are the ones every query
    repeats, so a server keeps the counts until the archive changes."""

    def __init__(self, size: int = DOC_FREQS) -> None:
        self._size = size
        self._lock = threading.Lock()
        self._generation: int | None = None
        self._known: OrderedDict[tuple[str, str], int] = OrderedDict()

    def counts(
        self, conn: sqlite3.Connection, table: str, grams: Sequence[str], generation: int | None
    ) -> list[int]:
        with self._lock:
            if generation is None or generation != self._generation:
                self._known.clear()
                self._generation = generation
            cached = {gram: self._known.get((table, gram)) for gram in grams}
        missing = [gram for gram, count in cached.items() if count is None]
        if missing:
            fresh = doc_counts(conn, table, missing)
            with self._lock:
                if generation is not None and generation == self._generation:
                    for gram, count in fresh.items():
                        self._known[(table, gram)] = count
                    while len(self._known) > self._size:
                        self._known.popitem(last=False)
            cached.update(fresh)
        return [int(cached[gram] or 0) for gram in grams]


def doc_counts(conn: sqlite3.Connection, table: str, grams: Sequence[str]) -> dict[str, int]:
    """How many documents of the FTS5 ``table`` hold each trigram (0 for one it lacks)."""
    vocab = vocabulary(conn, table)
    out = dict.fromkeys(grams, 0)
    for start in range(0, len(grams), 500):
        part = list(grams[start : start + 500])
        marks = ",".join("?" * len(part))
        for term, docs in conn.execute(f"SELECT term, doc FROM {vocab} WHERE term IN ({marks})", part):
            out[str(term)] = int(docs)
    return out


def text_hits(
    conn: sqlite3.Connection,
    table: str,
    query: str,
    total_posts: int,
    *,
    gate: float = 0.0,
    limit: int | None = None,
    accept: Callable[[IntArray], BoolArray] | None = None,
    doc_freqs: DocFreqs | None = None,
    generation: int | None = None,
    id_range: tuple[int, int] | None = None,
) -> TextHits:
    """The posts of the FTS5 ``table`` whose coverage of ``query`` reaches ``gate`` (every post
    holding a trigram of it with the default 0), best first, then newest first; with ``accept``
    only the posts it passes (a filter), with ``limit`` only the best ``limit`` of them.

    Each trigram's document count comes from the index's vocabulary (kept in ``doc_freqs`` for
    the store's ``generation`` when given). Its doclist is read only when needed, rarest first:
    a post reaches the gate only if it holds one of the rarest trigrams whose IDF adds up to
    more than ``1 - gate`` of the query's mass, so only those are read in full, and the others
    are looked up for those posts alone (the index's AND, or the doclist when it is short).
    When even the rare side is long (common words: half a million ids took 450 ms to read into
    Python at a million posts), the best ``limit`` posts are the newest holding every trigram,
    which the index's AND gives newest first, in chunks, stopping once ``limit`` are accepted.
    The answer is the same either way; only the reading differs. ``id_range`` (the lowest and
    highest post id ``accept`` can pass) bounds every read: a date filter keeps a span of ids,
    and the newest-first walk would otherwise read every newer post first.
    """
    low, high = id_range if id_range is not None else (-(2**63), 2**63 - 1)
    if low > high:
        return TextHits(np.zeros(0, np.int64), np.zeros(0, np.float32))
    grams = query_trigrams(query)
    empty = TextHits(np.zeros(0, np.int64), np.zeros(0, np.float32))
    if not grams or total_posts <= 0:
        return empty
    if doc_freqs is not None:
        dfs = doc_freqs.counts(conn, table, grams, generation)
    else:
        known = doc_counts(conn, table, grams)
        dfs = [known[gram] for gram in grams]
    skip_over = max(SKIP_FROM, int(total_posts * MAX_DOC_FRACTION))
    counted = [
        (gram, df, _idf(df, total_posts)) for gram, df in zip(grams, dfs, strict=True) if df <= skip_over
    ]
    mass = sum(weight for _, _, weight in counted)
    if mass <= 0:
        return empty
    grams_kept = tuple(gram for gram, _, _ in counted)
    weights_kept = tuple(weight for _, _, weight in counted)
    present = sorted((item for item in counted if item[1] > 0), key=lambda item: (-item[2], item[0]))
    need = gate * mass
    held = sum(weight for _, _, weight in present)
    if not present or held < need * (1 - 1e-9):
        return TextHits(empty.post_ids, empty.coverage, grams_kept, weights_kept, mass)
    # the rarest trigrams a post reaching the gate must hold one of (all of them with no gate)
    essential = []
    tail = held
    for item in present:
        if gate > 0 and tail < need - 1e-9 * mass:
            break
        essential.append(item)
        tail -= item[2]
    rest = present[len(essential) :]
    found = None
    if limit is not None and sum(df for _, df, _ in essential) > READ_BUDGET:
        found = _newest_holding_all(conn, table, [gram for gram, _, _ in present], limit, accept, (low, high))
    if found is not None:
        coverage = np.full(len(found), np.float32(held / mass), dtype=np.float32)
        return TextHits(found, coverage, grams_kept, weights_kept, mass)
    read = f"SELECT group_concat(rowid) FROM {table} WHERE {table} MATCH ? AND rowid BETWEEN ? AND ?"
    lists = [doclist(conn, read, (phrase(gram), low, high)) for gram, _, _ in essential]
    candidates, inverse = np.unique(np.concatenate(lists), return_inverse=True)
    per_id = np.repeat(
        np.asarray([w for _, _, w in essential], dtype=np.float64), [len(ids) for ids in lists]
    )
    scores = np.asarray(np.bincount(inverse, weights=per_id, minlength=len(candidates)), dtype=np.float64)
    if rest and len(candidates):
        anyof = " OR ".join(phrase(gram) for gram, _, _ in essential)
        for gram, df, weight in rest:
            lookup = phrase(gram) if df <= SEEK_COST * len(candidates) else f"({anyof}) AND {phrase(gram)}"
            ids = doclist(conn, read, (lookup, low, high))
            scores[np.isin(candidates, ids, assume_unique=True)] += weight
    coverage = (scores / mass).astype(np.float32)
    keep = coverage >= gate
    candidates, coverage = candidates[keep], coverage[keep]
    order = np.lexsort((-candidates, -coverage))  # best coverage first, then the newer id
    candidates, coverage = candidates[order], coverage[order]
    if accept is not None and len(candidates):
        passed = np.asarray(accept(candidates), dtype=bool)
        candidates, coverage = candidates[passed], coverage[passed]
    if limit is not None:
        candidates, coverage = candidates[:limit], coverage[:limit]
    return TextHits(candidates, coverage, grams_kept, weights_kept, mass)


def _newest_holding_all(
    conn: sqlite3.Connection,
    table: str,
    grams: Sequence[str],
    limit: int,
    accept: Callable[[IntArray], BoolArray] | None,
    id_range: tuple[int, int],
) -> IntArray | None:
    """The newest ``limit`` posts (that ``accept`` passes) holding every one of ``grams``, read
    newest first in growing chunks; None when fewer than ``limit`` posts hold them all (then
    posts holding fewer rank next, and the caller reads the doclists)."""
    everything = " AND ".join(phrase(gram) for gram in grams)
    sql = (
        f"SELECT group_concat(rowid) FROM (SELECT rowid FROM {table} WHERE {table} MATCH ? "
        "AND rowid BETWEEN ? AND ? ORDER BY rowid DESC LIMIT ?)"
    )
    found: list[IntArray] = []
    count = 0
    low, high = id_range
    chunk = max(4 * limit, 256)
    while True:
        ids = -np.sort(-doclist(conn, sql, (everything, low, high, chunk)))
        if len(ids):
            high = int(ids[-1]) - 1
            kept = ids if accept is None else ids[np.asarray(accept(ids), dtype=bool)]
            found.append(kept)
            count += len(kept)
            if count >= limit:
                return np.concatenate(found)[:limit]
        if len(ids) < chunk:
            return None
        chunk = min(chunk * 4, 65_536)


def fused(vector_rows: IntArray, text_rows: IntArray, *, k: int = RRF_K) -> tuple[IntArray, FloatArray]:
    """Reciprocal rank fusion of two rankings (rows best first each): the rows either holds,
    ascending, and the score of each, scaled so that a row first in both scores 1.0:
    ``(1/(k+r_v) + 1/(k+r_t)) / (2/(k+1))``. Only the rows ranked are touched (the engine's
    spaces have a million rows; the rankings a few hundred)."""
    rankings = [np.asarray(rows, dtype=np.int64) for rows in (vector_rows, text_rows)]
    every = np.concatenate(rankings)
    unique, inverse = np.unique(every, return_inverse=True)
    shares = np.concatenate([1.0 / (k + 1.0 + np.arange(len(rows))) for rows in rankings])
    scores = np.bincount(inverse.reshape(-1), weights=shares, minlength=len(unique)) * ((k + 1.0) / 2.0)
    return unique, scores.astype(np.float32)


def fuse(size: int, vector_rows: IntArray, text_rows: IntArray, *, k: int = RRF_K) -> FloatArray:
    """:func:`fused` as a score per row of ``0..size-1`` (``-inf`` for rows neither ranking holds)."""
    rows, scores = fused(vector_rows, text_rows, k=k)
    result: FloatArray = np.full(size, -np.inf, dtype=np.float32)
    result[rows] = scores
    return result


# -- hubs ---------------------------------------------------------------------------------------

HUB_GAMMA = 0.25
"""Weight of a post's hubness in its vector score (CSLS uses 0.5 of ``2·cos``; 0.25 and 0.5 measured)."""

HUB_NEIGHBOURS = 10
HUB_REFERENCES = 1024
"""Posts each post is compared with to measure its hubness: every post up to this many, then a
fixed, evenly spread sample of them (a million posts cost about 10^12 flops once, not 10^15)."""

SHORT_POST = 16
BREVITY = 0.1
"""The length prior: a post shorter than ``SHORT_POST`` characters loses up to ``BREVITY`` of
cosine. A two-word post says too little to be the best answer to a question; its vector is
mostly the model's prior, which is what makes it near every query."""

VERDICT_SHORT = 32
VERDICT_BREVITY = 0.2
WIDE_UNITS = 2
"""The verdict's length discount: a hit saying less than ``VERDICT_SHORT`` units of
:func:`text_units` (a CJK character counting ``WIDE_UNITS``) loses up to ``VERDICT_BREVITY`` of
cosine before the calibration judges it. A reply or a link with a few words ("@obsolete29 Go
with social 😎", "#nowplaying") is near many questions by those words alone and answers none:
on a French X archive merged with the English and Chinese ones, that reply was the "match" for
organising a wedding at the town hall, and "#nowplaying" for horse-race tips in the synthetic
set (the ranking's prior takes nothing from a post of 16 characters). The ranking keeps that
milder prior (:data:`SHORT_POST`, :data:`BREVITY`), measured for ranking. This one was chosen
among 36 variants (16 to 64 units, 0.1 to 0.3, a CJK character counting 1 to 3) on the judged
sets and a French X archive measured locally, each language held out of the fit in turn; on the
shipped sets it changes no verdict but that one synthetic question (docs/archive-data.md)."""

OVERFETCH = 4
"""The vector side ranks ``OVERFETCH x pool`` posts by cosine (any index), then re-ranks them
with the hub penalty (at most ``HUB_GAMMA``, so a post further down rarely climbs past them)."""


@dataclass(slots=True)
class _Hubness:
    count: int
    references: IntArray
    values: FloatArray


_hubness: dict[str, _Hubness] = {}
_hubness_lock = threading.Lock()
_HUB_CHUNK = 4096


def neighbour_means(
    vectors: npt.NDArray[np.float32],
    rows: IntArray,
    reference_vectors: npt.NDArray[np.float32],
    references: IntArray,
) -> FloatArray:
    """Mean cosine of each of ``vectors`` (the space's rows ``rows``) with its
    :data:`HUB_NEIGHBOURS` nearest references (a post is never its own neighbour)."""
    neighbours = min(HUB_NEIGHBOURS, max(len(references) - 1, 1))
    sims = np.asarray(vectors, dtype=np.float32) @ np.asarray(reference_vectors, dtype=np.float32).T
    order = np.argsort(references)
    pos = np.minimum(np.searchsorted(references[order], rows), len(references) - 1)
    own = references[order][pos] == rows
    sims[np.flatnonzero(own), order[pos[own]]] = -np.inf
    if sims.shape[1] <= neighbours:
        best = np.where(np.isfinite(sims), sims, 0.0)
    else:
        best = np.partition(sims, -neighbours, axis=1)[:, -neighbours:]
    means: FloatArray = best.mean(axis=1).astype(np.float32)
    return means


def hub_references(count: int) -> IntArray:
    """The posts every post of a space of ``count`` rows is compared with: every post up to
    :data:`HUB_REFERENCES`, then that many evenly spread ones."""
    return np.unique(np.linspace(0, count - 1, min(count, HUB_REFERENCES)).astype(np.int64))


def _neighbour_means(matrix: npt.NDArray[np.float32], rows: range, references: IntArray) -> FloatArray:
    ref = np.asarray(matrix[references], dtype=np.float32)
    out = np.empty(len(rows), dtype=np.float32)
    for start in range(rows.start, rows.stop, _HUB_CHUNK):
        stop = min(rows.stop, start + _HUB_CHUNK)
        out[start - rows.start : stop - rows.start] = neighbour_means(
            np.asarray(matrix[start:stop]), np.arange(start, stop, dtype=np.int64), ref, references
        )
    return out


def hubness(directory: Path, matrix: npt.NDArray[np.float32]) -> FloatArray:
    """Per row of a space: how near the post is to posts in general (CSLS's ``r_d``: the mean
    cosine with its nearest reference posts). Boilerplate and very short posts score high.

    Kept per space and process; appended rows are measured against the same references, so
    the cost after the first call is the new rows only (spaces only grow). Every row at once:
    for evaluation on a small space. The engine uses :class:`mcpkit.archive.hubs.HubScores`
    (the same values, stored beside the vectors, measured in the background).
    """
    key = str(directory)
    count = len(matrix)
    with _hubness_lock:
        known = _hubness.get(key)
        if known is not None and known.count == count:
            return known.values
        stable = known is not None and len(known.references) >= HUB_REFERENCES and known.count < count
        if stable and known is not None:
            extra = _neighbour_means(matrix, range(known.count, count), known.references)
            known = _Hubness(count, known.references, np.concatenate([known.values, extra]))
        else:
            references = hub_references(count)
            known = _Hubness(count, references, _neighbour_means(matrix, range(count), references))
        _hubness[key] = known
        return known.values


_WIDE = re.compile(r"[\u1100-\u11ff\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f]")
"""Characters of the scripts written without spaces (CJK ideographs, kana, hangul): one says
about as much as a short word, not as a letter."""


def text_units(text: str, wide: int = 1) -> int:
    """How much ``text`` says once URLs and mentions are stripped: its characters, each
    :data:`_WIDE` one counting ``wide``."""
    stripped = strip_content(text)
    if wide == 1:  # the ranking's prior: characters only, no scan for wide ones
        return len(stripped)
    return len(stripped) + (wide - 1) * len(_WIDE.findall(stripped))


def brevity(texts: Iterable[str], short: int = SHORT_POST, wide: int = 1) -> FloatArray:
    """Per text: how far it falls short of ``short`` units of :func:`text_units` (0 for a text
    at least that long, 1 for an empty one: a bare link or mention)."""
    lengths = np.fromiter((text_units(text, wide) for text in texts), dtype=np.float32)
    shortfall: FloatArray = np.clip(1.0 - lengths / short, 0.0, 1.0).astype(np.float32)
    return shortfall


def hub_adjusted(cosines: FloatArray, texts: Sequence[str]) -> list[float]:
    """The cosine less the verdict's length discount (:data:`VERDICT_SHORT`,
    :data:`VERDICT_BREVITY`): what a result reports as ``similarity`` and the calibration
    thresholds. (Less the CSLS term too, the fitted threshold told relevant from irrelevant
    best hits worse: leave-one-out accuracy 0.76 against 0.90, since that term also lowers
    every post of a dense neighbourhood.)"""
    short = brevity(texts, VERDICT_SHORT, WIDE_UNITS)
    adjusted = np.asarray(cosines, dtype=np.float32) - np.float32(VERDICT_BREVITY) * short
    return [float(value) for value in adjusted]


def hub_rerank(
    rows: IntArray, scores: FloatArray, hubs: FloatArray, short: FloatArray, pool: int
) -> IntArray:
    """The best ``pool`` of ``rows`` by ``score - HUB_GAMMA·hubness - BREVITY·brevity``
    (``hubs`` and ``short`` per entry of ``rows``; ties: the earlier row)."""
    adjusted = (
        np.asarray(scores, dtype=np.float32)
        - np.float32(HUB_GAMMA) * np.asarray(hubs, dtype=np.float32)
        - np.float32(BREVITY) * np.asarray(short, dtype=np.float32)
    )
    order = np.argsort(-adjusted, kind="stable")[:pool]
    picked: IntArray = np.asarray(rows, dtype=np.int64)[order]
    return picked


# -- "no good match" ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Calibration:
    """Thresholds fitted for one embedding model (see the module docstring).

    A hit is a real match when ``similarity`` (its cosine with the query less the length prior)
    reaches ``similarity`` and is at most ``neighbourhood`` below the hit's hubness or reaches
    ``clear`` (so close that its neighbourhood does not matter: a post among near-copies of
    itself has a hubness near 1), or when its text coverage reaches ``coverage``.
    ``neighbourhood`` None: no neighbourhood test.
    """

    model: str
    similarity: float
    coverage: float
    neighbourhood: float | None = None
    clear: float | None = None
    fitted_on: str = ""
    accuracy: float | None = None  # mean balanced accuracy of the verdict on the sets fitted on

    def is_match(
        self, similarity: float | None, coverage: float | None, hubness: float | None = None
    ) -> bool:
        by_meaning = similarity is not None and similarity >= self.similarity
        if by_meaning and self.neighbourhood is not None and hubness is not None and similarity is not None:
            stands_out = similarity - hubness >= -self.neighbourhood
            by_meaning = stands_out or (self.clear is not None and similarity >= self.clear)
        return by_meaning or (coverage is not None and coverage >= self.coverage)

    def as_dict(self) -> dict[str, Any]:
        return {
            "similarity": self.similarity,
            "coverage": self.coverage,
            "neighbourhood": self.neighbourhood,
            "clear": self.clear,
            "fitted_on": self.fitted_on,
            "accuracy": self.accuracy,
        }


CALIBRATION_FILE = "calibration.json"


def calibration_path() -> Path:
    return Path(str(resources.files("mcpkit.archive") / "data" / CALIBRATION_FILE))


@cache
def _calibrations() -> dict[str, Calibration]:
    try:
        raw = json.loads(calibration_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    out: dict[str, Calibration] = {}
    for model, entry in (raw.get("models") or {}).items():
        try:
            out[model] = Calibration(
                model,
                float(entry["similarity"]),
                float(entry["coverage"]),
                None if entry.get("neighbourhood") is None else float(entry["neighbourhood"]),
                None if entry.get("clear") is None else float(entry["clear"]),
                str(entry.get("fitted_on", "")),
                None if entry.get("accuracy") is None else float(entry["accuracy"]),
            )
        except (KeyError, TypeError, ValueError):
            continue
    return out


def calibration_for(model: str) -> Calibration | None:
    """The thresholds measured for ``model``; None when this project has not measured it."""
    return _calibrations().get(model)


def annotate(
    results: Sequence[MutableMapping[str, Any]],
    similarities: Iterable[float],
    coverage: Iterable[float],
    calibration: Calibration | None,
    hubness: Iterable[float] | None = None,
) -> None:
    """Add ``similarity``, ``text_match`` and ``match`` to each result in place (``hubness``: each
    hit's, for the neighbourhood test).

    ``match`` is None when the model has no calibration: nothing measured, nothing claimed.
    """
    hubs: Iterable[float | None] = [None] * len(results) if hubness is None else hubness
    for result, similarity, share, hub in zip(results, similarities, coverage, hubs, strict=True):
        result["similarity"] = round(float(similarity), 6)
        result["text_match"] = round(float(share), 6)
        result["match"] = None if calibration is None else calibration.is_match(similarity, share, hub)


def query_weights(
    conn: sqlite3.Connection,
    table: str,
    query: str,
    total_posts: int,
    *,
    doc_freqs: DocFreqs | None = None,
    generation: int | None = None,
) -> TextHits:
    """The query's trigrams and their IDF, without reading a doclist: :meth:`TextHits.coverage_of`
    then scores any text (what a search that ranked by meaning alone needs for its verdict)."""
    return text_hits(conn, table, query, total_posts, gate=2.0, doc_freqs=doc_freqs, generation=generation)
