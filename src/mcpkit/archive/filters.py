"""mcpkit's post filters: kind, platform, account, has media, visibility.

One value, :class:`PostFilter`, carries them from every face to the engine and the store, so
the same request selects the same posts whichever way it arrives. The faces (CLI, shell, MCP,
web) cover the authored kinds (post, reply, quote) unless asked; on the WebSocket wire the keys
are optional settings upstream's clients never send, and a request with none of them is
answered exactly as upstream would be (every kind, upstream's post shape): see
:func:`parse_post_filter`.

Values are read forgivingly where the meaning is clear, because models and people write them
loosely: one value or a list, ``"post,reply"``, any case, plurals (``likes``), ``twitter`` for
x and ``bsky`` for bluesky, ``@`` on an account or not, ``"true"``/``"yes"`` for has media.
Anything else is refused in one line that lists what is accepted.

A kind is a relation of the archive's owner to a post (wrote, reposted, liked, bookmarked): a
post passes a kind filter when it has any of the relations chosen. Direct posts are covered
only when a filter names them (``visibility`` ``direct`` or ``all``), on the wire too: no
request that does not ask for them sees one.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from mcpkit.archive.posts import AUTHORED_KINDS, KINDS, PLATFORMS, SHOWN_VISIBILITIES, VISIBILITIES
from mcpkit.errors import ValidationError

__all__ = [
    "ALL_KINDS",
    "AUTHORED",
    "EVERYTHING",
    "FILTER_KEYS",
    "FILTER_PARAMS",
    "SHOWN",
    "FilterParam",
    "PostFilter",
    "account_key",
    "parse_accounts",
    "parse_has_media",
    "parse_kinds",
    "parse_platforms",
    "parse_post_filter",
    "parse_visibilities",
    "request_filters",
]


@dataclass(frozen=True, slots=True)
class FilterParam:
    """One filter as every face offers it: the request key, the values it takes (``()``: any
    text, or a boolean for ``has_media``), the help a person or a model reads, and what one
    value is. The CLI's options, the shell's settings and the MCP tools' properties come from
    :data:`FILTER_PARAMS`; :func:`parse_post_filter` reads the same keys."""

    key: str
    values: tuple[str, ...]
    help: str
    item: str = ""


FILTER_PARAMS: tuple[FilterParam, ...] = (
    FilterParam(
        "kind",
        (*KINDS, "all"),
        "Kinds to cover: post, reply, quote, repost, like, bookmark, or all. "
        "Posts, replies and quotes when omitted.",
        "A kind of post.",
    ),
    FilterParam("platform", (*PLATFORMS, "all"), "Only posts from these platforms.", "A platform."),
    FilterParam(
        "account", (), "Only posts from these archived accounts.", "An account such as @name or name@host."
    ),
    FilterParam(
        "has_media", (), "Only posts with pictures or video when true, only posts without when false."
    ),
    FilterParam(
        "visibility",
        (*VISIBILITIES, "all"),
        "Audiences to cover: public, unlisted, followers, direct, or all. Every one but direct when omitted.",
        "Who a post was addressed to.",
    ),
)
"""mcpkit's filters, each declared once."""

FILTER_KEYS: tuple[str, ...] = tuple(param.key for param in FILTER_PARAMS)
"""The request keys that are mcpkit's settings: any of them asks for mcpkit's answer shape."""

ALL_KINDS = "all"

_KIND_ALIASES = {
    "posts": "post",
    "replies": "reply",
    "quotes": "quote",
    "reposts": "repost",
    "retweet": "repost",
    "retweets": "repost",
    "boost": "repost",
    "boosts": "repost",
    "likes": "like",
    "favorite": "like",
    "favorites": "like",
    "bookmarks": "bookmark",
}
_PLATFORM_ALIASES = {"twitter": "x", "bsky": "bluesky"}


