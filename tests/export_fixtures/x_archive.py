"""X (Twitter) archives written from simple records, in each generation of the format.

A record says what a person reads (:class:`XTweet` ``text``: links expanded, nothing escaped);
the writer turns it into what X writes: text escaped (``&amp;``), every link a t.co link with
its entity, media links appended to the text, long posts cut with ``…`` beside their whole text
in ``note-tweet.js`` (unescaped, without the reply's leading @mention or the quote's trailing
link), retweets cut with ``…``, ids as strings (Grailbird: JSON numbers above 2^53 too).

Generations (``generation=``):

* ``"current"``: ``data/tweets.js`` (``window.YTD.tweets.part0``) and ``tweets-partN.js``,
  ``note-tweet.js``, ``like.js``, ``account.js``, ``data/tweets_media/``;
* ``"2019"``: ``data/tweet.js`` (``window.YTD.tweet.part0``), no ``edit_info``,
  ``data/tweet_media/`` (``bare=True``: items are tweet objects, not ``{"tweet": ...}``);
* ``"grailbird"``: ``data/js/tweets/YYYY_MM.js`` (``Grailbird.data.tweets_YYYY_MM =``),
  ``data/js/user_details.js``, retweets with ``retweeted_status``; no notes, likes or media files.

:func:`trap_records` gives records with every trap the facts on real exports list;
:func:`write_big_archive` streams a large archive for memory and speed measurements
(``python -m tests.export_fixtures.x_archive OUT.zip --tweets 100000``).
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import random
import re
import zipfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

__all__ = [
    "GENERATIONS",
    "XLike",
    "XMedia",
    "XTweet",
    "escape",
    "expected_kind",
    "expected_text",
    "trap_records",
    "write_big_archive",
    "write_x_archive",
]

GENERATIONS = ("current", "2019", "grailbird")

_URL = re.compile(r"https?://\S+")
_STATUS = re.compile(r"https://(?:twitter|x)\.com/(\w+)/status/(\d+)$")
_LEADING_MENTIONS = re.compile(r"(?:@\w+\s+)+")
NOTE_CUT = 275
"""Characters of a long post's text that ``full_text`` keeps before ``…``."""
RETWEET_CUT = 140


@dataclass(frozen=True)
class XMedia:
    """A picture or video; ``file``: whether the archive holds a copy in its media folder."""

    type: str = "photo"  # photo, video, animated_gif
    key: str = "FaBcD123xyz"
    alt: str | None = None
    file: bool = True


@dataclass(frozen=True)
class XTweet:
    """One tweet as a person reads it; the writer produces X's form.

    ``text`` ending with a status link makes a quote (X shows it as a card); ``quoted_id``
    writes ``quoted_status_id_str`` instead. ``text`` starting ``RT @user: `` with
    ``retweet_of`` is a retweet (cut to 140 characters with ``…`` except in Grailbird, which
    keeps the whole text in ``retweeted_status``). ``note``: a long post, cut in ``full_text``
    and whole in ``note-tweet.js``. ``reply_to_user`` alone (no ``reply_to``) is a tweet that
    only starts with a mention. ``edit_ids``: every version's id, oldest first.
    """

    id: str
    text: str
    created: str = "2023-02-09 03:14:16"
    reply_to: str = ""
    reply_to_user: str = ""
    quoted_id: str = ""
    retweet_of: str = ""
    note: bool = False
    lang: str = "en"
    media: tuple[XMedia, ...] = ()
    edit_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class XLike:
    """A liked post: ``text`` None writes a like without ``fullText`` (X leaves it out)."""

    id: str
    text: str | None = None
    url: str = ""


