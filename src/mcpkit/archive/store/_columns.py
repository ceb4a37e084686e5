"""The per-post filter columns (:class:`PostArrays`), kept current without reading every post.

Why this module: searches filter by user, date, kind (a post's set of relations, one bit each),
platform, account, media and visibility with one table lookup or bit test per row, over numpy columns of every post, and the web app's facets add the
language. Reading them is a full scan of ``posts``: about 3.5 s per million posts, 35 s at
ten million, where it was redone after every write, an enrichment included. So:

* The columns follow ``posts_generation``, which only the transactions that change posts
  bump, not the archive's ``generation`` (enrichments, export records).
* Each such transaction logs the ids it changed in ``post_changes`` (:class:`PostChanges`), and
  the columns re-read only those posts; a transaction that changed more than
  :data:`LOGGED_CHANGES` logs a NULL, and the columns are read whole.
* The columns are saved beside the database (``<archive>-columns.npz``, with the archive's id
  and the generation they hold), so a server that starts loads them in about a second and
  patches them with what changed since, instead of scanning.
* The log keeps about :data:`KEPT_CHANGES` rows, whole transactions; columns older than the
  log reaches are read whole.

Everything is read in one read transaction of a connection of its own, so the generation and
the rows it reads are one state of the archive.
"""

from __future__ import annotations

import contextlib
import dataclasses
import operator
import os
import sqlite3
import threading
import zipfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from mcpkit.archive.filters import SHOWN, PostFilter, account_key
from mcpkit.archive.posts import KIND_BITS, KINDS, PLATFORMS, SHOWN_VISIBILITIES, VISIBILITIES

__all__ = [
    "KEPT_CHANGES",
    "REWRITTEN_LIMIT",
    "UNKNOWN_CODE",
    "BoundedIds",
    "NewColumns",
    "PostArrays",
    "PostColumns",
    "changes_since",
    "columns_path",
    "facet_mask",
    "log_changes",
    "stamp",
]

UNKNOWN_CODE = 255
"""The code of a platform or visibility that :data:`PLATFORMS`/:data:`VISIBILITIES` do not list."""
_DIRECT = VISIBILITIES.index("direct")

KEPT_CHANGES = 400_000
"""About how many changed-post rows ``post_changes`` keeps (whole transactions, newest)."""

_SAVE_AFTER = 20_000
"""Posts re-read since the columns were last saved before they are saved again."""

_MISSING = -(2**62)
_CHUNK = 100_000
_VARIABLES = 500
_ARRAY_FIELDS = (
    "post_ids",
    "user_ids",
    "ts",
    "relations",
    "platforms",
    "accounts",
    "has_media",
    "langs",
    "visibilities",
)


