"""Search logic over the store and the vector spaces; no I/O framing, no validation of wire params.

:class:`Engine` answers upstream's methods with upstream's result shapes. The API module
validates params and moves calls off the event loop; every face goes through it.

Semantics that differ from upstream on purpose (documented in docs/archive-data.md):

* filters and the ``V|T`` text filter are applied *inside* the ranking (masks, then an
  expanding top-k), so ``top_k`` results come back whenever that many posts qualify;
* large spaces are searched through an index (an inverted file, or a flat 8-bit scan where
  the vectors have no structure for one) with exact re-scoring (:mod:`mcpkit.archive.scan_index`);
  returned scores are always exact;
* a ``to`` date without a time includes that whole day;
* queries are embedded with the query prefix of their model;
* a query is refused when its space was built with another model.
"""

from __future__ import annotations

import base64
import functools
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from mcpkit.archive import ranking as hybrid
from mcpkit.archive import safetensors_io, scan_index, threads
from mcpkit.archive.embedders import DEFAULT_MODEL, Embedder, EmbedEndpoint, create_embedder
from mcpkit.archive.errors import ModelMismatchError, SpaceMissingError
from mcpkit.archive.filters import SHOWN, PostFilter
from mcpkit.archive.hubs import HubScores
from mcpkit.archive.pages.browse import THREAD_MAX, Pages
from mcpkit.archive.posts import SHOWN_VISIBILITIES, VISIBILITIES, dedup_key
from mcpkit.archive.query import ParsedQuery, TextFilter, parse_query, parse_terms
from mcpkit.archive.scan_index import ScanIndexes
from mcpkit.archive.settings import SPACES, DateFilter, SearchSettings, UserFilter
from mcpkit.archive.store import PostArrays, Store, facet_mask
from mcpkit.archive.vectors import (
    BoolArray,
    FloatArray,
    IntArray,
    VectorSpace,
    describe,
    eligible_scores,
    top_k,
    vectors_root,
)
from mcpkit.errors import ValidationError

HYBRID_MODES = ("average", "maximum", "minimum")
QUERY_VECTORS = 64
"""Query vectors an engine keeps (see :meth:`Engine._query_vector`)."""


_DIRECT = VISIBILITIES.index("direct")


def text_source(mode: str) -> str:
    """The text a ``T`` filter tests in ``mode``: the mode's own text, content for hybrids."""
    return mode if mode in SPACES else "content"


@dataclass(frozen=True, slots=True)
class _Facets:
    """Relations, platform, account, media and visibility columns of some rows (codes as in
    :class:`PostArrays`)."""

    relations: npt.NDArray[np.uint8]
    platforms: npt.NDArray[np.uint8]
    accounts: npt.NDArray[np.int32]
    has_media: npt.NDArray[np.bool_]
    visibilities: npt.NDArray[np.uint8]
    account_names: tuple[str, ...]

    @property
    def any_direct(self) -> bool:
        """Whether some of these rows are direct posts (which a request must name to see)."""
        return bool(np.any(self.visibilities == _DIRECT))

    @classmethod
    def of(cls, arrays: PostArrays, rows: IntArray | None = None) -> _Facets:
        """The facets of every post, or of the posts at ``rows``."""
        if rows is None:
            return cls(
                arrays.relations, arrays.platforms, arrays.accounts, arrays.has_media, arrays.visibilities,
                arrays.account_names,
            )  # fmt: skip
        if not len(arrays.post_ids):  # no posts: every row is out (``in_db``), whatever its codes
            count = len(rows)
            return cls(
                np.zeros(count, np.uint8), np.zeros(count, np.uint8), np.zeros(count, np.int32),
                np.zeros(count, np.bool_), np.zeros(count, np.uint8), arrays.account_names,
            )  # fmt: skip
        return cls(
            arrays.relations[rows], arrays.platforms[rows], arrays.accounts[rows], arrays.has_media[rows],
            arrays.visibilities[rows], arrays.account_names,
        )  # fmt: skip

    def mask(self, post_filter: PostFilter) -> BoolArray:
        """Per row: does ``post_filter`` pass? One table lookup per condition."""
        return facet_mask(
            self.relations, self.platforms, self.accounts, self.has_media, self.visibilities,
            self.account_names, post_filter,
        )  # fmt: skip


