"""The one archive API: method table, parameter validation and result shapes.

Every face (WebSocket JSON-RPC, CLI, shell, MCP) calls :class:`ArchiveAPI` and nothing else,
so a method behaves identically whichever way it is reached: when each face validated and
shaped on its own, the same search answered differently on the command line and over MCP.

Decisions the faces rely on
---------------------------
* Where the archive lives (``--db``, ``MCPKIT_ARCHIVE_DB``, the XDG data dir; never a URL taken
  for a path) is :mod:`mcpkit.archive.location`'s. Vectors live next to it in
  ``<db>.vectors/<space>/``.
* ``ArchiveAPI.open(db_path, embedder=None, exact=False, endpoint=None)`` opens (and migrates)
  the DB; the embedding model is created lazily from the name each space records, on the first
  call that needs a query vector.
* Methods (upstream's names; params by name, or positionally in their declared order) are
  declared once in :data:`mcpkit.archive.methods.METHODS`: each parameter's type, default,
  range, choices and help, and each result's shape (docs/archive-data.md shows the table).

  ``post`` = ``{post_id:int, content, timestamp, url, user}`` plus ``reasoning, summary, tags``
  when the post has enrichments. ``search_similar`` also accepts ``top_k``/``user_filter``/
  ``date_filter`` at the top level (the MCP tool's flat form); ``settings`` wins.
* Streaming (``vector_search``): :meth:`ArchiveAPI.stream` yields upstream's chunk dicts
  ``{"data": [[post_id, score], ...], "chunk": i, "total_chunks": n, "start_rank": r}``
  (20,000 pairs per chunk, at least one chunk). The RPC face sends one message per chunk with
  ``"more": true|false`` at the top level. ``call("vector_search")`` returns
  ``{"streaming": [chunks...]}`` as upstream's server did internally.
* Errors: :class:`~mcpkit.jsonrpc.JsonRpcError` with ``code`` -32601 ``"Method not found: X"``, -32602 for bad
  params (upstream's texts: ``"Invalid params: query is required"``, ``"top_k must be between
  1 and 100, got 0"``, ``"limit must be between 1 and 1000, got 0"``...), -32603 for any
  other failure (``ArchiveError`` text, e.g. a model mismatch or a space not embedded yet).
* ``offset`` (0..100,000, default 0) is mcpkit's paging extension of the three list methods:
  skip that many results first (ranks keep counting). Upstream's clients never send it.
* Post ids are JSON integers as upstream (beware: > 2**53 for real tweets in JS clients).
* mcpkit's filters (:mod:`mcpkit.archive.filters`): ``kind`` (one, a list or ``"all"``),
  ``platform``, ``account``, ``has_media``, taken by ``search_similar`` (in ``settings`` or at
  the top level), ``search_posts_by_text``, ``get_user_stats`` and ``get_database_stats``.
  Upstream's clients never send them, and a request without any is answered exactly as
  upstream (every kind, upstream's post shape). A request with any of them covers the authored
  kinds unless ``kind`` says otherwise, and its posts come in mcpkit's shape: ``id`` (a
  string) first, upstream's fields, then ``platform, kind, account, content_warning, reply_to,
  thread_root, quote_of, repost_of, media[{type, path, url, alt}], lang``;
  ``get_database_stats`` adds ``by_kind``, ``by_platform`` and ``by_account``.
  ``get_thread`` is mcpkit's own method and always answers in mcpkit's shape.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio.to_thread

from mcpkit.archive.embedders import Embedder, EmbedEndpoint
from mcpkit.archive.engine import Engine
from mcpkit.archive.facets import Filters, parse_day, parse_month
from mcpkit.archive.filters import parse_post_filter
from mcpkit.archive.limits import InputLimits, check_depth, check_text
from mcpkit.archive.methods import METHODS, Method
from mcpkit.archive.settings import parse_settings, parse_weights
from mcpkit.archive.store import describe_db_error
from mcpkit.errors import McpkitError, ValidationError
from mcpkit.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND, JsonRpcError

logger = logging.getLogger("mcpkit.archive")

__all__ = [
    "STREAM_CHUNK_SIZE",
    "ArchiveAPI",
]

STREAM_CHUNK_SIZE = 20_000


Params = Mapping[str, Any] | list[Any] | None


@dataclass(frozen=True, slots=True)
class _Method:
    declared: Method
    handler: Callable[[dict[str, Any]], Awaitable[Any]]

    @property
    def names(self) -> tuple[str, ...]:
        return self.declared.names

    @property
    def streaming(self) -> bool:
        return self.declared.streaming


def _integer(method: str, name: str, args: Mapping[str, Any]) -> Any:
    """``args[name]`` checked against the range :data:`METHODS` declares, or its default."""
    return METHODS[method].param(name).integer(args)


def _mode(method: str, args: Mapping[str, Any]) -> str:
    return METHODS[method].param("mode").choice(args.get("mode"))


def _weights(args: Mapping[str, Any], mode: str) -> tuple[float, float, float] | None:
    """Weights matter to the average mode only; elsewhere they are ignored, as upstream did
    (a model that sends weights with the default mode should get its search, not an error)."""
    return parse_weights(args.get("weights")) if mode == "average" else None


def _offset(method: str, args: Mapping[str, Any]) -> int:
    """mcpkit's paging extension: skip this many results (0 when absent, as upstream sends)."""
    return int(_integer(method, "offset", args))


