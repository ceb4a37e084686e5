"""What each page shows, as data: the HTML templates and the JSON mirror render the same dicts.

A page's whole state is its URL's query (:class:`PageState`), so reload, back/forward and a
copied link give the same page, and ``/api/<page>`` with the same query answers the same data
as JSON. Every page's data comes from :class:`~mcpkit.archive.api.ArchiveAPI`'s methods
(``browse_search``, ``get_facets``, ``get_timeline``, ``get_on_this_day``, ``get_month``,
``get_media_grid``, ``get_post``, ``get_media_file``, ``search_similar``), which every other
face reaches too; this module turns a URL into their params and their answers into pages
(links, messages, which match is good enough to show).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import quote, urlencode

from mcpkit.archive import messages as m
from mcpkit.archive import texts
from mcpkit.archive.api import ArchiveAPI
from mcpkit.archive.facets import FACETS, Filters, parse_day, parse_month
from mcpkit.archive.messages import Said
from mcpkit.archive.posts import AUTHORED_KINDS
from mcpkit.archive.query import parse_query, parse_terms
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
MONTH_PAGE = 100
"""Posts a month page shows at once."""
GRID_PAGE = 60
"""Posts with pictures the media grid shows at once."""


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
    media_raw = one("media")
    if media_raw not in ("", "1", "0"):
        raise ValidationError(f"media must be 1 or 0, got {media_raw!r}")
    filters = Filters.from_params(
        {
            "kind": list(many("kind")),
            "platform": list(many("platform")),
            "account": list(many("account")),
            "lang": list(many("lang")),
            "has_media": None if not media_raw else media_raw == "1",
            "month": one("month") or one("year"),
        }
    )
    offset_raw = one("offset") or "0"
    if not offset_raw.isdigit() or int(offset_raw) > MAX_OFFSET:
        raise ValidationError(f"offset must be a whole number from 0 to {MAX_OFFSET}, got {offset_raw!r}")
    day = one("day")
    if day:
        day = "{:02d}-{:02d}".format(*parse_day(day))
    q = one("q")
    if len(q) > 1000:
        raise ValidationError("q must be at most 1000 characters")
    return PageState(
        q=q,
        mode=mode,
        filters=filters,
        all_kinds="all" in many("kind"),
        offset=int(offset_raw),
        weak=one("weak") == "1",
        day=day,
    )


def media_item(post: Mapping[str, Any], media: Mapping[str, Any]) -> dict[str, Any]:
    """One attachment as a page shows it: served from the export when it is there (``local``),
    else a link to a copy online when there is one (``online``)."""
    url = str(media.get("url") or "")
    online = url if url.startswith(("https://", "http://")) else ""
    if not online and post.get("platform") == "bluesky" and url:
        # a repository CAR holds no blobs, only their CIDs: Bluesky's CDN serves them by DID and CID
        did = str(post.get("source_id") or "").removeprefix("at://").split("/", 1)[0]
        if did.startswith("did:"):
            online = f"https://cdn.bsky.app/img/feed_fullsize/plain/{quote(did, safe=':')}/{quote(url)}"
    return {
        "position": media["position"],
        "type": media["type"],
        "alt": media["alt"],
        "url": url,
        "online": online,
        "local": f"/media/{post['id']}/{media['position']}" if media.get("in_export") else "",
    }


_POST_PLACES = ("post", "newer", "older", "in_reply_to", "quoted", "reposted")
"""Where a post page's answer holds a post (besides its thread)."""


