"""X (Twitter) archive -> posts: the zip people download from X, or the folder it unpacks to.

Three generations of the archive are read (see the project's facts on social exports):

* current: ``data/tweets.js`` (``window.YTD.tweets.part0 = [...]``) and, above about 100 MB,
  ``data/tweets-part1.js``, ``tweets-part2.js``...; long posts' whole texts in
  ``data/note-tweet.js``; likes in ``data/like.js``; the account in ``data/account.js``;
  media files in ``data/tweets_media/TWEETID-MEDIAKEY.ext``;
* 2019-2022: the same with ``data/tweet.js`` (``window.YTD.tweet.part0``; the earliest files
  hold bare tweet objects instead of ``{"tweet": {...}}``) and ``data/tweet_media/``;
* before 2019 (Grailbird): ``data/js/tweets/YYYY_MM.js`` (``Grailbird.data.tweets_YYYY_MM =``)
  and ``data/js/user_details.js``; ids are JSON numbers above 2^53, so ``id_str`` is read.

Why a streaming parser: the files are JavaScript assignments of one JSON array, up to about
100 MB each inside a zip of up to 16 GB. Each member is decompressed as a stream, decoded
incrementally and its array read item by item with :meth:`json.JSONDecoder.raw_decode` over a
buffer of about a megabyte, so neither the zip nor a whole ``tweets.js`` is ever in memory.

What is held in memory, and why: the long-note texts (joined to their tweets, which may come
in any order), the names of the media files (to find each tweet's), and for every reply its
id and parent as two 8-byte integers (a first pass over the tweets, so a reply's
``thread_root`` is the farthest ancestor the archive knows, whatever order the files are in).

Text is what a person reads on X: HTML entities unescaped once (tweets and likes are escaped,
notes are not), t.co links replaced by the URLs they stand for, media links dropped (they
become :class:`~mcpkit.archive.posts.Media`), a long post's whole note text with the reply's
leading @mentions and the quote's trailing link the note leaves out put back.
"""

from __future__ import annotations

import abc
import codecs
import contextlib
import datetime as dt
import html
import os
import re
import zipfile
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO, Any

import numpy as np
import numpy.typing as npt

from mcpkit.archive.errors import ImportFormatError
from mcpkit.archive.importers.base import (
    EARLIER_VERSION,
    ExportFormat,
    ReadLimits,
    ReadSummary,
    export_post,
    utc_timestamp,
)
from mcpkit.archive.importers.export_file import open_zip_member
from mcpkit.archive.importers.json_stream import (
    JsonCursor,
    JsonStreamError,
    JsonTooLongError,
    JsonTruncatedError,
)
from mcpkit.archive.posts import Media, Post, user_from_url

__all__ = ["DECLARED", "FORMAT", "XArchiveReader", "open_reader", "sniff"]

FORMAT = "x-archive"
DECLARED = ExportFormat(FORMAT, "X archive", "x", "an X archive (zip or folder)", 20)

_CHUNK = 1 << 20
"""Bytes read from a member at a time: the parse buffer holds about this much text."""
_MAX_ID = 2**63 - 1

_TWEET_FILES = re.compile(r"data/(tweets?)(?:-part(\d+))?\.js")
_GRAILBIRD_FILES = re.compile(r"data/js/tweets/(\d{4})_(\d{2})\.js")
_NOTE_FILES = re.compile(r"data/note-tweet(?:-part(\d+))?\.js")
_LIKE_FILES = re.compile(r"data/like(?:-part(\d+))?\.js")
_ACCOUNT_FILES = ("data/account.js", "data/js/user_details.js")
_PART = re.compile(r"-part(\d+)\.js$")
_MEDIA_FILE = re.compile(r"data/tweets?_media/(\d+)-([^/]+)")
_MARKERS = re.compile(
    r"(?:.*/)?(data/(?:tweets?(?:-part\d+)?\.js|like\.js|account\.js|note-tweet\.js|manifest\.js"
    r"|js/tweets/\d{4}_\d{2}\.js|js/user_details\.js))"
)
"""Members whose presence (at ``data/`` below some folder) makes a zip or folder an X archive."""

_PREFIX = re.compile(r"\ufeff?\s*(window\.YTD\.\w+\.part\d+|Grailbird\.data\.\w+|var\s+\w+)\s*=\s*")
_TCO = re.compile(r"(\s*)(https?://t\.co/[A-Za-z0-9]+)")
_RETWEET = re.compile(r"RT @(\w+): ")
_LEADING_MENTIONS = re.compile(r"(?:@\w+\s+)+")
_STATUS_URL = re.compile(r"https?://(?:www\.|mobile\.)?(?:twitter\.com|x\.com)/(\w+)/status(?:es)?/(\d+)")
_URL = re.compile(r"https?://\S+")
_MENTION = re.compile(r"@\w+")
_SPACE = re.compile(r"\s+")

