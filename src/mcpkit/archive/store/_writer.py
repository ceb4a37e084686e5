"""Writing posts in bulk: as few SQLite statements as possible, FTS5 entries in sorted chunks.

Two ways in, one table: :meth:`PostWriter.write` takes batches of Twilog rows (the six
fields, the fastest path, used by ``import_csv``), :meth:`PostWriter.write_posts` takes whole
:class:`~mcpkit.archive.posts.Post` records of any export with their media. Both merge with
what is stored by the rules of :mod:`._merge`.
"""

from __future__ import annotations

import dataclasses
import functools
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

from mcpkit.archive.posts import (
    KIND_BITS,
    Media,
    Post,
    fold,
    joined_relations,
    primary_kind,
    timestamp_epoch,
    twilog_kind,
)
from mcpkit.archive.store._columns import BoundedIds, NewColumns
from mcpkit.archive.store._merge import EXPORT_FIELDS, merge_posts, normalized, stored_kind
from mcpkit.archive.store._side_index import SideIndex, insert_many

__all__ = [
    "BULK_HASHSIZE",
    "FTS_CHUNK",
    "POST_COLUMNS",
    "BatchBuilder",
    "JoinedRow",
    "PostBatch",
    "PostChanges",
    "PostWriter",
    "UpsertCounts",
    "WriteBase",
    "fts_config",
    "joined_rows",
    "read_posts",
]

FTS_CHUNK = 65536
"""Index entries :class:`PostWriter` holds back before writing them in one go."""
BULK_HASHSIZE = 512 << 20
"""FTS5's in-memory term limit during :meth:`Store.bulk_writer` (more than FTS_CHUNK posts need).

Why this large: FTS5 writes a segment each time its pending terms reach it, and a first import
keeps the segments it made (:mod:`._side_index`). At ten million posts 128 MB made 28 segments,
512 MB 18 (about one per 550,000 posts); the text matches of ``bench/archive.py`` answered in
1-3 ms either way. The hash holds the terms of the posts written since the last segment, only
while an import runs."""
FTS_HASHSIZE = 1 << 20  # FTS5's default

POST_COLUMNS = (
    "post_id",
    "user_id",
    "url",
    "timestamp",
    "ts",
    "content",
    "log_type",
    "platform",
    "kind",
    *EXPORT_FIELDS,
    "has_media",
    "relations",
    "visibility",
)
"""Every column of ``posts``, in the order :meth:`PostWriter.write_posts` writes them."""
_HAS_MEDIA = POST_COLUMNS.index("has_media")
_FULL_UPDATE = f"UPDATE posts SET {', '.join(f'{c} = ?' for c in POST_COLUMNS[1:])} WHERE post_id = ?"
_READ_COLUMNS = (
    "p.post_id, coalesce(u.name, ''), p.timestamp, p.url, p.content, p.log_type, p.platform, p.kind, "
    + "".join(f"p.{name}, " for name in EXPORT_FIELDS)
    + "p.has_media, p.relations, p.visibility"
)


@dataclass(frozen=True, slots=True)
class UpsertCounts:
    new: int = 0
    updated: int = 0
    unchanged: int = 0


@dataclass(slots=True)
class PostBatch:
    """Posts ready for :meth:`PostWriter.write_posts`, prepared off the writing thread.

    ``posts`` are distinct and in ascending ``post_id`` order; ``rows`` are their ``posts``
    table rows as :func:`normalized` makes them (the ``columns`` named: every column, or
    :data:`TWILOG_COLUMNS` for Twilog rows, whose other columns keep their defaults; user ids
    allotted from the :class:`WriteBase`), ``folded`` their folded texts. Only the ids in
    ``check`` may already be stored; ``users`` are the users first named in this batch with the
    ids allotted to them; ``account`` is the export's, for posts that name none.
    """

    posts: Sequence[Post]
    rows: list[tuple[Any, ...]]
    folded: list[str]
    check: list[int]
    users: list[tuple[int, str]] = field(default_factory=list)
    account: str = ""
    columns: tuple[str, ...] = POST_COLUMNS