def _linked(post: dict[str, Any]) -> dict[str, Any]:
    """``post`` with its page's link, and its media as the page shows them."""
    post["permalink"] = f"/post/{post['id']}"
    if "media" in post:
        post["media"] = [media_item(post, m) for m in post["media"]]
    return post


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
    """The pages' data over one archive API: search, timeline, on this day, a month, the media
    grid, a post."""

    def __init__(self, api: ArchiveAPI) -> None:
        self.api = api

    async def _call(self, method: str, params: dict[str, Any]) -> Any:
        """The API's answer; a refused param is a ``ValidationError`` (the page's 400)."""
        try:
            return await self.api.call(method, params)
        except JsonRpcError as exc:
            if exc.code == INVALID_PARAMS:
                raise ValidationError(exc.message) from None
            raise

    # -- search ---------------------------------------------------------------------------------

    async def search(self, state: PageState) -> dict[str, Any]:
        """Results of the state's query under its facets, one page, with every facet's counts."""
        if state.q and state.mode != "text":
            return await self._semantic(state)
        page = await self._text_page(state)
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
        page["message"] = Said(m.WEB_SOME_CLOSE if any(matched) else m.WEB_NONE_CLOSE, query=repr(state.q))

    async def _text_page(self, state: PageState) -> dict[str, Any]:
        found = await self._call(
            "browse_search",
            {"q": state.q, "offset": state.offset, "limit": PAGE_SIZE, **state.filters.params()},
        )
        results = found["results"]
        approximate = bool(found["approximate"])
        return self._page(
            state,
            total=found["total"],
            approximate=approximate,
            results=results,
            facets=found["facets"],
            next_offset=found["next_offset"],
            message=("" if results or not state.q else Said(m.WEB_NO_POST_CONTAINS, query=repr(state.q))),
            facet_note=Said(m.WEB_ESTIMATES) if approximate else "",
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
        call: dict[str, Any] = {"query": state.q, "settings": self._settings(state, SEMANTIC_TOP)}
        if state.mode == "hybrid":
            call["mode"] = "hybrid"
        try:
            hits = await self.api.call("search_similar", call)
        except JsonRpcError as exc:
            return self._page(state, total=0, results=[], facets=None, message=exc.message, error=True)
        score_of = {str(h["post"]["post_id"]): float(h["score"]) for h in hits}
        # the API's own verdict when it has one (every mode, calibrated model), else the cosine
        match_of = {str(h["post"]["post_id"]): h.get("match") for h in hits}
        cosine_of = {str(h["post"]["post_id"]): float(h.get("similarity", h["score"])) for h in hits}
        found = await self._call(
            "get_facets",
            {"ids": list(score_of), "offset": state.offset, "limit": PAGE_SIZE, **state.filters.params()},
        )
        ranked: list[str] = found["ids"]
        best = max((cosine_of[i] for i in ranked), default=0.0)
        calibrated = any(match_of[i] is not None for i in ranked)
        if calibrated:
            weak = bool(ranked) and not any(match_of[i] for i in ranked) and not state.weak
        else:
            weak = bool(ranked) and best < GOOD_SCORE and not state.weak
        results = (
            []
            if weak
            else [
                dict(p, score=round(score_of[p["id"]], 4), match=match_of[p["id"]]) for p in found["results"]
            ]
        )
        message = ""
        if weak:
            message = (
                Said(m.WEB_WEAK_CALIBRATED, query=repr(state.q))
                if calibrated
                else Said(m.WEB_WEAK_SCORE, query=repr(state.q), score=f"{best:.2f}")
            )
        elif not ranked:
            message = Said(m.WEB_NO_MATCH, query=repr(state.q))
        total = len(ranked)
        return self._page(
            state,
            total=total,
            results=results,
            facets=found["facets"],
            facet_note=Said(m.WEB_AMONG_CLOSEST, top=SEMANTIC_TOP),
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
        found: dict[str, Any] = await self._call("get_timeline", state.filters.params())
        return {"state": state.query(), **found}

    async def on_this_day(self, state: PageState, today: dt.date) -> dict[str, Any]:
        """Posts written on this month and day in every year, newest year first."""
        day = state.day or f"{today.month:02d}-{today.day:02d}"
        found = await self._call(
            "get_on_this_day",
            {"day": day, "offset": state.offset, "limit": PAGE_SIZE, **state.filters.params()},
        )
        results = [_linked(post) for post in found["results"]]
        groups: dict[str, list[dict[str, Any]]] = {}
        for post in results:
            groups.setdefault(str(post["timestamp"])[:4], []).append(post)
        return {
            "day": found["day"],
            "state": state.query(day=day, offset=state.offset),
            "total": found["total"],
            "offset": state.offset,
            "limit": PAGE_SIZE,
            "returned": len(results),
            "next_offset": found["next_offset"],
            "years": [{"year": y, "posts": groups[y]} for y in sorted(groups, reverse=True)],
            "results": results,
        }

    # -- a month, read in order; the media grid -------------------------------------------------

    async def month(self, state: PageState, year: int, month: int) -> dict[str, Any]:
        """The month's posts under the state's other facets, oldest first, a page at a time,
        with the months before and after that have posts under the same facets."""
        filters = replace(state.filters, year=None, month=None)
        found = await self._call(
            "get_month",
            {
                **filters.params(),
                "month": month_name(year, month),
                "offset": state.offset,
                "limit": MONTH_PAGE,
            },
        )
        return {
            "month": found["month"],
            "year": year,
            "month_number": month,
            "state": state.query(filters=filters, offset=state.offset),
            "total": found["total"],
            "offset": state.offset,
            "limit": MONTH_PAGE,
            "returned": found["returned"],
            "next_offset": found["next_offset"],
            "previous_month": found["previous_month"],
            "next_month": found["next_month"],
            "results": [_linked(post) for post in found["results"]],
        }

    async def media_grid(self, state: PageState) -> dict[str, Any]:
        """Posts with media under the state's facets, newest first, each with its media."""
        found = await self._call(
            "get_media_grid", {"offset": state.offset, "limit": GRID_PAGE, **state.filters.params()}
        )
        return {
            "state": state.query(offset=state.offset),
            "total": found["total"],
            "offset": state.offset,
            "limit": GRID_PAGE,
            "returned": found["returned"],
            "next_offset": found["next_offset"],
            "results": [_linked(post) for post in found["results"]],
        }

    # -- one post -------------------------------------------------------------------------------

    async def post(self, reference: str) -> dict[str, Any] | None:
        """The post ``reference`` names (the archive's key as a permalink writes it, or the
        platform's own id, URI or URL: a string in every case) in its thread (the API's
        ``get_post``: the self-reply chain in time order and the post it answers), with the
        post it quotes or reposts and every post's media; ``None`` when no post answers.
        Raises ``ValidationError`` for a reference the API refuses as such."""
        try:
            found: dict[str, Any] | None = await self._call(
                "get_post", {"id": reference, "limit": THREAD_MAX}
            )
        except JsonRpcError:
            return None
        if found is None:
            return None
        linked: set[int] = set()  # one post can be in several places (the post, its thread)
        for item in [found[key] for key in _POST_PLACES if found[key] is not None] + found["thread"]:
            if id(item) not in linked:
                linked.add(id(item))
                _linked(item)
        return found

    async def media_file(self, reference: str, position: int) -> tuple[str, str] | None:
        """Where attachment ``position`` of the post ``reference`` names lives: the export
        and the path in it (``None`` when no export on disk holds it, or no such post)."""
        try:
            found = await self._call("get_media_file", {"id": reference, "position": position})
        except (JsonRpcError, ValidationError):
            return None
        return None if found is None else (str(found["export"]), str(found["path"]))

    async def stats(self) -> dict[str, Any]:
        stats: dict[str, Any] = await self.api.call("get_database_stats", {})
        return stats

    def warm(self) -> None:
        """Make the pages' facet columns and text search now (the API's, in this thread)."""
        self.api.warm_pages()