def escape(text: str) -> str:
    """X's escaping of tweet texts: ``&``, ``<`` and ``>`` only."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _tco(seed: str) -> str:
    return "https://t.co/" + hashlib.sha1(seed.encode()).hexdigest()[:10]


def expected_kind(tweet: XTweet) -> str:
    """The kind a reader should give the tweet."""
    if tweet.retweet_of:
        return "repost"
    if tweet.reply_to:
        return "reply"
    if tweet.quoted_id or _STATUS.search(tweet.text):
        return "quote"
    return "post"


def expected_text(tweet: XTweet, generation: str = "current") -> str:
    """What a reader should give as the tweet's text: its whole text, except a retweet's,
    which only Grailbird keeps whole."""
    if tweet.retweet_of and generation != "grailbird":
        return _cut(tweet.text, RETWEET_CUT)
    return tweet.text


def _cut(text: str, length: int) -> str:
    return text if len(text) <= length else text[:length] + "…"


# -- tweet objects ---------------------------------------------------------------------------------


def _shorten(text: str, seed: str) -> tuple[str, list[dict[str, Any]]]:
    """``text`` with every link a t.co link, and the url entities that expand them."""
    entities: list[dict[str, Any]] = []

    def replace(match: re.Match[str]) -> str:
        long = match.group()
        if long.startswith(("https://t.co/", "http://t.co/")):
            return long
        short = _tco(f"{seed}/{len(entities)}/{long}")
        start = match.start()
        entities.append(
            {
                "url": short,
                "expanded_url": long,
                "display_url": long.split("://", 1)[1][:26],
                "indices": [str(start), str(start + len(short))],
            }
        )
        return short

    return _URL.sub(replace, text), entities


def _media_entities(tweet: XTweet, link: str) -> list[dict[str, Any]]:
    items = []
    for number, media in enumerate(tweet.media):
        item: dict[str, Any] = {
            "expanded_url": f"https://x.com/alice/status/{tweet.id}/photo/{number + 1}",
            "url": link,
            "media_url_https": f"https://pbs.twimg.com/media/{media.key}.jpg",
            "media_url": f"http://pbs.twimg.com/media/{media.key}.jpg",
            "id_str": str(1600000000000000000 + number),
            "type": media.type,
            "display_url": "pic.x.com/" + link[-10:],
            "sizes": {"large": {"w": "1200", "h": "900", "resize": "fit"}},
        }
        if media.type in ("video", "animated_gif"):
            item["media_url_https"] = (
                f"https://pbs.twimg.com/ext_tw_video_thumb/{tweet.id}/pu/img/thumb{number}.jpg"
            )
            item["video_info"] = {
                "aspect_ratio": ["16", "9"],
                "variants": [
                    {
                        "bitrate": "2176000",
                        "content_type": "video/mp4",
                        "url": f"https://video.twimg.com/ext_tw_video/{tweet.id}/pu/vid/1280x720/{media.key}.mp4?tag=12",
                    },
                    {
                        "bitrate": "256000",
                        "content_type": "video/mp4",
                        "url": f"https://video.twimg.com/ext_tw_video/{tweet.id}/pu/vid/480x270/{media.key}.mp4?tag=12",
                    },
                    {
                        "content_type": "application/x-mpegURL",
                        "url": f"https://video.twimg.com/ext_tw_video/{tweet.id}/pu/pl/{media.key}.m3u8",
                    },
                ],
            }
        if media.alt is not None:
            item["ext_alt_text"] = media.alt
        if tweet.retweet_of:
            item["source_status_id_str"] = tweet.retweet_of
        items.append(item)
    return items


def media_file_names(tweet: XTweet, generation: str = "current") -> list[str]:
    """Names of the tweet's media files inside the archive (those it holds a copy of)."""
    folder = "data/tweets_media" if generation == "current" else "data/tweet_media"
    return [
        f"{folder}/{tweet.id}-{m.key}.{'mp4' if m.type in ('video', 'animated_gif') else 'jpg'}"
        for m in tweet.media
        if m.file and generation != "grailbird"
    ]


def _visible_text(tweet: XTweet, generation: str) -> str:
    """The text X would have in ``full_text`` before links are shortened: cut where X cuts."""
    if tweet.retweet_of and generation != "grailbird":
        return _cut(tweet.text, RETWEET_CUT)
    if tweet.note:
        quote = _STATUS.search(tweet.text)
        if quote:  # the quote's link stays after the cut
            body = tweet.text[: quote.start()].rstrip()
            return _cut(body, NOTE_CUT) + " " + quote.group()
        return _cut(tweet.text, NOTE_CUT)
    return tweet.text