class ArchiveAPI:
    """Validates params, runs the engine off the event loop, shapes results as upstream."""

    def __init__(self, engine: Engine, limits: InputLimits | None = None) -> None:
        self.engine = engine
        self.limits = limits or InputLimits()
        handlers: dict[str, Callable[[dict[str, Any]], Awaitable[Any]]] = {
            "search_similar": self._search_similar,
            "vector_search": self._vector_search,
            "search_posts_by_text": self._search_text,
            "get_user_stats": self._user_stats,
            "get_database_stats": self._database_stats,
            "get_thread": self._thread,
            "get_status": self._status,
            "embed_text": self._embed_text,
            "get_user_list": self._user_list,
            "check_init": self._check_init,
            "browse_search": self._browse_search,
            "get_facets": self._facets,
            "get_timeline": self._timeline,
            "get_on_this_day": self._on_this_day,
            "get_month": self._month,
            "get_media_grid": self._media_grid,
            "get_post": self._post,
            "get_media_file": self._media_file,
        }
        # every declared method has its handler, in the declared order (names, params, streaming)
        self._methods = {name: _Method(METHODS[name], handlers[name]) for name in METHODS}

    @classmethod
    def open(
        cls,
        db_path: Path,
        *,
        embedder: Embedder | None = None,
        limits: InputLimits | None = None,
        exact: bool = False,
        endpoint: EmbedEndpoint | None = None,
    ) -> ArchiveAPI:
        """Open (creating/migrating) the archive at ``db_path``; the model loads lazily.

        ``exact`` turns the quantised first pass off; ``endpoint`` serves ``openai:`` models."""
        engine = Engine.open(Path(db_path), embedder=embedder, exact=exact, endpoint=endpoint)
        return cls(engine, limits)

    def _text(self, args: Mapping[str, Any], name: str) -> str:
        return check_text(name, args.get(name), self.limits.max_text_chars)

    def close(self) -> None:
        self.engine.close()

    async def aclose(self) -> None:
        """:class:`ArchiveAPIProtocol`'s way to release the database (faces hold either API)."""
        self.close()

    def warm_in_background(self) -> None:
        """Prepare filter columns and vector indexes in a daemon thread (long-lived faces:
        server, MCP server, shell). Queries meanwhile are answered, exactly."""
        threading.Thread(target=self._warm, name="mcpkit-warm", daemon=True).start()

    def _warm(self) -> None:
        try:
            self.engine.warm()
        except Exception:  # warming is an optimisation: a failure leaves searches exact
            logger.warning("warming the archive failed", exc_info=True)

    def warm_pages(self) -> None:
        """Make the pages' facet columns and text search now, in this thread (the web face
        starts it in the background; a page meanwhile waits only if it comes first)."""
        self.engine.pages.warm()

    def methods(self) -> list[str]:
        return list(self._methods)

    def is_streaming(self, method: str) -> bool:
        entry = self._methods.get(method)
        return entry is not None and entry.streaming

    async def call(self, method: str, params: Params) -> Any:
        """Run ``method``; raises :class:`~mcpkit.jsonrpc.JsonRpcError` with the JSON-RPC code on any failure."""
        entry, args = self._resolve(method, params)
        return await self._guard(entry.handler(args))

    async def stream(self, method: str, params: Params) -> AsyncIterator[Any]:
        """Yield the chunks of a streaming method (for a plain method: its one result)."""
        entry, args = self._resolve(method, params)
        result = await self._guard(entry.handler(args))
        if entry.streaming:
            for chunk in result["streaming"]:
                yield chunk
        else:
            yield result

    def _resolve(self, method: str, params: Params) -> tuple[_Method, dict[str, Any]]:
        entry = self._methods.get(method)
        if entry is None:
            raise JsonRpcError(METHOD_NOT_FOUND, f"Method not found: {method}")
        if params is None:
            return entry, {}
        try:
            check_depth(params, self.limits.max_depth)
        except ValidationError as exc:
            raise JsonRpcError(INVALID_PARAMS, str(exc)) from None
        if isinstance(params, Mapping):
            return entry, dict(params)
        if isinstance(params, list):
            if len(params) > len(entry.names):
                raise JsonRpcError(
                    INVALID_PARAMS,
                    f"Invalid params: {method} takes at most {len(entry.names)} positional params",
                )
            return entry, dict(zip(entry.names, params, strict=False))
        raise JsonRpcError(INVALID_PARAMS, "Invalid params: params must be an object or an array")

    async def _guard(self, awaitable: Awaitable[Any]) -> Any:
        try:
            return await awaitable
        except JsonRpcError:
            raise
        except ValidationError as exc:
            raise JsonRpcError(INVALID_PARAMS, str(exc)) from exc
        except McpkitError as exc:
            raise JsonRpcError(INTERNAL_ERROR, str(exc)) from exc
        except sqlite3.Error as exc:  # a database fault, in the user's terms
            raise JsonRpcError(INTERNAL_ERROR, describe_db_error(self.engine.store.path, exc)) from exc
        except Exception as exc:
            raise JsonRpcError(INTERNAL_ERROR, f"Internal error: {type(exc).__name__}: {exc}") from exc

    # -- handlers: validate, then run the engine in a worker thread ---------------------------

    async def _search_similar(self, args: dict[str, Any]) -> Any:
        query = self._text(args, "query")
        raw_settings = args.get("settings")
        if raw_settings is None and any(k in args for k in ("top_k", "user_filter", "date_filter")):
            raw_settings = {k: args.get(k) for k in ("top_k", "user_filter", "date_filter")}
        settings = parse_settings(raw_settings)
        post_filter = parse_post_filter(raw_settings if isinstance(raw_settings, Mapping) else None, args)
        mode = _mode("search_similar", args)
        weights = _weights(args, mode)
        offset = _offset("search_similar", args)
        return await anyio.to_thread.run_sync(
            lambda: self.engine.search_similar(
                query, settings, mode=mode, weights=weights, offset=offset, post_filter=post_filter
            )
        )

    async def _vector_search(self, args: dict[str, Any]) -> Any:
        query = self._text(args, "query")
        top_k = _integer("vector_search", "top_k", args)
        mode = _mode("vector_search", args)
        weights = _weights(args, mode)
        pairs = await anyio.to_thread.run_sync(
            lambda: self.engine.vector_search(query, top_k, mode=mode, weights=weights)
        )
        return {"streaming": chunk_pairs(pairs)}

    async def _search_text(self, args: dict[str, Any]) -> Any:
        term = self._text(args, "search_term")
        limit = _integer("search_posts_by_text", "limit", args)
        source = METHODS["search_posts_by_text"].param("source").choice(args.get("source") or None)
        offset = _offset("search_posts_by_text", args)
        post_filter = parse_post_filter(args)
        return await anyio.to_thread.run_sync(
            lambda: self.engine.search_posts_by_text(term, limit, source, offset, post_filter)
        )

    async def _user_stats(self, args: dict[str, Any]) -> Any:
        limit = _integer("get_user_stats", "limit", args)
        offset = _offset("get_user_stats", args)
        post_filter = parse_post_filter(args)
        return await anyio.to_thread.run_sync(lambda: self.engine.user_stats(limit, offset, post_filter))

    async def _database_stats(self, args: dict[str, Any]) -> Any:
        post_filter = parse_post_filter(args)
        return await anyio.to_thread.run_sync(lambda: self.engine.database_stats(post_filter))

    def _reference(self, args: Mapping[str, Any]) -> str:
        """The post ``id`` names (an id, a post URL or an at:// URI)."""
        reference = args.get("id")
        if isinstance(reference, int) and not isinstance(reference, bool):
            reference = str(reference)  # an X id sent as a number: exact up to 2**53 only
        return check_text("id", reference, self.limits.max_text_chars)

    async def _thread(self, args: dict[str, Any]) -> Any:
        """mcpkit's ``get_thread``: the post ``id`` names (an id, a post URL or an at:// URI)."""
        reference = self._reference(args)
        limit = _integer("get_thread", "limit", args)
        offset = _offset("get_thread", args)
        return await anyio.to_thread.run_sync(lambda: self.engine.thread(reference, limit, offset))

    async def _status(self, args: dict[str, Any]) -> Any:
        return await anyio.to_thread.run_sync(self.engine.status)

    async def _embed_text(self, args: dict[str, Any]) -> Any:
        text = self._text(args, "text")
        return await anyio.to_thread.run_sync(lambda: self.engine.embed_text(text))

    async def _check_init(self, args: dict[str, Any]) -> Any:
        """Upstream's readiness probe: this archive is ready as soon as it is open."""
        return {"status": "init_completed"}

    async def _user_list(self, args: dict[str, Any]) -> Any:
        return await anyio.to_thread.run_sync(self.engine.user_list)

    # -- the pages (mcpkit's): what the web app shows, for every face --------------------------

    def _page(self, method: str, args: Mapping[str, Any]) -> tuple[Filters, int, int]:
        """A page method's facets, ``offset`` and ``limit``, checked as :data:`METHODS` says."""
        return Filters.from_params(args), _offset(method, args), int(_integer(method, "limit", args))

    async def _browse_search(self, args: dict[str, Any]) -> Any:
        """The keystroke search: posts holding every word of ``q``, newest first, with facets."""
        q = args.get("q")
        q = "" if q in (None, "") else check_text("q", q, self.limits.max_text_chars)
        filters, offset, limit = self._page("browse_search", args)
        return await anyio.to_thread.run_sync(lambda: self.engine.pages.search(q, filters, offset, limit))

    async def _facets(self, args: dict[str, Any]) -> Any:
        filters, offset, limit = self._page("get_facets", args)
        raw = args.get("ids")
        if not isinstance(raw, list) or not all(
            (isinstance(i, str) and i.removeprefix("-").isdecimal() and len(i) <= 20)
            or (isinstance(i, int) and not isinstance(i, bool))
            for i in raw
        ):
            raise ValidationError("Invalid params: ids must be a list of post ids (strings of digits)")
        most = METHODS["get_facets"].param("limit").maximum or 0
        if len(raw) > most:
            raise ValidationError(f"ids must be at most {most} post ids, got {len(raw)}")
        ids = [int(i) for i in raw]
        return await anyio.to_thread.run_sync(lambda: self.engine.pages.facets(ids, filters, offset, limit))

    async def _timeline(self, args: dict[str, Any]) -> Any:
        filters = Filters.from_params(args)
        return await anyio.to_thread.run_sync(lambda: self.engine.pages.timeline(filters))

    async def _on_this_day(self, args: dict[str, Any]) -> Any:
        filters, offset, limit = self._page("get_on_this_day", args)
        month, day = parse_day(args.get("day"))
        return await anyio.to_thread.run_sync(
            lambda: self.engine.pages.on_this_day(filters, month, day, offset, limit)
        )

    async def _month(self, args: dict[str, Any]) -> Any:
        filters, offset, limit = self._page("get_month", {**args, "month": None})
        year, month = parse_month(args.get("month"))
        return await anyio.to_thread.run_sync(
            lambda: self.engine.pages.month(filters, year, month, offset, limit)
        )

    async def _media_grid(self, args: dict[str, Any]) -> Any:
        filters, offset, limit = self._page("get_media_grid", args)
        return await anyio.to_thread.run_sync(lambda: self.engine.pages.media_grid(filters, offset, limit))

    async def _post(self, args: dict[str, Any]) -> Any:
        reference = self._reference(args)
        limit = int(_integer("get_post", "limit", args))
        return await anyio.to_thread.run_sync(lambda: self.engine.post_page(reference, limit))

    async def _media_file(self, args: dict[str, Any]) -> Any:
        if args.get("position") is None:
            raise ValidationError("Invalid params: position is required")
        position = int(_integer("get_media_file", "position", args))
        reference = self._reference(args)
        return await anyio.to_thread.run_sync(lambda: self.engine.media_file(reference, position))


def chunk_pairs(pairs: Sequence[tuple[int, float]] | Sequence[list[Any]]) -> list[dict[str, Any]]:
    """Split ranked ``(post_id, score)`` pairs into upstream's streaming chunks (>= 1 chunk)."""
    total = max(1, -(-len(pairs) // STREAM_CHUNK_SIZE))
    chunks = []
    for index in range(total):
        start = index * STREAM_CHUNK_SIZE
        data = [[int(p[0]), float(p[1])] for p in pairs[start : start + STREAM_CHUNK_SIZE]]
        chunks.append({"data": data, "chunk": index + 1, "total_chunks": total, "start_rank": start + 1})
    return chunks