@dataclass(frozen=True, slots=True)
class PostArrays:
    """Per-post columns for vectorised filters, sorted by post id.

    ``relations`` holds each post's set of relations (:data:`KIND_BITS`; 0 for a kind no
    release names); platforms and visibilities are small codes (their index in
    :data:`PLATFORMS` and :data:`VISIBILITIES`, :data:`UNKNOWN_CODE` for anything else),
    accounts an index into ``account_names`` and
    languages one into ``lang_names`` (each spelling once: sorted when read whole or handed
    over, a patch appends the new ones), so a filter is one table lookup per row, as the user
    filter is.
    """

    post_ids: npt.NDArray[np.int64]
    user_ids: npt.NDArray[np.int64]  # 0 = unknown user
    ts: npt.NDArray[np.float64]  # NaN = unparsable timestamp (passes date filters)
    relations: npt.NDArray[np.uint8]
    platforms: npt.NDArray[np.uint8]
    accounts: npt.NDArray[np.int32]
    has_media: npt.NDArray[np.bool_]
    langs: npt.NDArray[np.int32]
    visibilities: npt.NDArray[np.uint8]
    account_names: tuple[str, ...]
    lang_names: tuple[str, ...]

    def user_counts(self, passing: npt.NDArray[np.bool_] | None = None) -> npt.NDArray[np.int64]:
        """Posts per user id (index 0, unknown users, counts nothing), of every post or of
        those ``passing`` keeps."""
        users = self.user_ids if passing is None else self.user_ids[passing]
        counts = np.bincount(users) if len(users) else np.zeros(1, dtype=np.int64)
        counts[0] = 0
        return counts.astype(np.int64)

    def account_counts(self, passing: npt.NDArray[np.bool_] | None = None) -> npt.NDArray[np.int64]:
        """Posts per account code (an index into ``account_names``), of every post or of
        those ``passing`` keeps."""
        return _spelling_counts(
            self.accounts if passing is None else self.accounts[passing], len(self.account_names)
        )

    def relation_counts(self, passing: npt.NDArray[np.bool_] | None = None) -> dict[str, int]:
        """Posts with each relation (a post liked and bookmarked counts for both), of every
        post or of those ``passing`` keeps; kinds no post has are left out."""
        held = self.relations if passing is None else self.relations[passing]
        per_value = np.bincount(held, minlength=256)
        counts = {}
        for kind, bit in KIND_BITS.items():
            count = int(per_value[(np.arange(256) & bit) != 0].sum())
            if count:
                counts[kind] = count
        return counts

    def visibility_counts(self, passing: npt.NDArray[np.bool_] | None = None) -> dict[str, int]:
        """Posts per visibility (in :data:`VISIBILITIES` order, then any other spelling's code as
        ``"other"``), of every post or of those ``passing`` keeps; none left out but zeros."""
        held = np.bincount(
            self.visibilities if passing is None else self.visibilities[passing], minlength=256
        )
        counts = {name: int(held[i]) for i, name in enumerate(VISIBILITIES) if held[i]}
        if held[UNKNOWN_CODE]:
            counts["other"] = int(held[UNKNOWN_CODE])
        return counts

    def hides_any(self, post_filter: PostFilter) -> bool:
        """Whether ``post_filter`` may leave out some post: any condition but the default one,
        which leaves out direct posts, and that one only when some post is direct (one pass
        over a byte per post)."""
        if not post_filter.active:
            return False
        if post_filter.other_than_visibility or post_filter.visibilities != SHOWN_VISIBILITIES:
            return True
        return bool(np.any(self.visibilities == _DIRECT))

    def passing(self, post_filter: PostFilter | None) -> npt.NDArray[np.bool_] | None:
        """Per post: does ``post_filter`` keep it? None when it keeps every post. ``None``
        (upstream's request) keeps every post but the direct ones, as every filter does
        unless it names them."""
        if post_filter is None:
            post_filter = SHOWN
        if not post_filter.active:
            return None
        if not self.hides_any(post_filter):
            return None
        return facet_mask(
            self.relations,
            self.platforms,
            self.accounts,
            self.has_media,
            self.visibilities,
            self.account_names,
            post_filter,
        )


def _spelling_counts(codes: npt.NDArray[np.int32], spellings: int) -> npt.NDArray[np.int64]:
    """Rows per code of a coded column (-1, a row with no post, counts nothing)."""
    counts: npt.NDArray[np.int64] = np.bincount(codes[codes >= 0], minlength=spellings)
    return counts


def facet_mask(
    relations: npt.NDArray[np.uint8],
    platforms: npt.NDArray[np.uint8],
    accounts: npt.NDArray[np.int32],
    has_media: npt.NDArray[np.bool_],
    visibilities: npt.NDArray[np.uint8],
    account_names: Sequence[str],
    post_filter: PostFilter,
) -> npt.NDArray[np.bool_]:
    """Per row of these columns: does ``post_filter`` keep it? One table lookup per condition
    (a post passes a kind filter when it has any of the relations chosen).

    An account code of -1 (a row with no post) reads the table's extra last slot: never kept.
    The default visibility condition (no direct post) costs nothing where no post is direct.
    """
    parts: list[npt.NDArray[np.bool_]] = []
    if post_filter.kinds is not None:
        table = np.zeros(256, dtype=bool)
        chosen_bits = sum(KIND_BITS[k] for k in post_filter.kinds)
        table[(np.arange(256) & chosen_bits) != 0] = True
        parts.append(table[relations])
    shown = post_filter.visibilities
    if shown == SHOWN_VISIBILITIES and not np.any(visibilities == _DIRECT):
        shown = None
    for codes, chosen, names in (
        (platforms, post_filter.platforms, PLATFORMS),
        (visibilities, shown, VISIBILITIES),
    ):
        if chosen is not None:
            table = np.zeros(256, dtype=bool)
            table[[i for i, name in enumerate(names) if name in chosen]] = True
            parts.append(table[codes])
    if post_filter.accounts is not None:
        table = np.zeros(len(account_names) + 1, dtype=bool)
        for i, name in enumerate(account_names):
            table[i] = account_key(name) in post_filter.accounts
        parts.append(table[accounts])
    if post_filter.has_media is not None:
        parts.append(has_media == post_filter.has_media)
    if not parts:
        return np.ones(len(relations), dtype=bool)
    mask = parts[0]
    for part in parts[1:]:
        mask &= part
    return mask


