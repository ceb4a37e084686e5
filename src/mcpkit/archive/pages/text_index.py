"""The pages' text search: fast the first time a query is typed, on a million posts.

Why a module of its own: the page needs, for every keystroke, the first page of matches newest
first, how many there are and every facet's counts among them. The archive's trigram index
(FTS5, ``detail=none``) answers a rare word in milliseconds, but its cost grows with the posts a
word is in: on a million posts reading the ids of a word in half of them took 640 ms, and a
term of one or two characters (東京, 猫, the first letter typed) has no trigram at all and fell
back to reading every post (500 ms to 1.2 s). So each query takes one of two paths, chosen by
what the index says it would cost, never by reading more than :data:`CHEAP` ids:

* **Few posts: the index.** A term of three or more characters is looked up as the AND of its
  trigrams, stopped after ``CHEAP + 1`` ids. A term of one or two characters is in a post
  exactly when it is in one of the post's trigrams, or among its last two characters (where no
  trigram starts): the trigrams starting with the term are a contiguous range of the index's
  vocabulary (``fts5vocab``, read with the document count of each, stopped past ``CHEAP``), and
  the last two folded characters of every post are two small columns (:class:`Tails`, 8 bytes a
  post, saved beside the archive and kept current from the posts each write changed; see
  :mod:`.tails`). So those terms get their exact posts from the index. After a write the
  tails held are patched from the posts it changed, and a short term waits for that (an answer
  after an import is exact); before any tails exist (a first start with none saved) a short
  term takes the path below, and that plan is not kept, so the query is planned again once the
  tails are built.
  Candidates of several terms are intersected; up to :data:`VERIFY_LIMIT` of them are re-checked
  against the text, so the counts are exact; above that they are the counts of a superset and
  the page says "about".
* **Many posts: walk and sample.** A term in more than ``CHEAP`` posts is in at least one post
  of twenty, so the page is found by re-checking posts newest first until it is full (a few
  dozen posts), and the counts are estimated from a fixed uniform sample of :data:`SAMPLE` posts
  of each set a facet counts in, re-checked against the text, scaled to the set's size (the
  page says "about"; a set no larger than the sample is counted exactly).

Either way every post shown has been checked against the text (results stay exact), and what
was checked is kept per query (one byte a post), so paging, facet changes and going back re-read
nothing.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from functools import reduce
from typing import Any

import numpy as np
import numpy.typing as npt

from mcpkit.archive.facets import FACETS, Filters
from mcpkit.archive.pages.columns import BoolArray, Columns, FacetIndex, IntArray
from mcpkit.archive.pages.tails import Tails, TailsKeeper
from mcpkit.archive.query import TextFilter
from mcpkit.archive.store import Store, long_term_ids, short_term_ids

__all__ = ["CHEAP", "SAMPLE", "VERIFY_LIMIT", "Tails", "TextPage", "TextSearch"]

CHEAP = 50_000
"""Most ids one index lookup may return (past it the term is common: walk and sample)."""
VERIFY_LIMIT = 5_000
"""Candidates re-checked against the text all at once, for exact counts."""
SAMPLE = 2_000
"""Posts re-checked per set a facet counts in when a query is common: one standard error of a
count of one post in twenty is 10%, of one in five 4.5%."""
PROBE_SAMPLE = 1_000
"""Posts re-checked to tell whether a word of three or more characters is common (past
:data:`VERIFY_LIMIT` index ids): 50 matches expected at :data:`CHEAP`."""
MATCH_CACHE = 16
"""Queries whose checked posts are kept (per archive generation)."""

_UNKNOWN, _MATCH, _MISS = 0, 1, 2
_READ_CHUNK = 500


class QueryMatches:
    """What is known of one query's matches: a state per row (unknown, match, not a match).

    Thread-safe enough by construction: two requests checking the same rows write the same
    values."""

    def __init__(self, size: int, candidates: IntArray | None, exact: bool) -> None:
        self.state = np.full(size, _UNKNOWN if candidates is None else _MISS, dtype=np.int8)
        if candidates is not None:
            self.state[candidates] = _MATCH if exact else _UNKNOWN
        self.candidates = candidates  # rows newest first, or None: every row may match
        self.exact = exact  # every candidate is a match (no re-check needed)

    def settle(self, rows: IntArray, check: Callable[[IntArray], BoolArray]) -> None:
        """Check the rows of ``rows`` still unknown."""
        unknown = rows[self.state[rows] == _UNKNOWN]
        if len(unknown):
            passed = check(unknown)
            self.state[unknown[passed]] = _MATCH
            self.state[unknown[~passed]] = _MISS

    def matched(self, rows: IntArray) -> IntArray:
        kept: IntArray = rows[self.state[rows] == _MATCH]
        return kept

    def walk(
        self, ordered: IntArray, want: int, check: Callable[[IntArray], BoolArray]
    ) -> tuple[IntArray, bool]:
        """Matches of ``ordered`` in its order, checked as needed until there are ``want`` (or a
        few more), and whether all of ``ordered`` was seen (then they are all its matches)."""
        found: list[IntArray] = []
        count = 0
        start = 0
        step = 128
        while start < len(ordered) and count < want:
            chunk = ordered[start : start + step]
            self.settle(chunk, check)
            hits = self.matched(chunk)
            found.append(hits)
            count += len(hits)
            start += step
            step = min(step * 2, 8192)
        rows = np.concatenate(found) if found else np.zeros(0, dtype=np.int64)
        return rows, start >= len(ordered)


@dataclass(frozen=True)
class TextPage:
    """One page of a text search: its rows, whether more follow, the count and the facets."""

    rows: IntArray
    more: bool
    total: int
    approximate: bool
    facets: dict[str, Any]


class TextSearch:
    """Text search over one archive's facet columns (see the module docstring)."""

    def __init__(self, store: Store, index: FacetIndex) -> None:
        self.store = store
        self.index = index
        self._lock = threading.Lock()
        self._ready = threading.Condition()
        self._tails: Tails | None = None
        self.keeper = TailsKeeper(store)
        self._building: int | None = None
        self._order: tuple[int, npt.NDArray[np.int32]] | None = None
        self._queries: OrderedDict[tuple[int, tuple[str, ...], tuple[str, ...]], QueryMatches] = OrderedDict()

    # -- per-generation structures -----------------------------------------------------------

    def tails(self, cols: Columns, *, wait: bool = False) -> Tails | None:
        """The tails of ``cols``'s generation when built; starts building them if not (in the
        background unless ``wait``): until then short terms take the walk-and-sample path."""
        with self._ready:
            tails = self._tails
            if tails is not None and tails.generation == cols.generation:
                return tails
            start = self._building != cols.generation
            if start:
                self._building = cols.generation
            else:  # being built
                if not wait:
                    return None
                self._ready.wait_for(lambda: self._building != cols.generation)
                tails = self._tails
                return tails if tails is not None and tails.generation == cols.generation else None
        if wait:
            return self._build_tails(cols)
        threading.Thread(target=self._build_tails, args=(cols,), name="mcpkit-web-tails", daemon=True).start()
        return None

    def _build_tails(self, cols: Columns) -> Tails | None:
        tails = None
        try:
            self._sample_order(cols)
            tails = self.keeper.current(cols, self._tails)
        finally:
            with self._ready:
                if tails is not None:
                    self._tails = tails
                if self._building == cols.generation:
                    self._building = None
                self._ready.notify_all()
        return tails

    def _sample_order(self, cols: Columns) -> npt.NDArray[np.int32]:
        """A fixed random order of the rows: a sample of any set is its first rows in it."""
        cached = self._order
        if cached is not None and cached[0] == cols.generation:
            return cached[1]
        order = np.random.default_rng(len(cols)).permutation(len(cols)).astype(np.int32)
        self._order = (cols.generation, order)
        return order

    # -- matching ---------------------------------------------------------------------------------

    def matches(self, cols: Columns, text_filter: TextFilter) -> QueryMatches:
        """The query's known matches (kept for the last :data:`MATCH_CACHE` queries)."""
        key = (cols.generation, text_filter.includes, text_filter.excludes)
        with self._lock:
            found = self._queries.get(key)
            if found is not None:
                self._queries.move_to_end(key)
                return found
        found, final = self._plan(cols, text_filter)
        if not final:  # made without the tails it needed: the next query plans again
            return found
        with self._lock:
            self._queries[key] = found
            while len(self._queries) > MATCH_CACHE:
                self._queries.popitem(last=False)
        return found

    def _plan(self, cols: Columns, text_filter: TextFilter) -> tuple[QueryMatches, bool]:
        """The query's matches, and whether they are final: not when a short term went
        without the tails (none built yet), which a plan kept would have made every later
        answer of the query an estimate, until a restart."""
        conn = self.store.reader
        includes = [t for t in text_filter.folded_includes if t]
        long_terms = [t for t in includes if len(t) >= 3]
        short_terms = [t for t in includes if len(t) < 3]
        sets: list[IntArray] = []
        exact = not long_terms and not text_filter.excludes
        sampled: tuple[IntArray, BoolArray] | None = None
        if long_terms:
            # a few thousand ids cost little; past them, reading up to CHEAP ids of several
            # common trigrams costs more than a sample saying the query is common
            ids = long_term_ids(conn, long_terms, VERIFY_LIMIT)
            if ids is None:
                drawn = self._sample_order(cols)[:PROBE_SAMPLE].astype(np.int64)
                sampled = (drawn, self._checker(cols, text_filter)(drawn))
                if np.count_nonzero(sampled[1]) * len(cols) <= CHEAP * len(drawn):
                    ids = long_term_ids(conn, long_terms, CHEAP)
            if ids is not None:
                sets.append(cols.rows_of(ids))
        # after a write, the tails held are patched from the posts it changed (cheap): wait
        # for them, so the first answer after an import is exact; before any tails exist (a
        # first start with none saved) they are read whole in the background meanwhile
        tails = self.tails(cols, wait=self._tails is not None) if short_terms else None
        for term in short_terms:
            ids = short_term_ids(conn, term, CHEAP) if tails is not None else None
            if ids is None or tails is None:
                exact = False
                continue
            sets.append(np.union1d(np.sort(cols.rows_of(ids)), tails.rows_ending(term)))
        if not sets:
            found = QueryMatches(len(cols), None, False)
        else:
            rows = reduce(lambda a, b: np.intersect1d(a, b, assume_unique=True), sets)
            found = QueryMatches(len(cols), cols.newest_first(rows), exact)
        if sampled is not None:
            found.state[sampled[0]] = np.where(sampled[1], _MATCH, _MISS)
        final = tails is not None or not short_terms
        if found.candidates is None:
            return found, final
        if not exact and len(found.candidates) <= VERIFY_LIMIT:
            found.settle(found.candidates, self._checker(cols, text_filter))
            found.exact = True
        return found, final

    def _checker(self, cols: Columns, text_filter: TextFilter) -> Callable[[IntArray], BoolArray]:
        def check(rows: IntArray) -> BoolArray:
            passed = np.zeros(len(rows), dtype=bool)
            position = {int(cols.ids[r]): i for i, r in enumerate(rows)}
            ids = sorted(position)
            conn = self.store.reader
            for start in range(0, len(ids), _READ_CHUNK):
                part = ids[start : start + _READ_CHUNK]
                marks = ",".join("?" * len(part))
                for post_id, content in conn.execute(
                    f"SELECT post_id, content FROM posts WHERE post_id IN ({marks})", part
                ):
                    if text_filter.matches(content):
                        passed[position[int(post_id)]] = True
            return passed

        return check

    # -- a page -------------------------------------------------------------------------------------

    def page(
        self, cols: Columns, filters: Filters, text_filter: TextFilter, offset: int, size: int
    ) -> TextPage:
        """The page at ``offset`` of the posts matching ``text_filter`` under ``filters``,
        newest first, with the count and every facet's counts (see the module docstring)."""
        found = self.matches(cols, text_filter)
        check = self._checker(cols, text_filter)
        if found.candidates is not None:
            ordered = self.index.select(cols, filters, found.candidates)
        else:
            mask = self.index.mask(cols, filters)
            ordered = cols.order[mask[cols.order]]
        rows, seen_all = found.walk(ordered, offset + size + 1, check)
        page_rows = rows[offset : offset + size]
        more = len(rows) > offset + size
        if found.candidates is not None:
            # exact: the candidates' matches; else a superset (counts "about")
            within = found.matched(found.candidates) if found.exact else found.candidates
            total = len(rows) if seen_all else len(self.index.select(cols, filters, within))
            facets = self.index.counts(cols, filters, within)
            return TextPage(page_rows, more, total, not found.exact, facets)
        total, facets, approximate = self._estimate(cols, filters, found, check)
        if seen_all:
            total = len(rows)
        return TextPage(page_rows, more, total, approximate, facets)

    def newest(self, cols: Columns, filters: Filters, text_filter: TextFilter, count: int) -> IntArray:
        """The rows of the newest ``count`` posts matching ``text_filter`` under ``filters``
        (checked as :meth:`page` checks them, sharing what it learnt)."""
        found = self.matches(cols, text_filter)
        if found.candidates is not None:
            ordered = self.index.select(cols, filters, found.candidates)
        else:
            mask = self.index.mask(cols, filters)
            ordered = cols.order[mask[cols.order]]
        rows, _ = found.walk(ordered, count, self._checker(cols, text_filter))
        newest: IntArray = rows[:count]
        return newest

    def _estimate(
        self, cols: Columns, filters: Filters, found: QueryMatches, check: Callable[[IntArray], BoolArray]
    ) -> tuple[int, dict[str, Any], bool]:
        """Count and facet counts from a sample of each set counted in (scaled to its size)."""
        order = self._sample_order(cols)
        masks = FacetIndex.filter_masks(cols, filters)
        names = {"kind": "kind", "platform": "platform", "account": "account", "lang": "lang"}
        names.update(media="media", months="month")
        bases: dict[str | None, list[str]] = {None: []}
        for out_name, mask_name in names.items():
            bases.setdefault(mask_name if mask_name in masks else None, []).append(out_name)
        facets: dict[str, Any] = {}
        approximate = False
        total = 0
        for skip, outputs in bases.items():
            base = FacetIndex.combined(masks, len(cols), skip)
            drawn, scale = _draw(order, base)
            found.settle(drawn, check)
            matched = found.matched(drawn)
            approximate = approximate or scale != 1.0
            counts = self.index.counts(cols, filters, matched)
            for name in outputs:
                facets[name] = _scaled(counts[name], scale)
            if skip is None:
                total = round(len(matched) * scale)
        return total, {name: facets[name] for name in (*FACETS, "media", "months")}, approximate


def _draw(order: npt.NDArray[np.int32], base: BoolArray) -> tuple[IntArray, float]:
    """The first :data:`SAMPLE` rows of ``base`` in the fixed random ``order`` (a uniform
    sample), and the factor from the sample to the whole set."""
    size = int(np.count_nonzero(base))
    if size == 0:
        return np.zeros(0, dtype=np.int64), 1.0
    if size <= SAMPLE:
        return np.flatnonzero(base).astype(np.int64), 1.0
    span = min(len(order), math.ceil(SAMPLE * len(order) / size * 1.25) + 64)
    while True:
        head = order[:span]
        drawn = head[base[head]][:SAMPLE].astype(np.int64)
        if len(drawn) >= SAMPLE or span >= len(order):
            return drawn, size / len(drawn)
        span = min(len(order), span * 2)


def _scaled(values: list[dict[str, Any]], scale: float) -> list[dict[str, Any]]:
    if scale == 1.0:
        return values
    return [dict(v, count=max(1, round(v["count"] * scale)) if v["count"] else 0) for v in values]
