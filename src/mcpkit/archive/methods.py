"""The archive API's methods, each declared once: name, parameters, streaming, result shape.

Every face derives from :data:`METHODS` instead of repeating it: the API reads and checks its
arguments through these declarations (:meth:`Param.integer`, :meth:`Param.choice`), the MCP
tools' input schemas, the CLI options' ranges, choices and help, the shell's help and the
method table in docs/archive-data.md (``python -m mcpkit.archive.methods`` prints it) all come
from here, and tests/archive/test_methods.py proves each face agrees with it. The limits and choices
(``TOP_K_MAX``, ``LIMIT_MAX``, ``OFFSET_MAX``, ``MODES``, ``SPACES``) and the range check are
declared here too; :mod:`mcpkit.archive.settings`, the search settings' parser, reads them and
the ``settings`` parameter's declaration from here.

This module imports no store, engine or numpy: the CLI reads it at start-up.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from mcpkit.errors import ValidationError

__all__ = [
    "LIMIT_MAX",
    "METHODS",
    "MODES",
    "OFFSET_MAX",
    "SPACES",
    "TOP_K_MAX",
    "UPSTREAM_DEFAULT_URL",
    "UPSTREAM_MODES",
    "Method",
    "Param",
    "check_range",
    "markdown_table",
]

ParamType = Literal["string", "integer", "number", "boolean", "object", "array"]

UPSTREAM_DEFAULT_URL = "ws://localhost:8765"
UPSTREAM_MODES = ("content", "reasoning", "summary", "average", "maximum", "minimum")
MODES = (*UPSTREAM_MODES, "hybrid")  # hybrid: mcpkit's text + meaning fusion (archive/ranking.py)
SPACES = ("content", "reasoning", "summary")
TOP_K_MAX = 100
LIMIT_MAX = 1000
OFFSET_MAX = 100_000  # mcpkit's paging extension: the most results a list call may skip


def check_range(name: str, value: Any, low: int, high: int) -> int:
    """An integer in ``[low, high]`` or a ValidationError with upstream's message."""
    if isinstance(value, bool) or not isinstance(value, int | float) or int(value) != value:
        raise ValidationError(f"{name} must be an integer between {low} and {high}, got {value!r}")
    number = int(value)
    if not low <= number <= high:
        raise ValidationError(f"{name} must be between {low} and {high}, got {number}")
    return number


@dataclass(frozen=True, slots=True)
class Param:
    """One parameter of a method as every face offers it.

    ``fields`` are an object's members, ``items`` an array's item type. ``default_in_help``:
    upstream's schema says the default in the description rather than as ``default`` (kept so
    its tool definitions stay as they were)."""

    name: str
    type: ParamType
    help: str
    default: Any = None
    minimum: int | None = None
    maximum: int | None = None
    choices: tuple[str, ...] = ()
    required: bool = False
    fields: tuple[Param, ...] = ()
    items: ParamType | None = None
    default_in_help: bool = False

    def integer(self, args: Mapping[str, Any]) -> Any:
        """The argument checked against the declared range (upstream's message), or the default."""
        value = args.get(self.name)
        if value is None:
            return self.default
        low = 0 if self.minimum is None else self.minimum
        high = 2**63 - 1 if self.maximum is None else self.maximum
        return check_range(self.name, value, low, high)

    @property
    def bounds(self) -> tuple[int, int]:
        """The inclusive range of a bounded integer parameter."""
        if self.minimum is None or self.maximum is None:
            raise ValueError(f"{self.name} has no range")
        return self.minimum, self.maximum

    def choice(self, raw: Any) -> str:
        """``raw`` when it is one of the choices, the default when absent, else a ValidationError."""
        if raw is None:
            return str(self.default)
        if raw not in self.choices:
            raise ValidationError(f"{self.name} must be one of {', '.join(self.choices)}, got {raw!r}")
        return str(raw)

    def summary(self) -> str:
        """The parameter as the docs table shows it: name, range or choices, default."""
        text = f"`{self.name}`" + ("*" if self.required else "")
        if self.minimum is not None and self.maximum is not None:
            text += f" {self.minimum}..{self.maximum}"
        if self.choices:
            text += " " + "\\|".join(self.choices)
        if self.default not in (None, ""):
            text += f" ({self.default})"
        if self.fields:
            text += " {" + ", ".join(field.summary() for field in self.fields) + "}"
        return text


@dataclass(frozen=True, slots=True)
class Method:
    """One API method: its parameters in positional order, whether it takes mcpkit's post
    filters (:data:`mcpkit.archive.filters.FILTER_PARAMS`), whether it streams, its result."""

    name: str
    params: tuple[Param, ...]
    result: str
    filters: bool = False
    streaming: bool = False
    own: bool = False  # mcpkit's method, not upstream's

    @property
    def names(self) -> tuple[str, ...]:
        """The parameter names in positional order (params sent as an array)."""
        return tuple(param.name for param in self.params)

    def walk(self) -> Iterator[Param]:
        """Every parameter, an object's members after it."""
        stack = list(reversed(self.params))
        while stack:
            param = stack.pop()
            yield param
            stack.extend(reversed(param.fields))

    def param(self, name: str) -> Param:
        """The parameter ``name``, at the top or inside an object (``top_k`` of ``settings``)."""
        for param in self.walk():
            if param.name == name:
                return param
        raise KeyError(f"{self.name} has no parameter {name}")