def _code_case(column: str, names: Sequence[str]) -> str:
    """SQL turning ``column`` into the index of its value in ``names`` (constants of this module)."""
    arms = " ".join(f"WHEN '{name}' THEN {i}" for i, name in enumerate(names))
    return f"CASE {column} {arms} ELSE {UNKNOWN_CODE} END"


_KNOWN_RELATIONS = f"CASE WHEN kind IN ({', '.join(repr(k) for k in KINDS)}) THEN relations & {sum(KIND_BITS.values())} ELSE 0 END"
_NUMBERS = (
    f"SELECT post_id, coalesce(user_id, 0), coalesce(ts, {_MISSING}), {_KNOWN_RELATIONS}, "
    f"{_code_case('platform', PLATFORMS)}, has_media != 0, {_code_case('visibility', VISIBILITIES)}"
)
_SELECT = f"{_NUMBERS}, account, lang FROM posts"


def _arrays(
    table: npt.NDArray[np.int64],
    accounts: npt.NDArray[np.int32],
    langs: npt.NDArray[np.int32],
    names: tuple[str, ...],
    lang_names: tuple[str, ...],
) -> PostArrays:
    ts = table[:, 2].astype(np.float64)
    ts[table[:, 2] == _MISSING] = np.nan
    return PostArrays(
        post_ids=np.ascontiguousarray(table[:, 0]),
        user_ids=np.ascontiguousarray(table[:, 1]),
        ts=ts,
        relations=table[:, 3].astype(np.uint8),
        platforms=table[:, 4].astype(np.uint8),
        accounts=accounts,
        has_media=table[:, 5].astype(np.bool_),
        langs=langs,
        visibilities=table[:, 6].astype(np.uint8),
        account_names=names,
        lang_names=lang_names,
    )


def read_all(conn: sqlite3.Connection) -> PostArrays:
    """Every post's columns, a chunk of rows at a time (a list of ten million row tuples
    would hold gigabytes). Accounts and languages are coded in SQL against their few distinct
    spellings (one scan finds both)."""
    pairs = conn.execute("SELECT DISTINCT account, lang FROM posts").fetchall()
    names = tuple(sorted({str(account) for account, _ in pairs}))
    lang_names = tuple(sorted({str(lang) for _, lang in pairs}))

    def code(column: str, spellings: tuple[str, ...]) -> str:
        arms = " ".join("WHEN ? THEN " + str(i) for i in range(len(spellings)))
        return f"CASE {column} {arms} ELSE -1 END" if spellings else "-1"

    sql = f"{_NUMBERS}, {code('account', names)}, {code('lang', lang_names)} FROM posts ORDER BY post_id"
    cursor = conn.execute(sql, names + lang_names)
    parts: list[npt.NDArray[np.int64]] = []
    while chunk := cursor.fetchmany(_CHUNK):
        parts.append(np.array(chunk, dtype=np.int64))
    table = np.concatenate(parts) if parts else np.zeros((0, 9), dtype=np.int64)
    return _arrays(
        table[:, :7], table[:, 7].astype(np.int32), table[:, 8].astype(np.int32), names, lang_names
    )


