"""What each page shows, as data: the HTML templates and the JSON mirror render the same dicts.

A page's whole state is its URL's query (:class:`PageState`), so reload, back/forward and a
copied link give the same page, and ``/api/<page>`` with the same query answers the same data
as JSON. Searches go through :class:`~mcpkit.archive.api.ArchiveAPI` (semantic search, stats,
threads when the API has them); facet counts, pages of a text search and the timeline come from
:class:`~mcpkit.archive.pages.columns.FacetIndex`, which reads only what a page shows.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import quote, urlencode

import anyio.to_thread
import numpy as np

from mcpkit.archive import texts
from mcpkit.archive.api import ArchiveAPI
from mcpkit.archive.facets import FACETS, Filters
from mcpkit.archive.pages.columns import FacetIndex, MediaFile
from mcpkit.archive.pages.text_index import TextSearch
from mcpkit.archive.posts import AUTHORED_KINDS, KINDS
from mcpkit.archive.query import TextFilter, parse_query, parse_terms
from mcpkit.archive.settings import MODES as API_MODES
from mcpkit.errors import ValidationError
from mcpkit.jsonrpc import INVALID_PARAMS, JsonRpcError

__all__ = ["PAGE_SIZE", "PageState", "Views", "parse_month", "parse_state"]

PAGE_SIZE = 30
SEMANTIC_TOP = 100
"""How many best semantic matches a search ranks; facets count among them."""
GOOD_SCORE = 0.3
"""Below this similarity the best semantic hit is no good match: the page says so instead of
listing weak hits (a person can still ask for them with ``weak=1``). Used only when the API
gives no ``match`` of its own: every mode's hits carry one, from the calibration measured for
the model (:mod:`mcpkit.archive.ranking`); a model without a calibration does not."""
MAX_OFFSET = 100_000
THREAD_MAX = 200
"""Posts of a thread one post page shows (the thread's own count is said beside them)."""
TALK_SAMPLE = 1000
"""Mentions and hashtags are counted in this many newest posts of a selection (a text
search: in its :data:`TALK_TEXT_SAMPLE` newest matches), not the whole archive."""
TALK_TEXT_SAMPLE = 200
TALK_TOP = 12
"""The most mentions (and hashtags) a page lists."""
MONTH_PAGE = 100
"""Posts a month page shows at once."""
GRID_PAGE = 60
"""Posts with pictures the media grid shows at once."""
_MENTION = re.compile(r"(?<![\w@/])@([A-Za-z0-9_]{1,30}(?:@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+)?)")
_HASHTAG = re.compile(r"(?<![\w#&/])#(\w{1,100})")
_MONTH = re.compile(r"^(\d{4})(?:-(\d{1,2}))?$")
_DAY = re.compile(r"^(\d{1,2})-(\d{1,2})$")


def text_modes() -> list[str]:
    """The search modes the page offers: hybrid only when the API has such a mode."""
    return ["text", "semantic", *(["hybrid"] if "hybrid" in API_MODES else [])]


@dataclass(frozen=True)
class PageState:
    """Everything a page's URL says; :meth:`query` writes it back in one canonical order."""

    q: str = ""
    mode: str = "text"
    filters: Filters = field(default_factory=Filters)
    all_kinds: bool = False
    offset: int = 0
    weak: bool = False
    day: str = ""  # MM-DD for on-this-day

    def query(self, **changes: Any) -> str:
        """This state's URL query, with ``changes`` applied (``offset`` resets unless given)."""
        state = replace(self, **{"offset": 0, **changes})
        f = state.filters
        pairs: list[tuple[str, str]] = []
        if state.q:
            pairs.append(("q", state.q))
        if state.mode != "text":
            pairs.append(("mode", state.mode))
        if state.all_kinds:
            pairs.append(("kind", "all"))
        elif set(f.kinds) != AUTHORED_KINDS:
            pairs.extend(("kind", k) for k in f.kinds)
        pairs.extend(("platform", v) for v in f.platforms)
        pairs.extend(("account", v) for v in f.accounts)
        pairs.extend(("lang", v) for v in f.langs)
        if f.media is not None:
            pairs.append(("media", "1" if f.media else "0"))
        if f.year is not None:
            pairs.append(("month", f"{f.year:04d}" + (f"-{f.month:02d}" if f.month else "")))
        if state.weak:
            pairs.append(("weak", "1"))
        if state.day:
            pairs.append(("day", state.day))
        if state.offset:
            pairs.append(("offset", str(state.offset)))
        return urlencode(pairs)

    def month_query(self, year: int | None = None, month: int | None = None) -> str:
        """The query with the date facet set to ``year`` (and ``month``), or cleared."""
        return self.query(filters=replace(self.filters, year=year, month=month if year is not None else None))

    def selected(self, facet: str, value: str) -> bool:
        if facet == "kind":
            return self.all_kinds or value in self.filters.kinds
        if facet == "media":
            return self.filters.media is not None and (value == "1") == self.filters.media
        return value in self.filters.values(facet)


def parse_state(params: Mapping[str, Sequence[str]]) -> PageState:
    """A page's state from its query parameters; a bad value raises ``ValidationError``
    naming the parameter (the page shows the line, the JSON mirror answers 400)."""

    def one(name: str) -> str:
        values = params.get(name) or []
        return values[-1].strip() if values else ""

    def many(name: str) -> tuple[str, ...]:
        out: list[str] = []
        for raw in params.get(name) or []:
            out.extend(v.strip() for v in raw.split(",") if v.strip())
        return tuple(dict.fromkeys(out))

    mode = one("mode") or "text"
    if mode not in text_modes():
        raise ValidationError(f"mode must be one of {', '.join(text_modes())}, got {mode!r}")
    kinds = many("kind")
    all_kinds = "all" in kinds
    if all_kinds:
        kinds = tuple(KINDS)
    elif not kinds:
        kinds = tuple(k for k in KINDS if k in AUTHORED_KINDS)
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        raise ValidationError(f"kind must be 'all' or among {', '.join(KINDS)}, got {unknown[0]!r}")
    media_raw = one("media")
    if media_raw not in ("", "1", "0"):
        raise ValidationError(f"media must be 1 or 0, got {media_raw!r}")
    year = month = None
    month_raw = one("month") or one("year")
    if month_raw:
        found = _MONTH.match(month_raw)
        if found is None or not (1 <= int(found.group(2) or 1) <= 12):
            raise ValidationError(f"month must be YYYY or YYYY-MM, got {month_raw!r}")
        year = int(found.group(1))
        month = int(found.group(2)) if found.group(2) else None
    offset_raw = one("offset") or "0"
    if not offset_raw.isdigit() or int(offset_raw) > MAX_OFFSET:
        raise ValidationError(f"offset must be a whole number from 0 to {MAX_OFFSET}, got {offset_raw!r}")
    day = one("day")
    if day:
        found = _DAY.match(day)
        if found is None or not _valid_day(int(found.group(1)), int(found.group(2))):
            raise ValidationError(f"day must be MM-DD, got {day!r}")
        day = f"{int(found.group(1)):02d}-{int(found.group(2)):02d}"
    q = one("q")
    if len(q) > 1000:
        raise ValidationError("q must be at most 1000 characters")
    return PageState(
        q=q,
        mode=mode,
        filters=Filters(
            kinds=kinds,
            platforms=many("platform"),
            accounts=many("account"),
            langs=many("lang"),
            media=None if not media_raw else media_raw == "1",
            year=year,
            month=month,
        ),
        all_kinds=all_kinds,
        offset=int(offset_raw),
        weak=one("weak") == "1",
        day=day,
    )


def parse_month(raw: str) -> tuple[int, int]:
    """``YYYY-MM`` as ``(year, month)``; ``ValidationError`` naming the parameter otherwise."""
    found = _MONTH.match(raw.strip())
    if found is None or found.group(2) is None or not 1 <= int(found.group(2)) <= 12:
        raise ValidationError(f"month must be YYYY-MM, got {raw!r}")
    return int(found.group(1)), int(found.group(2))


def _valid_day(month: int, day: int) -> bool:
    try:
        dt.date(2024, month, day)  # a leap year: 02-29 is a day people post on
    except ValueError:
        return False
    return True


def media_item(post: Mapping[str, Any], media: MediaFile) -> dict[str, Any]:
    """One attachment as a page shows it: served from the export when it is there (``local``),
    else a link to a copy online when there is one (``online``)."""
    online = media.url if media.url.startswith(("https://", "http://")) else ""
    if not online and post.get("platform") == "bluesky" and media.url:
        # a repository CAR holds no blobs, only their CIDs: Bluesky's CDN serves them by DID and CID
        did = str(post.get("source_id") or "").removeprefix("at://").split("/", 1)[0]
        if did.startswith("did:"):
            online = f"https://cdn.bsky.app/img/feed_fullsize/plain/{quote(did, safe=':')}/{quote(media.url)}"
    return {
        "position": media.position,
        "type": media.type,
        "alt": media.alt,
        "url": media.url,
        "online": online,
        "local": f"/media/{post['id']}/{media.position}" if media.path and media.export_path else "",
    }


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


def month_name(year: int, month: int) -> str:
    return f"{year:04d}-{month:02d}"


def _highlight_terms(state: PageState) -> list[str]:
    if not state.q:
        return []
    if state.mode == "text":
        return list(parse_terms(state.q).includes)
    try:
        return list(parse_query(state.q).text_filter.includes)
    except ValidationError:
        return []


class Views:
    """The pages' data over one archive: search, timeline, on this day, a post."""

    def __init__(self, api: ArchiveAPI) -> None:
        self.api = api
        self.index = FacetIndex(api.engine.store)
        self.text = TextSearch(api.engine.store, self.index)

    # -- search ---------------------------------------------------------------------------------

    async def search(self, state: PageState) -> dict[str, Any]:
        """Results of the state's query under its facets, one page, with every facet's counts."""
        if state.q and state.mode != "text":
            return await self._semantic(state)
        page = await anyio.to_thread.run_sync(self._text_page, state)
        if state.q and not page["results"] and not state.offset:
            await self._meaning_verdict(state, page)
        return page

    async def _meaning_verdict(self, state: PageState, page: dict[str, Any]) -> None:
        """No post holds every word: say whether any comes close in meaning (the API's hybrid
        verdict under the same filters), so "no post contains" is never read as "nothing in the
        archive answers this" when something does, nor the reverse."""
        settings = self._settings(state, texts.MEANING_TOP)
        call = {**texts.meaning_search(state.q, {}), "settings": settings}
        try:
            hits = await self.api.call("search_similar", call)
        except JsonRpcError:
            return  # no vectors yet, or no hybrid mode: the words' answer stands alone
        matched = [h.get("match") for h in hits]
        if not matched or None in matched:
            return
        page["meaning_match"] = any(matched)
        page["message"] = (
            f"No post contains {state.q!r} with these filters; some come close in meaning:"
            " search by Meaning or Hybrid."
            if any(matched)
            else f"No post contains {state.q!r} with these filters, and none comes close in meaning:"
            " no good match."
        )

    def _text_page(self, state: PageState) -> dict[str, Any]:
        cols = self.index.columns()
        filters = state.filters
        approximate = False
        text_filter = parse_terms(state.q) if state.q else TextFilter()
        if text_filter.active:
            found = self.text.page(cols, filters, text_filter, state.offset, PAGE_SIZE)
            page_rows, total, approximate, facets = found.rows, found.total, found.approximate, found.facets
            next_offset = state.offset + PAGE_SIZE if found.more else None
        else:
            mask = self.index.mask(cols, filters)
            total = int(np.count_nonzero(mask))
            ordered = cols.order[mask[cols.order]]
            page_rows = ordered[state.offset : state.offset + PAGE_SIZE]
            facets = self.index.counts(cols, filters)
            next_offset = state.offset + PAGE_SIZE if state.offset + PAGE_SIZE < total else None
        ids = [int(cols.ids[r]) for r in page_rows]
        posts = self.index.posts(ids)
        results = [posts[i] for i in ids if i in posts]
        if text_filter.active:
            sample = self.text.newest(cols, filters, text_filter, TALK_TEXT_SAMPLE)
        else:
            sample = ordered[:TALK_SAMPLE]
        facets = {**facets, **self._talk([int(cols.ids[r]) for r in sample])}
        return self._page(
            state,
            total=total,
            approximate=approximate,
            results=results,
            facets=facets,
            next_offset=next_offset,
            message=("" if results or not state.q else f"No post contains {state.q!r} with these filters."),
            facet_note=(
                "Counts are estimates: the word is in many posts, so they come from the index or a sample."
                if approximate
                else ""
            ),
        )

    def _settings(self, state: PageState, top_k: int) -> dict[str, Any]:
        """The API's search settings for the page's filters (the API ranks under the same
        filters, so the best matches are those the page shows; language is the page's own:
        applied to the ranked matches)."""
        f = state.filters
        settings: dict[str, Any] = {"top_k": top_k}
        if f.year is not None:
            start = dt.date(f.year, f.month or 1, 1)
            end_month = (f.month or 12) % 12 + 1
            end_year = f.year + (1 if (f.month or 12) == 12 else 0)
            end = dt.date(end_year, end_month, 1) - dt.timedelta(days=1)
            settings["date_filter"] = {"from": start.isoformat(), "to": end.isoformat()}
        settings["kind"] = "all" if state.all_kinds else list(f.kinds)
        if f.platforms:
            settings["platform"] = list(f.platforms)
        if f.accounts:
            settings["account"] = list(f.accounts)
        if f.media is not None:
            settings["has_media"] = f.media
        return settings

    async def _semantic(self, state: PageState) -> dict[str, Any]:
        f = state.filters
        call: dict[str, Any] = {"query": state.q, "settings": self._settings(state, SEMANTIC_TOP)}
        if state.mode == "hybrid":
            call["mode"] = "hybrid"
        try:
            hits = await self.api.call("search_similar", call)
        except JsonRpcError as exc:
            return self._page(state, total=0, results=[], facets=None, message=exc.message, error=True)
        cols = await anyio.to_thread.run_sync(self.index.columns)
        score_of = {int(h["post"]["post_id"]): float(h["score"]) for h in hits}
        # the API's own verdict when it has one (every mode, calibrated model), else the cosine
        match_of = {int(h["post"]["post_id"]): h.get("match") for h in hits}
        cosine_of = {int(h["post"]["post_id"]): float(h.get("similarity", h["score"])) for h in hits}
        rows = cols.rows_of(score_of)
        facets = self.index.counts(cols, f, rows)
        kept = self.index.select(cols, f, rows)
        ranked = [int(cols.ids[r]) for r in kept]
        best = max((cosine_of[i] for i in ranked), default=0.0)
        calibrated = any(match_of[i] is not None for i in ranked)
        if calibrated:
            weak = bool(ranked) and not any(match_of[i] for i in ranked) and not state.weak
        else:
            weak = bool(ranked) and best < GOOD_SCORE and not state.weak
        facets = {**facets, **await anyio.to_thread.run_sync(self._talk, ranked)}
        page_ids = [] if weak else ranked[state.offset : state.offset + PAGE_SIZE]
        posts = await anyio.to_thread.run_sync(self.index.posts, page_ids)
        results = [
            dict(posts[i], score=round(score_of[i], 4), match=match_of[i]) for i in page_ids if i in posts
        ]
        message = ""
        if weak:
            message = (
                f"No good match for {state.q!r}: none of the closest posts reaches the match threshold"
                " measured for this model."
                if calibrated
                else f"No good match for {state.q!r}: the closest post scores {best:.2f}."
            )
        elif not ranked:
            message = f"No match for {state.q!r} with these filters."
        total = len(ranked)
        return self._page(
            state,
            total=total,
            results=results,
            facets=facets,
            facet_note=(
                f"Counts are among the {SEMANTIC_TOP} posts closest in meaning under these filters,"
                " not the whole archive."
            ),
            next_offset=state.offset + PAGE_SIZE if not weak and state.offset + PAGE_SIZE < total else None,
            message=message,
            no_good_match=weak,
        )

    def _page(
        self,
        state: PageState,
        *,
        total: int,
        results: list[dict[str, Any]],
        facets: dict[str, Any] | None,
        approximate: bool = False,
        next_offset: int | None = None,
        message: str = "",
        error: bool = False,
        no_good_match: bool = False,
        facet_note: str = "",
    ) -> dict[str, Any]:
        for post in results:
            post["permalink"] = f"/post/{post['id']}"
        return {
            "query": state.q,
            "mode": state.mode,
            "modes": text_modes(),
            "state": state.query(offset=state.offset),
            "total": total,
            "approximate": approximate,
            "offset": state.offset,
            "limit": PAGE_SIZE,
            "returned": len(results),
            "next_offset": next_offset,
            "no_good_match": no_good_match,
            "message": message,
            "error": error,
            "highlight": _highlight_terms(state),
            "results": results,
            "facets": facets,
            "facet_names": list(FACETS),
            "facet_note": facet_note,
        }

    # -- timeline and on this day -------------------------------------------------------------

    async def timeline(self, state: PageState) -> dict[str, Any]:
        """Posts per month under the state's facets (its year/month left out), by year."""

        def work() -> dict[str, Any]:
            cols = self.index.columns()
            mask = self.index.mask(cols, state.filters, skip="month")
            months = self.index.month_counts(cols, mask)
            years: dict[int, list[int]] = {}
            for item in months:
                years.setdefault(item["year"], [0] * 12)[item["month"] - 1] = item["count"]
            peak = max((item["count"] for item in months), default=0)
            return {
                "state": state.query(),
                "total": int(np.count_nonzero(mask)),
                "peak": peak,
                "years": [{"year": y, "months": years[y], "total": sum(years[y])} for y in sorted(years)],
                "undated": int(np.count_nonzero(mask & (cols.month < 0))),
            }

        return await anyio.to_thread.run_sync(work)

    async def on_this_day(self, state: PageState, today: dt.date) -> dict[str, Any]:
        """Posts written on this month and day in every year, newest year first."""
        day = state.day or f"{today.month:02d}-{today.day:02d}"
        month, mday = (int(p) for p in day.split("-"))

        def work() -> dict[str, Any]:
            cols = self.index.columns()
            mask = self.index.mask(cols, state.filters) & (cols.mday == month * 100 + mday)
            ordered = cols.order[mask[cols.order]]
            total = len(ordered)
            page = ordered[state.offset : state.offset + PAGE_SIZE]
            ids = [int(cols.ids[r]) for r in page]
            posts = self.index.posts(ids)
            results = [dict(posts[i], permalink=f"/post/{i}") for i in ids if i in posts]
            groups: dict[str, list[dict[str, Any]]] = {}
            for post in results:
                groups.setdefault(str(post["timestamp"])[:4], []).append(post)
            return {
                "day": day,
                "state": state.query(day=day, offset=state.offset),
                "total": total,
                "offset": state.offset,
                "limit": PAGE_SIZE,
                "returned": len(results),
                "next_offset": state.offset + PAGE_SIZE if state.offset + PAGE_SIZE < total else None,
                "years": [{"year": y, "posts": groups[y]} for y in sorted(groups, reverse=True)],
                "results": results,
            }

        return await anyio.to_thread.run_sync(work)

    def _talk(self, ids: Sequence[int]) -> dict[str, Any]:
        """The mention and hashtag facets of the posts ``ids`` (read from their texts)."""
        posts = self.index.posts(list(ids))
        return talk_counts([str(p["content"] or "") for p in posts.values()])

    # -- a month, read in order; the media grid -------------------------------------------------

    async def month(self, state: PageState, year: int, month: int) -> dict[str, Any]:
        """The month's posts under the state's other facets, oldest first, a page at a time,
        with the months before and after that have posts under the same facets."""

        def work() -> dict[str, Any]:
            cols = self.index.columns()
            filters = replace(state.filters, year=None, month=None)
            others = self.index.mask(cols, filters)
            months = [(m["year"], m["month"]) for m in self.index.month_counts(cols, others)]
            mask = others & (cols.month == (year - 1970) * 12 + month - 1)
            newest_first = cols.order[mask[cols.order]]
            oldest_first = newest_first[::-1]
            total = len(oldest_first)
            page = oldest_first[state.offset : state.offset + MONTH_PAGE]
            ids = [int(cols.ids[r]) for r in page]
            posts = self.index.posts(ids)
            results = [dict(posts[i], permalink=f"/post/{posts[i]['id']}") for i in ids if i in posts]
            before = [m for m in months if m < (year, month)]
            after = [m for m in months if m > (year, month)]
            query = state.query(filters=filters, offset=state.offset)
            return {
                "month": month_name(year, month),
                "year": year,
                "month_number": month,
                "state": query,
                "total": total,
                "offset": state.offset,
                "limit": MONTH_PAGE,
                "returned": len(results),
                "next_offset": state.offset + MONTH_PAGE if state.offset + MONTH_PAGE < total else None,
                "previous_month": month_name(*before[-1]) if before else None,
                "next_month": month_name(*after[0]) if after else None,
                "results": results,
            }

        return await anyio.to_thread.run_sync(work)

    async def media_grid(self, state: PageState) -> dict[str, Any]:
        """Posts with media under the state's facets, newest first, each with its media."""

        def work() -> dict[str, Any]:
            cols = self.index.columns()
            filters = replace(state.filters, media=True)
            mask = self.index.mask(cols, filters)
            ordered = cols.order[mask[cols.order]]
            total = len(ordered)
            ids = [int(cols.ids[r]) for r in ordered[state.offset : state.offset + GRID_PAGE]]
            posts = self.index.posts(ids)
            results = []
            for key in ids:
                if key in posts:
                    post = dict(posts[key], permalink=f"/post/{posts[key]['id']}")
                    post["media"] = [media_item(post, m) for m in self.index.media(key)]
                    results.append(post)
            return {
                "state": state.query(offset=state.offset),
                "total": total,
                "offset": state.offset,
                "limit": GRID_PAGE,
                "returned": len(results),
                "next_offset": state.offset + GRID_PAGE if state.offset + GRID_PAGE < total else None,
                "results": results,
            }

        return await anyio.to_thread.run_sync(work)

    # -- one post -------------------------------------------------------------------------------

    async def post(self, reference: str) -> dict[str, Any] | None:
        """The post ``reference`` names (the archive's key as a permalink writes it, or the
        platform's own id, URI or URL: a string in every case) in its thread (the API's
        ``get_thread``: the self-reply chain in time order and the post it answers), with the
        post it quotes or reposts and every post's media; ``None`` when no post answers.
        Raises ``ValidationError`` for a reference the API refuses as such."""
        thread = await self._thread(reference)
        if thread is None:
            return None
        members = thread.get("posts") or []
        focus_key: int = members[int(thread["focus_offset"]) - int(thread["offset"])]["post_id"]
        found = (await anyio.to_thread.run_sync(self.index.posts, [focus_key])).get(focus_key)
        if found is None:
            return None
        thread_ids: list[int] = [p["post_id"] for p in members] or [focus_key]
        parent = thread.get("in_reply_to")

        def work() -> dict[str, Any]:
            related = {
                "quote_of": self.index.post_by_source(found["platform"], found["quote_of"]),
                "repost_of": self.index.post_by_source(found["platform"], found["repost_of"]),
                "in_reply_to": None if not parent else parent["post_id"],
            }
            posts = self.index.posts([*thread_ids, *(i for i in related.values() if i is not None)])
            posts[focus_key] = found
            for key, item in posts.items():
                item["permalink"] = f"/post/{item['id']}"
                item["media"] = [media_item(item, m) for m in self.index.media(key)]

            def one(key: str) -> dict[str, Any] | None:
                wanted = related[key]
                return None if wanted is None else posts.get(wanted)

            reply_key = self.index.post_by_source(found["platform"], found["reply_to"])
            # previous/next in time among the posts of the same sort (authored, or the same kind)
            cols = self.index.columns()
            kinds = tuple(AUTHORED_KINDS) if found["kind"] in AUTHORED_KINDS else (str(found["kind"]),)
            newer, older = self.index.neighbours(cols, focus_key, self.index.mask(cols, Filters(kinds=kinds)))
            near = self.index.posts([k for k in (newer, older) if k is not None])
            for item in near.values():
                item["permalink"] = f"/post/{item['id']}"
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

        return await anyio.to_thread.run_sync(work)

    async def _thread(self, reference: str) -> dict[str, Any] | None:
        """The API's thread of the post ``reference`` names, a page of it holding that post."""
        try:
            thread: dict[str, Any] = await self.api.call("get_thread", {"id": reference, "limit": THREAD_MAX})
            focus = int(thread["focus_offset"])
            if focus >= len(thread.get("posts") or []):
                total = int(thread.get("total_count") or 0)
                start = max(0, min(focus - THREAD_MAX // 2, total - THREAD_MAX))
                thread = await self.api.call(
                    "get_thread", {"id": reference, "limit": THREAD_MAX, "offset": start}
                )
        except JsonRpcError as exc:
            if exc.code == INVALID_PARAMS:
                raise ValidationError(exc.message) from None
            return None
        return thread

    async def post_key(self, reference: str) -> int | None:
        """The archive key of the post ``reference`` names (as :meth:`post` reads it)."""
        try:
            thread = await self._thread(reference)
        except ValidationError:
            return None
        if thread is None:
            return None
        key: int = thread["posts"][int(thread["focus_offset"]) - int(thread["offset"])]["post_id"]
        return key

    async def stats(self) -> dict[str, Any]:
        stats: dict[str, Any] = await self.api.call("get_database_stats", {})
        return stats

    def warm(self) -> None:
        """Make the facet columns now (from the store's filter columns), then the text search's
        tails (two characters a post: loaded, patched, or read from every post's text once)."""
        self.text.tails(self.index.columns(), wait=True)