_MONTHS = {
    m: i
    for i, m in enumerate(
        ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"], 1
    )
}
_CLOCK = re.compile(r"\d\d:\d\d:\d\d")
_OFFSET = re.compile(r"[+-]\d{4}")

_MEDIA_TYPES = {"photo": "image", "video": "video", "animated_gif": "gif"}
_NO_LANGUAGE = frozenset({"und", "zxx", "qme", "qht", "qam", "qct", "qst", "qtd"})
"""X's codes for "no language": undetermined, no linguistic content, media, hashtags, mentions,
cashtags, very short text only. Stored as ``""`` so a language filter never groups them as one."""
_LANGUAGE_ALIASES = {"in": "id", "iw": "he"}
"""X still writes Indonesian and Hebrew with their withdrawn ISO codes; Mastodon and Bluesky
write the current ones, so the merged archive uses those."""
_SURELY_CUT = 100
"""Characters of a post's text (links and @mentions aside) above which it may be a long
post's cut text even without a final ``…``."""
_SNOWFLAKE_EPOCH_MS = 1288834974657
_FIRST_SNOWFLAKE = 10**15
"""Ids below this are sequential (before November 2010) and carry no time."""


# -- the files of an export, zipped or not ------------------------------------------------------


class _Source(abc.ABC):
    """An export's files by their name below the archive root (``data/tweets.js``), whether
    the export is a zip (:class:`_ZipSource`) or an unpacked folder (:class:`_DirSource`)."""

    label: str

    @abc.abstractmethod
    def names(self) -> Iterable[str]:
        """Every file's name below the root."""

    @abc.abstractmethod
    def size(self, name: str) -> int:
        """The file's size in bytes (uncompressed)."""

    @abc.abstractmethod
    def open(self, name: str) -> IO[bytes]:
        """The file's bytes, as a stream."""

    def inside(self, name: str) -> str:
        """Where the file is inside the path given (a zip's member name, a folder's relative
        path): what a media path must say for the web app to find the file."""
        return name

    def close(self) -> None:  # noqa: B027 - a folder holds nothing open; a zip overrides it
        """Release what the source holds open."""


class _ZipSource(_Source):
    """A zip read through its central directory; members are opened as decompressing streams."""

    def __init__(self, path: Path, limits: ReadLimits) -> None:
        self.label = str(path)
        self._path = path
        self._limits = limits
        try:
            self._zip = zipfile.ZipFile(path)
        except (zipfile.BadZipFile, NotImplementedError, OSError, ValueError) as exc:
            raise ImportFormatError(
                f"{path}: expected an X archive zip, found a truncated or damaged zip ({exc})"
            ) from None
        root = self._root = _root([info.filename for info in self._zip.infolist()])
        self._infos = {
            info.filename[len(root) :]: info
            for info in self._zip.infolist()
            if info.filename.startswith(root) and not info.is_dir()
        }

    def names(self) -> Iterable[str]:
        return self._infos.keys()

    def size(self, name: str) -> int:
        return self._infos[name].file_size

    def open(self, name: str) -> IO[bytes]:
        return open_zip_member(self._path, self._infos[name], self._limits)

    def inside(self, name: str) -> str:
        return self._root + name

    def close(self) -> None:
        self._zip.close()


class _DirSource(_Source):
    """An unpacked archive: the folder holding ``data/``, or ``data/`` itself."""

    def __init__(self, path: Path) -> None:
        self.label = str(path)
        self._given_data = path.name == "data" and not (path / "data").is_dir()
        self._root = path.parent if self._given_data else path
        self._names: dict[str, Path] = {}
        data = self._root / "data"
        for folder in (
            data,
            data / "js",
            data / "js" / "tweets",
            data / "tweets_media",
            data / "tweet_media",
        ):
            with contextlib.suppress(OSError), os.scandir(folder) as entries:
                for entry in entries:
                    if entry.is_file():
                        self._names[PurePosixPath(Path(entry.path).relative_to(self._root)).as_posix()] = (
                            Path(entry.path)
                        )

    def names(self) -> Iterable[str]:
        return self._names.keys()

    def size(self, name: str) -> int:
        return self._names[name].stat().st_size

    def open(self, name: str) -> IO[bytes]:
        return open(self._names[name], "rb")

    def inside(self, name: str) -> str:
        return name.removeprefix("data/") if self._given_data else name