def tweet_object(tweet: XTweet, generation: str = "current", account: str = "alice") -> dict[str, Any]:
    """The tweet as X writes it in ``tweets.js`` (or Grailbird's month files)."""
    raw, urls = _shorten(_visible_text(tweet, generation), tweet.id)
    media_link = _tco(f"{tweet.id}/media")
    media = _media_entities(tweet, media_link)
    if media:
        raw = f"{raw} {media_link}"
    mentions = [
        {"name": name, "screen_name": name, "indices": ["0", str(len(name) + 1)], "id_str": "42", "id": "42"}
        for name in re.findall(r"@(\w+)", raw)
    ]
    created = dt.datetime.strptime(tweet.created, "%Y-%m-%d %H:%M:%S")
    obj: dict[str, Any] = {
        "retweeted": False,
        "source": '<a href="https://mobile.twitter.com" rel="nofollow">Twitter Web App</a>',
        "entities": {"hashtags": [], "symbols": [], "user_mentions": mentions, "urls": urls},
        "display_text_range": ["0", str(len(raw))],
        "favorite_count": "3",
        "id_str": tweet.id,
        "truncated": False,
        "retweet_count": "0",
        "id": tweet.id,
        "created_at": created.strftime("%a %b %d %H:%M:%S +0000 %Y"),
        "favorited": False,
        "full_text": escape(raw),
        "lang": tweet.lang,
    }
    if media:
        obj["entities"]["media"] = media[:1]
        obj["extended_entities"] = {"media": media}
    if tweet.reply_to:
        obj["in_reply_to_status_id_str"] = obj["in_reply_to_status_id"] = tweet.reply_to
    if tweet.reply_to or tweet.reply_to_user:
        obj["in_reply_to_user_id"] = obj["in_reply_to_user_id_str"] = "42"
        obj["in_reply_to_screen_name"] = tweet.reply_to_user or account
    if tweet.quoted_id:
        obj["quoted_status_id_str"] = tweet.quoted_id
    if generation == "current":
        ids = list(tweet.edit_ids) or [tweet.id]
        obj = {
            "edit_info": {
                "initial": {
                    "editTweetIds": ids,
                    "editableUntil": "2023-02-09T04:14:16.000Z",
                    "editsRemaining": "5",
                    "isEditEligible": True,
                }
            },
            **obj,
        }
    if generation == "grailbird":
        return _grailbird(tweet, obj, created, account)
    return obj


def _grailbird(tweet: XTweet, obj: dict[str, Any], created: dt.datetime, account: str) -> dict[str, Any]:
    """A pre-2019 tweet: ``text``, numeric ids, another date form, the user, the retweeted post."""
    user = {
        "name": account.title(),
        "screen_name": account,
        "protected": False,
        "id_str": "12345",
        "id": 12345,
    }
    item: dict[str, Any] = {
        "source": obj["source"],
        "entities": obj["entities"],
        "geo": {},
        "id_str": tweet.id,
        "text": obj["full_text"],
        "id": int(tweet.id),
        "created_at": created.strftime("%Y-%m-%d %H:%M:%S +0000"),
        "user": user,
    }
    for key in (
        "in_reply_to_status_id_str",
        "in_reply_to_user_id_str",
        "in_reply_to_screen_name",
        "quoted_status_id_str",
    ):
        if key in obj:
            item[key] = obj[key]
    if "in_reply_to_status_id_str" in obj:
        item["in_reply_to_status_id"] = int(obj["in_reply_to_status_id_str"])
    if tweet.retweet_of:
        match = re.match(r"RT @(\w+): ", tweet.text)
        assert match, "a retweet's text starts 'RT @user: '"
        whole, urls = _shorten(tweet.text[match.end() :], tweet.retweet_of)
        item["text"] = escape(_cut(_shorten(tweet.text, tweet.id)[0], RETWEET_CUT))
        item["retweeted_status"] = {
            "source": obj["source"],
            "entities": {"hashtags": [], "symbols": [], "user_mentions": [], "urls": urls},
            "geo": {},
            "id_str": tweet.retweet_of,
            "text": escape(whole),
            "id": int(tweet.retweet_of),
            "created_at": item["created_at"],
            "user": {"name": match.group(1), "screen_name": match.group(1), "id_str": "7", "id": 7},
        }
    return item