@dataclass(frozen=True, slots=True)
class PostFilter:
    """Which posts a query covers; ``None`` in a field means "no condition on it".

    ``accounts`` holds :func:`account_key` forms (no leading ``@``, case-folded); the store
    turns them into the stored spellings they match, so SQL and Python compare alike.
    """

    kinds: frozenset[str] | None = None
    platforms: frozenset[str] | None = None
    accounts: frozenset[str] | None = None
    has_media: bool | None = None
    visibilities: frozenset[str] | None = SHOWN_VISIBILITIES

    @property
    def other_than_visibility(self) -> bool:
        """Whether a post can fail a condition of this filter other than its visibility."""
        return (
            (self.kinds is not None and not self.kinds >= frozenset(KINDS))
            or self.platforms is not None
            or self.accounts is not None
            or self.has_media is not None
        )

    @property
    def active(self) -> bool:
        """Whether any post can fail this filter (the default leaves direct posts out)."""
        return self.other_than_visibility or (
            self.visibilities is not None and not self.visibilities >= frozenset(VISIBILITIES)
        )

    def without(self, field: str) -> PostFilter:
        """This filter with no condition on ``field`` (a facet's counts ignore their own filter;
        without its visibility condition, a filter still leaves direct posts out)."""
        return PostFilter(
            kinds=None if field == "kind" else self.kinds,
            platforms=None if field == "platform" else self.platforms,
            accounts=None if field == "account" else self.accounts,
            has_media=None if field == "has_media" else self.has_media,
            visibilities=SHOWN_VISIBILITIES if field == "visibility" else self.visibilities,
        )

    def passes(
        self,
        kinds: str | Iterable[str],
        platform: str,
        account: str,
        has_media: bool,
        visibility: str = "public",
    ) -> bool:
        """Does one post with these relations (one kind, or several) and values pass (the
        store's SQL asks the same)?"""
        held = {kinds} if isinstance(kinds, str) else set(kinds)
        return (
            (self.kinds is None or not self.kinds.isdisjoint(held))
            and (self.platforms is None or platform in self.platforms)
            and (self.accounts is None or account_key(account) in self.accounts)
            and (self.has_media is None or bool(has_media) == self.has_media)
            and (self.visibilities is None or visibility in self.visibilities)
        )


SHOWN = PostFilter()
"""Every post a request covers when it names no condition: all but the direct ones."""
EVERYTHING = PostFilter(visibilities=None)
AUTHORED = PostFilter(kinds=AUTHORED_KINDS)


def account_key(account: str) -> str:
    """An account as filters compare it: no leading ``@``, case-folded (``@Name`` is ``name``)."""
    return account.strip().lstrip("@").lower()


def _values(raw: Any, name: str, example: str) -> list[str]:
    """One value or several: a string, ``"a,b"``, a JSON array as text, or a list of strings."""
    if isinstance(raw, str):
        text = raw.strip()
        if text.startswith("["):
            try:
                parsed = json.loads(text)
            except ValueError:
                parsed = None
            if isinstance(parsed, list):
                return _values(parsed, name, example)
        return [part.strip() for part in text.split(",") if part.strip()]
    if isinstance(raw, list | tuple | set | frozenset):
        out: list[str] = []
        for item in raw:
            if not isinstance(item, str):
                raise ValidationError(f"{name} takes names like {example}, got {item!r}")
            out.extend(_values(item, name, example))
        return out
    raise ValidationError(f"{name} takes a name or a list of names like {example}, got {raw!r}")


def parse_kinds(raw: Any, default: frozenset[str] | None = AUTHORED_KINDS) -> frozenset[str] | None:
    """Kinds from ``"reply"``, ``"post,reply"``, ``["like"]`` or ``"all"`` (``None``: every kind).

    Absent or empty gives ``default``.
    """
    if raw is None:
        return default
    words = [w.lower() for w in _values(raw, "kind", "post, reply or all")]
    if not words:
        return default
    if ALL_KINDS in words:
        return None
    kinds: set[str] = set()
    for word in words:
        kind = _KIND_ALIASES.get(word, word)
        if kind not in KINDS:
            raise ValidationError(f"kind must be {', '.join(KINDS)} or all; got {word!r}")
        kinds.add(kind)
    return None if kinds >= set(KINDS) else frozenset(kinds)


