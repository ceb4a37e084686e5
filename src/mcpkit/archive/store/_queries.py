"""Reading the archive: posts by id, text search, filter columns, counts.

:class:`StoreQueries` is the read half of :class:`~mcpkit.archive.store.Store`; every method
uses the calling thread's own read connection (``self.reader``), so searches from worker
threads run concurrently and never wait for a writer (WAL).
"""

from __future__ import annotations

import abc
import itertools
import json
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from mcpkit.archive.errors import ArchiveError
from mcpkit.archive.filters import SHOWN, PostFilter, account_key
from mcpkit.archive.posts import KIND_BITS, KINDS, PLATFORMS, VISIBILITIES, relation_names
from mcpkit.archive.query import TextFilter
from mcpkit.archive.settings import SPACES
from mcpkit.archive.store._columns import UNKNOWN_CODE, PostArrays
from mcpkit.archive.store._text import long_term_match

__all__ = [
    "SOURCES",
    "StoreQueries",
    "ThreadNode",
    "add_enrichment",
    "post_dict",
]

SOURCES = SPACES  # the texts a post has, searched by words or by meaning

_POST_COLUMNS = "p.post_id, coalesce(u.name, ''), p.timestamp, p.url, p.content"
_FTS_PROBE = 5000
_FEW_POSTS = 5000
"""A filter passing at most this many posts has its time range read by post id."""


@dataclass(frozen=True, slots=True)
class ThreadNode:
    """What walking a thread needs of a post: who wrote it, what it replies to, when.

    ``source_form`` is how other posts name it in ``reply_to``: its ``source_id``, or for a
    Twilog row (which has none) its id.
    """

    post_id: int
    source_form: str
    platform: str
    kind: str
    user: str
    account: str
    reply_to: str
    ts: int | None


_THREAD_COLUMNS = (
    "p.post_id, p.source_id, p.platform, p.kind, coalesce(u.name, ''), p.account, p.reply_to, p.ts "
    "FROM posts p LEFT JOIN users u ON u.user_id = p.user_id"
)
_NOT_DIRECT = "p.visibility != 'direct'"
"""A thread never holds a direct post (:data:`~mcpkit.archive.filters.SHOWN`)."""
_EXTENDED_COLUMNS = (
    "post_id, source_id, platform, kind, account, reply_to, thread_root, quote_of, repost_of, "
    "content_warning, lang, has_media, relations, visibility"
)


def _thread_node(row: Sequence[Any]) -> ThreadNode:
    post_id = int(row[0])
    return ThreadNode(
        post_id=post_id,
        source_form=str(row[1]) or str(post_id),
        platform=str(row[2]),
        kind=str(row[3]),
        user=str(row[4]),
        account=str(row[5]),
        reply_to=str(row[6]),
        ts=None if row[7] is None else int(row[7]),
    )


def post_dict(row: Sequence[Any]) -> dict[str, Any]:
    """Upstream's post shape from a ``_POST_COLUMNS`` row."""
    return {"post_id": int(row[0]), "content": row[4], "timestamp": row[2], "url": row[3], "user": row[1]}