TwilogRow = tuple[int, str, str, str, str, int]
"""A Twilog CSV record in :class:`Post` field order: post_id, user, timestamp, url, content, log_type."""
JoinedRow = tuple[int, str, str, str, str, int, int]
"""A Twilog row that an export held more than once: the row that wins and the relations of all
(:data:`~mcpkit.archive.posts.KIND_BITS`)."""
TWILOG_COLUMNS = (
    "post_id",
    "user_id",
    "url",
    "timestamp",
    "ts",
    "content",
    "log_type",
    "kind",
    "account",
    "relations",
)
"""The columns a Twilog row fills; the others keep their defaults (platform ``x``, ``""``)."""


_TWILOG_RELATIONS = TWILOG_COLUMNS.index("relations")


class _TwilogPosts(Sequence[Post]):
    """Twilog rows seen as posts, each built only when asked (the rare merge asks for a few)."""

    def __init__(self, rows: list[TwilogRow | JoinedRow]) -> None:
        self._rows = rows

    def __len__(self) -> int:
        return len(self._rows)

    @overload
    def __getitem__(self, index: int) -> Post: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Post]: ...
    def __getitem__(self, index: int | slice) -> Post | Sequence[Post]:
        if isinstance(index, slice):
            return [_twilog_post(row) for row in self._rows[index]]
        return _twilog_post(self._rows[index])


def joined_rows(previous: TwilogRow | JoinedRow, row: TwilogRow | JoinedRow) -> JoinedRow:
    """Two Twilog rows of one post in one export: the row with the larger log_type (the first
    on a tie, upstream's rule) and the relations of both."""
    relations = joined_relations(_row_relations(previous), _row_relations(row))
    post_id, user, timestamp, url, content, log_type = (row if row[5] > previous[5] else previous)[:6]
    return (post_id, user, timestamp, url, content, log_type, relations)


def _row_relations(row: TwilogRow | JoinedRow) -> int:
    return row[6] if len(row) > 6 else KIND_BITS[twilog_kind(row[5], row[4])]


def _twilog_post(row: TwilogRow | JoinedRow) -> Post:
    post_id, user, timestamp, url, content, log_type = row[:6]
    return Post(post_id, user, timestamp, url, content, log_type, relations=row[6] if len(row) > 6 else 0)


@dataclass(frozen=True, slots=True)
class WriteBase:
    """What a bulk writer needs to know of the store when its write transaction starts."""

    users: dict[str, int]
    next_user_id: int
    id_range: tuple[int, int] | None  # smallest and largest stored post id; None: no posts


class BatchBuilder:
    """Turns posts into :class:`PostBatch` es for one write transaction, allotting user ids
    from its :class:`WriteBase` (so one builder per transaction, used from one thread).

    ``account`` is the export's, for records that name none.
    """

    def __init__(self, base: WriteBase, account: str = "") -> None:
        self._users = dict(base.users)
        self._next_user = base.next_user_id
        self._range = base.id_range if base.id_range is not None else (1, 0)
        self._account = account

    def batch(self, posts: Iterable[Post]) -> PostBatch:
        """``posts`` (distinct ids) as a batch: sorted, rows and texts ready (the posts stay
        as given; their rows are :func:`normalized`, which the rare merge does itself)."""
        low, high = self._range
        account = self._account
        ordered = sorted(posts, key=_post_id)
        rows: list[tuple[Any, ...]] = []
        new_users: list[tuple[int, str]] = []
        users = self._users
        for p in ordered:
            user_id = users.get(p.user) if p.user else None
            if p.user and user_id is None:
                user_id = users[p.user] = self._next_user
                new_users.append((user_id, p.user))
                self._next_user += 1
            rows.append(post_row(p, user_id, account))
        return PostBatch(
            posts=ordered,
            rows=rows,
            folded=[fold(p.content) for p in ordered],
            check=[p.post_id for p in ordered if low <= p.post_id <= high],
            users=new_users,
            account=account,
        )

    def twilog_batch(self, records: Iterable[TwilogRow | JoinedRow]) -> PostBatch:
        """Twilog rows (distinct ids) as a batch, without a :class:`Post` per row: the bulk
        path of the Twilog CSV, whose rows have six fields and a kind read from them."""
        low, high = self._range
        account = self._account
        ordered = sorted(records)  # by post_id: ids are distinct, so nothing else is compared
        rows: list[tuple[Any, ...]] = []
        new_users: list[tuple[int, str]] = []
        users = self._users
        bits = KIND_BITS
        for record in ordered:
            post_id, user, timestamp, url, content, log_type = record[:6]
            kind = twilog_kind(log_type, content)
            relations = record[6] if len(record) > 6 else bits[kind]
            if len(record) > 6:
                kind = primary_kind(relations)
            user_id = users.get(user) if user else None
            if user and user_id is None:
                user_id = users[user] = self._next_user
                new_users.append((user_id, user))
                self._next_user += 1
            ts = timestamp_epoch(timestamp)
            rows.append(
                (
                    post_id,
                    user_id,
                    url,
                    timestamp,
                    ts,
                    content,
                    log_type,
                    kind,
                    account,
                    relations,
                )
            )
        return PostBatch(
            posts=_TwilogPosts(ordered),
            rows=rows,
            folded=[fold(row[4]) for row in ordered],
            check=[row[0] for row in ordered if low <= row[0] <= high],
            users=new_users,
            account=account,
            columns=TWILOG_COLUMNS,
        )