def _root(names: Iterable[str]) -> str:
    """The folder of the archive inside a zip: ``""``, or ``"twitter-2024-01-01/"`` when re-zipped."""
    roots = {m.group(0)[: -len(m.group(1))] for name in names if (m := _MARKERS.fullmatch(name))}
    return min(roots, key=len) if roots else ""


def _open_source(path: Path, limits: ReadLimits) -> _Source:
    if path.is_dir():
        return _DirSource(path)
    if not path.is_file():
        raise ImportFormatError(f"{path}: no such file or folder")
    return _ZipSource(path, limits)


def sniff(path: Path) -> bool:
    """Whether ``path`` is an X archive: a zip or folder with X's ``data/*.js`` files.

    Only names are looked at (a zip's central directory). A zip whose central directory is
    gone (a truncated download) is recognised by the names of its first members, so that
    opening it says "truncated" rather than "not an export".
    """
    path = Path(path)
    try:
        if path.is_dir():
            return any(_MARKERS.fullmatch(name) for name in _DirSource(path).names())
        with open(path, "rb") as raw:
            if raw.read(4) != b"PK\x03\x04":
                return False
            try:
                with zipfile.ZipFile(raw) as archive:
                    return any(_MARKERS.fullmatch(name) for name in archive.namelist())
            except (zipfile.BadZipFile, NotImplementedError, ValueError):
                raw.seek(0)
                return any(_MARKERS.fullmatch(name) for name in _local_names(raw.read(1 << 20)))
    except OSError:
        return False


def _local_names(head: bytes) -> Iterator[str]:
    """Member names from the local headers in the first bytes of a zip (its directory lost)."""
    at = 0
    while (at := head.find(b"PK\x03\x04", at)) >= 0 and at + 30 <= len(head):
        length = int.from_bytes(head[at + 26 : at + 28], "little")
        yield head[at + 30 : at + 30 + length].decode("utf-8", "replace")
        at += 30 + length


# -- one member: a JavaScript assignment of a JSON array, read item by item ---------------------


class _Member:
    """Decoded items of one ``NAME = [item, item, ...]`` file, streamed
    (:class:`~mcpkit.archive.importers.json_stream.JsonCursor`). An item larger than
    ``max_item`` characters, or a file that ends before its closing ``]``, is a malformed file.
    """

    def __init__(self, source: _Source, name: str, limits: ReadLimits, count: Callable[[int], None]) -> None:
        self.where = f"{source.label}: {name}"
        self._source = source
        self._name = name
        self._max_item = limits.max_line_bytes
        self._count = count

    def _reader(self, stream: IO[bytes]) -> Callable[[int], str]:
        """``read(n)`` of the member's text: its bytes decoded as they come, counted."""
        decoder = codecs.getincrementaldecoder("utf-8-sig")(errors="replace")

        def read(size: int) -> str:
            while True:
                try:
                    data = stream.read(size)
                except (zipfile.BadZipFile, EOFError, zlib.error, OSError) as exc:
                    raise ImportFormatError(
                        f"{self.where}: expected a complete file, found a truncated or damaged one ({exc})"
                    ) from None
                self._count(len(data))
                text = decoder.decode(data, final=not data)
                if text or not data:  # a read that ends inside a character gives no text yet
                    return text

        return read

    def items(self) -> Iterator[Any]:
        """Each item of the array (or the single value of a ``var x = {...}`` file)."""
        with self._source.open(self._name) as stream:
            cursor = JsonCursor(self._reader(stream), max_value=self._max_item, chunk=_CHUNK)
            try:
                yield from self._items(cursor)
            except JsonTooLongError as exc:  # whitespace between the items (theirs is _decode's)
                raise ImportFormatError(
                    f"{self.where}: {exc.reason} at line {cursor.line()}; expected items of at most "
                    f"{self._max_item:,} characters (raise --max-line-bytes if this is a real export)"
                ) from None

    def _items(self, cursor: JsonCursor) -> Iterator[Any]:
        head = cursor.match(_PREFIX)
        if head is None:
            raise ImportFormatError(
                f"{self.where}: expected JavaScript starting 'window.YTD.<name>.part0 = [', "
                f"found {self._found(cursor)}"
            )
        first = cursor.peek()
        if first == "{":
            yield self._decode(cursor)
            return
        if first != "[":
            raise ImportFormatError(
                f"{self.where}: expected a JSON array after '{head.group(1)} =', found {self._found(cursor)}"
            )
        cursor.next()
        while True:
            char = cursor.peek()
            if char == "]":
                break
            if not char:
                raise ImportFormatError(
                    f"{self.where}: expected more items or the closing ']', found the end of the file "
                    "(truncated?)"
                )
            yield self._decode(cursor)
            char = cursor.peek()
            if char == ",":
                cursor.next()
            elif char != "]":
                raise ImportFormatError(
                    f"{self.where}: expected ',' or ']' after an item at line {cursor.line()}, "
                    f"found {self._found(cursor)}"
                )
        cursor.next()
        if cursor.peek() == ";":
            cursor.next()
        if cursor.peek():
            raise ImportFormatError(
                f"{self.where}: expected the end of the file after ']', found {self._found(cursor)}"
            )

    def _decode(self, cursor: JsonCursor) -> Any:
        try:
            return cursor.value()
        except JsonTooLongError:
            raise ImportFormatError(
                f"{self.where}: expected items of at most {self._max_item:,} characters, found a longer one "
                f"at line {cursor.line()} (raise --max-line-bytes if this is a real export)"
            ) from None
        except JsonStreamError as exc:
            raise ImportFormatError(
                f"{self.where}: expected a JSON item at line {cursor.line()}, found {exc.reason}"
                + (" (truncated?)" if isinstance(exc, JsonTruncatedError) else "")
            ) from None

    @staticmethod
    def _found(cursor: JsonCursor) -> str:
        snippet = cursor.snippet(40)
        return repr(snippet) if snippet else "the end of the file"