class _RowsByUser:
    """The rows of each user id, so a filter naming a few users reads their rows only.

    Why: at ten million rows a filter naming five users read every row's user (an 80 MB
    gather) and then tested every row's date, 60 ms a query for 30,000 rows kept. Grouping the
    rows by user is a sort of every row (about a second at ten million), so it is made the first
    time a filter names users, not with the columns: a process that never filters by user never
    pays it.
    """

    def __init__(self, user_ids: IntArray) -> None:
        self._user_ids = user_ids
        self._lock = threading.Lock()
        self._order: IntArray | None = None
        self._starts: IntArray | None = None
        self.counts = np.bincount(user_ids) if len(user_ids) else np.zeros(1, dtype=np.int64)

    def total(self, user_ids: Sequence[int]) -> int:
        """Rows of these users."""
        return sum(int(self.counts[u]) for u in set(user_ids) if 0 <= u < len(self.counts))

    def rows(self, user_ids: Sequence[int]) -> IntArray:
        """The rows of these users, ascending."""
        with self._lock:
            if self._order is None:
                self._order = np.argsort(self._user_ids, kind="stable")
                self._starts = np.concatenate([[0], np.cumsum(self.counts)])
            order, starts = self._order, self._starts
        assert starts is not None
        parts = [order[starts[u] : starts[u + 1]] for u in set(user_ids) if 0 <= u < len(self.counts)]
        if not parts:
            return np.zeros(0, dtype=np.int64)
        return np.sort(np.concatenate(parts))


NARROW_SHARE = 16
"""A filter naming users whose rows are at most 1/16 of the space reads those rows only
(:class:`_RowsByUser`); a broader one tests every row."""


@dataclass(frozen=True, slots=True)
class _Columns:
    """Per-row filter columns of one space, valid for one posts generation."""

    generation: int
    count: int
    in_db: BoolArray
    all_in_db: bool
    user_ids: IntArray
    ts: npt.NDArray[np.float64]
    user_counts: IntArray  # indexed by user_id
    facets: _Facets
    arrays: PostArrays  # every post of the store, for counts under a filter
    by_user: _RowsByUser


def _derived_columns(generation: int, space: VectorSpace, arrays: PostArrays) -> _Columns:
    """The columns of ``space``'s rows, looked up in the columns of every post."""
    pos = np.searchsorted(arrays.post_ids, space.ids) if len(arrays.post_ids) else None
    if pos is None:
        in_db = np.zeros(len(space), dtype=bool)
        users = np.zeros(len(space), dtype=np.int64)
        ts = np.full(len(space), np.nan)
        clipped = np.zeros(len(space), dtype=np.int64)
    else:
        clipped = np.minimum(pos, len(arrays.post_ids) - 1)
        in_db = arrays.post_ids[clipped] == np.asarray(space.ids)
        users = np.where(in_db, arrays.user_ids[clipped], 0)
        ts = np.where(in_db, arrays.ts[clipped], np.nan)
    facets = _Facets.of(arrays, clipped)
    return _Columns(
        generation,
        len(space),
        in_db,
        bool(in_db.all()),
        users,
        ts,
        arrays.user_counts(),
        facets,
        arrays,
        _RowsByUser(users),
    )


class _Ranking:
    """Rows of one space best first, for any k: ``rank(k) -> (rows, exact scores)``.

    Either a full score vector (computed once, then exact top-k per call) or, for a large
    space, the quantised scan's nominate-and-re-score, run again for a larger k.
    """

    def __init__(
        self,
        space: VectorSpace,
        query: FloatArray | None = None,
        mask: BoolArray | None = None,
        scan: scan_index.Index | None = None,
        scores: FloatArray | None = None,
        rows: IntArray | None = None,
    ) -> None:
        self.space = space
        self._query = query
        self._mask = mask
        self._scan = scan
        self._scores = scores
        self._rows: IntArray | None = rows  # rows of ``_scores`` when not every row

    def rank(self, k: int | None) -> tuple[IntArray, FloatArray]:
        if (
            self._scan is not None
            and self._query is not None
            and k is not None
            and scan_index.worth_scanning(self.space, k, self._mask, self._scan)
        ):
            return self._scan.search(self.space, self._query, k, self._mask)
        if self._scores is None:
            assert self._query is not None
            self._rows, self._scores = eligible_scores(self.space, self._query, self._mask)
        best = top_k(self._scores, k)
        return (best if self._rows is None else self._rows[best]), self._scores[best]