def read_some(
    conn: sqlite3.Connection, ids: Sequence[int], names: tuple[str, ...], lang_names: tuple[str, ...]
) -> PostArrays:
    """The columns of the posts ``ids`` that exist, accounts coded against ``names`` and
    languages against ``lang_names`` (new spellings are appended to them)."""
    rows: list[Sequence[Any]] = []
    for start in range(0, len(ids), _VARIABLES):
        part = ids[start : start + _VARIABLES]
        rows.extend(conn.execute(f"{_SELECT} WHERE post_id IN ({','.join('?' * len(part))})", part))
    rows.sort(key=lambda row: int(row[0]))
    accounts = {name: i for i, name in enumerate(names)}
    langs = {name: i for i, name in enumerate(lang_names)}
    account_codes = [accounts.setdefault(str(row[7]), len(accounts)) for row in rows]
    lang_codes = [langs.setdefault(str(row[8]), len(langs)) for row in rows]
    table = np.array([row[:7] for row in rows], dtype=np.int64).reshape(-1, 7)
    return _arrays(
        table,
        np.array(account_codes, dtype=np.int32),
        np.array(lang_codes, dtype=np.int32),
        tuple(accounts),
        tuple(langs),
    )


def patched(base: PostArrays, changed: Sequence[int], fresh: PostArrays) -> PostArrays:
    """``base`` with the posts ``changed`` replaced by their ``fresh`` columns (those not in
    ``fresh`` no longer exist); ``fresh`` codes accounts and languages against ``base``'s
    names, extended."""
    gone = np.unique(np.asarray(changed, dtype=np.int64))
    size = len(base.post_ids)
    keep: npt.NDArray[np.bool_] | None = None
    if size and len(gone):
        pos = np.minimum(np.searchsorted(base.post_ids, gone), size - 1)
        stored = pos[base.post_ids[pos] == gone]
        if len(stored):
            keep = np.ones(size, dtype=bool)
            keep[stored] = False
    kept_ids = base.post_ids if keep is None else base.post_ids[keep]
    # where the fresh rows land in the merged order; a mask and two assignments per column
    # (numpy's ``insert`` costs four times as much at ten million rows)
    landing = np.searchsorted(kept_ids, fresh.post_ids) + np.arange(len(fresh.post_ids))
    placed = np.zeros(len(kept_ids) + len(landing), dtype=bool)
    placed[landing] = True
    columns = {}
    for name in _ARRAY_FIELDS:
        old = getattr(base, name)
        new = getattr(fresh, name)
        merged = np.empty(len(placed), dtype=old.dtype)
        merged[placed] = new
        merged[~placed] = old if keep is None else old[keep]
        columns[name] = merged
    return PostArrays(**columns, account_names=fresh.account_names, lang_names=fresh.lang_names)


class BoundedIds:
    """Post ids, up to ``limit`` of them; past that, only that there were more (``over``), so
    that a transaction of ten million posts does not hold ten million ids for nothing."""

    __slots__ = ("ids", "limit", "over")

    def __init__(self, limit: int) -> None:
        self.ids: set[int] = set()
        self.limit = limit
        self.over = False

    def add(self, ids: Iterable[int]) -> None:
        if self.over:
            return
        self.ids.update(ids)
        if len(self.ids) > self.limit:
            self.over = True
            self.ids = set()


class _Codes(dict[str, int]):
    """Names to small codes; a name not listed reads :data:`UNKNOWN_CODE`."""

    def __missing__(self, name: str) -> int:
        return UNKNOWN_CODE


_PLATFORM_CODES = _Codes({name: i for i, name in enumerate(PLATFORMS)})
_VISIBILITY_CODES = _Codes({name: i for i, name in enumerate(VISIBILITIES)})
_DEFAULTS = {"platform": "x", "account": "", "lang": "", "visibility": "public"}
"""What a ``posts`` row holds in a column its INSERT does not name (the schema's defaults)."""
REWRITTEN_LIMIT = 100_000
"""Posts written again in one transaction that :class:`NewColumns` re-reads at its end;
past this many it hands nothing over (the columns are then read whole when first needed)."""