def note_object(tweet: XTweet, number: int) -> dict[str, Any]:
    """The ``note-tweet.js`` item of a long post: its whole text, not escaped, without the
    reply's leading @mentions or the quote's trailing link; its own id, not the tweet's."""
    text = tweet.text
    leading = _LEADING_MENTIONS.match(text)
    if leading and tweet.reply_to:
        text = text[leading.end() :]
    quote = _STATUS.search(text)
    if quote:
        text = text[: quote.start()].rstrip()
    short, urls = _shorten(text, f"note/{tweet.id}")
    created = dt.datetime.strptime(tweet.created, "%Y-%m-%d %H:%M:%S").strftime("%Y-%m-%dT%H:%M:%S.000Z")
    return {
        "noteTweet": {
            "noteTweetId": str(1700000000000000000 + number),
            "updatedAt": created,
            "lifecycle": {
                "value": "updated",
                "name": "Updated",
                "originalName": "updated",
                "annotations": {},
            },
            "createdAt": created,
            "core": {
                "styletags": [],
                "urls": [
                    {"shortUrl": u["url"], "displayUrl": u["display_url"], "expandedUrl": u["expanded_url"]}
                    for u in urls
                ],
                "text": short,
                "mentions": [],
                "cashtags": [],
                "hashtags": [],
            },
        }
    }


def like_object(like: XLike) -> dict[str, Any]:
    item: dict[str, Any] = {"tweetId": like.id}
    if like.text is not None:
        item["fullText"] = escape(like.text)
    item["expandedUrl"] = like.url or f"https://twitter.com/i/web/status/{like.id}"
    return {"like": item}


# -- files -------------------------------------------------------------------------------------------


def js_file(variable: str, items: Iterable[Any]) -> bytes:
    """``variable = [ ... ]`` with X's pretty-printing (``"key" : value``)."""
    body = ", ".join(
        json.dumps(item, indent=2, separators=(",", " : "), ensure_ascii=False) for item in items
    )
    return f"{variable} = [ {body} ]".encode()


