"""The pages' data over one archive, answered by the API's page methods.

Each method takes the facets' :class:`~mcpkit.archive.facets.Filters` and a page (``offset``,
``limit``) and answers a dict: the posts in the pages' shape (``id`` a string, then ``user,
platform, kind, visibility, account, timestamp, url, content, content_warning, lang, source_id,
reply_to, thread_root, quote_of, repost_of, has_media``; ``media`` where a page shows pictures),
with every list paged as mcpkit's lists are (``offset, limit, returned, total, next_offset``).
Everything here reads; it runs in a worker thread of the API.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from mcpkit.archive.facets import Filters
from mcpkit.archive.pages.columns import FacetIndex, MediaFile
from mcpkit.archive.pages.text_index import TextSearch
from mcpkit.archive.posts import AUTHORED_KINDS
from mcpkit.archive.query import TextFilter, parse_terms
from mcpkit.archive.store import Store

__all__ = ["TALK_SAMPLE", "TALK_TEXT_SAMPLE", "TALK_TOP", "THREAD_MAX", "Pages", "talk_counts"]

THREAD_MAX = 200
"""Posts of a thread a post page shows at most (the thread's own count is said beside them)."""
TALK_SAMPLE = 1000
"""Mentions and hashtags are counted in this many newest posts of a selection (a text
search: in its :data:`TALK_TEXT_SAMPLE` newest matches), not the whole archive."""
TALK_TEXT_SAMPLE = 200
TALK_TOP = 12
"""The most mentions (and hashtags) a page lists."""
_MENTION = re.compile(r"(?<![\w@/])@([A-Za-z0-9_]{1,30}(?:@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+)?)")
_HASHTAG = re.compile(r"(?<![\w#&/])#(\w{1,100})")


def talk_counts(texts: Sequence[str]) -> dict[str, list[dict[str, Any]]]:
    """The mentions and hashtags of ``texts`` (lower-cased) with how many posts carry each,
    most first, at most :data:`TALK_TOP` of each."""
    found: dict[str, dict[str, int]] = {"mention": {}, "hashtag": {}}
    for text in texts:
        for facet, pattern, sign in (("mention", _MENTION, "@"), ("hashtag", _HASHTAG, "#")):
            for name in {sign + m.group(1).lower() for m in pattern.finditer(text)}:
                found[facet][name] = found[facet].get(name, 0) + 1
    return {
        facet: [
            {"value": name, "count": n}
            for name, n in sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:TALK_TOP]
        ]
        for facet, counts in found.items()
    }


def _paged(total: int, offset: int, limit: int, results: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "total": total,
        "offset": offset,
        "limit": limit,
        "returned": len(results),
        "next_offset": offset + limit if offset + limit < total else None,
        "results": results,
    }


def _media(item: MediaFile) -> dict[str, Any]:
    """One attachment as the pages show it; ``in_export``: the export on disk holds it."""
    return {
        "position": item.position,
        "type": item.type,
        "alt": item.alt,
        "url": item.url,
        "in_export": bool(item.path and item.export_path),
    }