class NewColumns:
    """The columns of the posts one write transaction inserts into an archive that had none,
    taken from the rows as they are written.

    Why: such a transaction (a first import) changes too many posts for the log to list, so
    the columns would otherwise be read whole from ``posts`` at the first filtered search or
    count after it: 37 s at ten million posts. The rows are in hand when they are written;
    the store hands these columns to :class:`PostColumns` when the transaction commits, and
    they are saved beside the archive like any others.

    Posts written again later in the same transaction (a repeated id in the export, an
    account learnt at its end) are named to :meth:`rewrite` and re-read from the database by
    :meth:`arrays`, up to :data:`REWRITTEN_LIMIT` of them.
    """

    def __init__(self) -> None:
        self._parts: list[tuple[npt.NDArray[Any], ...]] = []
        self._accounts: dict[str, int] = {}
        self._langs: dict[str, int] = {}
        self._rewritten = BoundedIds(REWRITTEN_LIMIT)

    def add_rows(self, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
        """The ``posts`` rows of an INSERT naming ``columns`` (``post_id`` first), all new.

        Written for ten million rows: one C-level pass per column (``map``, ``itemgetter``,
        ``fromiter``), and a column whose every row holds one value (a Twilog export's
        platform, account and language) filled at once; a comprehension per row took 1.1 µs
        a row."""
        count = len(rows)
        if not count:
            return
        position = {name: i for i, name in enumerate(columns)}

        def values(name: str) -> Iterator[Any]:
            return map(operator.itemgetter(position[name]), rows)

        def coded(name: str, codes: dict[str, int], dtype: type[np.generic]) -> npt.NDArray[Any]:
            if name not in position:
                return np.full(count, codes[_DEFAULTS[name]], dtype=dtype)
            distinct = dict.fromkeys(values(name))
            if len(distinct) == 1:
                return np.full(count, codes[next(iter(distinct))], dtype=dtype)
            return np.fromiter(map(codes.__getitem__, values(name)), dtype=dtype, count=count)

        for name, spellings in (("account", self._accounts), ("lang", self._langs)):
            for spelling in dict.fromkeys(values(name)) if name in position else (_DEFAULTS[name],):
                spellings.setdefault(spelling, len(spellings))
        users = np.array(list(values("user_id")), dtype=np.float64)  # None (no user) reads NaN
        self._parts.append(
            (
                np.fromiter(values("post_id"), dtype=np.int64, count=count),
                np.nan_to_num(users, nan=0.0).astype(np.int64),
                np.array(list(values("ts")), dtype=np.float64),  # None (no readable time): NaN
                np.fromiter(values("relations"), dtype=np.uint8, count=count)
                if "relations" in position
                else np.full(count, KIND_BITS["post"], dtype=np.uint8),
                coded("platform", _PLATFORM_CODES, np.uint8),
                coded("account", self._accounts, np.int32),
                np.array(list(values("has_media")), dtype=np.bool_)
                if "has_media" in position
                else np.zeros(count, dtype=np.bool_),
                coded("lang", self._langs, np.int32),
                coded("visibility", _VISIBILITY_CODES, np.uint8),
            )
        )

    def rewrite(self, ids: Iterable[int]) -> None:
        """These posts were changed after their insert (or by a statement of the caller's)."""
        self._rewritten.add(ids)

    def arrays(self, conn: sqlite3.Connection) -> PostArrays | None:
        """Every post's columns, as :func:`read_all` would read them through ``conn`` (inside the
        transaction); None when too many posts were rewritten to re-read."""
        if self._rewritten.over:
            return None
        if self._parts:
            merged = [np.concatenate(part) for part in zip(*self._parts, strict=True)]
            self._parts = []  # at ten million posts each copy of the columns is 310 MB
            if len(merged[0]) > 1 and not bool(np.all(merged[0][1:] > merged[0][:-1])):
                order = np.argsort(merged[0], kind="stable")
                merged = [column[order] for column in merged]
        else:
            merged = [np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0)] + [
                np.zeros(0, dtype=d) for d in (np.uint8, np.uint8, np.int32, np.bool_, np.int32, np.uint8)
            ]
        columns = dict(zip(_ARRAY_FIELDS, merged, strict=True))
        arrays = PostArrays(**columns, account_names=tuple(self._accounts), lang_names=tuple(self._langs))
        if self._rewritten.ids:
            changed = sorted(self._rewritten.ids)
            arrays = patched(
                arrays, changed, read_some(conn, changed, arrays.account_names, arrays.lang_names)
            )
        return _tidy_spellings(arrays)