def _query(help: str) -> Param:
    return Param("query", "string", help, required=True)


_MODE = Param(
    "mode", "string", "Which vectors to compare; hybrid also ranks by words.", "content", choices=MODES
)
_WEIGHTS = Param(
    "weights", "array", "For the average mode, weights of content, reasoning and summary.", items="number"
)
_OFFSET = Param(
    "offset",
    "integer",
    "Skip this many results; answers say which offset comes next.",
    0,
    minimum=0,
    maximum=OFFSET_MAX,
)
_LIMIT = Param("limit", "integer", "How many to return.", 50, minimum=1, maximum=LIMIT_MAX)
_USER_FILTER = Param(
    "user_filter",
    "object",
    "Filter by author. Includes wins over excludes.",
    fields=(
        Param("includes", "array", "Only posts by these user names.", items="string"),
        Param("excludes", "array", "Leave out posts by these user names.", items="string"),
        Param("threshold_min", "integer", "Only users with at least this many posts.", minimum=1),
        Param("threshold_max", "integer", "Only users with at most this many posts.", minimum=1),
    ),
)
_DATE_FILTER = Param(
    "date_filter",
    "object",
    "Filter by post time, both ends inclusive.",
    fields=(
        Param("from", "string", "Earliest time as YYYY-MM-DD HH:MM:SS or a date."),
        Param("to", "string", "Latest time as YYYY-MM-DD HH:MM:SS, or a date for that whole day."),
    ),
)
_FACETS = (
    Param("kind", "array", "Kinds of posts, or all; the authored kinds when omitted.", items="string"),
    Param("platform", "array", "Only posts from these platforms.", items="string"),
    Param("account", "array", "Only posts of these accounts.", items="string"),
    Param("lang", "array", "Only posts in these languages.", items="string"),
    Param("has_media", "boolean", "Only posts with media, or only those without."),
    Param("month", "string", "Only posts of this year or month: YYYY or YYYY-MM."),
)
"""The pages' facets (:class:`mcpkit.archive.facets.Filters`), taken by the page methods."""
_PAGE_POST = Param(
    "id", "string", "The post: an X id, a link to the post, or an at or Mastodon URI.", required=True
)
_PAGE = "offset, limit, returned, total, next_offset, results: [page post]"


def _top_k(default: int) -> Param:
    return Param(
        "top_k",
        "integer",
        f"How many posts to return, {default} when omitted.",
        default,
        minimum=1,
        maximum=TOP_K_MAX,
        default_in_help=True,
    )


def _page_limit(default: int, help: str = "How many posts a page holds.") -> Param:
    return Param("limit", "integer", help, default, minimum=1, maximum=LIMIT_MAX)


_POST = "`post` = `{post_id, content, timestamp, url, user}` (+ `reasoning, summary, tags` when enriched)"