# -- values ---------------------------------------------------------------------------------------


def _id(value: Any) -> str | None:
    """An X id as its canonical decimal string, or ``None``; never through a float."""
    if value.__class__ is str:
        text: str = value
        if 0 < len(text) < 19 and text.isdigit() and text.isascii() and text[0] != "0":
            return text  # every id of today: below 10^18 < 2^63
    elif isinstance(value, int) and not isinstance(value, bool):
        text = str(value)
    else:
        return None
    if not (text.isascii() and text.isdigit()) or text[0] == "0" or len(text) > 19 or int(text) > _MAX_ID:
        return None
    return text


def _tweet_id(tweet: dict[str, Any]) -> str | None:
    found = _id(tweet.get("id_str"))
    return found if found is not None else _id(tweet.get("id"))


def _utc(text: Any) -> str | None:
    """``YYYY-MM-DD HH:MM:SS`` in UTC from X's ``Wed Oct 10 20:19:24 +0000 2018``, Grailbird's
    ``2017-09-30 14:06:46 +0000`` or a note's ``2023-02-09T03:14:16.000Z``; ``None`` otherwise."""
    if not isinstance(text, str):
        return None
    parts = text.split()
    try:
        if len(parts) == 6:
            _, month_name, day, clock, offset, year = parts
            date = (int(year), _MONTHS[month_name], int(day))
        elif len(parts) == 3:
            day_text, clock, offset = parts
            date = (int(day_text[0:4]), int(day_text[5:7]), int(day_text[8:10]))
            if len(day_text) != 10 or day_text[4] != "-" or day_text[7] != "-":
                return None
        elif len(parts) == 1 and "T" in text:
            return utc_timestamp(text) or None
        else:
            return None
        if _CLOCK.fullmatch(clock) is None or _OFFSET.fullmatch(offset) is None:
            return None
        moment = dt.datetime(*date, int(clock[:2]), int(clock[3:5]), int(clock[6:8]))
    except (KeyError, ValueError):
        return None
    if offset == "+0000":
        return f"{date[0]:04d}-{date[1]:02d}-{date[2]:02d} {clock}"
    sign = -1 if offset[0] == "-" else 1
    try:
        moment -= sign * dt.timedelta(hours=int(offset[1:3]), minutes=int(offset[3:5]))
    except OverflowError:
        return None
    return f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d} {moment.strftime('%H:%M:%S')}"


def _snowflake_time(tweet_id: str) -> str:
    """When the post with this id was written (X ids since late 2010 carry it), or ``""``."""
    value = int(tweet_id)
    if value < _FIRST_SNOWFLAKE:
        return ""
    seconds = ((value >> 22) + _SNOWFLAKE_EPOCH_MS) // 1000
    return dt.datetime.fromtimestamp(seconds, dt.UTC).strftime("%Y-%m-%d %H:%M:%S")


def _lang(value: Any) -> str:
    if not isinstance(value, str) or value in _NO_LANGUAGE:
        return ""
    return _LANGUAGE_ALIASES.get(value, value)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


@dataclass(slots=True)
class _Links:
    """What each t.co link of a tweet stands for; media links are dropped from the text."""

    urls: dict[str, str]
    media: set[str]

    def expand(self, text: str) -> str:
        if "t.co/" not in text:
            return text
        return _TCO.sub(self._replace, text)

    def _replace(self, match: re.Match[str]) -> str:
        space, link = match.groups()
        if link in self.media:
            return ""
        return space + self.urls.get(link, link)