def archive_files(
    tweets: Sequence[XTweet],
    likes: Sequence[XLike] = (),
    *,
    account: str = "alice",
    generation: str = "current",
    parts: int = 1,
    bare: bool = False,
) -> dict[str, bytes]:
    """Every file of the archive by its name inside it."""
    if generation not in GENERATIONS:
        raise ValueError(f"generation must be one of {GENERATIONS}")
    files: dict[str, bytes] = {}
    if generation == "grailbird":
        by_month: dict[str, list[dict[str, Any]]] = {}
        for tweet in tweets:
            by_month.setdefault(tweet.created[:7].replace("-", "_"), []).append(
                tweet_object(tweet, generation, account)
            )
        for month, items in sorted(by_month.items()):
            files[f"data/js/tweets/{month}.js"] = js_file(f"Grailbird.data.tweets_{month}", items)
        details = {"screen_name": account, "id": "12345", "full_name": account.title(), "bio": ""}
        files["data/js/user_details.js"] = b"var user_details =  " + json.dumps(details, indent=2).encode()
        files["data/js/payload_details.js"] = b'var payload_details =  {"tweets" : %d}' % len(tweets)
        files["tweets.csv"] = b'"tweet_id","text"\n'
        return files
    name = "tweets" if generation == "current" else "tweet"
    items = [tweet_object(t, generation, account) for t in tweets]
    wrapped = items if bare else [{"tweet": item} for item in items]
    chunks = [wrapped[i::parts] for i in range(parts)]
    for part, chunk in enumerate(chunks):
        file = f"data/{name}.js" if part == 0 else f"data/{name}-part{part}.js"
        files[file] = js_file(f"window.YTD.{name}.part{part}", chunk)
    account_item = {
        "account": {
            "email": f"{account}@example.com",
            "createdVia": "web",
            "username": account,
            "accountId": "12345",
            "createdAt": "2010-01-01T00:00:00.000Z",
            "accountDisplayName": account.title(),
        }
    }
    files["data/account.js"] = js_file("window.YTD.account.part0", [account_item])
    # notes in another order than their tweets: matching them by position would go wrong
    notes = [note_object(t, n) for n, t in enumerate(tweets) if t.note][::-1]
    if notes:
        files["data/note-tweet.js"] = js_file("window.YTD.note_tweet.part0", notes)
    if likes:
        files["data/like.js"] = js_file("window.YTD.like.part0", [like_object(like) for like in likes])
    files["data/manifest.js"] = (
        b'window.__THAR_CONFIG = {"userInfo" : {"userName" : "%s"}}' % account.encode()
    )
    files["data/follower.js"] = js_file("window.YTD.follower.part0", [{"follower": {"accountId": "9"}}])
    files["Your archive.html"] = b"<html></html>"
    for tweet in tweets:
        for media_name in media_file_names(tweet, generation):
            files[media_name] = b"\xff\xd8\xff media bytes of " + media_name.encode()
    return files


def write_x_archive(
    dest: Path,
    tweets: Sequence[XTweet],
    likes: Sequence[XLike] = (),
    *,
    account: str = "alice",
    generation: str = "current",
    zipped: bool = True,
    parts: int = 1,
    bare: bool = False,
    root: str = "",
) -> Path:
    """Write the archive as a zip at ``dest`` (or unpacked into the folder ``dest``).

    ``parts`` splits the tweets over ``tweets.js`` and ``tweets-partN.js``; ``root`` puts
    everything below a folder (an archive unpacked and zipped again).
    """
    files = archive_files(tweets, likes, account=account, generation=generation, parts=parts, bare=bare)
    if zipped:
        dest.parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as archive:
            for name, data in files.items():
                archive.writestr(root + name, data)
    else:
        for name, data in files.items():
            path = dest / root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
    return dest


# -- the traps -----------------------------------------------------------------------------------

_LONG = (
    "Long posts on X are cut in tweets.js & whole in note-tweet.js; this one says so at length, "
    "with <angle brackets> and an ampersand & more, so the escaped cut and the unescaped note "
)


def _long(start: str, words: int = 30) -> str:
    return start + _LONG + " ".join(f"word{n}" for n in range(words)) + " and that is the end."