def parse_platforms(raw: Any) -> frozenset[str] | None:
    """Platforms from ``"x"``, ``"mastodon,bluesky"``, ``["bsky"]``; absent or ``"all"``: any."""
    if raw is None:
        return None
    words = [w.lower() for w in _values(raw, "platform", "x or mastodon")]
    if not words or ALL_KINDS in words:
        return None
    platforms: set[str] = set()
    for word in words:
        platform = _PLATFORM_ALIASES.get(word, word)
        if platform not in PLATFORMS:
            raise ValidationError(f"platform must be {', '.join(PLATFORMS)} or all; got {word!r}")
        platforms.add(platform)
    return frozenset(platforms)


def parse_accounts(raw: Any) -> frozenset[str] | None:
    """Accounts from ``"@name"``, ``"name@host"``, a DID, or a list of them; absent: any."""
    if raw is None:
        return None
    keys = {account_key(word) for word in _values(raw, "account", "@name or name@host")}
    keys.discard("")
    return frozenset(keys) if keys else None


def parse_visibilities(raw: Any) -> frozenset[str] | None:
    """Visibilities from ``"direct"``, ``"public,unlisted"``, ``["followers"]`` or ``"all"``
    (``None``: every one, direct included); absent or empty: every one but direct."""
    if raw is None:
        return SHOWN_VISIBILITIES
    words = [w.lower() for w in _values(raw, "visibility", "public or direct")]
    if not words:
        return SHOWN_VISIBILITIES
    if ALL_KINDS in words:
        return None
    chosen: set[str] = set()
    for word in words:
        visibility = _VISIBILITY_ALIASES.get(word, word)
        if visibility not in VISIBILITIES:
            raise ValidationError(f"visibility must be {', '.join(VISIBILITIES)} or all; got {word!r}")
        chosen.add(visibility)
    return None if chosen >= set(VISIBILITIES) else frozenset(chosen)


_VISIBILITY_ALIASES = {"private": "followers", "followers-only": "followers", "dm": "direct", "dms": "direct"}


def parse_has_media(raw: Any) -> bool | None:
    """``True``/``False`` from a boolean or the words a boolean is written as; absent: either."""
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return None
    from mcpkit.tools import coerce  # here: the store imports this module, and tools loads the SDK types

    try:
        return coerce.as_bool(raw)
    except ValidationError:
        raise ValidationError(f"has_media must be true or false, got {raw!r}") from None


def parse_post_filter(
    *sources: Mapping[str, Any] | None, default_kinds: frozenset[str] | None = AUTHORED_KINDS
) -> PostFilter | None:
    """The filter a request asks for, or ``None`` when it carries none of :data:`FILTER_KEYS`.

    ``None`` is upstream's request: every kind, upstream's answer shape. A request with any of
    the keys gets mcpkit's answer, and its kinds default to ``default_kinds`` (the authored
    ones) unless it names them. The first source holding a key wins (``settings``, then the
    top level of ``search_similar``).
    """
    found: dict[str, Any] = {}
    for source in sources:
        if not isinstance(source, Mapping):
            continue
        for key in FILTER_KEYS:
            if key in source and key not in found:
                found[key] = source[key]
    if not found:
        return None
    return PostFilter(
        kinds=parse_kinds(found.get("kind"), default_kinds),
        platforms=parse_platforms(found.get("platform")),
        accounts=parse_accounts(found.get("account")),
        has_media=parse_has_media(found.get("has_media")),
        visibilities=parse_visibilities(found.get("visibility")),
    )


def kind_list(kinds: Iterable[str] | None) -> list[str] | str:
    """How a face writes kinds back into a request: a list in :data:`KINDS` order, or ``"all"``."""
    if kinds is None:
        return ALL_KINDS
    chosen = set(kinds)
    return [k for k in KINDS if k in chosen]


def request_filters(
    kind: Any = None, platform: Any = None, account: Any = None, has_media: Any = None, visibility: Any = None
) -> dict[str, Any]:
    """The filter keys an mcpkit face sends for what its user gave: always ``kind`` (the
    authored kinds when not given), so the answer is mcpkit's and never upstream's
    every-kind one; the other keys only when given."""
    keys: dict[str, Any] = {"kind": kind if kind not in (None, [], "") else kind_list(AUTHORED_KINDS)}
    for key, value in (
        ("platform", platform),
        ("account", account),
        ("has_media", has_media),
        ("visibility", visibility),
    ):
        if value is not None and value != []:
            keys[key] = value
    return keys
