"""The pages' read queries: facet columns, counts, pages of posts, threads and media.

Why a module of its own: facet counts and the timeline must answer in milliseconds on a
million posts, which a ``GROUP BY`` per facet per keystroke cannot (each is a scan). So the
few small per-post columns a facet needs (month, day, kind, platform, account, media, language)
are numpy arrays, and every count is a ``bincount`` over a mask. They come from the store's
filter columns, which follow each write to posts by re-reading only the posts it changed (an
enrichment changes none), so a page never reads every post again.
Posts themselves are never held: a page reads only the rows it shows.

Everything here reads the store's per-thread reader connection; nothing writes.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from mcpkit.archive.export_media import export_holds
from mcpkit.archive.facets import FACETS, Filters
from mcpkit.archive.posts import (
    KIND_BITS,
    KINDS,
    PLATFORMS,
    VISIBILITIES,
    post_key,
    primary_kind,
)
from mcpkit.archive.store import UNKNOWN_CODE, Store

__all__ = [
    "BoolArray",
    "Columns",
    "FacetIndex",
    "IntArray",
    "MediaFile",
]

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

_PRIMARY_CODES = np.array(
    [KINDS.index(primary_kind(r)) if r else UNKNOWN_CODE for r in range(256)], dtype=np.uint8
)
"""The kind code a post's relations show it as (0, a kind no release names, stays unknown)."""


@dataclass
class Columns:
    """The per-post facet columns of one posts generation, sorted by post id."""

    generation: int
    ids: IntArray
    month: npt.NDArray[np.int32]  # months since 1970-01; -1 = no date
    mday: npt.NDArray[np.int16]  # month * 100 + day; -1 = no date
    media: BoolArray
    codes: dict[str, npt.NDArray[np.int32]]  # facet -> code per post
    labels: dict[str, list[str]]  # facet -> label per code
    rank: IntArray  # position of each post in newest-first order
    order: IntArray  # rows newest first
    relations: npt.NDArray[np.uint8] = field(default_factory=lambda: np.zeros(0, dtype=np.uint8))
    """Each post's set of relations (``posts.KIND_BITS``): the kind facet selects and counts by
    them (a post liked and bookmarked is under both)."""
    hidden: BoolArray | None = None
    """The direct posts, which the page never shows (None: there are none)."""
    _code_of: dict[str, dict[str, int]] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.ids)

    def code(self, facet: str, label: str) -> int:
        if facet not in self._code_of:
            self._code_of[facet] = {name: i for i, name in enumerate(self.labels[facet])}
        return self._code_of[facet].get(label, -1)

    def rows_of(self, post_ids: Iterable[int]) -> IntArray:
        """Row numbers of ``post_ids`` (ids not in the columns are left out, order kept)."""
        wanted = np.fromiter(post_ids, dtype=np.int64)
        if not len(wanted) or not len(self.ids):
            return np.zeros(0, dtype=np.int64)
        pos = np.minimum(np.searchsorted(self.ids, wanted), len(self.ids) - 1)
        found: IntArray = pos[self.ids[pos] == wanted]
        return found

    def newest_first(self, rows: IntArray) -> IntArray:
        ordered: IntArray = rows[np.argsort(self.rank[rows], kind="stable")]
        return ordered


@dataclass(frozen=True, slots=True)
class MediaFile:
    """Where one attachment lives: an export directory or zip, the path in it, and its alt."""

    post_id: int
    position: int
    type: str
    path: str
    url: str
    alt: str
    export_path: str


_POST_FIELDS = (
    "platform",
    "kind",
    "visibility",  # the page marks followers-only posts (every archive has it since schema 8)
    "account",
    "timestamp",
    "url",
    "content",
    "content_warning",
    "lang",
    "source_id",
    "reply_to",
    "thread_root",
    "quote_of",
    "repost_of",
    "has_media",
    "visibility",
)