class Engine:
    """Thread-safe: caches are rebuilt under a lock; SQLite reads use per-thread connections."""

    def __init__(
        self,
        store: Store,
        root: Path,
        *,
        embedder: Embedder | None = None,
        embedder_factory: Callable[[str], Embedder] = create_embedder,
        index_min_rows: int | None = scan_index.MIN_ROWS,
    ) -> None:
        self.store = store
        self.root = root
        self._explicit = embedder
        self._factory = embedder_factory
        self._embedders: dict[str, Embedder] = {}
        self._query_vectors: OrderedDict[tuple[str, str], FloatArray] = OrderedDict()
        self._spaces: dict[str, tuple[float, VectorSpace]] = {}
        self._columns: dict[str, _Columns] = {}
        self._columns_lock = threading.Lock()
        self._refreshing: set[str] = set()
        self._refresh_threads: list[threading.Thread] = []
        self._lock = threading.RLock()
        self.scans = ScanIndexes(index_min_rows)
        self._hubs: dict[Path, HubScores] = {}
        self._pages: Pages | None = None
        self._doc_freqs = hybrid.DocFreqs()

    @classmethod
    def open(
        cls,
        db_path: Path,
        *,
        embedder: Embedder | None = None,
        exact: bool = False,
        endpoint: EmbedEndpoint | None = None,
    ) -> Engine:
        """``exact=True`` turns the quantised first pass off (the CLI sets it from
        ``MCPKIT_ARCHIVE_EXACT``); ``endpoint`` serves the ``openai:`` models spaces record."""
        min_rows = None if exact else scan_index.MIN_ROWS
        return cls(
            Store(db_path),
            vectors_root(db_path),
            embedder=embedder,
            embedder_factory=functools.partial(create_embedder, endpoint=endpoint),
            index_min_rows=min_rows,
        )

    def close(self) -> None:
        """Close the store once no column refresh reads it (closing a connection another
        thread is reading with crashes SQLite)."""
        with self._lock:
            refreshing = list(self._refresh_threads)
        for thread in refreshing:
            thread.join()
        self.store.close()

    # -- spaces, embedders, filter columns ---------------------------------------------------

    def space(self, name: str) -> VectorSpace | None:
        """The space as last committed (re-opened when its meta.json changed)."""
        meta = self.root / name / "meta.json"
        try:
            stamp = meta.stat().st_mtime_ns
        except FileNotFoundError:
            self._spaces.pop(name, None)
            return None
        with self._lock:
            cached = self._spaces.get(name)
            if cached is None or cached[0] != stamp:
                opened = VectorSpace.open(self.root, name)
                if opened is None:
                    return None
                cached = (stamp, opened)
                self._spaces[name] = cached
            return cached[1]

    def require_space(self, name: str) -> VectorSpace:
        space = self.space(name)
        if space is None or len(space) == 0:
            raise SpaceMissingError(
                f"no {name} vectors yet: run `mcpkit archive embed --space {name}`"
                + (" or import them with `mcpkit archive import-twilog-search`" if name != "content" else "")
            )
        return space

    def embedder_for(self, model: str) -> Embedder:
        """The embedder that built a space; an explicitly given one must be that model."""
        with self._lock:
            if self._explicit is not None:
                if self._explicit.name != model:
                    raise ModelMismatchError(
                        f"this space was embedded with {model!r}; a query embedded with "
                        f"{self._explicit.name!r} cannot be compared with it"
                    )
                return self._explicit
            embedder = self._embedders.get(model)
            if embedder is None:
                embedder = self._factory(model)
                self._embedders[model] = embedder
            return embedder

    def _query_vector(self, space: VectorSpace, text: str) -> FloatArray:
        """The query embedded by ``space``'s model; the last :data:`QUERY_VECTORS` are kept (a
        search by meaning embeds its query again for its verdict, in the content space)."""
        key = (space.model, text)
        with self._lock:
            kept = self._query_vectors.get(key)
            if kept is not None:
                self._query_vectors.move_to_end(key)
                return kept
        vector = np.array(self.embedder_for(space.model).embed_query(text), dtype=np.float32).reshape(-1)
        vector.setflags(write=False)  # shared by the searches that ask again
        with self._lock:
            self._query_vectors[key] = vector
            while len(self._query_vectors) > QUERY_VECTORS:
                self._query_vectors.popitem(last=False)
        return vector

    def _columns_for(self, name: str, space: VectorSpace, *, wait: bool = True) -> _Columns | None:
        """The filter columns of ``space``'s rows as of the posts now stored.

        Built outside the engine's lock (their own lock: seconds at ten million posts when the
        posts must be read whole), so nothing else waits for them. ``wait=False`` (a search
        that filters nothing) never waits: when they are not current it starts their refresh
        on a thread of its own and answers None.
        """
        if not wait:
            cached = self._columns.get(name)
            generation = self.store.posts_generation()
            if cached is not None and cached.generation == generation and cached.count == len(space):
                return cached
            self._refresh_columns_soon(name, space)
            return None
        generation, arrays = self.store.post_arrays()
        cached = self._columns.get(name)
        if cached is not None and cached.generation == generation and cached.count == len(space):
            return cached
        with self._columns_lock:
            cached = self._columns.get(name)
            if cached is not None and cached.generation == generation and cached.count == len(space):
                return cached
            columns = _derived_columns(generation, space, arrays)
            self._columns[name] = columns
            return columns

    def _refresh_columns_soon(self, name: str, space: VectorSpace) -> None:
        with self._lock:
            if name in self._refreshing:
                return
            self._refreshing.add(name)

        def refresh() -> None:
            try:
                self._columns_for(name, space)
            except Exception:  # a background head start only: the next filtered search
                pass  # builds the columns itself and reports what fails to its caller
            finally:
                with self._lock:
                    self._refreshing.discard(name)

        thread = threading.Thread(target=refresh, name=f"columns-{name}", daemon=True)
        with self._lock:
            self._refresh_threads = [t for t in self._refresh_threads if t.is_alive()]
            self._refresh_threads.append(thread)
        thread.start()

    def hub_scores(self, space: VectorSpace) -> HubScores:
        """The hybrid mode's hub scores of ``space`` (:mod:`mcpkit.archive.hubs`)."""
        with self._lock:
            hubs = self._hubs.get(space.directory)
            if hubs is None:
                hubs = self._hubs[space.directory] = HubScores(space.directory)
            return hubs

    def warm(self) -> None:
        """Build the filter columns of every space now (about 1 s per million posts), start
        the vector indexes of large spaces (built in their own thread, kept current from then
        on) and measure the content space's hub scores (stored beside its vectors; a minute
        per million posts the first time, nothing once stored), so the first searches do not
        pay for them. Long-lived faces call it once, in the background; searches meanwhile
        are exact, and hybrid ones measure the hub scores of the few rows they rank."""
        self.scans.auto_build = True
        for name in SPACES:
            space = self.space(name)
            if space is not None and len(space):
                self._columns_for(name, space)
                self.scans.usable(name, space)
        content = self.space("content")
        if content is not None and len(content):
            self.hub_scores(content).fill(content)

    # -- scoring -------------------------------------------------------------------------------

    def _ranking(
        self,
        text: str,
        mode: str,
        weights: tuple[float, float, float] | None,
        mask_fn: Callable[[str, VectorSpace], BoolArray | None],
    ) -> _Ranking:
        """The ranking of ``text`` over the rows of the base space (content for hybrids).

        ``mask_fn`` answers ``None`` when every row is eligible: the search is then the bare
        scan, with no mask to build or apply.
        """
        if mode in SPACES:
            space = self.require_space(mode)
            mask = mask_fn(mode, space)
            query = space.check_query(self._query_vector(space, text))
            return _Ranking(space, query, mask, self.scans.usable(mode, space))
        base, combined = self._hybrid_scores(text, mode, weights, mask_fn)
        return _Ranking(base, scores=combined)

    def _hybrid_scores(
        self,
        text: str,
        mode: str,
        weights: tuple[float, float, float] | None,
        mask_fn: Callable[[str, VectorSpace], BoolArray | None],
    ) -> tuple[VectorSpace, FloatArray]:
        """Combined exact scores over the content rows present in all three spaces."""
        spaces = [self.require_space(name) for name in SPACES]
        base = spaces[0]
        mask = mask_fn("content", base)
        if mask is None:
            mask = np.ones(len(base), dtype=bool)
        aligned: list[FloatArray] = []
        for space in spaces:
            rows = np.arange(len(base)) if space is base else space.rows_of(base.ids)
            mask = mask & (rows >= 0)
            full = space.scores(self._query_vector(space, text))
            aligned.append(np.where(rows >= 0, full[np.maximum(rows, 0)], -np.inf).astype(np.float32))
        stacked = np.vstack(aligned)
        if mode == "average":
            w = np.asarray(weights if weights is not None else (1 / 3, 1 / 3, 1 / 3), dtype=np.float32)
            combined = (w[:, None] * np.where(np.isfinite(stacked), stacked, 0)).sum(axis=0)
        elif mode == "maximum":
            combined = stacked.max(axis=0)
        else:
            combined = stacked.min(axis=0)
        combined = np.where(mask, combined, -np.inf).astype(np.float32)
        return base, combined

    def _filter_mask(
        self, user_filter: UserFilter, date_filter: DateFilter, post_filter: PostFilter | None = None
    ) -> Callable[[str, VectorSpace], BoolArray | None]:
        # upstream's request (None) leaves out direct posts too, when the archive holds any: the
        # columns say so once they are read (a search that filters nothing else does not wait)
        post_filter = SHOWN if post_filter is None else post_filter
        only_default = (
            not post_filter.other_than_visibility and post_filter.visibilities == SHOWN_VISIBILITIES
        )
        active = user_filter.active or date_filter.active or (post_filter.active and not only_default)

        def build(name: str, space: VectorSpace) -> BoolArray | None:
            columns = self._columns_for(name, space, wait=active)
            if columns is None:
                return None  # unknown yet: the walk skips posts not stored
            posts_active = post_filter.active and (not only_default or columns.facets.any_direct)
            if columns.all_in_db and not (active or posts_active):
                return None  # every row
            named = self.store.user_ids_by_name(user_filter.includes) if user_filter.includes else None
            if named is not None and columns.by_user.total(named) * NARROW_SHARE <= columns.count:
                rows = columns.by_user.rows(named)  # the named users' rows, every other row out
                mask = np.zeros(columns.count, dtype=bool)
                mask[rows[passes(columns, rows, None, posts_active)]] = True
                return mask
            return passes(columns, slice(None), named, posts_active)

        def passes(
            columns: _Columns, at: IntArray | slice, named: list[int] | None, posts_active: bool
        ) -> BoolArray:
            """Which of the rows ``at`` (rows, or every row) pass the filters; users named
            by an include filter are tested here only when ``named`` is given."""
            keep: BoolArray = columns.in_db[at].copy()
            if posts_active:
                keep &= columns.facets.mask(post_filter)[at]
            if named is not None:
                keep &= _user_table(named, columns)[at]
            elif user_filter.excludes and not user_filter.includes:
                keep &= ~_user_table(self.store.user_ids_by_name(user_filter.excludes), columns)[at]
            if user_filter.threshold_min is not None or user_filter.threshold_max is not None:
                counts = columns.user_counts
                if posts_active:
                    counts = _filtered_user_counts(columns, post_filter)
                per_row = counts[np.minimum(columns.user_ids[at], len(counts) - 1)]
                if user_filter.threshold_min is not None:
                    keep &= per_row >= user_filter.threshold_min
                if user_filter.threshold_max is not None:
                    keep &= per_row <= user_filter.threshold_max
            if date_filter.active:
                ts = columns.ts[at]
                known = ~np.isnan(ts)
                inside = np.ones(len(keep), dtype=bool)
                with np.errstate(invalid="ignore"):
                    if date_filter.start is not None:
                        inside &= ts >= date_filter.start
                    if date_filter.end is not None:
                        inside &= ts < date_filter.end
                keep &= inside | ~known
            return keep

        return build

    # -- methods -------------------------------------------------------------------------------

    def search_similar(
        self,
        query: str,
        settings: SearchSettings | None = None,
        *,
        mode: str = "content",
        weights: tuple[float, float, float] | None = None,
        offset: int = 0,
        post_filter: PostFilter | None = None,
    ) -> list[dict[str, Any]]:
        """Ranked, filtered, deduplicated results ``[{rank, score, post}]``: ``top_k`` of them
        after skipping the best ``offset`` (ranks keep counting from ``offset + 1``).

        ``post_filter`` (mcpkit's kinds, platforms, accounts, media) ``None`` is upstream's
        search: every post, upstream's post shape; given, only the posts it passes, in mcpkit's
        post shape (:meth:`Store.extend_posts`).
        """
        settings = settings or SearchSettings()
        parsed = parse_query(query)
        wanted = offset + settings.top_k
        if parsed.text_only:
            found = self._text_only(parsed, settings, text_source(mode), wanted, post_filter)
        elif mode == hybrid.HYBRID:
            found = self._hybrid(parsed, settings, wanted, post_filter)
        else:
            ranking = self._ranking(
                parsed.vector_text,
                mode,
                weights,
                self._filter_mask(settings.user_filter, settings.date_filter, post_filter),
            )
            found = self._walk(ranking, wanted, parsed.text_filter, text_source(mode))
            if post_filter is not None:  # mcpkit's request: every mode carries the verdict
                self._judge_ranked(parsed, found)
        found = found[offset:]
        if post_filter is not None:
            for result, post in zip(found, self.store.extend_posts([r["post"] for r in found]), strict=True):
                result["post"] = post
        return found

    def _walk(
        self, ranking: _Ranking, wanted: int, text_filter: TextFilter, source: str
    ) -> list[dict[str, Any]]:
        """Take ranked rows in growing top-k rounds until ``wanted`` distinct posts pass.

        Rows excluded by filters are never ranked, so each round is one top-k. The text
        filter tests the ``source`` text of each post (its content, reasoning or summary).
        """
        space = ranking.space
        results: list[dict[str, Any]] = []
        seen_keys: set[tuple[str, str]] = set()
        done = 0
        k = max(wanted * 4, 64)
        while True:
            order, scores = ranking.rank(k)
            fresh = order[done:]
            ids = [int(post_id) for post_id in space.ids[fresh]]
            posts = self.store.posts_by_ids(ids)
            for score, post_id in zip(scores[done:], ids, strict=True):
                post = posts.get(post_id)
                if post is None or (text_filter.active and not text_filter.matches(post.get(source))):
                    continue
                key = dedup_key(post["user"], post["content"])
                if key in seen_keys:
                    continue
                seen_keys.add(key)
                results.append({"rank": len(results) + 1, "score": float(score), "post": post})
                if len(results) >= wanted:
                    return results
            if len(order) < k:
                return results
            done = len(order)
            k *= 4

    def _hybrid(
        self, parsed: ParsedQuery, settings: SearchSettings, wanted: int, post_filter: PostFilter | None
    ) -> list[dict[str, Any]]:
        """mcpkit's ``hybrid`` mode (:mod:`mcpkit.archive.ranking`): the hub-corrected vector
        ranking and the trigram text ranking of the same filtered content rows, fused; each
        result also carries its similarity, its text coverage and whether it is a real match."""
        space = self.require_space("content")
        mask = self._filter_mask(settings.user_filter, settings.date_filter, post_filter)("content", space)
        query = space.check_query(self._query_vector(space, parsed.vector_text))
        pool = max(wanted * 4, hybrid.POOL)
        cosine = _Ranking(space, query, mask, self.scans.usable("content", space))
        rows, scores = cosine.rank(pool * hybrid.OVERFETCH)
        texts = self.store.posts_by_ids([int(i) for i in space.ids[rows]], enrich=False)
        short = hybrid.brevity(texts[int(i)]["content"] if int(i) in texts else "" for i in space.ids[rows])
        hubs = self.hub_scores(space).for_rows(space, rows)
        vector_rows = hybrid.hub_rerank(rows, scores, hubs, short, pool)

        def accept(post_ids: IntArray) -> BoolArray:
            found = space.rows_of(post_ids)
            passed = found >= 0
            return passed if mask is None else passed & mask[np.maximum(found, 0)]

        hits = hybrid.text_hits(
            self.store.reader,
            "fts_content",
            parsed.vector_text,
            len(space),
            gate=hybrid.TEXT_GATE,
            limit=pool,
            accept=accept,
            doc_freqs=self._doc_freqs,
            generation=self.store.posts_generation(),
            id_range=None if mask is None else _id_range(space, mask),
        )
        text_rows = space.rows_of(hits.post_ids)
        fused_rows, fused = hybrid.fused(vector_rows, text_rows)
        found = self._walk(
            _Ranking(space, scores=fused, rows=fused_rows), wanted, parsed.text_filter, "content"
        )
        self._judge(space, query, found, hits)
        return found

    def _judge(
        self, space: VectorSpace, query: FloatArray, found: list[dict[str, Any]], hits: hybrid.TextHits
    ) -> None:
        """The "no good match" verdict of each result (:mod:`mcpkit.archive.ranking`), measured in
        the content ``space`` whatever the mode ranked by: ``similarity`` (cosine less the length
        prior), ``text_match`` (coverage of the query's trigrams ``hits`` weighs) and ``match``."""
        rows = space.rows_of([r["post"]["post_id"] for r in found])
        held = rows >= 0
        cosines = np.zeros(len(found), dtype=np.float32)
        hubs = np.zeros(len(found), dtype=np.float32)
        if held.any():
            cosines[held] = space.read_rows(rows[held]) @ query
            hubs[held] = self.hub_scores(space).for_rows(space, rows[held])
        texts = [r["post"]["content"] for r in found]
        similarities = hybrid.hub_adjusted(cosines, texts)
        calibration = hybrid.calibration_for(space.model)
        hybrid.annotate(found, similarities, hits.coverage_of(texts), calibration, hubs.tolist())

    def _judge_ranked(self, parsed: ParsedQuery, found: list[dict[str, Any]]) -> None:
        """:meth:`_judge` for a search that ranked by meaning alone (any vector mode): the query
        embedded for the content space, its trigrams weighed without reading a doclist."""
        space = self.space("content")
        if space is None or not len(space) or not found:
            return
        query = space.check_query(self._query_vector(space, parsed.vector_text))
        weights = hybrid.query_weights(
            self.store.reader,
            "fts_content",
            parsed.vector_text,
            len(space),
            doc_freqs=self._doc_freqs,
            generation=self.store.posts_generation(),
        )
        self._judge(space, query, found, weights)

    def _text_only(
        self,
        parsed: ParsedQuery,
        settings: SearchSettings,
        source: str,
        wanted: int,
        post_filter: PostFilter | None = None,
    ) -> list[dict[str, Any]]:
        """``| T`` queries: every post matching T scores 1.0, newest first, filters and dedup applied."""
        user_filter, date_filter = settings.user_filter, settings.date_filter
        counts = self.store.user_counts(post_filter) if user_filter.active else {}
        by_name = {name: count for name, count in counts.values()}
        results: list[dict[str, Any]] = []
        seen_keys: set[tuple[str, str]] = set()
        for post, ts in self.store.matching_posts(parsed.text_filter, source, post_filter):
            if not _user_passes(post["user"], user_filter, by_name) or not _date_passes(ts, date_filter):
                continue
            key = dedup_key(post["user"], post["content"])
            if key in seen_keys:
                continue
            seen_keys.add(key)
            results.append({"rank": len(results) + 1, "score": 1.0, "post": post})
            if len(results) >= wanted:
                break
        self.store.with_enrichments([r["post"] for r in results])
        return results

    def vector_search(
        self,
        query: str,
        top: int | None = None,
        *,
        mode: str = "content",
        weights: tuple[float, float, float] | None = None,
    ) -> list[tuple[int, float]]:
        """Raw ranking ``[(post_id, score)]`` without user/date filters or dedup (upstream's
        extension); the ``T`` of ``Q|T`` keeps only posts whose mode text matches, before
        ``top`` is counted."""
        parsed = parse_query(query)
        if parsed.text_only:
            raise ValidationError("Vector query is empty: vector_search requires a vector query part")
        if mode == hybrid.HYBRID:
            raise ValidationError("mode hybrid ranks text and meaning together: use search_similar for it")
        text_filter = parsed.text_filter
        source = text_source(mode)

        def matching(name: str, space: VectorSpace) -> BoolArray | None:
            columns = self._columns_for(name, space, wait=True)  # no id of a direct post, ever
            mask: BoolArray | None = None
            if columns is not None and columns.facets.any_direct:  # no direct post, all else as is
                mask = columns.facets.visibilities != _DIRECT
            if not text_filter.active:
                return mask
            ids = np.fromiter(
                (post["post_id"] for post, _ in self.store.matching_posts(text_filter, source)),
                dtype=np.int64,
            )
            found: BoolArray = np.isin(np.asarray(space.ids), ids)
            return found if mask is None else found & mask

        ranking = self._ranking(parsed.vector_text, mode, weights, matching)
        order, scores = ranking.rank(top)
        return [(int(ranking.space.ids[row]), float(score)) for row, score in zip(order, scores, strict=True)]

    def search_posts_by_text(
        self,
        term: str,
        limit: int = 50,
        source: str = "content",
        offset: int = 0,
        post_filter: PostFilter | None = None,
    ) -> list[dict[str, Any]]:
        """Posts whose ``source`` text matches the terms of ``term``, newest first (with a
        ``post_filter``: only those it passes, in mcpkit's post shape)."""
        posts = self.store.text_search(parse_terms(term), limit, source, offset, post_filter)
        return posts if post_filter is None else self.store.extend_posts(posts)

    def user_stats(
        self, limit: int = 50, offset: int = 0, post_filter: PostFilter | None = None
    ) -> list[dict[str, Any]]:
        """Users by number of posts, counting the posts ``post_filter`` passes (``None``: all)."""
        counts = sorted(self.store.user_counts(post_filter).values(), key=lambda item: (-item[1], item[0]))
        return [{"user": name, "post_count": count} for name, count in counts[offset : offset + limit]]

    def user_list(self) -> list[str]:
        return [item["user"] for item in self.user_stats(limit=2**31)]

    def database_stats(self, post_filter: PostFilter | None = None) -> dict[str, Any]:
        """Totals and the date range; with a ``post_filter``, of the posts it passes, and their
        counts by kind, platform and account (each ignoring its own condition)."""
        if post_filter is not None:
            return {**self.store.filtered_stats(post_filter), "enrichment": self.store.enrichment_coverage()}
        counts = self.store.counts()
        earliest, latest = self.store.date_range()
        return {
            "total_posts": counts["total_posts"],
            "total_users": counts["total_users"],
            "date_range": {"earliest": earliest, "latest": latest},
            "enrichment": self.store.enrichment_coverage(),
        }

    def thread(self, reference: str, limit: int = 50, offset: int = 0) -> dict[str, Any]:
        """The post ``reference`` names in its conversation (:mod:`mcpkit.archive.threads`):
        its self-reply chain in time order, ``limit`` posts from ``offset``, and the post the
        chain replies to when archived; paged as every mcpkit list."""
        focus = threads.find_post(self.store, reference)
        thread = threads.walk(self.store, focus)
        page = [node.post_id for node in thread.posts[offset : offset + limit]]
        wanted = page + ([thread.parent.post_id] if thread.parent is not None else [])
        found = self.store.posts_by_ids(wanted)
        posts = self.store.extend_posts([found[i] for i in page if i in found])
        parent = None
        if thread.parent is not None and thread.parent.post_id in found:
            parent = self.store.extend_posts([found[thread.parent.post_id]])[0]
        total = len(thread.posts)
        result: dict[str, Any] = {
            "id": focus.source_form,
            "in_reply_to": parent,
            "in_reply_to_id": thread.parent_ref,
            "focus_offset": thread.focus_offset,
            "posts": posts,
            "offset": offset,
            "limit": limit,
            "returned": len(posts),
            "total_count": total,
        }
        if offset + len(posts) < total:
            result["next_offset"] = offset + len(posts)
        if thread.truncated:
            result["truncated"] = True
        return result

    @property
    def pages(self) -> Pages:
        """The pages' facet columns and text search (:mod:`mcpkit.archive.pages`), made on
        first use: only the faces that show pages pay for them."""
        with self._lock:
            if self._pages is None:
                self._pages = Pages(self.store)
            return self._pages

    def post_page(self, reference: str, limit: int = THREAD_MAX) -> dict[str, Any] | None:
        """The post ``reference`` names as its page shows it (:meth:`Pages.post`): its thread
        is read a page of ``limit`` posts holding the post (around it in a longer thread)."""
        thread = self.thread(reference, limit, 0)
        focus = int(thread["focus_offset"])
        if focus >= len(thread["posts"]):
            total = int(thread["total_count"])
            thread = self.thread(reference, limit, max(0, min(focus - limit // 2, total - limit)))
        return self.pages.post(thread)

    def media_file(self, reference: str, position: int) -> dict[str, str] | None:
        """Where attachment ``position`` of the post ``reference`` names lives (:meth:`Pages.media_file`)."""
        return self.pages.media_file(threads.find_post(self.store, reference).post_id, position)

    def status(self) -> dict[str, Any]:
        counts = self.store.counts()
        spaces = describe(self.root)
        content = spaces.get("content")
        model = content["model"] if content else (self._explicit.name if self._explicit else DEFAULT_MODEL)
        return {
            "status": "running",
            "ready": True,
            "server_type": "TwilogServer",
            "model": model,
            "data_stats": counts,
            "embeddings_loaded": content["count"] if content else 0,
            "search_engine_ready": True,
            "spaces": spaces,
            "enrichment": self.store.enrichment_coverage(),
            "vector_index": self.scans.status(),
            # which archive answers, and which process: a query names the archive it reached,
            # and `archive start` knows its own server from another one on the same port
            "db": str(self.store.path),
            "pid": os.getpid(),
        }

    def embed_text(self, text: str) -> dict[str, str]:
        """``{"vector": base64(safetensors {"vector": F32 [1, dim]})}`` with the content model."""
        space = self.space("content")
        model = (
            space.model if space is not None else (self._explicit.name if self._explicit else DEFAULT_MODEL)
        )
        vector = np.asarray(self.embedder_for(model).embed_query(text), dtype=np.float32).reshape(1, -1)
        return {"vector": base64.b64encode(safetensors_io.dumps({"vector": vector})).decode("ascii")}


def _id_range(space: VectorSpace, mask: BoolArray) -> tuple[int, int]:
    """The lowest and highest post id of the rows ``mask`` keeps (empty: a range of none)."""
    kept = np.asarray(space.ids)[mask]
    return (int(kept.min()), int(kept.max())) if len(kept) else (1, 0)


def _user_table(user_ids: Sequence[int], columns: _Columns) -> BoolArray:
    """Per row: is the row's user one of ``user_ids``? A table lookup (np.isin took 16 ms
    per query at a million rows; this takes about 2)."""
    table = np.zeros(max(len(columns.user_counts), len(columns.by_user.counts)), dtype=bool)
    known = [u for u in user_ids if 0 <= u < len(table)]
    table[known] = True
    result: BoolArray = table[columns.user_ids]
    return result


def _filtered_user_counts(columns: _Columns, post_filter: PostFilter) -> IntArray:
    """Posts per user id among every post ``post_filter`` passes (thresholds under a filter
    count what the filtered user list shows); unknown users (id 0) count nothing, as unfiltered."""
    arrays = columns.arrays
    counts = arrays.user_counts(arrays.passing(post_filter))
    size = max(len(columns.user_counts), int(arrays.user_ids.max(initial=0)) + 1)
    return np.pad(counts, (0, max(0, size - len(counts))))


def _user_passes(user: str, user_filter: UserFilter, counts: dict[str, int]) -> bool:
    if user_filter.includes:
        if user not in user_filter.includes:
            return False
    elif user in user_filter.excludes:
        return False
    count = counts.get(user, 0)
    if user_filter.threshold_min is not None and count < user_filter.threshold_min:
        return False
    return not (user_filter.threshold_max is not None and count > user_filter.threshold_max)


def _date_passes(ts: int | None, date_filter: DateFilter) -> bool:
    if ts is None:
        return True
    if date_filter.start is not None and ts < date_filter.start:
        return False
    return not (date_filter.end is not None and ts >= date_filter.end)