class StoreQueries(abc.ABC):
    """Read methods; the subclass provides ``reader``, this thread's read connection, and
    ``post_arrays``, the per-post columns (:mod:`._columns`).

    Counts by user, kind, platform and account come from those columns, not from indexes of
    ``posts``: an index on the user and one on kind, platform and account cost a third of
    writing the posts of an import (34 s of CPU of 102 at ten million posts), and a count over
    the columns is a ``bincount`` (milliseconds) where the index was a scan of its entries.
    """

    @property
    @abc.abstractmethod
    def reader(self) -> sqlite3.Connection:
        """This thread's read connection (SQLite connections are not shared across threads)."""

    @abc.abstractmethod
    def post_arrays(self) -> tuple[int, PostArrays]:
        """``(posts_generation, columns of every post)``, current."""

    def enrichment_states(self) -> dict[int, tuple[str, str, bool]]:
        """``post_id -> (content_hash, prompt_version, ok)`` of every post ``enrich`` has seen."""
        rows = self.reader.execute("SELECT post_id, content_hash, prompt_version, ok FROM enrich_state")
        return {int(pid): (h, v, bool(ok)) for pid, h, v, ok in rows}

    def enriched_ids(self) -> set[int]:
        """Posts with an enrichment, however it came (``enrich`` or an upstream migration)."""
        return {int(r[0]) for r in self.reader.execute("SELECT post_id FROM enrichments")}

    def enrichment_coverage(self) -> dict[str, int]:
        """How much of the archive is enriched: for ``stats`` and ``get_status``."""
        one: Callable[[str], int] = lambda sql: int(self.reader.execute(sql).fetchone()[0])  # noqa: E731
        return {
            "total_posts": one("SELECT count(*) FROM posts"),
            "enriched": one(
                "SELECT count(*) FROM enrichments e JOIN posts p ON p.post_id = e.post_id "
                "WHERE coalesce(e.summary, '') != '' OR coalesce(e.reasoning, '') != ''"
            ),
            "failed": one("SELECT count(*) FROM enrich_state WHERE ok = 0"),
        }

    def posts_by_ids(self, ids: Sequence[int], *, enrich: bool = True) -> dict[int, dict[str, Any]]:
        """Post dicts for ``ids`` (missing ids are absent), with enrichments when present."""
        out: dict[int, dict[str, Any]] = {}
        conn = self.reader
        id_list = [int(i) for i in ids]
        for start in range(0, len(id_list), 500):
            part = id_list[start : start + 500]
            marks = ",".join("?" * len(part))
            extra = ", e.reasoning, e.summary, e.tags" if enrich else ""
            join = " LEFT JOIN enrichments e ON e.post_id = p.post_id" if enrich else ""
            sql = (
                f"SELECT {_POST_COLUMNS}{extra} FROM posts p LEFT JOIN users u ON u.user_id = p.user_id"
                f"{join} WHERE p.post_id IN ({marks})"
            )
            for row in conn.execute(sql, part):
                post = post_dict(row)
                if enrich:
                    add_enrichment(post, row[5], row[6], row[7])
                out[post["post_id"]] = post
        return out

    def text_search(
        self,
        text_filter: TextFilter,
        limit: int,
        source: str = "content",
        offset: int = 0,
        post_filter: PostFilter | None = None,
    ) -> list[dict[str, Any]]:
        """Posts whose ``source`` text passes ``text_filter``, newest first, with enrichments,
        ``limit`` of them after the first ``offset`` (only posts ``post_filter`` passes).

        A post without that text (not enriched) is matched as an empty text, as upstream.
        """
        found = itertools.islice(
            self.matching_posts(text_filter, source, post_filter), offset, offset + limit
        )
        return self.with_enrichments([post for post, _ in found])

    def with_enrichments(self, posts: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """``posts`` with ``reasoning``, ``summary`` and ``tags`` added where a post has them
        (one query for the few posts an answer holds, not a join over every candidate)."""
        ids = [post["post_id"] for post in posts]
        found: dict[int, tuple[Any, Any, Any]] = {}
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            marks = ",".join("?" * len(part))
            for post_id, reasoning, summary, tags in self.reader.execute(
                f"SELECT post_id, reasoning, summary, tags FROM enrichments WHERE post_id IN ({marks})", part
            ):
                found[int(post_id)] = (reasoning, summary, tags)
        for post in posts:
            extra = found.get(post["post_id"])
            if extra is not None:
                add_enrichment(post, *extra)
        return posts

    def matching_posts(
        self, text_filter: TextFilter, source: str = "content", post_filter: PostFilter | None = None
    ) -> Iterator[tuple[dict[str, Any], int | None]]:
        """``(post, ts)`` newest first for every post whose ``source`` text passes the filter
        (posts without their enrichments: :meth:`with_enrichments` adds them to those kept).

        The answer is by definition that of a scan testing every post (tests/archive/naive.py);
        FTS5 trigram only finds candidates faster (include terms of three or more characters),
        and terms that match very many posts are served by walking the time index instead,
        which is then the faster path. ``post_filter``'s conditions are SQL terms of the same
        statement.
        """
        conn = self.reader
        text_col = _source_column(source)
        where, params = self.filter_sql(post_filter)
        join = "" if source == "content" else " LEFT JOIN enrichments e ON e.post_id = p.post_id"
        base = (
            f"SELECT {_POST_COLUMNS}, p.ts, {text_col} FROM posts p "
            f"LEFT JOIN users u ON u.user_id = p.user_id{join}"
        )
        order = " ORDER BY p.timestamp DESC, p.post_id DESC"
        long_terms = [t for t in text_filter.folded_includes if len(t) >= 3]
        rows: Iterable[Sequence[Any]] | None = None
        if long_terms:
            found = long_term_match(conn, long_terms, _FTS_PROBE - 1, f"fts_{source}")
            if found is not None:
                candidates, query = found
                rows = conn.execute(
                    f"{base} WHERE p.post_id IN ({candidates}){where}{order}", (query, *params)
                )
        if rows is None:
            rows = conn.execute(f"{base} WHERE 1{where}{order}", params)
        for row in rows:
            if text_filter.matches(row[6]):
                yield post_dict(row), row[5]

    def account_spellings(self) -> tuple[str, ...]:
        """The account spellings the posts' columns know (the archive owners: a handful; one
        whose posts are gone may stay listed until the columns are next read whole)."""
        return self.post_arrays()[1].account_names

    def filter_sql(self, post_filter: PostFilter | None, alias: str = "p") -> tuple[str, list[Any]]:
        """``(" AND cond ...", params)``: the SQL terms of ``post_filter`` on ``posts`` as ``alias``.

        Accounts are compared as :func:`account_key` forms; the stored spellings they match are
        looked up first, so SQLite's ASCII-only ``lower`` never decides a match. A kind is a
        relation: a post passes when it has any of those chosen. ``None`` (upstream's request)
        leaves direct posts out, as every filter that does not name them.
        """
        if post_filter is None:
            post_filter = SHOWN
        if not post_filter.active:
            return "", []
        terms: list[str] = []
        params: list[Any] = []
        if post_filter.kinds is not None:
            terms.append(f"({alias}.relations & ?) != 0 AND {alias}.kind IN ({','.join('?' * len(KINDS))})")
            params.append(sum(KIND_BITS[k] for k in post_filter.kinds))
            params.extend(KINDS)
        for column, values in (("platform", post_filter.platforms), ("visibility", post_filter.visibilities)):
            if values is not None:
                terms.append(f"{alias}.{column} IN ({','.join('?' * len(values))})")
                params.extend(sorted(values))
        if post_filter.accounts is not None:
            spellings = [a for a in self.account_spellings() if account_key(a) in post_filter.accounts]
            if spellings:
                terms.append(f"{alias}.account IN ({','.join('?' * len(spellings))})")
                params.extend(spellings)
            else:
                terms.append("0")
        if post_filter.has_media is not None:
            terms.append(f"{alias}.has_media {'!=' if post_filter.has_media else '='} 0")
        return "".join(f" AND {t}" for t in terms), params

    def user_counts(self, post_filter: PostFilter | None = None) -> dict[int, tuple[str, int]]:
        """``user_id -> (name, post_count)`` for named users with posts ``post_filter`` passes,
        by user id."""
        _, arrays = self.post_arrays()
        counts = arrays.user_counts(arrays.passing(post_filter))
        present = [int(u) for u in np.flatnonzero(counts)]
        names = self.user_names(present)
        return {uid: (names[uid], int(counts[uid])) for uid in present if uid in names}

    def user_names(self, user_ids: Sequence[int]) -> dict[int, str]:
        """``user_id -> name`` of the users among ``user_ids``."""
        names: dict[int, str] = {}
        for start in range(0, len(user_ids), 500):
            part = list(user_ids[start : start + 500])
            rows = self.reader.execute(
                f"SELECT user_id, name FROM users WHERE user_id IN ({','.join('?' * len(part))})", part
            )
            names.update((int(uid), str(name)) for uid, name in rows)
        return names

    def user_ids_by_name(self, names: Iterable[str]) -> list[int]:
        names = list(names)
        if not names:
            return []
        marks = ",".join("?" * len(names))
        rows = self.reader.execute(f"SELECT user_id FROM users WHERE name IN ({marks})", names)
        return [int(r[0]) for r in rows]

    def counts(self) -> dict[str, int]:
        conn = self.reader
        one: Callable[[str], int] = lambda sql: int(conn.execute(sql).fetchone()[0])  # noqa: E731
        _, arrays = self.post_arrays()
        shown = arrays.passing(None)  # every post but the direct ones
        return {
            "total_posts": len(arrays.post_ids) if shown is None else int(np.count_nonzero(shown)),
            "total_users": int(np.count_nonzero(arrays.user_counts(shown))),
            "total_summaries": one(
                "SELECT count(*) FROM enrichments WHERE summary IS NOT NULL AND summary != ''"
            ),
            "total_tags": one(
                "SELECT count(DISTINCT t.value) FROM enrichments e, json_each(e.tags) t "
                "WHERE e.tags IS NOT NULL AND json_valid(e.tags)"
            ),
        }

    def date_range(self) -> tuple[str, str]:
        row = self.reader.execute(
            "SELECT min(timestamp), max(timestamp) FROM posts WHERE timestamp != '' AND visibility != 'direct'"
        ).fetchone()
        return (row[0] or "", row[1] or "")

    def iter_texts(self, source: str, *, shown: bool = False) -> Iterator[tuple[int, str]]:
        """``(post_id, text)`` of every post with a non-empty ``source`` text, by post id;
        ``shown``: of the posts shown unless asked for (no direct post), for what leaves the
        machine (``archive enrich`` sends texts to a hosted model)."""
        if source == "content":
            where = " WHERE visibility != 'direct'" if shown else ""
            sql = f"SELECT post_id, content FROM posts{where} ORDER BY post_id"
        else:
            _source_column(source)
            sql = f"SELECT post_id, {source} FROM enrichments WHERE {source} IS NOT NULL ORDER BY post_id"
        for post_id, text in self.reader.execute(sql):
            if text:
                yield int(post_id), str(text)

    # -- mcpkit's answers: filtered counts, extended posts, threads --------------------------

    def filtered_stats(self, post_filter: PostFilter) -> dict[str, Any]:
        """Counts of the posts ``post_filter`` passes, and how they fall by kind, platform and account.

        Every breakdown counts the same posts as the totals (all of the filter's conditions), so
        ``--account A`` shows A alone: each breakdown used to leave out its own field's
        condition, as a search page's facets do, and printed every account's counts beside A's
        total, which a reader (or a model) took for A's. Likes and reposts are counted when the
        filter's kinds include them.
        """
        _, arrays = self.post_arrays()
        passing = arrays.passing(post_filter)
        users = arrays.user_counts(passing)
        total = len(arrays.post_ids) if passing is None else int(np.count_nonzero(passing))
        earliest, latest = self._time_range(post_filter, arrays, passing, total)

        def facet(column: str) -> list[tuple[str, int]]:
            return self._facet(arrays, column, post_filter, passing)

        def ordered(pairs: list[tuple[str, int]], names: Sequence[str]) -> dict[str, int]:
            rank = {name: i for i, name in enumerate(names)}
            return dict(sorted(pairs, key=lambda p: (rank.get(p[0], len(rank)), p[0])))

        accounts = sorted(facet("account"), key=lambda p: (-p[1], p[0]))
        return {
            "total_posts": total,
            "total_users": int(np.count_nonzero(users)),
            "date_range": {"earliest": earliest, "latest": latest},
            "by_kind": ordered(facet("kind"), KINDS),
            "by_platform": ordered(facet("platform"), PLATFORMS),
            "by_account": dict(accounts),
            "by_visibility": arrays.visibility_counts(passing),
        }

    def _time_range(
        self, post_filter: PostFilter, arrays: PostArrays, passing: npt.NDArray[np.bool_] | None, total: int
    ) -> tuple[str, str]:
        """The earliest and latest timestamp of the ``total`` posts ``post_filter`` passes
        (``passing`` of ``arrays``). The columns hold epoch seconds, none for a timestamp the
        parser could not read, so the stored text decides: read by id for a few posts, else
        the time index walked from each end to the first passing post."""
        if total == 0:
            return "", ""
        if passing is not None and total <= _FEW_POSTS:
            ids = [int(i) for i in arrays.post_ids[passing]]
            stamps: list[str] = []
            for start in range(0, len(ids), 500):
                part = ids[start : start + 500]
                stamps.extend(
                    str(row[0])
                    for row in self.reader.execute(
                        f"SELECT timestamp FROM posts WHERE post_id IN ({','.join('?' * len(part))}) "
                        "AND timestamp != ''",
                        part,
                    )
                )
            return (min(stamps), max(stamps)) if stamps else ("", "")
        where, params = self.filter_sql(post_filter)
        ends = []
        for direction in ("", " DESC"):
            row = self.reader.execute(
                f"SELECT p.timestamp FROM posts p WHERE p.timestamp != ''{where} "
                f"ORDER BY p.timestamp{direction} LIMIT 1",
                params,
            ).fetchone()
            ends.append("" if row is None else str(row[0]))
        return ends[0], ends[1]

    def _facet(
        self,
        arrays: PostArrays,
        column: str,
        post_filter: PostFilter,
        passing: npt.NDArray[np.bool_] | None,
    ) -> list[tuple[str, int]]:
        """``(value, posts)`` of ``column`` (kind, platform or account) among the posts
        ``post_filter`` passes (``passing`` of ``arrays``), for each value some post has."""
        if column == "account":
            held = arrays.account_counts(passing)
            return [(name, int(n)) for name, n in zip(arrays.account_names, held, strict=False) if n]
        if column == "kind":  # relations: a post liked and bookmarked counts under both
            pairs = list(arrays.relation_counts(passing).items())
            relations = arrays.relations if passing is None else arrays.relations[passing]
            unknown = int(np.count_nonzero(relations == 0))
            names: Sequence[str] = KINDS
        else:
            names = PLATFORMS if column == "platform" else VISIBILITIES
            small = arrays.platforms if column == "platform" else arrays.visibilities
            held = np.bincount(small if passing is None else small[passing], minlength=256)
            pairs = [(name, int(held[i])) for i, name in enumerate(names) if held[i]]
            unknown = int(held[UNKNOWN_CODE])
        if unknown:  # values of no known name: counted by SQL, by their own names
            where, params = self.filter_sql(post_filter)
            known = ",".join("?" * len(names))
            pairs += [
                (str(value), int(n))
                for value, n in self.reader.execute(
                    f"SELECT p.{column}, count(*) FROM posts p WHERE p.{column} NOT IN ({known}){where} "
                    f"GROUP BY p.{column}",
                    [*names, *params],
                )
            ]
        return pairs

    def extend_posts(self, posts: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """``posts`` in mcpkit's shape: ``id`` as a string first, then upstream's fields, then
        platform, kind, account, content warning, reply, quote and repost targets, media, lang.

        In place for the dicts' contents; returns the new dicts in the same order.
        """
        ids = [post["post_id"] for post in posts]
        extra: dict[int, Sequence[Any]] = {}
        media: dict[int, list[dict[str, str]]] = {}
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            marks = ",".join("?" * len(part))
            for row in self.reader.execute(
                f"SELECT {_EXTENDED_COLUMNS} FROM posts WHERE post_id IN ({marks})", part
            ):
                extra[int(row[0])] = row
            with_media = [pid for pid in part if pid in extra and extra[pid][11]]
            if with_media:
                marks = ",".join("?" * len(with_media))
                for post_id, kind, path, url, alt in self.reader.execute(
                    f"SELECT post_id, type, path, url, alt FROM media WHERE post_id IN ({marks}) "
                    "ORDER BY post_id, position",
                    with_media,
                ):
                    media.setdefault(int(post_id), []).append(
                        {"type": kind, "path": path, "url": url, "alt": alt}
                    )
        out = []
        for post in posts:
            row = extra.get(post["post_id"])
            if row is None:
                out.append({"id": str(post["post_id"]), **post})
                continue
            out.append(
                {
                    "id": str(row[1]) or str(row[0]),
                    **post,
                    "platform": row[2],
                    "kind": row[3],
                    "account": row[4],
                    "content_warning": row[9],
                    "reply_to": row[5],
                    "thread_root": row[6],
                    "quote_of": row[7],
                    "repost_of": row[8],
                    "media": media.get(int(row[0]), []),
                    "lang": row[10],
                    "relations": relation_names(int(row[12])),
                    "visibility": row[13],
                }
            )
        return out

    def thread_nodes(self, ids: Iterable[int]) -> dict[int, ThreadNode]:
        """The posts of ``ids`` the archive has, as thread nodes."""
        out: dict[int, ThreadNode] = {}
        id_list = [int(i) for i in ids]
        for start in range(0, len(id_list), 500):
            part = id_list[start : start + 500]
            marks = ",".join("?" * len(part))
            for row in self.reader.execute(
                f"SELECT {_THREAD_COLUMNS} WHERE p.post_id IN ({marks}) AND {_NOT_DIRECT}", part
            ):
                node = _thread_node(row)
                out[node.post_id] = node
        return out

    def replies_to(self, platform: str, source_forms: Sequence[str]) -> list[ThreadNode]:
        """Posts of ``platform`` whose ``reply_to`` names one of ``source_forms``."""
        out: list[ThreadNode] = []
        for start in range(0, len(source_forms), 500):
            part = list(source_forms[start : start + 500])
            marks = ",".join("?" * len(part))
            rows = self.reader.execute(
                f"SELECT {_THREAD_COLUMNS} WHERE p.reply_to IN ({marks}) AND p.reply_to != '' "
                f"AND p.platform = ? AND {_NOT_DIRECT}",
                [*part, platform],
            )
            out.extend(_thread_node(row) for row in rows)
        return out

    def post_id_by_reference(self, reference: str) -> int | None:
        """The post whose ``source_id`` or ``url`` is ``reference`` (a scan: for one lookup)."""
        row = self.reader.execute(
            "SELECT post_id FROM posts WHERE source_id = ? OR url = ? ORDER BY post_id LIMIT 1",
            (reference, reference),
        ).fetchone()
        return None if row is None else int(row[0])


def add_enrichment(
    post: dict[str, Any], reasoning: str | None, summary: str | None, tags: str | None
) -> None:
    """Add upstream's optional post keys when the post has been enriched."""
    if reasoning is not None:
        post["reasoning"] = reasoning
    if summary is not None:
        post["summary"] = summary
    if tags is not None:
        try:
            post["tags"] = json.loads(tags)
        except ValueError:
            post["tags"] = []


def _source_column(source: str) -> str:
    """The SQL column of a text source in :meth:`Store.matching_posts`'s join."""
    if source == "content":
        return "p.content"
    if source in ("reasoning", "summary"):
        return f"e.{source}"
    raise ArchiveError(f"unknown text source {source!r}")