def _tidy_spellings(arrays: PostArrays) -> PostArrays:
    """``arrays`` with only the account and language spellings some post has, sorted as
    :func:`read_all` lists them (SQLite's binary order of UTF-8 is Python's order of code
    points)."""

    def tidy(
        codes: npt.NDArray[np.int32], spellings: tuple[str, ...]
    ) -> tuple[npt.NDArray[np.int32], tuple[str, ...]]:
        held = _spelling_counts(codes, len(spellings))
        names = sorted(name for name, count in zip(spellings, held, strict=False) if count)
        position = {name: i for i, name in enumerate(names)}
        remap = np.array([position.get(name, -1) for name in spellings] + [-1], dtype=np.int32)
        return remap[codes], tuple(names)

    accounts, account_names = tidy(arrays.accounts, arrays.account_names)
    langs, lang_names = tidy(arrays.langs, arrays.lang_names)
    return dataclasses.replace(
        arrays, accounts=accounts, account_names=account_names, langs=langs, lang_names=lang_names
    )


def log_changes(conn: sqlite3.Connection, ids: set[int] | None) -> None:
    """Inside a write transaction that changed posts: bump ``posts_generation`` and log the
    ids it changed (``None``: too many to list), dropping the oldest whole transactions past
    :data:`KEPT_CHANGES` rows."""
    conn.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'posts_generation'")
    generation = int(conn.execute("SELECT value FROM meta WHERE key = 'posts_generation'").fetchone()[0])
    rows = [(generation, None)] if ids is None else [(generation, i) for i in sorted(ids)]
    conn.executemany("INSERT INTO post_changes VALUES (?, ?)", rows)
    last = int(conn.execute("SELECT max(rowid) FROM post_changes").fetchone()[0])
    cut = conn.execute(
        "SELECT generation FROM post_changes WHERE rowid <= ? ORDER BY rowid DESC LIMIT 1",
        (last - KEPT_CHANGES,),
    ).fetchone()
    if cut is not None:
        conn.execute("DELETE FROM post_changes WHERE generation <= ?", cut)


def columns_path(db: Path) -> Path:
    """Where the columns of the archive at ``db`` are saved."""
    return Path(f"{db}-columns.npz")


@dataclass(frozen=True, slots=True)
class _Held:
    archive_id: str
    generation: int
    arrays: PostArrays
    unsaved: int  # posts re-read since the columns were last saved (-1: never saved)


