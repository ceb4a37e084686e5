"""The post model and the text rules every part agrees on.

Content stripping decides both what gets embedded and which posts count as duplicates, so it
lives in one place: the importer, the embedder runner and the engine all call
:func:`strip_content` and :func:`dedup_key`.
"""

from __future__ import annotations

import calendar
import datetime as dt
import functools
import hashlib
import re
from dataclasses import dataclass

TIMESTAMP_FORMAT = "%Y-%m-%d %H:%M:%S"

_URL = re.compile(r"https?://\S+")
_MENTION = re.compile(r"@[A-Za-z0-9_]+")
_SPACE = re.compile(r"\s+")
_POST_URL = re.compile(r"https?://(?:www\.)?(?:twitter\.com|x\.com)/([^/]+)/status/(\d+)")


KINDS: tuple[str, ...] = ("post", "reply", "quote", "repost", "like", "bookmark")
"""Every kind of record an archive holds, in the order summaries list them."""
AUTHORED_KINDS: frozenset[str] = frozenset({"post", "reply", "quote"})
"""What search and stats cover by default: what the account itself wrote."""
PLATFORMS: tuple[str, ...] = ("x", "mastodon", "bluesky")
"""Where posts come from; a Twilog CSV holds X posts."""
VISIBILITIES: tuple[str, ...] = ("public", "unlisted", "followers", "direct")
"""Who a post was addressed to, from the most open to the most closed."""
SHOWN_VISIBILITIES: frozenset[str] = frozenset({"public", "unlisted", "followers"})
"""What every search, listing, count and thread covers unless asked: never a direct post."""

KIND_BITS: dict[str, int] = {kind: 1 << i for i, kind in enumerate(KINDS)}
"""A relation's bit in a post's set of relations (bit ``i`` is ``KINDS[i]``)."""
_AUTHORED_BITS = sum(KIND_BITS[k] for k in AUTHORED_KINDS)
_PRIMARY_ORDER = ("reply", "quote", "post", "repost", "bookmark", "like")
"""Which relation names a post's kind when it has several: what the account wrote (a reply and
a quote say more than a post) over a repost, a repost over a bookmark, a bookmark over a like."""

_LOG_TYPE_OF_KIND = {"post": 1, "reply": 1, "quote": 1, "repost": 1, "like": 2, "bookmark": 3}


@dataclass(frozen=True, slots=True)
class Media:
    """One picture, video or file attached to a post, as the export holds it.

    ``path`` is the file's path inside the export (``""`` when the export has no copy; then
    ``url`` is where it lived online); ``alt`` is the description its author wrote.
    """

    type: str  # "image", "video", "gif", "audio" or "file"
    path: str = ""
    url: str = ""
    alt: str = ""


@dataclass(frozen=True, slots=True)
class Post:
    """One archived record: a post, reply, quote or repost of the account, or a post it liked
    or bookmarked.

    The first six fields are Twilog's (``log_type`` 1 own post, 2 like, 3 bookmark; ``user``
    is ``""`` when the export does not name the author of this very post); a Twilog CSV gives
    nothing more. Every importer fills the rest as far as its export allows:

    * ``post_id`` is the archive's own key (:func:`post_key`): the tweet id for X, so a Twilog
      CSV and an X archive of the same account meet on the same row; a stable 63-bit hash of
      the platform and ``source_id`` for the others, negative so it never meets an X id.
    * ``source_id`` is the platform's id as a string (X ids exceed 2^53; Mastodon's is the
      object URI; Bluesky's the ``at://`` URI), ``""`` for a Twilog row (its id is the key).
    * ``content`` is the text as a person reads it: entities unescaped once, links expanded,
      HTML turned into paragraphs, the whole note of a long X post; ``content_warning`` apart.
    * ``reply_to``, ``thread_root``, ``quote_of``, ``repost_of`` name other posts by their
      ``source_id`` form (an X id or a URI); ``account`` is the archive owner the record came
      from (``@name`` on X, ``@name@host`` on Mastodon, the handle or DID on Bluesky).
    * ``kind`` is one of :data:`KINDS`; ``""`` means "derive it from ``log_type``"
      (:func:`kind_of`), which is what a Twilog row leaves.
    * ``relations`` is every relation the owner has to the post, a set of :data:`KIND_BITS`
      (authored as post, reply or quote, reposted, liked, bookmarked): one record brings one,
      the store keeps their union; ``0`` means "the kind's alone" (:func:`relations_of`).
    * ``visibility`` is one of :data:`VISIBILITIES`, from the export's own addressing.
    """

    post_id: int
    user: str
    timestamp: str
    url: str
    content: str
    log_type: int
    platform: str = "x"
    kind: str = ""
    source_id: str = ""
    account: str = ""
    reply_to: str = ""
    thread_root: str = ""
    quote_of: str = ""
    repost_of: str = ""
    content_warning: str = ""
    lang: str = ""
    media: tuple[Media, ...] = ()
    relations: int = 0
    visibility: str = "public"