def _links(entities: dict[str, Any], extended: dict[str, Any]) -> _Links:
    urls: dict[str, str] = {}
    media: set[str] = set()
    for entity in _list(entities.get("urls")):
        if isinstance(entity, dict):
            short, long = entity.get("url"), entity.get("expanded_url")
            if isinstance(short, str) and isinstance(long, str) and long:
                urls[short] = long
    for entity in _list(entities.get("media")) + _list(extended.get("media")):
        if isinstance(entity, dict) and isinstance(entity.get("url"), str):
            media.add(entity["url"])
    return _Links(urls, media)


def _signature(text: str) -> str:
    """What a tweet's cut text and its note's text share at their start (links and @mentions
    differ between them, and the cut may fall inside a word or a link)."""
    text = _MENTION.sub(" ", _URL.sub(" ", text))
    return _SPACE.sub(" ", text).strip().rstrip("…").rstrip()


@dataclass(slots=True)
class _Note:
    text: str
    signature: str
    used: bool = False


# -- the reader ----------------------------------------------------------------------------------


class XArchiveReader:
    """One X archive as an :class:`~mcpkit.archive.importers.base.ExportReader`."""

    format = FORMAT

    def __init__(self, path: Path, limits: ReadLimits | None = None) -> None:
        self.path = Path(path)
        self.limits = limits or ReadLimits()
        self._summary = ReadSummary()
        self._read = 0
        self._source = _open_source(self.path, self.limits)
        try:
            names = set(self._source.names())
            self._tweet_files = _ordered(names, _TWEET_FILES) or _ordered(names, _GRAILBIRD_FILES)
            self._note_files = _ordered(names, _NOTE_FILES)
            self._like_files = _ordered(names, _LIKE_FILES)
            if not self._tweet_files and not self._like_files:
                raise ImportFormatError(
                    f"{self.path}: expected an X archive (data/tweets.js, data/tweet.js, "
                    f"data/js/tweets/*.js or data/like.js), found {_describe(names)}"
                )
            read = self._tweet_files + self._note_files + self._like_files
            expanded = sum(self._source.size(name) for name in read)
            if expanded > self.limits.max_bytes:
                raise ImportFormatError(
                    f"{self.path}: its posts expand to {expanded:,} bytes, more than the "
                    f"{self.limits.max_bytes:,}-byte limit; raise --max-bytes if it is really that large"
                )
            # the tweets are read twice (see _first_pass)
            self._total = expanded + sum(self._source.size(name) for name in self._tweet_files)
            self._name = self._account_name(names)
            self.account = f"@{self._name}" if self._name else ""
            self._media_files = _media_files(names)
        except BaseException:
            self._source.close()
            raise
        self._notes: dict[str, list[_Note]] = {}
        self._reply_ids: npt.NDArray[np.int64] = np.zeros(0, np.int64)
        self._reply_roots: npt.NDArray[np.int64] = np.zeros(0, np.int64)
        self._superseded: set[str] = set()

    # the protocol

    def summary(self) -> ReadSummary:
        return self._summary

    def position(self) -> tuple[int, int]:
        return self._read, self._total

    def records(self) -> Iterator[Post]:
        try:
            self._read_notes()
            self._first_pass()
            for files, read in ((self._tweet_files, self._tweet_item), (self._like_files, self._like_item)):
                for name in files:
                    for number, item in enumerate(self._items(name), 1):
                        post = read(item, name, number)
                        if post is not None:
                            self._summary.kinds[post.kind] += 1
                            yield post
            self._read = self._total
        finally:
            self._source.close()

    # reading

    def _counted(self, size: int) -> None:
        self._read += size

    def _items(self, name: str) -> Iterator[Any]:
        return _Member(self._source, name, self.limits, self._counted).items()

    def _account_name(self, names: set[str]) -> str:
        """The archive owner's @name from ``account.js`` (or Grailbird's ``user_details.js``)."""
        for name in _ACCOUNT_FILES:
            if name not in names:
                continue
            for item in _Member(self._source, name, self.limits, lambda size: None).items():
                account = _dict(item).get("account", item)
                username = _dict(account).get("username", _dict(account).get("screen_name"))
                if isinstance(username, str) and re.fullmatch(r"\w{1,50}", username):
                    return username
        return ""

    def _read_notes(self) -> None:
        """Long posts' whole texts by the second they were written (see :meth:`_note_for`)."""
        for name in self._note_files:
            for number, item in enumerate(self._items(name), 1):
                note = _dict(_dict(item).get("noteTweet"))
                core = _dict(note.get("core"))
                text, second = core.get("text"), _utc(note.get("createdAt"))
                if not isinstance(text, str) or second is None:
                    self._summary.add_malformed(
                        f"{name} item {number}: a note without core.text or createdAt"
                    )
                    continue
                for entity in _list(core.get("urls")):
                    entity = _dict(entity)
                    short, long = entity.get("shortUrl"), entity.get("expandedUrl")
                    if isinstance(short, str) and short and isinstance(long, str) and long:
                        text = text.replace(short, long)
                self._notes.setdefault(second, []).append(_Note(text, _signature(text)))

    def _first_pass(self) -> None:
        """Every reply's thread root, and which earlier versions of edited posts to leave out.

        Replies' parents may come before or after them (files are mostly newest first, and
        split by month or size), so the ids are gathered first: two 8-byte integers per reply,
        eight bytes per tweet.
        """
        ids: list[npt.NDArray[np.int64]] = []
        parents: list[npt.NDArray[np.int64]] = []
        every: list[npt.NDArray[np.int64]] = []
        pending_ids: list[int] = []
        pending_parents: list[int] = []
        pending_every: list[int] = []
        latest_of: dict[str, str] = {}

        def flush() -> None:
            ids.append(np.array(pending_ids, np.int64))
            parents.append(np.array(pending_parents, np.int64))
            every.append(np.array(pending_every, np.int64))
            pending_ids.clear()
            pending_parents.clear()
            pending_every.clear()

        for name in self._tweet_files:
            for item in self._items(name):
                tweet = _tweet_of(item)
                if tweet is None or (tweet_id := _tweet_id(tweet)) is None:
                    continue
                pending_every.append(int(tweet_id))
                parent = _id(tweet.get("in_reply_to_status_id_str")) or _id(
                    tweet.get("in_reply_to_status_id")
                )
                if parent is not None and parent != tweet_id:
                    pending_ids.append(int(tweet_id))
                    pending_parents.append(int(parent))
                latest = _latest_version(tweet)
                if latest is not None and latest != tweet_id:
                    latest_of[tweet_id] = latest
                if len(pending_every) >= 65536:
                    flush()
        flush()
        reply_ids, reply_parents = np.concatenate(ids), np.concatenate(parents)
        order = np.argsort(reply_ids, kind="stable")
        self._reply_ids, self._reply_roots = reply_ids[order], _roots(reply_ids[order], reply_parents[order])
        known = np.unique(np.concatenate(every))
        self._superseded = {
            old for old, new in latest_of.items() if _contains(known, int(new)) and int(new) != int(old)
        }

    def _thread_root(self, tweet_id: str) -> str:
        index = int(np.searchsorted(self._reply_ids, int(tweet_id)))
        if index < len(self._reply_ids) and int(self._reply_ids[index]) == int(tweet_id):
            return str(int(self._reply_roots[index]))
        return ""

    def _note_for(self, second: str, text: str) -> str | None:
        """The whole text of a long post, matched by the second it was written and its start.

        The second alone is ambiguous (a thread posted at once shares it); the tweet's cut text
        must begin the note's text once links and @mentions are set aside, and look cut: end
        with ``…`` or be long (X cuts by weight: about 140 characters of Japanese).
        """
        candidates = self._notes.get(second)
        if not candidates:
            return None
        signature = _signature(text)
        if not signature or not (len(signature) >= _SURELY_CUT or _URL.sub("", text).rstrip().endswith("…")):
            return None  # a short post beside a long one: its text may begin the other's note
        found = next((n for n in candidates if not n.used and n.signature.startswith(signature)), None)
        if found is None:
            return None
        found.used = True
        return found.text

    # records

    def _tweet_item(self, item: Any, name: str, number: int) -> Post | None:
        tweet = _tweet_of(item)
        if tweet is None:
            if isinstance(item, dict) and len(item) == 1:
                self._summary.skipped[next(iter(item))] += 1
            else:
                self._summary.add_malformed(f"{name} item {number}: expected a tweet object")
            return None
        post = self._tweet_post(tweet)
        if isinstance(post, str):
            self._summary.add_malformed(f"{name} item {number}: {post}")
            return None
        if post.source_id in self._superseded:
            self._summary.skipped[EARLIER_VERSION] += 1
            return None
        return post

    def _tweet_post(self, tweet: dict[str, Any]) -> Post | str:
        """The post of one tweet, or why it cannot be read."""
        tweet_id = _tweet_id(tweet)
        if tweet_id is None:
            return f"no id_str (found {str(tweet.get('id_str', tweet.get('id')))[:30]!r})"
        timestamp = _utc(tweet.get("created_at"))
        if timestamp is None:
            return f"tweet {tweet_id}: created_at is missing or unreadable"
        raw = tweet.get("full_text", tweet.get("text"))
        if not isinstance(raw, str):
            return f"tweet {tweet_id}: no full_text"
        entities, extended = _dict(tweet.get("entities")), _dict(tweet.get("extended_entities"))
        links = _links(entities, extended)
        text = links.expand(html.unescape(raw))
        media = self._media(tweet_id, entities, extended)
        user = self._name or _dict(tweet.get("user")).get("screen_name") or ""
        if not isinstance(user, str):
            user = ""
        reply_to = (
            _id(tweet.get("in_reply_to_status_id_str")) or _id(tweet.get("in_reply_to_status_id")) or ""
        )
        quote_of = repost_of = ""
        original = tweet.get("retweeted_status")
        retweet = _RETWEET.match(text)
        if not isinstance(original, dict) and retweet is None:
            quote_of = _id(tweet.get("quoted_status_id_str")) or _quoted(text, links, tweet_id) or ""
        if isinstance(original, dict):
            kind = "repost"
            repost_of = _tweet_id(original) or ""
            text, original_media = self._retweeted_text(original, retweet, text)
            media = media or original_media
        elif retweet is not None:
            kind = "repost"
            repost_of = next(
                (
                    source
                    for entity in _list(extended.get("media")) + _list(entities.get("media"))
                    if (source := _id(_dict(entity).get("source_status_id_str")))
                ),
                "",
            )
        elif reply_to:
            kind = "reply"
        elif quote_of:
            kind = "quote"
        else:
            kind = "post"
        if kind != "repost" and self._notes:
            note = self._note_for(timestamp, text)
            if note is not None:
                text = _restored(note, text, links, quote_of)
        return export_post(
            "x",
            tweet_id,
            kind,
            self.account,
            user=user,
            timestamp=timestamp,
            url=f"https://x.com/{user or 'i/web'}/status/{tweet_id}",
            content=text,
            reply_to=reply_to,
            thread_root=self._thread_root(tweet_id) if reply_to else "",
            quote_of=quote_of,
            repost_of=repost_of,
            lang=_lang(tweet.get("lang")),
            media=media,
        )

    def _retweeted_text(
        self, original: dict[str, Any], retweet: re.Match[str] | None, text: str
    ) -> tuple[str, tuple[Media, ...]]:
        """A Grailbird retweet's text: ``RT @user: `` and the whole retweeted text (the
        retweet's own text is cut with ``…``)."""
        raw = original.get("full_text", original.get("text"))
        author = _dict(original.get("user")).get("screen_name") or (retweet.group(1) if retweet else None)
        if not isinstance(raw, str) or not isinstance(author, str):
            return text, ()
        entities, extended = _dict(original.get("entities")), _dict(original.get("extended_entities"))
        whole = _links(entities, extended).expand(html.unescape(raw))
        return f"RT @{author}: {whole}", self._media(_tweet_id(original) or "", entities, extended)

    def _media(self, tweet_id: str, entities: dict[str, Any], extended: dict[str, Any]) -> tuple[Media, ...]:
        items = [
            m for m in _list(extended.get("media")) or _list(entities.get("media")) if isinstance(m, dict)
        ]
        if not items:
            return ()
        files = self._media_files.get(tweet_id, [])
        found: list[Media] = []
        for item in items:
            kind = _MEDIA_TYPES.get(str(item.get("type")), "file")
            picture = item.get("media_url_https") or item.get("media_url") or ""
            variants = [
                v
                for v in _list(_dict(item.get("video_info")).get("variants"))
                if isinstance(v, dict) and isinstance(v.get("url"), str)
            ]
            best = max(variants, key=_bitrate)["url"] if variants else ""
            url = best if kind in ("video", "gif") and best else str(picture)
            keys = {_stem(str(picture))} | {_stem(v["url"]) for v in variants}
            path = next((f for f in files if _stem(f.rsplit("/", 1)[-1].split("-", 1)[1]) in keys), "")
            if not path and len(items) == 1 and len(files) == 1:
                path = files[0]
            alt = item.get("ext_alt_text")
            found.append(
                Media(
                    type=kind,
                    path=self._source.inside(path) if path else "",
                    url=url,
                    alt=alt if isinstance(alt, str) else "",
                )
            )
        return tuple(found)

    def _like_item(self, item: Any, name: str, number: int) -> Post | None:
        like = _dict(item).get("like", item)
        if not isinstance(like, dict):
            self._summary.add_malformed(f"{name} item {number}: expected a like object")
            return None
        tweet_id = _id(like.get("tweetId"))
        if tweet_id is None:
            self._summary.add_malformed(f"{name} item {number}: no tweetId")
            return None
        text = like.get("fullText")
        url = like.get("expandedUrl")
        if not isinstance(url, str) or not url.startswith("http"):
            url = f"https://x.com/i/web/status/{tweet_id}"
        return export_post(
            "x",
            tweet_id,
            "like",
            self.account,
            user=user_from_url(url, int(tweet_id)),
            timestamp=_snowflake_time(tweet_id),
            url=url,
            content=html.unescape(text) if isinstance(text, str) else "",
        )