class PostColumns:
    """The current :class:`PostArrays` of one archive; thread-safe, one refresh at a time."""

    def __init__(self, db: Path, connect: Callable[[], sqlite3.Connection]) -> None:
        self.path = columns_path(db)
        self._connect = connect
        self._lock = threading.Lock()
        self._held: _Held | None = None
        self.reads = 0  # whole reads of ``posts``, for tests and the bench

    def current(self, conn: sqlite3.Connection) -> tuple[int, PostArrays]:
        """``(posts_generation, columns)`` as of now (a refresh may take seconds at millions
        of posts; one thread refreshes, the others wait for it)."""
        archive_id, generation = stamp(conn)
        held = self._held
        if held is not None and (held.archive_id, held.generation) == (archive_id, generation):
            return held.generation, held.arrays
        with self._lock:
            held = self._held
            if held is None or (held.archive_id, held.generation) != (archive_id, generation):
                held = self._refresh()
            return held.generation, held.arrays

    def _refresh(self) -> _Held:
        with self.snapshot() as conn:
            archive_id, generation = stamp(conn)
            held = self._held
            loaded = held is None or held.archive_id != archive_id or held.generation > generation
            if loaded:
                held = self._load(archive_id, generation)
            held = _caught_up(conn, held, generation)
            if held is None and not loaded:  # the log cannot tell; another process may have saved them
                held = _caught_up(conn, self._load(archive_id, generation), generation)
            if held is None:
                self.reads += 1
                held = _Held(archive_id, generation, read_all(conn), -1)
        if held.unsaved < 0 or held.unsaved > _SAVE_AFTER:
            held = self._save(held)
        self._held = held
        return held

    def adopt(self, archive_id: str, generation: int, arrays: PostArrays) -> None:
        """Hold and save ``arrays``, the columns of the committed state ``(archive_id,
        generation)``, made without reading the posts (:class:`NewColumns`)."""
        with self._lock:
            self._held = self._save(_Held(archive_id, generation, arrays, -1))

    def release(self) -> None:
        """Hold no columns (the saved file keeps them; a later call loads it again)."""
        with self._lock:
            self._held = None

    @contextmanager
    def snapshot(self) -> Iterator[sqlite3.Connection]:
        """A read transaction of a connection of its own: one state of the archive."""
        conn = self._connect()
        try:
            conn.execute("BEGIN")
            yield conn
        finally:
            conn.close()

    def _load(self, archive_id: str, generation: int) -> _Held | None:
        """The saved columns, if they are this archive's and not newer than it."""
        try:
            with np.load(self.path, allow_pickle=False) as saved:
                if str(saved["archive_id"]) != archive_id or int(saved["generation"]) > generation:
                    return None
                fields = {name: saved[name] for name in _ARRAY_FIELDS}
                names = tuple(str(n) for n in saved["account_names"])
                lang_names = tuple(str(n) for n in saved["lang_names"])
                stamp = int(saved["generation"])
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
            return None  # damaged or of an older layout (before languages): read the posts instead
        if len({len(a) for a in fields.values()}) != 1:
            return None
        return _Held(archive_id, stamp, PostArrays(**fields, account_names=names, lang_names=lang_names), 0)

    def _save(self, held: _Held) -> _Held:
        """Save atomically (a reader never sees half a file); a read-only place keeps none."""
        temp = self.path.with_name(f"{self.path.name}.{os.getpid()}.{threading.get_ident()}.tmp.npz")
        arrays = held.arrays
        try:
            np.savez(
                temp,
                archive_id=np.array(held.archive_id),
                generation=np.array(held.generation),
                account_names=np.array(arrays.account_names, dtype=np.str_),
                lang_names=np.array(arrays.lang_names, dtype=np.str_),
                **{name: getattr(arrays, name) for name in _ARRAY_FIELDS},
            )
            os.replace(temp, self.path)
        except OSError:
            with contextlib.suppress(OSError):
                temp.unlink()
            return held
        return _Held(held.archive_id, held.generation, held.arrays, 0)


def _caught_up(conn: sqlite3.Connection, held: _Held | None, generation: int) -> _Held | None:
    """``held`` patched up to ``generation`` from the log; None if the log cannot tell."""
    if held is None or held.generation == generation:
        return held
    changed = changes_since(conn, held.generation)
    if changed is None:
        return None
    base = held.arrays
    arrays = patched(base, changed, read_some(conn, changed, base.account_names, base.lang_names))
    return _Held(held.archive_id, generation, arrays, held.unsaved + len(changed))


def stamp(conn: sqlite3.Connection) -> tuple[str, int]:
    """``(archive_id, posts_generation)``: which archive, and which state of its posts."""
    values = dict(conn.execute("SELECT key, value FROM meta WHERE key IN ('archive_id', 'posts_generation')"))
    return str(values.get("archive_id", "")), int(values.get("posts_generation", 0))


def changes_since(conn: sqlite3.Connection, generation: int) -> list[int] | None:
    """The posts changed after ``generation``, or None when the log cannot tell (a transaction
    changed too many to list, or the log no longer reaches back that far)."""
    oldest = conn.execute("SELECT min(generation) FROM post_changes").fetchone()[0]
    if oldest is None or int(oldest) > generation + 1:
        return None
    ids: set[int] = set()
    for (post_id,) in conn.execute("SELECT post_id FROM post_changes WHERE generation > ?", (generation,)):
        if post_id is None:
            return None
        ids.add(int(post_id))
    return sorted(ids)