def relations_of(post: Post) -> int:
    """The post's set of relations as bits (:data:`KIND_BITS`): its own, or its kind's (none
    for a kind no release names, which the store keeps by its name)."""
    return post.relations or KIND_BITS.get(kind_of(post), 0)


def joined_relations(first: int, second: int) -> int:
    """Two sets of relations of one post as one: their union, with one authored kind (the
    one :data:`_PRIMARY_ORDER` ranks first), whatever the order they come in."""
    union = first | second
    authored = union & _AUTHORED_BITS
    if authored & (authored - 1):  # more than one authored kind: keep the first ranked
        union &= ~_AUTHORED_BITS
        union |= next(KIND_BITS[k] for k in _PRIMARY_ORDER if authored & KIND_BITS[k])
    return union


def primary_kind(relations: int) -> str:
    """The kind a post with these relations is shown as (:data:`_PRIMARY_ORDER`)."""
    return next((k for k in _PRIMARY_ORDER if relations & KIND_BITS[k]), "post")


def relation_names(relations: int) -> list[str]:
    """The relations as kind names, in :data:`KINDS` order."""
    return [k for k in KINDS if relations & KIND_BITS[k]]


def closest_visibility(first: str, second: str) -> str:
    """The more closed of two visibilities of one post (an unknown word reads as direct)."""
    rank = {name: i for i, name in enumerate(VISIBILITIES)}
    return max(first, second, key=lambda v: rank.get(v, len(VISIBILITIES)))


def kind_of(post: Post) -> str:
    """The post's kind; a Twilog row's comes from its log_type and its text ("RT @" reposts)."""
    return post.kind or twilog_kind(post.log_type, post.content)


def twilog_kind(log_type: int, content: str) -> str:
    """The kind of a Twilog row (the store computes it from a row, without a :class:`Post`)."""
    if log_type == 2:
        return "like"
    if log_type == 3:
        return "bookmark"
    return "repost" if content.startswith("RT @") else "post"


def log_type_of_kind(kind: str) -> int:
    """Twilog's log_type for a kind (every authored kind and reposts are 1)."""
    return _LOG_TYPE_OF_KIND[kind]


def post_key(platform: str, source_id: str) -> int:
    """The archive key of a post: the X id itself, else a stable negative 63-bit hash.

    Stable across runs and machines (vectors and enrichments are keyed by it), and distinct
    from every X id because X ids are positive.
    """
    if platform == "x":
        return int(source_id)
    digest = hashlib.blake2b(f"{platform}\n{source_id}".encode(), digest_size=8).digest()
    return -(int.from_bytes(digest, "big") & (2**63 - 1)) - 1


def strip_content(text: str) -> str:
    """Text as it is embedded and compared for duplicates (upstream's rule).

    URLs and @mentions are removed, hashtags kept, all whitespace runs collapsed to one space.
    A post that is only a link strips to ``""`` and is not embedded.
    """
    text = _URL.sub(" ", text)
    text = _MENTION.sub(" ", text)
    return _SPACE.sub(" ", text).strip()


def dedup_key(user: str, content: str) -> tuple[str, str]:
    """Two results with the same key are the same post for a reader (retweets, reposts)."""
    return (user, strip_content(content))


def user_from_url(url: str, post_id: int) -> str:
    """The author named in a post URL, only when the URL's status id is this post's id.

    A like of someone else's post carries that post's URL, so the user is trustworthy only
    when both ids agree; otherwise ``""``.

    An import calls this once per row, and the regular expression was a seventh of the
    parser's time: a URL that is exactly ``<account URL>/status/<ASCII digits>`` takes the
    account's name from a table of the account URLs seen (:func:`_account_of`); any other
    goes through the expression, which finds the same answer for those.
    """
    head, sep, digits = url.rpartition("/status/")
    if sep and len(head) <= _ACCOUNT_URL_CHARS and digits.isascii() and digits.isdigit():
        user = _ACCOUNTS.get(head)
        if user is None:
            user = _account_of(head)
        if user:
            return user if int(digits) == post_id else ""
    match = _POST_URL.search(url)
    if match is None or int(match.group(2)) != post_id:
        return ""
    return match.group(1)