def _post_id(post: Post) -> int:
    return post.post_id


def post_row(p: Post, user_id: int | None, account: str = "") -> tuple[Any, ...]:
    """The ``posts`` table row of ``p`` as :func:`normalized` makes it (:data:`POST_COLUMNS`),
    without building the normalized post (a third of a Twilog import's time, else)."""
    kind, log_type, relations = stored_kind(p)
    return (
        p.post_id,
        user_id,
        p.url,
        p.timestamp,
        timestamp_epoch(p.timestamp),
        p.content,
        log_type,
        p.platform,
        kind,
        p.source_id,
        p.account or account,
        p.reply_to,
        p.thread_root,
        p.quote_of,
        p.repost_of,
        p.content_warning,
        p.lang,
        1 if p.media else 0,
        relations,
        p.visibility,
    )


def read_posts(conn: sqlite3.Connection, ids: Sequence[int], variables: int) -> dict[int, Post]:
    """The stored posts among ``ids``, whole (media included), as :func:`normalized` posts."""
    found: dict[int, Post] = {}
    with_media: list[int] = []
    for start in range(0, len(ids), variables):
        part = list(ids[start : start + variables])
        marks = ",".join("?" * len(part))
        for row in conn.execute(
            f"SELECT {_READ_COLUMNS} FROM posts p LEFT JOIN users u ON u.user_id = p.user_id "
            f"WHERE p.post_id IN ({marks})",
            part,
        ):
            found[int(row[0])] = dataclasses.replace(
                Post(*row[:16]), relations=int(row[17]), visibility=str(row[18])
            )
            if row[16]:
                with_media.append(int(row[0]))
    media: dict[int, list[Media]] = {}
    for start in range(0, len(with_media), variables):
        part = with_media[start : start + variables]
        marks = ",".join("?" * len(part))
        for post_id, kind, path, url, alt in conn.execute(
            f"SELECT post_id, type, path, url, alt FROM media WHERE post_id IN ({marks}) "
            "ORDER BY post_id, position",
            part,
        ):
            media.setdefault(int(post_id), []).append(Media(kind, path, url, alt))
    for post_id, items in media.items():
        found[post_id] = _with_media(found[post_id], tuple(items))
    return found


def _with_media(post: Post, media: tuple[Media, ...]) -> Post:
    return dataclasses.replace(post, media=media)