class Pages:
    """Facet columns and the text search of one archive, made on first use; thread-safe."""

    def __init__(self, store: Store) -> None:
        self.index = FacetIndex(store)
        self.text = TextSearch(store, self.index)

    def warm(self) -> None:
        """Make the facet columns now, then the text search's tails (two characters a post:
        loaded, patched, or read from every post's text once)."""
        self.text.tails(self.index.columns(), wait=True)

    def _talk(self, ids: Sequence[int]) -> dict[str, Any]:
        """The mention and hashtag facets of the posts ``ids`` (read from their texts)."""
        posts = self.index.posts(list(ids))
        return talk_counts([str(p["content"] or "") for p in posts.values()])

    def _ordered(self, ids: Sequence[int]) -> list[dict[str, Any]]:
        posts = self.index.posts(list(ids))
        return [posts[i] for i in ids if i in posts]

    # -- search and facets ----------------------------------------------------------------------

    def search(self, q: str, filters: Filters, offset: int, limit: int) -> dict[str, Any]:
        """The posts holding every word of ``q`` (all posts when empty) under ``filters``,
        newest first, a page of them, with every facet's counts among them (``approximate``:
        counts estimated from the index or a sample)."""
        cols = self.index.columns()
        approximate = False
        text_filter = parse_terms(q) if q else TextFilter()
        if text_filter.active:
            found = self.text.page(cols, filters, text_filter, offset, limit)
            page_rows, total, approximate, facets = found.rows, found.total, found.approximate, found.facets
            next_offset = offset + limit if found.more else None
            sample = self.text.newest(cols, filters, text_filter, TALK_TEXT_SAMPLE)
        else:
            mask = self.index.mask(cols, filters)
            total = int(np.count_nonzero(mask))
            ordered = cols.order[mask[cols.order]]
            page_rows = ordered[offset : offset + limit]
            facets = self.index.counts(cols, filters)
            next_offset = offset + limit if offset + limit < total else None
            sample = ordered[:TALK_SAMPLE]
        results = self._ordered([int(cols.ids[r]) for r in page_rows])
        facets = {**facets, **self._talk([int(cols.ids[r]) for r in sample])}
        return {
            **_paged(total, offset, limit, results),
            "next_offset": next_offset,
            "approximate": approximate,
            "facets": facets,
        }

    def facets(self, post_ids: Sequence[int], filters: Filters, offset: int, limit: int) -> dict[str, Any]:
        """Among the posts ``post_ids`` (a ranking, kept in its order): those passing
        ``filters`` (``ids``), a page of them, and every facet's counts among them."""
        cols = self.index.columns()
        rows = cols.rows_of(post_ids)
        facets = self.index.counts(cols, filters, rows)
        kept = [int(cols.ids[r]) for r in self.index.select(cols, filters, rows)]
        facets = {**facets, **self._talk(kept)}
        results = self._ordered(kept[offset : offset + limit])
        return {**_paged(len(kept), offset, limit, results), "ids": [str(i) for i in kept], "facets": facets}

    # -- timeline, on this day, a month, the media grid ------------------------------------------

    def timeline(self, filters: Filters) -> dict[str, Any]:
        """Posts per month under ``filters`` (their year and month left out), by year."""
        cols = self.index.columns()
        mask = self.index.mask(cols, filters, skip="month")
        months = self.index.month_counts(cols, mask)
        years: dict[int, list[int]] = {}
        for item in months:
            years.setdefault(item["year"], [0] * 12)[item["month"] - 1] = item["count"]
        return {
            "total": int(np.count_nonzero(mask)),
            "peak": max((item["count"] for item in months), default=0),
            "years": [{"year": y, "months": years[y], "total": sum(years[y])} for y in sorted(years)],
            "undated": int(np.count_nonzero(mask & (cols.month < 0))),
        }

    def on_this_day(self, filters: Filters, month: int, day: int, offset: int, limit: int) -> dict[str, Any]:
        """Posts written on ``month``/``day`` in any year under ``filters``, newest first."""
        cols = self.index.columns()
        mask = self.index.mask(cols, filters) & (cols.mday == month * 100 + day)
        ordered = cols.order[mask[cols.order]]
        results = self._ordered([int(cols.ids[r]) for r in ordered[offset : offset + limit]])
        return {"day": f"{month:02d}-{day:02d}", **_paged(len(ordered), offset, limit, results)}

    def month(self, filters: Filters, year: int, month: int, offset: int, limit: int) -> dict[str, Any]:
        """The month's posts under ``filters`` (their own year and month left out), oldest
        first, with the months before and after that have posts under the same filters."""
        cols = self.index.columns()
        others = self.index.mask(cols, replace(filters, year=None, month=None))
        months = [(m["year"], m["month"]) for m in self.index.month_counts(cols, others)]
        mask = others & (cols.month == (year - 1970) * 12 + month - 1)
        oldest_first = cols.order[mask[cols.order]][::-1]
        results = self._ordered([int(cols.ids[r]) for r in oldest_first[offset : offset + limit]])
        before = [m for m in months if m < (year, month)]
        after = [m for m in months if m > (year, month)]
        return {
            "month": f"{year:04d}-{month:02d}",
            **_paged(len(oldest_first), offset, limit, results),
            "previous_month": "{:04d}-{:02d}".format(*before[-1]) if before else None,
            "next_month": "{:04d}-{:02d}".format(*after[0]) if after else None,
        }

    def media_grid(self, filters: Filters, offset: int, limit: int) -> dict[str, Any]:
        """Posts with media under ``filters``, newest first, each with its media."""
        cols = self.index.columns()
        mask = self.index.mask(cols, replace(filters, media=True))
        ordered = cols.order[mask[cols.order]]
        ids = [int(cols.ids[r]) for r in ordered[offset : offset + limit]]
        results = [
            dict(post, media=[_media(m) for m in self.index.media(int(post["id"]))])
            for post in self._ordered(ids)
        ]
        return _paged(len(ordered), offset, limit, results)

    # -- one post -------------------------------------------------------------------------------

    def post(self, thread: Mapping[str, Any]) -> dict[str, Any] | None:
        """The page of the post an API thread (``get_thread``'s answer, holding the post) is
        about: the post with its media, the thread's posts, the post it answers, quotes or
        reposts, and the posts just newer and older of the same sort; ``None`` when gone."""
        members = thread.get("posts") or []
        focus_key = int(members[int(thread["focus_offset"]) - int(thread["offset"])]["post_id"])
        found = self.index.posts([focus_key]).get(focus_key)
        if found is None:
            return None
        thread_ids: list[int] = [int(p["post_id"]) for p in members] or [focus_key]
        parent = thread.get("in_reply_to")
        related = {
            "quote_of": self.index.post_by_source(found["platform"], found["quote_of"]),
            "repost_of": self.index.post_by_source(found["platform"], found["repost_of"]),
            "in_reply_to": None if not parent else int(parent["post_id"]),
        }
        posts = self.index.posts([*thread_ids, *(i for i in related.values() if i is not None)])
        posts[focus_key] = found
        for key, item in posts.items():
            item["media"] = [_media(m) for m in self.index.media(key)]

        def one(key: str) -> dict[str, Any] | None:
            wanted = related[key]
            return None if wanted is None else posts.get(wanted)

        reply_key = self.index.post_by_source(found["platform"], found["reply_to"])
        # previous/next in time among the posts of the same sort (authored, or the same kind)
        cols = self.index.columns()
        kinds = tuple(AUTHORED_KINDS) if found["kind"] in AUTHORED_KINDS else (str(found["kind"]),)
        newer, older = self.index.neighbours(cols, focus_key, self.index.mask(cols, Filters(kinds=kinds)))
        near = self.index.posts([k for k in (newer, older) if k is not None])
        return {
            "post": found,
            "newer": near.get(newer) if newer is not None else None,
            "older": near.get(older) if older is not None else None,
            "reply_missing": bool(found["reply_to"]) and reply_key is None,
            "thread": [posts[i] for i in thread_ids if i in posts],
            "thread_total": int(thread.get("total_count") or len(thread_ids)),
            "in_reply_to": one("in_reply_to"),
            "quoted": one("quote_of"),
            "reposted": one("repost_of"),
        }

    def media_file(self, post_id: int, position: int) -> dict[str, str] | None:
        """Where attachment ``position`` of post ``post_id`` lives: ``{export, path}`` (the
        export folder or file, the path in it), ``None`` when no export on disk holds it."""
        for item in self.index.media(post_id):
            if item.position == position:
                return (
                    {"export": item.export_path, "path": item.path}
                    if item.path and item.export_path
                    else None
                )
        return None