METHODS: dict[str, Method] = {
    method.name: method
    for method in (
        Method(
            "search_similar",
            (
                _query("What to look for, in natural language."),
                Param(
                    "settings",
                    "object",
                    "Upstream's search settings; top_k, user_filter and date_filter may also come "
                    "at the top level.",
                    fields=(
                        _top_k(10),
                        _USER_FILTER,
                        _DATE_FILTER,
                    ),
                ),
                _MODE,
                _WEIGHTS,
                _OFFSET,
            ),
            f"`[{{rank, score, post}}]`, {_POST}",
            filters=True,
        ),
        Method(
            "vector_search",
            (
                _query("What to look for; Q|T keeps only posts matching the words T."),
                Param(
                    "top_k", "integer", "How many pairs, every post when omitted.", minimum=1, maximum=2**31
                ),
                _MODE,
                _WEIGHTS,
            ),
            "streamed: chunks `{data: [[post_id, score], ...], chunk, total_chunks, start_rank}` "
            "of 20,000 pairs; no filters, no dedup",
            streaming=True,
        ),
        Method(
            "search_posts_by_text",
            (
                Param(
                    "search_term",
                    "string",
                    "Words to find. Use quotes for a phrase and a minus to exclude.",
                    required=True,
                ),
                _LIMIT,
                Param("source", "string", "Which text to search.", "content", choices=SPACES),
                _OFFSET,
            ),
            f"`[post]` newest first, {_POST}",
            filters=True,
        ),
        Method(
            "get_user_stats",
            (_LIMIT, _OFFSET),
            "`[{user, post_count}]`, most posts first (counting the posts the filters pass)",
            filters=True,
        ),
        Method(
            "get_database_stats",
            (),
            "`{total_posts, total_users, date_range: {earliest, latest}, enrichment: {total_posts, "
            "enriched, failed}}`; with a filter, of the posts it passes, plus `by_kind`, "
            "`by_platform`, `by_account` (each counted without its own filter)",
            filters=True,
        ),
        Method(
            "get_thread",
            (
                Param(
                    "id",
                    "string",
                    "The post: an X id, a link to the post, or an at or Mastodon URI.",
                    required=True,
                ),
                _LIMIT,
                _OFFSET,
            ),
            "`{id, in_reply_to, in_reply_to_id, focus_offset, posts, offset, limit, returned, "
            "total_count, next_offset}`: the author's self-reply chain in time order and the post "
            "it answers when archived; `-32603 no post X in the archive` when there is none",
            own=True,
        ),
        Method(
            "get_status",
            (
                Param(
                    "websocket_url",
                    "string",
                    "WebSocket address of the server to check.",
                    UPSTREAM_DEFAULT_URL,
                ),
            ),
            '`{status: "running", ready, server_type: "TwilogServer", model, data_stats: '
            "{total_posts, total_users, total_summaries, total_tags}, embeddings_loaded, "
            "search_engine_ready, spaces, enrichment, vector_index: {enabled, min_rows, auto_build, "
            "ready, kinds, building, failed}}`; `websocket_url` is read by the MCP face only",
        ),
        Method(
            "embed_text",
            (Param("text", "string", "The text to embed.", required=True),),
            '`{vector: base64 of a safetensors file holding "vector": float32 [1, dim]}` '
            "(the content space's model, query side)",
        ),
        Method("get_user_list", (), "user names, most posts first"),
        Method(
            "check_init",
            (),
            '`{status: "init_completed"}` (upstream\'s readiness probe; the archive is ready once open)',
        ),
        Method(
            "browse_search",
            (
                Param(
                    "q",
                    "string",
                    "Words every post holds; quotes for a phrase, a minus to leave out. Empty: every post.",
                    "",
                ),
                _page_limit(30),
                _OFFSET,
                *_FACETS,
            ),
            f"`{{{_PAGE}, approximate, facets}}` newest first: what the web app shows as you type; "
            "`facets` counts every facet's values among the matches (`approximate`: estimated)",
            own=True,
        ),
        Method(
            "get_facets",
            (
                Param(
                    "ids",
                    "array",
                    "Post ids, best first: a ranking to count facets in.",
                    required=True,
                    items="string",
                ),
                _page_limit(30),
                _OFFSET,
                *_FACETS,
            ),
            f"`{{ids, {_PAGE}, facets}}`: the ids the facets pass, in their order, a page of them "
            "and every facet's counts among them",
            own=True,
        ),
        Method(
            "get_timeline",
            _FACETS,
            "`{total, peak, years: [{year, months: [12 counts], total}], undated}` (the month facet "
            "left out)",
            own=True,
        ),
        Method(
            "get_on_this_day",
            (Param("day", "string", "The day as MM-DD.", required=True), _page_limit(30), _OFFSET, *_FACETS),
            f"`{{day, {_PAGE}}}`: posts of that day in every year, newest first",
            own=True,
        ),
        Method(
            "get_month",
            (
                Param("month", "string", "The month as YYYY-MM.", required=True),
                _page_limit(100),
                _OFFSET,
                *_FACETS[:-1],
            ),
            f"`{{month, {_PAGE}, previous_month, next_month}}`: the month's posts oldest first, and the "
            "nearest months before and after with posts",
            own=True,
        ),
        Method(
            "get_media_grid",
            (_page_limit(60), _OFFSET, *_FACETS),
            f"`{{{_PAGE}}}`: posts with media newest first, each with `media: [{{position, type, alt, url, "
            "in_export}}]`",
            own=True,
        ),
        Method(
            "get_post",
            (
                _PAGE_POST,
                _page_limit(200, "How many posts of its thread to return."),
            ),
            "`{post, newer, older, thread, thread_total, in_reply_to, quoted, reposted, reply_missing}`: "
            "the post with its media, its thread around it and the posts just newer and older of its "
            "sort; `-32603 no post X in the archive` when there is none",
            own=True,
        ),
        Method(
            "get_media_file",
            (
                _PAGE_POST,
                Param(
                    "position",
                    "integer",
                    "Which attachment, from 0.",
                    required=True,
                    minimum=0,
                    maximum=LIMIT_MAX,
                ),
            ),
            "`{export, path}`: the export on disk holding the attachment and its path there; `null` "
            "when none does",
            own=True,
        ),
    )
}
"""Every method of the archive API, in the order ``methods()`` lists them."""


def markdown_table() -> str:
    """The method table of docs/archive-data.md: ``*`` marks a required parameter, ``a..b`` a
    range, ``(x)`` a default."""
    rows = ["| method | params | result |", "|---|---|---|"]
    for method in METHODS.values():
        parts = [param.summary() for param in method.params]
        if method.filters:
            parts.append("mcpkit's filters")
        name = f"`{method.name}`" + (" (mcpkit)" if method.own else "")
        rows.append(f"| {name} | {', '.join(parts) or '—'} | {method.result} |")
    return "\n".join(rows) + "\n"


if __name__ == "__main__":
    print(markdown_table(), end="")