def _tweet_of(item: Any) -> dict[str, Any] | None:
    """The tweet object of an item: ``{"tweet": {...}}``, or the bare object of 2019's files."""
    if not isinstance(item, dict):
        return None
    inner = item.get("tweet")
    if isinstance(inner, dict):
        return inner
    if "id_str" in item or "full_text" in item or "text" in item:
        return item
    return None


def _latest_version(tweet: dict[str, Any]) -> str | None:
    """The newest id among an edited post's versions (``edit_info``), or ``None``."""
    info = _dict(tweet.get("edit_info"))
    initial = _dict(info.get("initial")) or _dict(_dict(info.get("edit")).get("editControlInitial"))
    versions = [v for v in map(_id, _list(initial.get("editTweetIds"))) if v is not None]
    return max(versions, key=int) if len(versions) > 1 else None


def _quoted(text: str, links: _Links, tweet_id: str) -> str | None:
    """The id of the post a tweet quotes: a status link ending its text (X shows it as a card)."""
    tail = text.rstrip()
    for long in links.urls.values():
        match = _STATUS_URL.match(long)
        if match and match.group(2) != tweet_id and tail.endswith(long):
            return match.group(2)
    return None


def _restored(note: str, text: str, links: _Links, quote_of: str) -> str:
    """A note's text with what the note leaves out and the tweet shows put back: a reply's
    leading @mentions and a quote's trailing link."""
    leading = _LEADING_MENTIONS.match(text)
    if leading and not note.startswith(leading.group()):
        note = leading.group() + note
    if quote_of:
        link = next(
            (u for u in links.urls.values() if (m := _STATUS_URL.match(u)) and m.group(2) == quote_of), None
        )
        if link and link not in note:
            note = f"{note} {link}"
    return note