_ACCOUNT_URL = re.compile(r"https?://(?:www\.)?(?:twitter\.com|x\.com)/([^/]+)")
_ACCOUNTS: dict[str, str] = {}
_ACCOUNTS_KEPT = 1 << 16
_ACCOUNT_URL_CHARS = 96
"""The longest account URL the table keeps (``https://www.twitter.com/`` and a handle of at most
50 characters fit): a file of long junk "URLs" would otherwise fill it with megabytes each."""


def _account_of(head: str) -> str:
    """The name of the account whose URL is all of ``head``, or ``""``, remembered (the table
    starts again past :data:`_ACCOUNTS_KEPT` account URLs, so an export naming millions of
    accounts holds no more memory than that)."""
    match = _ACCOUNT_URL.fullmatch(head)
    user = "" if match is None else match.group(1)
    if len(_ACCOUNTS) >= _ACCOUNTS_KEPT:
        _ACCOUNTS.clear()
    _ACCOUNTS[head] = user
    return user


_EPOCH_ORDINAL = dt.date(1970, 1, 1).toordinal()
_CANONICAL = re.compile(r"(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)", re.ASCII)
_CANONICAL_DATE = re.compile(r"\d{4}-\d\d-\d\d", re.ASCII)
"""ASCII digits only: ``strptime`` reads the month, day and time in ASCII digits alone, so a
form with other digits goes to it."""
_HOUR_SECONDS = {f"{hour:02d}": hour * 3600 for hour in range(24)}
_MINUTE_SECOND_SECONDS = {f":{m:02d}:{s:02d}": m * 60 + s for m in range(60) for s in range(60)}


@functools.lru_cache(maxsize=8192)
def _day_start(date: str) -> int | None:
    """Seconds since the epoch at the start of ``YYYY-MM-DD`` (UTC); ``None`` for no such day."""
    try:
        day = dt.date(int(date[:4]), int(date[5:7]), int(date[8:10]))
    except ValueError:
        return None
    return (day.toordinal() - _EPOCH_ORDINAL) * 86400


@functools.lru_cache(maxsize=8192)
def _canonical_day_start(date: str) -> int | None:
    """:func:`_day_start` of a date written as the canonical form writes it, else ``None``."""
    return _day_start(date) if _CANONICAL_DATE.fullmatch(date) is not None else None


def timestamp_epoch(timestamp: str) -> int | None:
    """Seconds since the epoch for ``YYYY-MM-DD HH:MM:SS`` (read as UTC), ``None`` if unparsable.

    Posts with unparsable or empty timestamps pass every date filter (upstream behaviour).
    Two fast paths, because an import calls this once per row (``strptime`` was a third of
    import time, then the regular expression and ``int()`` calls a quarter of the parser's):
    a timestamp exactly in the canonical form with ASCII digits is three table lookups (the
    day cached, the hour and ``:MM:SS`` from tables of the valid ones); other canonical forms
    go through the regular expression; anything else through ``strptime``, so every path
    accepts exactly the same strings.
    """
    if len(timestamp) == 19 and timestamp[10] == " ":
        day = _canonical_day_start(timestamp[:10])
        hour = _HOUR_SECONDS.get(timestamp[11:13])
        rest = _MINUTE_SECOND_SECONDS.get(timestamp[13:])
        if day is not None and hour is not None and rest is not None:
            return day + hour + rest
    text = timestamp.strip()
    if _CANONICAL.fullmatch(text) is not None:
        day = _day_start(text[:10])
        hour, minute, second = int(text[11:13]), int(text[14:16]), int(text[17:19])
        if day is None or hour > 23 or minute > 59 or second > 59:
            return None
        return day + hour * 3600 + minute * 60 + second
    try:
        parsed = dt.datetime.strptime(text, TIMESTAMP_FORMAT)
    except ValueError:
        return None
    return calendar.timegm(parsed.timetuple())


def fold(text: str) -> str:
    """Case folding used by every text match: ``str.lower`` as upstream's substring search."""
    return text.lower()