class FacetIndex:
    """Facet columns of one archive, kept current with its posts generation; thread-safe."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._lock = threading.Lock()
        self._columns: Columns | None = None

    # -- the columns ---------------------------------------------------------------------------

    def columns(self) -> Columns:
        """The columns of the current posts (made on first use and after a write to posts)."""
        generation = self.store.posts_generation()
        cached = self._columns
        if cached is not None and cached.generation == generation:
            return cached
        with self._lock:
            cached = self._columns
            if cached is None or cached.generation != generation:
                cached = self._build()
                self._columns = cached
            return cached

    def _build(self) -> Columns:
        """The page's columns from the store's filter columns (:class:`PostArrays`), which
        the store keeps current from the posts each write changed and saves beside the
        archive: at ten million posts, reading every post again after each import took longer
        than the import's text index. What the page adds is derived here: month and day, and
        the newest-first order."""
        generation, arrays = self.store.post_arrays()
        ids = arrays.post_ids
        known = ~np.isnan(arrays.ts)
        seconds = np.where(known, arrays.ts, 0.0)
        days = np.floor(seconds / 86400).astype(np.int64).astype("datetime64[D]")
        months = days.astype("datetime64[M]")
        month = np.where(known, months.astype(np.int64), -1).astype(np.int32)
        day_of_month = (days - months.astype("datetime64[D]")).astype(np.int64) + 1
        mday = np.where(known, (months.astype(np.int64) % 12 + 1) * 100 + day_of_month, -1).astype(np.int16)
        # newest first: by time descending, undated last, then by id descending
        sort_ts = np.where(known, arrays.ts, -np.inf)
        order = np.lexsort((-ids, -sort_ts)) if len(ids) else np.zeros(0, dtype=np.int64)
        rank = np.empty(len(order), dtype=np.int64)
        rank[order] = np.arange(len(order))
        codes: dict[str, npt.NDArray[np.int32]] = {}
        labels: dict[str, list[str]] = {}
        for facet, small, names in (
            ("kind", _PRIMARY_CODES[arrays.relations], KINDS),
            ("platform", arrays.platforms, PLATFORMS),
        ):
            codes[facet], labels[facet] = self._named(facet, ids, small, names)
        direct = arrays.visibilities == VISIBILITIES.index("direct")
        codes["account"], labels["account"] = arrays.accounts, list(arrays.account_names)
        codes["lang"], labels["lang"] = arrays.langs, list(arrays.lang_names)
        return Columns(
            generation=generation,
            ids=ids,
            month=month,
            mday=mday,
            media=arrays.has_media,
            codes=codes,
            labels=labels,
            rank=rank,
            order=order.astype(np.int64),
            relations=arrays.relations,
            hidden=direct if direct.any() else None,
        )

    def _named(
        self, facet: str, ids: IntArray, small: npt.NDArray[np.uint8], names: Sequence[str]
    ) -> tuple[npt.NDArray[np.int32], list[str]]:
        """A kind or platform column as codes into its labels. A value no release names (an
        archive written by a newer one) is :data:`UNKNOWN_CODE` in the store's columns; those
        posts' own values are read by SQL, only when there are any."""
        coded = small.astype(np.int32)
        labels = list(names)
        unknown = coded == UNKNOWN_CODE
        if not unknown.any():
            return coded, labels
        spelled: dict[str, int] = {}
        known = ",".join("?" * len(names))
        rows = self.store.reader.execute(
            f"SELECT post_id, {facet} FROM posts WHERE {facet} NOT IN ({known}) ORDER BY post_id", list(names)
        ).fetchall()
        if rows and len(ids):
            found = np.fromiter((int(r[0]) for r in rows), dtype=np.int64, count=len(rows))
            values = [spelled.setdefault(str(r[1]), len(names) + len(spelled)) for r in rows]
            pos = np.minimum(np.searchsorted(ids, found), len(ids) - 1)
            same = ids[pos] == found
            coded[pos[same]] = np.asarray(values, dtype=np.int32)[same]
        labels.extend(spelled)
        left = coded == UNKNOWN_CODE  # changed since the columns were made: named on the next
        if left.any():
            coded[left] = len(labels)
            labels.append("")
        return coded, labels

    # -- masks and counts ----------------------------------------------------------------------

    @staticmethod
    def filter_masks(cols: Columns, filters: Filters, rows: IntArray | None = None) -> dict[str, BoolArray]:
        """One mask per active filter, over every post or over ``rows`` only."""

        def column(values: npt.NDArray[Any]) -> npt.NDArray[Any]:
            return values if rows is None else values[rows]

        masks: dict[str, BoolArray] = {}
        if cols.hidden is not None:
            masks["visibility"] = ~column(cols.hidden)
        for facet in FACETS:
            wanted = filters.values(facet)
            if not wanted:
                continue
            table = np.zeros(len(cols.labels[facet]) + 1, dtype=bool)
            bits = 0
            for label in wanted:
                if facet == "kind" and label in KIND_BITS:
                    bits |= KIND_BITS[label]
                    continue
                code = cols.code(facet, label)
                if code >= 0:
                    table[code] = True
            masks[facet] = table[column(cols.codes[facet])]
            if bits:
                masks[facet] |= (column(cols.relations) & bits) != 0
        if filters.media is not None:
            masks["media"] = column(cols.media) == filters.media
        if filters.year is not None:
            months = column(cols.month)
            if filters.month is not None:
                masks["month"] = months == (filters.year - 1970) * 12 + filters.month - 1
            else:
                low = (filters.year - 1970) * 12
                masks["month"] = (months >= low) & (months < low + 12)
        return masks

    @staticmethod
    def combined(masks: dict[str, BoolArray], size: int, skip: str | None = None) -> BoolArray:
        out = np.ones(size, dtype=bool)
        for name, mask in masks.items():
            if name != skip:
                out &= mask
        return out

    def mask(self, cols: Columns, filters: Filters, *, skip: str | None = None) -> BoolArray:
        """Rows passing every filter but ``skip`` (the facet whose own counts are wanted)."""
        return self.combined(self.filter_masks(cols, filters), len(cols), skip)

    def select(self, cols: Columns, filters: Filters, rows: IntArray) -> IntArray:
        """The rows of ``rows`` passing every filter (order kept)."""
        kept: IntArray = rows[self.combined(self.filter_masks(cols, filters, rows), len(rows))]
        return kept

    def counts(self, cols: Columns, filters: Filters, within: IntArray | None = None) -> dict[str, Any]:
        """Every facet's values with their counts under the other facets' filters (and inside
        ``within``, the rows a search matched, when given).

        Each filter's mask is made once; a facet without a filter of its own counts under all
        of them, one with a filter under the others (a few array ANDs, not a query each)."""
        masks = self.filter_masks(cols, filters, within)
        size = len(cols) if within is None else len(within)
        every = self.combined(masks, size)

        def rows(skip: str) -> IntArray | BoolArray:
            mask = self.combined(masks, size, skip) if skip in masks else every
            return within[mask] if within is not None else mask

        out: dict[str, Any] = {}
        for facet in FACETS:
            selected = rows(facet)
            codes = cols.codes[facet][selected]
            tally = np.bincount(codes, minlength=len(cols.labels[facet]))
            if facet == "kind":  # by relation: a post liked and bookmarked counts under both
                per_value = np.bincount(cols.relations[selected], minlength=256)
                for i, label in enumerate(cols.labels[facet]):
                    if label in KIND_BITS:
                        tally[i] = per_value[(np.arange(256) & KIND_BITS[label]) != 0].sum()
            values: list[dict[str, Any]] = [
                {"value": label, "count": int(tally[i])}
                for i, label in enumerate(cols.labels[facet])
                if tally[i] or label in filters.values(facet)
            ]
            if facet != "kind":
                values.sort(key=lambda v: (-v["count"], v["value"]))
            out[facet] = values
        media_rows = cols.media[rows("media")]
        with_media = int(np.count_nonzero(media_rows))
        out["media"] = [
            {"value": "1", "count": with_media},
            {"value": "0", "count": int(len(media_rows) - with_media)},
        ]
        out["months"] = self.month_counts(cols, rows("month"))
        return out

    @staticmethod
    def month_counts(cols: Columns, selected: IntArray | BoolArray) -> list[dict[str, int]]:
        """``[{year, month, count}]`` for every month with posts among ``selected``, oldest first."""
        months = cols.month[selected]
        months = months[months >= 0]
        if not len(months):
            return []
        low = int(months.min())
        tally = np.bincount(months - low)
        return [
            {"year": 1970 + (low + i) // 12, "month": (low + i) % 12 + 1, "count": int(n)}
            for i, n in enumerate(tally)
            if n
        ]

    @staticmethod
    def neighbours(cols: Columns, post_id: int, mask: BoolArray) -> tuple[int | None, int | None]:
        """The archive keys of the posts just newer and just older than ``post_id`` among the
        rows ``mask`` keeps, in the newest-first order (``None`` at either end)."""
        rows = cols.rows_of([post_id])
        if not len(rows):
            return None, None
        at = int(cols.rank[rows[0]])

        def first(positions: range) -> int | None:
            step = 256
            for start in positions[::step]:
                stop = min(start + step, len(cols.order)) if positions.step > 0 else max(start - step, -1)
                chunk = cols.order[start : stop : positions.step] if stop >= 0 else cols.order[start::-1]
                hits = np.flatnonzero(mask[chunk])
                if len(hits):
                    return int(cols.ids[chunk[hits[0]]])
            return None

        return first(range(at - 1, -1, -1)), first(range(at + 1, len(cols.order)))

    # -- posts -------------------------------------------------------------------------------------

    def posts(self, post_ids: Sequence[int]) -> dict[int, dict[str, Any]]:
        """The web's post shape for ``post_ids`` (ids as strings; missing ids are absent)."""
        conn = self.store.reader
        out: dict[int, dict[str, Any]] = {}
        ids = [int(i) for i in post_ids]
        fields = _POST_FIELDS
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            marks = ",".join("?" * len(part))
            sql = (
                f"SELECT p.post_id, coalesce(u.name, ''), {', '.join('p.' + c for c in fields)} "
                f"FROM posts p LEFT JOIN users u ON u.user_id = p.user_id WHERE p.post_id IN ({marks})"
            )
            for row in conn.execute(sql, part):
                post = {"id": str(row[0]), "user": row[1], **dict(zip(fields, row[2:], strict=True))}
                post["has_media"] = bool(post["has_media"])
                out[int(row[0])] = post
        return out

    def post_by_source(self, platform: str, source_id: str) -> int | None:
        """The archive key of a post named by its platform id, when the archive holds it."""
        if not source_id:
            return None
        try:
            key = post_key(platform, source_id)
        except ValueError:
            return None
        row = self.store.reader.execute("SELECT 1 FROM posts WHERE post_id = ?", (key,)).fetchone()
        return key if row is not None else None

    def media(self, post_id: int) -> list[MediaFile]:
        """The post's attachments, each with the export it is found in.

        The media table does not say which import brought a row, and an account is often
        imported more than once (a later, fuller archive; an older one kept elsewhere), so each
        attachment is looked for in the exports of the post's account and platform, newest
        first (then those whose account was not known), and taken from the first that holds it.
        """
        conn = self.store.reader
        owner = conn.execute("SELECT account, platform FROM posts WHERE post_id = ?", (post_id,)).fetchone()
        if owner is None:
            return []
        account, platform = str(owner[0] or ""), str(owner[1] or "")
        exports = [
            str(path)
            for path, fmt, who in conn.execute(
                "SELECT path, format, account FROM exports WHERE account IN (?, '') "
                "ORDER BY account = '' , export_id DESC",
                (account,),
            )
            if path and _platform_of(str(fmt), platform) == platform
        ]
        rows = conn.execute(
            "SELECT post_id, position, type, path, url, alt FROM media WHERE post_id = ? ORDER BY position",
            (post_id,),
        ).fetchall()
        out: list[MediaFile] = []
        for row in rows:
            member = str(row[3] or "")
            home = next((e for e in exports if export_holds(e, member)), exports[0] if exports else "")
            kind, url, alt = (str(v or "") for v in (row[2], row[4], row[5]))
            out.append(MediaFile(int(row[0]), int(row[1]), kind, member, url, alt, home))
        return out


def _platform_of(format: str, default: str) -> str:
    """The platform of an export format as its importer declares it (``default`` for a format
    this mcpkit does not declare: its export is tried for every platform)."""
    from mcpkit.archive.importers.detect import declared

    declaration = declared(format)
    return default if declaration is None else declaration.platform