def _roots(ids: npt.NDArray[np.int64], parents: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """For each reply (``ids`` sorted), the farthest ancestor reached through replies the
    archive holds: a chain's first post, or the post outside it that the chain answers."""
    roots = parents.copy()
    active = np.arange(len(ids))
    for _ in range(len(ids)):  # a chain is at most as long as the replies (guards against cycles)
        if not len(active):
            break
        at = np.searchsorted(ids, roots[active])
        at[at >= len(ids)] = 0
        up = ids[at] == roots[active]
        active, at = active[up], at[up]
        roots[active] = parents[at]
    return roots


def _contains(sorted_ids: npt.NDArray[np.int64], value: int) -> bool:
    index = int(np.searchsorted(sorted_ids, value))
    return index < len(sorted_ids) and int(sorted_ids[index]) == value


def _bitrate(variant: dict[str, Any]) -> int:
    rate = str(variant.get("bitrate") or "0")
    return int(rate) if rate.isascii() and rate.isdigit() else 0


def _stem(url_or_name: str) -> str:
    """``FaBcD123`` from ``https://pbs.twimg.com/media/FaBcD123.jpg?x=1`` or ``FaBcD123.jpg``."""
    base = url_or_name.split("?", 1)[0].rsplit("/", 1)[-1]
    return base.rsplit(".", 1)[0]


def _media_files(names: Iterable[str]) -> dict[str, list[str]]:
    files: dict[str, list[str]] = {}
    for name in names:
        match = _MEDIA_FILE.fullmatch(name)
        if match:
            files.setdefault(match.group(1), []).append(name)
    return files


def _ordered(names: set[str], pattern: re.Pattern[str]) -> list[str]:
    """The files matching ``pattern`` in reading order (``tweets.js``, then its parts by number)."""

    def key(name: str) -> tuple[str, int]:
        part = _PART.search(name)
        return (name[: part.start()] if part else name[:-3], int(part.group(1)) if part else 0)

    return sorted((name for name in names if pattern.fullmatch(name)), key=key)


def _describe(names: set[str]) -> str:
    scripts = sorted(n for n in names if n.endswith(".js"))
    if scripts:
        return ", ".join(scripts[:3]) + (
            f" and {len(scripts) - 3:,} more .js files" if len(scripts) > 3 else ""
        )
    return f"{len(names):,} files, none of them JavaScript" if names else "nothing"


def open_reader(path: Path, limits: ReadLimits | None = None) -> XArchiveReader:
    """Open an X archive (zip or folder); raises ImportFormatError with one line if it is not one."""
    return XArchiveReader(Path(path), limits)
