"""The archive's MCP face: upstream's six tools over the one API, in upstream's schemas and
texts, and mcpkit's ``get_thread``.

With ``--url URL`` it is a thin wrapper: it forwards each call to the archive
server over a reconnecting connection and only formats the answer. With ``--db PATH`` the
same tools run the API in-process. Either way the API validates and shapes; this module only
turns answers into text and failures into one-line messages, in English unless the server was
started with ``--lang ja`` or a Japanese locale (then upstream's Japanese texts, word for word).

Tool definitions keep upstream's names, parameter names, types and ranges (``top_k`` integer
1..100, filters as objects, ``mode`` enum); descriptions are plain English so the strictest
client profile accepts them. mcpkit's filters (``kind``, ``platform``, ``account``,
``has_media``) are optional properties added to the search and stats tools; this face always
sends ``kind`` (the authored kinds unless the call names others), so its answers cover what the
account wrote and carry mcpkit's post fields.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import anyio

from mcpkit import __version__
from mcpkit.archive import messages as m
from mcpkit.archive import texts
from mcpkit.archive.errors import ArchiveError
from mcpkit.archive.filters import FILTER_KEYS, FILTER_PARAMS, request_filters
from mcpkit.archive.messages import Lang, Wording
from mcpkit.archive.methods import METHODS, Param
from mcpkit.archive.rpc.api_protocol import ArchiveAPIProtocol
from mcpkit.archive.rpc.client import RpcClient
from mcpkit.errors import CallError, CallTimeoutError, ConnectError, HttpError, ServerExitedError
from mcpkit.jsonrpc import error_fields
from mcpkit.results import Window, text_page
from mcpkit.tools import Handler, ToolContext, ToolSpec, params

if TYPE_CHECKING:
    from mcp.types import CallToolResult

    from mcpkit.archive.api import ArchiveAPI
    from mcpkit.server import McpkitServer, ServerOptions

SERVER_NAME = "mcpkit-archive"


class ToolFailedError(CallError):
    """A failed tool call; its text is the whole one-line ``isError`` message."""


def describe_failure(exc: BaseException, lang: Lang = "en") -> str:
    """The inner part of the error text for a failed call (upstream's, in Japanese)."""
    if isinstance(exc, HttpError):  # the handshake was refused: say why, not "not running"
        return m.CONNECTION_ERROR(lang, detail=exc)
    if isinstance(exc, CallTimeoutError):
        return m.SERVER_TIMEOUT(lang)
    if isinstance(exc, ServerExitedError):
        return m.CONNECTION_CLOSED(lang)
    if isinstance(exc, ConnectError):
        return m.SERVER_DOWN(lang)
    if isinstance(exc, Wording):  # said for a person in the catalogue (no archive yet)
        return exc.text(lang)
    if isinstance(exc, ArchiveError):  # said for a person already (a damaged archive)
        return str(exc)
    fields = error_fields(exc)
    if fields is not None:
        return m.SERVER_ERROR(lang, detail=fields[1])
    return m.CONNECTION_ERROR(lang, detail=exc)


def with_filters(args: Mapping[str, Any], call: dict[str, Any]) -> dict[str, Any]:
    """``call`` with the tool call's filters, and ``kind`` always (see :func:`request_filters`)."""
    return {**call, **request_filters(*(args.get(key) for key in FILTER_KEYS))}


class ArchiveTools:
    """The tools bound to one archive API (in-process, or a client of the server)."""

    def __init__(
        self, api: ArchiveAPIProtocol, *, websocket_url: str | None = None, lang: Lang = "en"
    ) -> None:
        self.api = api
        self.websocket_url = websocket_url
        self.lang = lang

    async def _call(
        self, method: str, args: Mapping[str, Any], failure: m.Message, ctx: ToolContext | None = None
    ) -> Any:
        """One API call; with ``ctx``, progress every second while it runs.

        The first search of a process loads the embedding model and a large archive scans for a
        while: the progress notifications tell the client the call is alive (clients that reset
        their timeout on progress then do not give up on it).
        """
        failed: Exception | None = None
        result: Any = None
        async with anyio.create_task_group() as tg:
            if ctx is not None:
                tg.start_soon(_heartbeat, ctx, method)
            try:
                result = await self.api.call(method, dict(args))
            except Exception as exc:  # outside the task group below: no exception group
                failed = exc
            tg.cancel_scope.cancel()
        if failed is not None:
            reason = describe_failure(failed, self.lang)
            raise ToolFailedError(
                m.TOOL_ERROR(self.lang, action=failure(self.lang), reason=reason)
            ) from failed
        if ctx is not None:
            await ctx.progress(1, 1, f"{method} done")
        return result

    def _required(self, args: Mapping[str, Any], name: str, message: m.Message) -> str:
        value = args.get(name)
        if not isinstance(value, str) or not value:
            raise ToolFailedError(m.TOOL_MISSING(self.lang, what=message(self.lang)))
        return value

    async def search_similar(self, args: dict[str, Any], ctx: ToolContext) -> str | CallToolResult:
        query = self._required(args, "query", m.NO_QUERY)
        call: dict[str, Any] = {"query": query}
        for key in ("mode", "weights", "offset"):
            if args.get(key) is not None:
                call[key] = args[key]
        settings = {k: args[k] for k in ("top_k", "user_filter", "date_filter") if args.get(k) is not None}
        if settings:
            call["settings"] = settings
        results = await self._call("search_similar", with_filters(args, call), m.SEARCH_ACTION, ctx)
        if not results:
            return m.NO_RESULTS(self.lang)
        offset, top_k = _int(args, "search_similar", "offset"), _int(args, "search_similar", "top_k")
        return text_page(
            texts.search_items(results, offset + 1, self.lang),
            Window(offset, top_k),
            header=texts.search_header(query, len(results), self.lang) + texts.match_note(results, self.lang),
            next_call="search_similar with the same arguments and offset={offset}",
        )

    async def get_status(self, args: dict[str, Any]) -> str:
        url = args.get("websocket_url")
        api: ArchiveAPIProtocol = self.api
        temporary: RpcClient | None = None
        if url and url != self.websocket_url:
            api = temporary = RpcClient(url)
        try:
            status = await api.call("get_status", {})
        except Exception as exc:
            reason = describe_failure(exc, self.lang)
            raise ToolFailedError(m.STATUS_UNREACHABLE(self.lang, reason=reason)) from exc
        finally:
            if temporary is not None:
                await temporary.aclose()
        return texts.format_status(status, self.lang)

    async def get_user_stats(self, args: dict[str, Any]) -> CallToolResult:
        call = {k: args[k] for k in ("limit", "offset") if args.get(k) is not None}
        stats = await self._call("get_user_stats", with_filters(args, call), m.USER_STATS_ACTION) or []
        offset = _int(args, "get_user_stats", "offset")
        return text_page(
            texts.user_items(stats, offset + 1, self.lang),
            Window(offset, _int(args, "get_user_stats", "limit")),
            header=texts.users_header(len(stats), self.lang),
            next_call="get_user_stats with offset={offset}",
            separator="\n",
        )

    async def get_database_stats(self, args: dict[str, Any]) -> str:
        stats = await self._call("get_database_stats", with_filters(args, {}), m.DATABASE_STATS_ACTION)
        return texts.format_database_stats(stats or {}, self.lang)

    async def search_posts_by_text(self, args: dict[str, Any], ctx: ToolContext) -> str | CallToolResult:
        term = self._required(args, "search_term", m.NO_SEARCH_TERM)
        call: dict[str, Any] = {"search_term": term}
        for key in ("limit", "source", "offset"):
            if args.get(key) is not None:
                call[key] = args[key]
        posts = await self._call("search_posts_by_text", with_filters(args, call), m.TEXT_SEARCH_ACTION, ctx)
        if not posts:
            return texts.format_text_results(term, [], self.lang) + await self._meaning_note(args, term)
        offset = _int(args, "search_posts_by_text", "offset")
        return text_page(
            texts.text_items(posts, offset + 1, self.lang),
            Window(offset, _int(args, "search_posts_by_text", "limit")),
            header=texts.text_header(term, len(posts), self.lang),
            next_call="search_posts_by_text with the same arguments and offset={offset}",
        )

    async def _meaning_note(self, args: Mapping[str, Any], term: str) -> str:
        """No post holds every word: whether some comes close in meaning (the hybrid verdict
        under the same filters; :func:`texts.meaning_note`)."""
        if args.get("source") not in (None, "content") or _int(args, "search_posts_by_text", "offset"):
            return ""
        try:
            hits = await self.api.call("search_similar", with_filters(args, texts.meaning_search(term, {})))
        except Exception:  # no vectors yet, a model that cannot load: the words' answer stands
            return ""
        return texts.meaning_note(hits, self.lang)

    async def get_thread(self, args: dict[str, Any], ctx: ToolContext) -> CallToolResult:
        reference = self._required(args, "id", m.NO_POST_ID)
        call: dict[str, Any] = {"id": reference}
        for key in ("limit", "offset"):
            if args.get(key) is not None:
                call[key] = args[key]
        thread = await self._call("get_thread", call, m.THREAD_ACTION, ctx) or {}
        offset = int(thread.get("offset") or 0)
        return text_page(
            texts.thread_items(thread, offset + 1, self.lang),
            Window(offset, int(thread.get("limit") or 50), int(thread.get("total_count") or 0)),
            header=texts.thread_header(reference, thread, self.lang),
            next_call="get_thread with the same arguments and offset={offset}",
        )

    async def embed_text(self, args: dict[str, Any], ctx: ToolContext) -> str:
        text = self._required(args, "text", m.NO_EMBED_TEXT)
        result = await self._call("embed_text", {"text": text}, m.EMBED_ACTION, ctx)
        return texts.format_embedding(text, result or {}, self.lang)

    def specs(self) -> list[ToolSpec]:
        return tool_specs(self)


class EmbedStoppedError(CallError):
    """An embed call stopped between batches because its caller cancelled it (the call failed)."""


HEARTBEAT_SECONDS = 1.0


async def _heartbeat(ctx: ToolContext, method: str) -> None:
    """Progress every HEARTBEAT_SECONDS while ``method`` runs (total unknown: seconds so far)."""
    elapsed = 0.0
    while True:
        await anyio.sleep(HEARTBEAT_SECONDS)
        elapsed += HEARTBEAT_SECONDS
        await ctx.progress(elapsed / (elapsed + 1), 1, f"{method} still running after {elapsed:.0f} s")


def _int(args: Mapping[str, Any], method: str, name: str) -> int:
    """An argument the API has already validated as an integer, or its declared default."""
    value = args.get(name)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return int(value)
    return int(METHODS[method].param(name).default)


_ITEMS: dict[str, Callable[[], dict[str, Any]]] = {"string": params.string, "number": params.number}


def _schema(param: Param) -> dict[str, Any]:
    """A parameter's JSON schema from its one declaration (:mod:`mcpkit.archive.methods`)."""
    default = None if param.default_in_help else param.default
    if param.choices:
        return params.enum(param.help, list(param.choices), default=default)
    if param.type == "integer":
        return params.integer(param.help, minimum=param.minimum, maximum=param.maximum, default=default)
    if param.type == "array" and param.items is not None:
        return params.array(_ITEMS[param.items](), param.help)
    if param.type == "object":
        return params.obj({field.name: _schema(field) for field in param.fields}, param.help)
    return params.string(param.help, default=default)


def _input_schema(method: str) -> dict[str, Any]:
    """A tool's input schema: the method's declared parameters, upstream's ``settings`` object
    unfolded into its members (the tools' flat form), and mcpkit's filters where it takes them."""
    declared = METHODS[method]
    leaves = [leaf for p in declared.params for leaf in (p.fields if p.name == "settings" else (p,))]
    properties = {param.name: _schema(param) for param in leaves}
    if declared.filters:
        properties.update(_filter_schemas())
    return params.object_schema(properties, required=[param.name for param in leaves if param.required])


def _filter_schemas() -> dict[str, dict[str, Any]]:
    """mcpkit's filter properties (:data:`FILTER_PARAMS`), optional on every search and stats tool."""
    schemas: dict[str, dict[str, Any]] = {}
    for param in FILTER_PARAMS:
        if param.key == "has_media":
            schemas[param.key] = params.boolean(param.help)
        elif param.values:
            schemas[param.key] = params.array(params.enum(param.item, list(param.values)), param.help)
        else:
            schemas[param.key] = params.array(params.string(param.item), param.help)
    return schemas


def tool_specs(tools: ArchiveTools) -> list[ToolSpec]:
    """The tool definitions: upstream's schemas with English descriptions, and get_thread."""

    def spec(name: str, description: str, handler: Handler) -> ToolSpec:
        return ToolSpec(
            name=name,
            description=description,
            input_schema=_input_schema(name),
            handler=handler,
            category="archive",
            read_only=True,
            open_world=False,
        )

    return [
        spec(
            "search_similar",
            "Semantic search over the post archive. Finds posts whose meaning is close to the query,\n"
            "in any language. Write V|T to also require the words T, or | T for words only.",
            tools.search_similar,
        ),
        spec(
            "get_status",
            "Report whether the archive server is running and ready, its model and data counts.",
            tools.get_status,
        ),
        spec(
            "get_user_stats",
            "List the users with the most posts in the archive, most first.",
            tools.get_user_stats,
        ),
        spec(
            "get_database_stats",
            "Count the posts and users in the archive and give the date range it covers.",
            tools.get_database_stats,
        ),
        spec(
            "search_posts_by_text",
            "Find posts containing the given words, newest first. Case does not matter.",
            tools.search_posts_by_text,
        ),
        spec(
            "get_thread",
            "Show a post in its conversation: the thread of replies its author wrote to themselves,\n"
            "in order, and the post it answers when the archive has it. Give the id or link of a post.",
            tools.get_thread,
        ),
        spec(
            "embed_text",
            "Turn a text into its query vector and report its size. Meant for debugging.",
            tools.embed_text,
        ),
    ]


async def embed(
    api: ArchiveAPI, one_at_a_time: threading.Lock, args: dict[str, Any], ctx: ToolContext
) -> str:
    """Embed the posts of a space that have no vector yet (what ``mcpkit archive embed`` does),
    in a worker thread, reporting each committed batch as progress. A cancelled call stops
    after the batch in hand; what was committed stays, so a later call goes on from there."""
    from mcpkit.archive.embedders import DEFAULT_MODEL
    from mcpkit.archive.embedding import embed_missing

    engine, space = api.engine, str(args.get("space") or "content")

    def run() -> str:
        with one_at_a_time:  # two runs would both embed what neither had yet (a cancelled
            return embed_in_thread()  # one ends its batch in hand first)

    def embed_in_thread() -> str:
        existing = engine.space(space)
        embedder = engine.embedder_for(existing.model if existing is not None else DEFAULT_MODEL)

        def progress(done: int, total: int) -> None:
            if ctx.cancelled.is_set() or stop.is_set():
                raise EmbedStoppedError(f"embed {space} cancelled after {done} of {total} posts")
            anyio.from_thread.run(ctx.progress, done, total or None, f"embedded {done} of {total}")

        summary = embed_missing(engine.store, space, embedder, progress=progress)
        return (
            f"{summary.space}: {summary.embedded} embedded, {summary.already} already, "
            f"{summary.empty} empty after stripping ({summary.model})"
        )

    # A cancelled call is told only once the thread returns; the watcher tells the thread at
    # once (through ``stop``), so it ends after the batch in hand instead of embedding the rest.
    stop = threading.Event()
    summary, failure = "", None
    async with anyio.create_task_group() as tg:

        async def watch() -> None:
            try:
                await anyio.sleep_forever()
            finally:
                stop.set()

        tg.start_soon(watch)
        try:
            summary = await anyio.to_thread.run_sync(run)
        except Exception as exc:  # raised below, outside the task group (no exception group)
            failure = exc
        tg.cancel_scope.cancel()
    if failure is not None:
        raise failure
    return summary


def embed_spec(api: ArchiveAPI) -> ToolSpec:
    """The ``embed`` tool: a long write, so it runs as a task for clients that take tasks."""
    from mcpkit.archive.settings import SPACES

    return ToolSpec(
        name="embed",
        description=(
            "Compute the missing search vectors of the archive, so new posts can be found by meaning.\n"
            "Takes minutes on a large archive; reports progress and can be cancelled and resumed."
        ),
        input_schema=params.object_schema(
            {"space": params.enum("Which text to embed.", list(SPACES), default="content")}
        ),
        handler=functools.partial(embed, api, threading.Lock()),
        category="archive",
        read_only=False,
        destructive=False,
        idempotent=True,
        open_world=False,
        tasks=True,
    )


def build_archive_mcp(
    api: ArchiveAPIProtocol,
    *,
    websocket_url: str | None = None,
    options: ServerOptions | None = None,
    embed_tool: bool = False,
    lang: Lang = "en",
) -> McpkitServer:
    """The MCP server over ``api``; ``websocket_url`` names the server a remote API talks to.

    ``options`` are the server options the CLI built (filters, strictness, HTTP address).
    ``embed_tool`` adds ``embed`` (an in-process API only), a task-capable long write; off by
    default so the default list stays upstream's read-only tools. ``lang`` is the language of
    the tools' texts (their descriptions stay English).
    """
    from mcpkit.archive.web.mcp_app import AppView
    from mcpkit.server import build_server

    extra: list[ToolSpec] = []
    if embed_tool:  # imported only then: the thin wrapper over a remote API starts without it
        from mcpkit.archive.api import ArchiveAPI

        extra = [embed_spec(api)] if isinstance(api, ArchiveAPI) else []
    view = AppView(api)  # the MCP App: search results and posts as a page in clients that render apps
    tools = ArchiveTools(view.api, websocket_url=websocket_url, lang=lang)
    return build_server(
        SERVER_NAME,
        __version__,
        view.tools(tools.specs()) + extra,
        options=options,
        resources=view.resources(),
        instructions=(
            "Search a personal archive of short posts. Use search_similar for meaning, "
            "search_posts_by_text for exact words, get_thread for a post's conversation, and the "
            "stats tools for an overview. Searches cover what the account wrote; ask for kind "
            "like, bookmark or repost, or all, to include the rest."
        ),
    )