def trap_records(generation: str = "current") -> tuple[list[XTweet], list[XLike]]:
    """Records with every trap of the real exports that ``generation`` can hold.

    Ids are above 2^53 (Grailbird's numeric ids would lose digits through a float); texts
    hold ``&``, ``<`` and ``>``; a retweet is cut; a thread of three long posts shares one
    second with their notes; media come with and without alt text and file; a like lacks its
    text. Returned in X's order: newest first.
    """
    second = "2023-02-09 03:14:16"
    tweets = [
        XTweet("1623552437155561474", "A plain post: fish & chips <3 > 2", "2023-02-09 03:20:00"),
        XTweet(
            "1623552437155561475",
            "RT @bob: " + "Reposted words that go on and on so that X cuts them in the archive " * 3,
            "2023-02-09 03:21:00",
            retweet_of="1623000000000000001",
        ),
        XTweet(  # X names the reposted post only through the media it carries
            "1623552437155561486",
            "RT @frank: a picture worth reposting",
            "2023-02-09 03:32:00",
            retweet_of="1623000000000000002",
            media=(XMedia("photo", "RtPic1", file=False),),
        ),
        XTweet(
            "1623552437155561476",
            "Read this https://example.com/a?b=1&c=2 and that https://example.org/x",
            "2023-02-09 03:22:00",
            lang="und",
        ),
        XTweet(
            "1623552437155561477",
            "Two pictures",
            "2023-02-09 03:23:00",
            media=(XMedia("photo", "FoAbC1", "a cat on a mat"), XMedia("photo", "FoAbC2", None, file=False)),
            lang="in",
        ),
        XTweet("1623552437155561478", "A video", "2023-02-09 03:24:00", media=(XMedia("video", "VidKey9"),)),
        XTweet(
            "1623552437155561479",
            "So true https://twitter.com/carol/status/1622000000000000009",
            "2023-02-09 03:25:00",
        ),
        XTweet("1623552437155561480", "@dave hello there", "2023-02-09 03:26:00", reply_to_user="dave"),
        XTweet(
            "1623552437155561481",
            "@dave a reply to dave",
            "2023-02-09 03:27:00",
            reply_to="1622000000000000100",
        ),
        # a thread posted at once: three long posts in one second, newest first, and a short
        # post of the same second whose text begins the first one's note
        XTweet("1623552437155561487", "First of the thread.", second),
        XTweet(
            "1623552437155561473",
            "@alice " + _long("Third of the thread. "),
            second,
            reply_to="1623552437155561472",
            note=True,
        ),
        XTweet(
            "1623552437155561472",
            "@alice " + _long("Second of the thread. "),
            second,
            reply_to="1623552437155561471",
            note=True,
        ),
        XTweet("1623552437155561471", _long("First of the thread. "), second, note=True),
        XTweet(
            "1623552437155561482",
            _long("A long quote. ") + " https://twitter.com/erin/status/1622000000000000042",
            "2023-02-09 03:28:00",
            note=True,
        ),
        XTweet("1623552437155561483", "Quoted by id", "2023-02-09 03:29:00", quoted_id="1622000000000000043"),
        XTweet(
            "1623552437155561485",
            "Edited, second version",
            "2023-02-09 03:31:00",
            edit_ids=("1623552437155561484", "1623552437155561485"),
        ),
        XTweet(
            "1623552437155561484",
            "Edited, first version",
            "2023-02-09 03:30:00",
            edit_ids=("1623552437155561484", "1623552437155561485"),
        ),
    ]
    likes = [
        XLike(
            "1600000000000000001",
            "Liked: Q&A <b>bold</b>",
            "https://twitter.com/i/web/status/1600000000000000001",
        ),
        XLike("1600000000000000002", None),
        XLike("1600000000000000003", "Liked with a link https://t.co/abcdefghij"),
    ]
    if generation == "grailbird":
        tweets = [
            replace(t, note=False, media=tuple(replace(m, file=False) for m in t.media))
            for t in tweets
            if not t.note and not t.edit_ids
        ]
        tweets.append(XTweet("1623552437155561490", "An older post", "2017-09-30 14:06:46"))
        likes = []
    if generation == "2019":
        tweets = [replace(t, edit_ids=()) for t in tweets if t.id != "1623552437155561484"]
    return tweets, likes


# -- a large archive, streamed -------------------------------------------------------------------

_WORDS = [
    "archive",
    "search",
    "thread",
    "reply",
    "quote",
    "repost",
    "media",
    "note",
    "the",
    "a",
    "of",
    "and",
    "to",
    "in",
    "is",
    "it",
    "that",
    "for",
    "on",
    "with",
    "猫",
    "日向",
    "コーヒー",
    "検索",
    "東京",
    "雨",
    "桜",
    "散歩",
    "本",
    "音楽",
    "映画",
    "dinner",
    "coffee",
    "rain",
    "tokyo",
    "music",
    "film",
    "book",
    "walk",
]


