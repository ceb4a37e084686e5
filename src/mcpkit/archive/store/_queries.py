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
from mcpkit.archive.query import TextFilter

__all__ = ["SOURCES", "PostArrays", "StoreQueries", "add_enrichment", "post_dict", "trigram_query"]

SOURCES = ("content", "reasoning", "summary")

_POST_COLUMNS = "p.post_id, coalesce(u.name, ''), p.timestamp, p.url, p.content"
_FTS_PROBE = 5000


@dataclass(frozen=True, slots=True)
class PostArrays:
    """Per-post columns for vectorised filters, sorted by post id."""

    post_ids: npt.NDArray[np.int64]
    user_ids: npt.NDArray[np.int64]  # 0 = unknown user
    ts: npt.NDArray[np.float64]  # NaN = unparsable timestamp (passes date filters)


def post_dict(row: Sequence[Any]) -> dict[str, Any]:
    """Upstream's post shape from a ``_POST_COLUMNS`` row."""
    return {"post_id": int(row[0]), "content": row[4], "timestamp": row[2], "url": row[3], "user": row[1]}


class StoreQueries(abc.ABC):
    """Read methods; the subclass provides ``reader``, this thread's read connection."""

    @property
    @abc.abstractmethod
    def reader(self) -> sqlite3.Connection:
        """This thread's read connection (SQLite connections are not shared across threads)."""

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
        self, text_filter: TextFilter, limit: int, source: str = "content", offset: int = 0
    ) -> list[dict[str, Any]]:
        """Posts whose ``source`` text passes ``text_filter``, newest first, with enrichments,
        ``limit`` of them after the first ``offset``.

        A post without that text (not enriched) is matched as an empty text, as upstream.
        """
        found = itertools.islice(self.matching_posts(text_filter, source), offset, offset + limit)
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
        self, text_filter: TextFilter, source: str = "content"
    ) -> Iterator[tuple[dict[str, Any], int | None]]:
        """``(post, ts)`` newest first for every post whose ``source`` text passes the filter
        (posts without their enrichments: :meth:`with_enrichments` adds them to those kept).

        The answer is by definition that of a scan testing every post (tests/archive/naive.py);
        FTS5 trigram only finds candidates faster (include terms of three or more characters),
        and terms that match very many posts are served by walking the time index instead,
        which is then the faster path.
        """
        conn = self.reader
        text_col = _source_column(source)
        join = "" if source == "content" else " LEFT JOIN enrichments e ON e.post_id = p.post_id"
        base = (
            f"SELECT {_POST_COLUMNS}, p.ts, {text_col} FROM posts p "
            f"LEFT JOIN users u ON u.user_id = p.user_id{join}"
        )
        order = " ORDER BY p.timestamp DESC, p.post_id DESC"
        long_terms = [t for t in text_filter.folded_includes if len(t) >= 3]
        rows: Iterable[Sequence[Any]] | None = None
        if long_terms:
            table = f"fts_{source}"
            query = trigram_query(long_terms)
            probe = conn.execute(
                f"SELECT count(*) FROM (SELECT rowid FROM {table} WHERE {table} MATCH ? LIMIT ?)",
                (query, _FTS_PROBE),
            ).fetchone()[0]
            if probe < _FTS_PROBE:
                rows = conn.execute(
                    f"{base} WHERE p.post_id IN (SELECT rowid FROM {table} WHERE {table} MATCH ?){order}",
                    (query,),
                )
        if rows is None:
            rows = conn.execute(base + order)
        for row in rows:
            if text_filter.matches(row[6]):
                yield post_dict(row), row[5]

    def post_arrays(self) -> PostArrays:
        """Filter columns for every post, built with numpy (about a second per million posts)."""
        missing = -(2**62)
        rows = self.reader.execute(
            f"SELECT post_id, coalesce(user_id, 0), coalesce(ts, {missing}) FROM posts ORDER BY post_id"
        ).fetchall()
        table = np.array(rows, dtype=np.int64).reshape(-1, 3)
        ts = table[:, 2].astype(np.float64)
        ts[table[:, 2] == missing] = np.nan
        return PostArrays(np.ascontiguousarray(table[:, 0]), np.ascontiguousarray(table[:, 1]), ts)

    def user_counts(self) -> dict[int, tuple[str, int]]:
        """``user_id -> (name, post_count)`` for named users."""
        rows = self.reader.execute(
            "SELECT u.user_id, u.name, count(p.post_id) FROM users u JOIN posts p ON p.user_id = u.user_id "
            "GROUP BY u.user_id"
        )
        return {int(uid): (name, int(count)) for uid, name, count in rows}

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
        return {
            "total_posts": one("SELECT count(*) FROM posts"),
            "total_users": one("SELECT count(DISTINCT user_id) FROM posts WHERE user_id IS NOT NULL"),
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
            "SELECT min(timestamp), max(timestamp) FROM posts WHERE timestamp != ''"
        ).fetchone()
        return (row[0] or "", row[1] or "")

    def iter_texts(self, source: str) -> Iterator[tuple[int, str]]:
        """``(post_id, text)`` of every post with a non-empty ``source`` text, by post id."""
        if source == "content":
            sql = "SELECT post_id, content FROM posts ORDER BY post_id"
        else:
            _source_column(source)
            sql = f"SELECT post_id, {source} FROM enrichments WHERE {source} IS NOT NULL ORDER BY post_id"
        for post_id, text in self.reader.execute(sql):
            if text:
                yield int(post_id), str(text)


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


def trigram_query(terms: Sequence[str]) -> str:
    """An FTS5 query for rows containing every trigram of every (folded, 3+ character) term.

    The indexes keep no positions, so this finds a superset of the rows containing the terms
    as substrings; callers re-check the text.
    """
    grams = dict.fromkeys(t[i : i + 3] for t in terms for i in range(len(t) - 2))
    return " AND ".join('"' + g.replace('"', '""') + '"' for g in grams)
