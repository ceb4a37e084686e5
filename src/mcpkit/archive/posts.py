"""The post model and the text rules every part agrees on.

Content stripping decides both what gets embedded and which posts count as duplicates, so it
lives in one place: the importer, the embedder runner and the engine all call
:func:`strip_content` and :func:`dedup_key`.
"""

from __future__ import annotations

import calendar
import datetime as dt
import functools
import re
from dataclasses import dataclass

TIMESTAMP_FORMAT = "%Y-%m-%d %H:%M:%S"

_URL = re.compile(r"https?://\S+")
_MENTION = re.compile(r"@[A-Za-z0-9_]+")
_SPACE = re.compile(r"\s+")
_POST_URL = re.compile(r"https?://(?:www\.)?(?:twitter\.com|x\.com)/([^/]+)/status/(\d+)")


@dataclass(frozen=True, slots=True)
class Post:
    """One archived post (a tweet, or a liked / bookmarked post of someone else).

    ``log_type`` is Twilog's: 1 own post, 2 like, 3 bookmark. ``user`` is ``""`` when the URL
    does not name the author of this very post.
    """

    post_id: int
    user: str
    timestamp: str
    url: str
    content: str
    log_type: int


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
    """
    match = _POST_URL.search(url)
    if match is None or int(match.group(2)) != post_id:
        return ""
    return match.group(1)


_EPOCH_ORDINAL = dt.date(1970, 1, 1).toordinal()
_CANONICAL = re.compile(r"(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)")


@functools.lru_cache(maxsize=8192)
def _day_start(date: str) -> int | None:
    """Seconds since the epoch at the start of ``YYYY-MM-DD`` (UTC); ``None`` for no such day."""
    try:
        day = dt.date(int(date[:4]), int(date[5:7]), int(date[8:10]))
    except ValueError:
        return None
    return (day.toordinal() - _EPOCH_ORDINAL) * 86400


def timestamp_epoch(timestamp: str) -> int | None:
    """Seconds since the epoch for ``YYYY-MM-DD HH:MM:SS`` (read as UTC), ``None`` if unparsable.

    Posts with unparsable or empty timestamps pass every date filter (upstream behaviour).
    The canonical form takes a fast path (``strptime`` was a third of import time); anything
    else goes through ``strptime`` so both accept exactly the same strings.
    """
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