class PostWriter:
    """Writes post rows inside one write transaction, in as few SQLite statements as it can.

    Why it batches the way it does:

    * New rows go in as multi-row ``INSERT`` statements: one ``sqlite3_step`` each, during which
      Python's sqlite3 releases the GIL, so a thread preparing the next rows runs meanwhile
      (one step per row would hand the GIL back and forth for every row).
    * FTS5 keeps new terms in memory and writes them out as a new segment (later merged) when
      a statement that may roll back on its own starts (its ``xSavepoint``), when a rowid is
      not larger than the last, or when the memory exceeds its ``hashsize``. So the index
      entries are held back and written :data:`FTS_CHUNK` at a time, sorted by rowid, in
      statements as large as the variable limit allows (with a large ``hashsize``, see
      :meth:`Store.bulk_writer`): on a million posts FTS5 then spends about 8.5 s instead of
      11.5 s, writing each leaf about once instead of twice. Its final segments (8 at 1M) answer
      as fast as after an ``optimize``, which would cost 1.5 s more. :meth:`flush` writes what
      is held; call it before the transaction commits.
    * With a ``side`` index (:class:`~mcpkit.archive.store._side_index.SideIndex`, a first
      import) every index entry goes there instead, built on another thread and core.
    """

    def __init__(
        self, conn: sqlite3.Connection, variables: int, changes: PostChanges, side: SideIndex | None = None
    ) -> None:
        self._conn = conn
        self._variables = variables
        self._fts: list[tuple[int, str]] = []
        self.changes = changes
        self.side = side

    def write(self, batch: PostBatch) -> tuple[UpsertCounts, list[int]]:
        """Write a batch of Twilog rows (:meth:`BatchBuilder.twilog_batch`), upstream's way.

        Only the ids in ``check`` are looked up; every other row must be new. Against a stored
        Twilog row the larger log_type wins (upstream's rule: the row is replaced, reading back
        only its old text); against a post an export brought, the merge rules of
        :mod:`._merge`. Returns the counts and the ids of the rows left unchanged.
        """
        conn = self._conn
        existing: dict[int, tuple[int, str, int]] = {}  # post_id -> stored log_type, source_id, relations
        for start in range(0, len(batch.check), self._variables):
            part = batch.check[start : start + self._variables]
            marks = ",".join("?" * len(part))
            for post_id, log_type, source_id, held in conn.execute(
                f"SELECT post_id, log_type, source_id, relations FROM posts WHERE post_id IN ({marks})", part
            ):
                existing[post_id] = (log_type, source_id, held)
        if not existing:
            self._insert_batch(batch, range(len(batch.rows)))
            return UpsertCounts(new=len(batch.rows)), []
        inserts: list[int] = []
        updates: list[int] = []
        merges: list[int] = []
        unchanged: list[int] = []
        relations: dict[int, int] = {}  # row index -> the relations of the stored and the new row
        for index, row in enumerate(batch.rows):
            stored = existing.get(row[0])
            if stored is None:
                inserts.append(index)
                continue
            if stored[1]:
                merges.append(index)
                continue
            joined = joined_relations(stored[2], row[_TWILOG_RELATIONS])
            if row[6] > stored[0] or joined != stored[2]:
                relations[index] = joined
                updates.append(index)
            else:
                unchanged.append(row[0])
        self._insert_batch(batch, inserts)
        if updates:
            self._update(batch, updates, relations, {i: existing[batch.rows[i][0]][0] for i in updates})
        updated = len(updates)
        if merges:
            changed, same = self._merge_stored([normalized(batch.posts[i], batch.account) for i in merges])
            updated += changed
            unchanged.extend(same)
        return UpsertCounts(new=len(inserts), updated=updated, unchanged=len(unchanged)), unchanged

    def write_posts(self, batch: PostBatch) -> tuple[UpsertCounts, list[int]]:
        """Write whole posts (any export) with their media, merging with stored ones.

        Returns the counts and the ids of the posts left unchanged. Users the batch names for
        the first time must be stored first (:meth:`Store.add_users`).
        """
        existing: set[int] = set()
        for start in range(0, len(batch.check), self._variables):
            part = batch.check[start : start + self._variables]
            marks = ",".join("?" * len(part))
            existing.update(
                r[0]
                for r in self._conn.execute(f"SELECT post_id FROM posts WHERE post_id IN ({marks})", part)
            )
        if not existing:
            self._insert_batch(batch, range(len(batch.rows)))
            return UpsertCounts(new=len(batch.rows)), []
        fresh = [i for i, row in enumerate(batch.rows) if row[0] not in existing]
        self._insert_batch(batch, fresh)
        changed, same = self._merge_stored(
            [
                normalized(batch.posts[i], batch.account)
                for i, row in enumerate(batch.rows)
                if row[0] in existing
            ]
        )
        return UpsertCounts(new=len(fresh), updated=changed, unchanged=len(same)), same

    def _insert_batch(self, batch: PostBatch, indexes: Sequence[int]) -> None:
        """Insert the batch's rows at ``indexes`` (all of them when it is every row)."""
        every = len(indexes) == len(batch.rows)
        rows = batch.rows if every else [batch.rows[i] for i in indexes]
        folded = batch.folded if every else [batch.folded[i] for i in indexes]
        self._insert_many(_insert_sql(batch.columns), len(batch.columns), rows)
        self.changes.inserted(batch.columns, rows)
        if batch.columns is POST_COLUMNS:
            self._insert_media([batch.posts[i] for i in indexes if batch.rows[i][_HAS_MEDIA]])
        self._index(rows, folded)

    def _merge_stored(self, posts: Sequence[Post]) -> tuple[int, list[int]]:
        """Merge stored posts with these (:func:`normalized`) versions of them; returns how many
        changed and the ids of those that did not."""
        stored = read_posts(self._conn, [p.post_id for p in posts], self._variables)
        changes: list[tuple[Post, Post]] = []
        same: list[int] = []
        for post in posts:
            old = stored[post.post_id]
            merged = merge_posts(old, post)
            if merged is old:
                same.append(post.post_id)
            else:
                changes.append((old, merged))
        if changes:
            self._replace(changes)
        return len(changes), same

    def _replace(self, changes: Sequence[tuple[Post, Post]]) -> None:
        """Store the merged versions of stored posts: the row, its media, its index entry."""
        conn = self._conn
        ids = self._user_ids({new.user for _, new in changes if new.user})
        self.changes.add(new.post_id for _, new in changes)
        conn.executemany(
            _FULL_UPDATE, [(*post_row(new, ids.get(new.user))[1:], new.post_id) for _, new in changes]
        )
        texts = [(old, new) for old, new in changes if old.content != new.content]
        if texts:
            self._reindex(
                [(old.post_id, fold(old.content)) for old, _ in texts],
                [(new.post_id, fold(new.content)) for _, new in texts],
            )
        media = [new for old, new in changes if old.media != new.media]
        if media:
            conn.executemany("DELETE FROM media WHERE post_id = ?", [(p.post_id,) for p in media])
            self._insert_media(media)

    def _user_ids(self, names: Iterable[str]) -> dict[str, int]:
        found: dict[str, int] = {}
        for name in names:
            row = self._conn.execute("SELECT user_id FROM users WHERE name = ?", (name,)).fetchone()
            if row is not None:
                found[name] = int(row[0])
        return found

    def _update(
        self, batch: PostBatch, indexes: Sequence[int], relations: dict[int, int], log_types: dict[int, int]
    ) -> None:
        """Replace stored Twilog rows by the batch's rows at ``indexes`` when their log_type is
        larger (rare in bulk: only their old text is read back, for the index), and give each
        the ``relations`` of both; an account already stored stays."""
        conn = self._conn
        old: dict[int, str] = {}
        replaced = [i for i in indexes if batch.rows[i][6] > log_types[i]]
        ids = [batch.rows[i][0] for i in replaced]
        self.changes.add(batch.rows[i][0] for i in indexes)
        for start in range(0, len(ids), self._variables):
            part = ids[start : start + self._variables]
            marks = ",".join("?" * len(part))
            old.update(conn.execute(f"SELECT post_id, content FROM posts WHERE post_id IN ({marks})", part))
        conn.executemany(
            "UPDATE posts SET user_id=?, url=?, timestamp=?, ts=?, content=?, log_type=?, "
            "account = CASE WHEN account = '' THEN ? ELSE account END WHERE post_id=?",
            [(*batch.rows[i][1:7], batch.rows[i][8], batch.rows[i][0]) for i in replaced],
        )
        conn.executemany(
            "UPDATE posts SET kind=?, relations=? WHERE post_id=?",
            [(primary_kind(relations[i]), relations[i], batch.rows[i][0]) for i in indexes],
        )
        changed = [i for i in replaced if old[batch.rows[i][0]] != batch.rows[i][5]]
        if changed:
            self._reindex(
                [(batch.rows[i][0], fold(old[batch.rows[i][0]])) for i in changed],
                [(batch.rows[i][0], batch.folded[i]) for i in changed],
            )

    def _reindex(self, old: list[tuple[int, str]], new: list[tuple[int, str]]) -> None:
        """Replace the index entries ``old`` (``rowid``, folded text as indexed) by ``new``."""
        self.flush()  # the entry to delete may be one still held back
        if self.side is not None:
            self.side.delete(old)
            self.side.insert(new)
            return
        self._conn.executemany(
            "INSERT INTO fts_content(fts_content, rowid, body) VALUES ('delete', ?, ?)", old
        )
        self._conn.executemany("INSERT INTO fts_content(rowid, body) VALUES (?, ?)", new)

    def flush(self) -> None:
        """Write the held-back index entries (to the side index, if any)."""
        entries, self._fts = self._fts, []
        entries.sort()  # by rowid; ids are distinct, so the texts are never compared
        if self.side is not None:
            if entries:
                self.side.insert(entries)
            return
        self._insert_many("INSERT INTO fts_content(rowid, body) VALUES ", 2, entries)

    def _insert_many(self, head: str, width: int, rows: Sequence[Sequence[Any]]) -> None:
        """``rows`` in multi-row statements as large as SQLite's variable limit allows."""
        insert_many(self._conn, head, width, rows, self._variables)

    def _insert_media(self, posts: Sequence[Post]) -> None:
        self._insert_many(
            "INSERT INTO media(post_id, position, type, path, url, alt) VALUES ",
            6,
            [(p.post_id, i, m.type, m.path, m.url, m.alt) for p in posts for i, m in enumerate(p.media)],
        )

    def _index(self, rows: Sequence[Sequence[Any]], folded: Sequence[str]) -> None:
        self._fts.extend(zip([row[0] for row in rows], folded, strict=True))
        if len(self._fts) >= FTS_CHUNK:
            self.flush()