@dataclass
class _Big:
    rng: random.Random
    next_id: int = 1623552437155561471
    previous: list[str] = field(default_factory=list)

    def tweets(self, count: int) -> Iterator[XTweet]:
        start = dt.datetime(2023, 2, 9, 3, 14, 16)
        for number in range(count):
            self.next_id += self.rng.randrange(1, 1 << 20)
            tweet_id = str(self.next_id)
            words = " ".join(self.rng.choice(_WORDS) for _ in range(self.rng.randrange(5, 40)))
            created = (start + dt.timedelta(seconds=number * 37)).strftime("%Y-%m-%d %H:%M:%S")
            roll = self.rng.random()
            if roll < 0.25 and self.previous:
                tweet = XTweet(
                    tweet_id, "@alice " + words, created, reply_to=self.rng.choice(self.previous[-5:])
                )
            elif roll < 0.35:
                tweet = XTweet(
                    tweet_id, "RT @bob: " + words + " & more", created, retweet_of=str(self.next_id - 7)
                )
            elif roll < 0.40:
                tweet = XTweet(
                    tweet_id, f"{words} https://twitter.com/carol/status/{self.next_id - 9}", created
                )
            elif roll < 0.60:
                tweet = XTweet(
                    tweet_id, words, created, media=(XMedia("photo", f"K{number}", "alt " + words[:20]),)
                )
            else:
                tweet = XTweet(tweet_id, f"{words} https://example.com/{number}?a=1&b=2", created)
            self.previous.append(tweet_id)
            del self.previous[:-10]
            yield tweet


def write_big_archive(dest: Path, tweets: int, *, likes: int = 0, seed: int = 0) -> Path:
    """A zip with ``tweets`` generated tweets (about 2 KB each in ``tweets.js``) and ``likes``
    likes, written as a stream (the generator holds one tweet at a time)."""
    big = _Big(random.Random(seed))
    with zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("data/account.js", archive_files([], account="alice")["data/account.js"])
        with archive.open("data/tweets.js", "w", force_zip64=True) as out:
            out.write(b"window.YTD.tweets.part0 = [ ")
            for number, tweet in enumerate(big.tweets(tweets)):
                item = json.dumps(
                    {"tweet": tweet_object(tweet)}, indent=2, separators=(",", " : "), ensure_ascii=False
                )
                out.write((", " if number else "").encode() + item.encode())
            out.write(b" ]")
        if likes:
            with archive.open("data/like.js", "w", force_zip64=True) as out:
                out.write(b"window.YTD.like.part0 = [ ")
                for number in range(likes):
                    like = XLike(str(1500000000000000000 + number), f"liked text {number} &amp; more")
                    out.write(
                        (", " if number else "").encode() + json.dumps(like_object(like), indent=2).encode()
                    )
                out.write(b" ]")
    return dest


def measure_read(path: Path) -> str:
    """Read the archive with the reader alone: records, rows/s (wall and CPU), peak RSS."""
    import resource
    import time

    from mcpkit.archive.importers.base import ReadLimits
    from mcpkit.archive.importers.x_archive import open_reader

    wall, cpu = time.perf_counter(), time.process_time()
    reader = open_reader(path, ReadLimits())
    count = sum(1 for _ in reader.records())
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return (
        f"{count:,} records in {wall:.1f} s ({count / wall:,.0f} rows/s; CPU {cpu:.1f} s, "
        f"{count / cpu:,.0f} rows/s); peak RSS {peak:,.0f} MiB"
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Write a generated X archive zip (for measurements).")
    parser.add_argument("dest", type=Path)
    parser.add_argument("--tweets", type=int, default=100_000)
    parser.add_argument("--likes", type=int, default=0)
    parser.add_argument("--read", action="store_true", help="then read it with the reader and measure")
    args = parser.parse_args(argv)
    write_big_archive(args.dest, args.tweets, likes=args.likes)
    sizes = {info.filename: info.file_size for info in zipfile.ZipFile(args.dest).infolist()}
    print(f"{args.dest}: {args.dest.stat().st_size:,} bytes; tweets.js {sizes['data/tweets.js']:,} bytes")
    if args.read:
        print(measure_read(args.dest))


if __name__ == "__main__":
    main()