def fts_config(conn: sqlite3.Connection, key: str, value: object) -> bool:
    """Set an FTS5 configuration value of ``fts_content``; False if this SQLite refuses it."""
    try:
        conn.execute("INSERT INTO fts_content(fts_content, rank) VALUES (?, ?)", (key, value))
    except sqlite3.OperationalError:
        return False
    return True


class PostChanges:
    """The ids of the posts one write transaction inserted or changed, for the per-post
    columns that searches and pages filter on (:mod:`._columns`), which then re-read only
    those posts instead of every post.

    Past :data:`LOGGED_CHANGES` ids it keeps only that there were many: the columns are then
    read whole, which costs about what re-reading that many posts one by one would, and a
    first import of ten million posts does not write ten million log rows. A transaction that
    began on an archive without posts also keeps the columns of the rows it inserts (``fresh``),
    which the store hands over at commit instead of having them read whole.
    """

    __slots__ = ("_logged", "fresh")

    def __init__(self, fresh: NewColumns | None = None) -> None:
        self._logged = BoundedIds(LOGGED_CHANGES)
        self.fresh = fresh

    @property
    def ids(self) -> set[int]:
        """The posts changed, when they are at most :data:`LOGGED_CHANGES`."""
        return self._logged.ids

    @property
    def many(self) -> bool:
        """More posts changed than :data:`LOGGED_CHANGES`."""
        return self._logged.over

    def add(self, ids: Iterable[int]) -> None:
        """Posts changed in place, or by a statement of the caller's own."""
        if self.fresh is not None:
            ids = list(ids)
            self.fresh.rewrite(ids)
        self._logged.add(ids)

    def inserted(self, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
        """New ``posts`` rows, written by an INSERT naming ``columns``."""
        if self.fresh is not None:
            self.fresh.add_rows(columns, rows)
        self._logged.add(row[0] for row in rows)

    def __bool__(self) -> bool:
        return self.many or bool(self.ids)


LOGGED_CHANGES = 100_000
"""The most post ids one transaction logs (:class:`PostChanges`)."""


@functools.lru_cache(maxsize=8)
def _insert_sql(columns: tuple[str, ...]) -> str:
    return f"INSERT INTO posts({', '.join(columns)}) VALUES "
