"""Mastodon archive -> posts: the ``archive-*.tar.gz`` (or ``.zip``) a server sends, or its folder.

What the archive holds (see the project's facts on social exports): ``outbox.json``, an
ActivityStreams ``OrderedCollection`` whose ``orderedItems`` are the account's activities, oldest
first; ``likes.json`` and ``bookmarks.json``, collections of bare URIs; ``actor.json``, the
account; ``media_attachments/``, the files. Mastodon writes ``outbox.json`` first and
``actor.json`` last in its tar.gz.

How each item is read:

* ``Create`` of a ``Note`` (or a ``Question``, a poll: its options follow the text, one a line)
  is an authored post; ``inReplyTo`` makes it a reply, a ``quote`` (or ``quoteUri``,
  ``_misskey_quote``) a quote. The text is the HTML ``content`` turned into what a person reads
  (:func:`~mcpkit.archive.importers.html_text.html_to_text`); the content warning is
  ``summary``, kept apart; the language is ``contentMap``'s key when there is one; media are
  the ``attachment`` list, ``name`` being the alt text and a relative ``url`` the file's path
  inside the archive. An edited post (``updated``) is in the archive in its last version and
  is dated by its ``published`` time, as the server shows it.
* ``Announce`` is a boost: its ``object`` is only the boosted post's URI (the boosted text is
  not in the archive), so the repost has no text, ``repost_of`` and ``url`` being that URI.
* ``likes.json`` and ``bookmarks.json`` give likes and bookmarks with only the URI (as ``url``).
* Each post's visibility comes from its ActivityPub addressing (:func:`visibility_of`), the
  only place Mastodon marks it: the public collection in ``to`` is ``public``, in ``cc``
  ``unlisted``, a followers collection without it ``followers``, anything else ``direct``
  (named people only, or nobody at all: ``to: []`` and ``cc: []``). Direct posts are stored
  with that mark and shown by no search, listing, count or thread unless asked for by name
  (``--visibility direct``); followers-only posts are shown and say so.

Why streaming: an ``outbox.json`` reaches hundreds of MB in one line. The archive is read as a
stream (``tarfile`` in stream mode over :class:`gzip.GzipFile`, which also reads Mastodon's
several concatenated gzip members; a zip member or a file is read as a stream too), and the
collection is decoded item by item (:class:`JsonCollection`) from a buffer of about a
megabyte: one item at a time is in memory, never the whole file, never twice.

The account is ``@preferredUsername@host`` from ``actor.json``; in a tar.gz that file comes
last, so until then it is read from the activities' ``actor`` URI
(``https://host/users/name``), which names the same account.
"""

from __future__ import annotations

import bz2
import contextlib
import gzip
import io
import json
import lzma
import tarfile
import zipfile
import zlib
from collections.abc import Generator, Iterator
from pathlib import Path, PurePosixPath
from typing import IO, Any, cast
from urllib.parse import urlsplit

from mcpkit.archive.errors import ImportFormatError
from mcpkit.archive.importers.base import ExportFormat, ReadLimits, ReadSummary, export_post, utc_timestamp
from mcpkit.archive.importers.export_file import open_zip_member
from mcpkit.archive.importers.html_text import html_to_text
from mcpkit.archive.importers.json_stream import (
    JsonCursor,
    JsonInvalidError,
    JsonTooLongError,
    JsonTruncatedError,
)
from mcpkit.archive.posts import Media, Post

__all__ = [
    "DECLARED",
    "FORMAT",
    "JsonCollection",
    "MastodonReader",
    "account_of_actor",
    "open_reader",
    "sniff",
]

FORMAT = "mastodon"
DECLARED = ExportFormat(
    FORMAT, "Mastodon archive", "mastodon", "a Mastodon archive (tar.gz, tar.bz2, tar.xz, zip or folder)", 30
)

CHUNK_CHARS = 1 << 20
"""Characters read at a time: the parse buffer holds about this much text."""
MAX_ITEM_CHARS = 16 << 20
"""Longest single JSON value (one activity); a Note is a few KB, so this is a broken file."""
SNIFF_MEMBERS = 64
"""Tar members looked at to find ``outbox.json`` when sniffing (Mastodon writes it first)."""

_OUTBOX, _LIKES, _BOOKMARKS, _ACTOR = "outbox.json", "likes.json", "bookmarks.json", "actor.json"
_WANTED = (_ACTOR, _OUTBOX, _LIKES, _BOOKMARKS)
_PUBLIC = frozenset({"https://www.w3.org/ns/activitystreams#Public", "as:Public", "Public"})
_QUOTE_FIELDS = ("quote", "quoteUri", "quoteUrl", "_misskey_quote")


# -- JSON collections, item by item ------------------------------------------------------------


class JsonCollection:
    """The items of one array member (``orderedItems``) of a JSON object, decoded one by one
    (:class:`~mcpkit.archive.importers.json_stream.JsonCursor`).

    A value longer than ``max_value`` characters, bad JSON, or a text that ends before its
    closing brace raise :class:`ImportFormatError`. The object's other members are decoded and
    dropped, except short scalars, which are kept in :attr:`scalars` (``type``,
    ``totalItems``) for the caller's checks.
    """

    def __init__(
        self,
        text: IO[str],
        name: str,
        key: str = "orderedItems",
        max_value: int = MAX_ITEM_CHARS,
        chunk: int = CHUNK_CHARS,
    ) -> None:
        self._cursor = JsonCursor(text.read, max_value=max_value, chunk=chunk)
        self._name = name
        self._key = key
        self.found = False
        """Whether the object had the array member at all."""
        self.scalars: dict[str, str | int | float | bool | None] = {}

    def items(self) -> Iterator[Any]:
        try:
            yield from self._items()
        except JsonTooLongError as exc:  # whitespace between values (theirs is _value's)
            raise ImportFormatError(
                f"{self._name}: {exc.reason} near line {self._cursor.line()}; this is not a Mastodon "
                "archive's JSON"
            ) from None

    def _items(self) -> Iterator[Any]:
        cursor = self._cursor
        if self._next() != "{":
            raise ImportFormatError(f"{self._name}: expected a JSON object, found {self._found()}")
        if cursor.peek() == "}":
            cursor.next()
            return
        while True:
            key = self._value()
            if not isinstance(key, str) or self._next() != ":":
                raise ImportFormatError(f"{self._name}: not valid JSON near line {cursor.line()}")
            if key == self._key and cursor.peek() == "[":
                self.found = True
                cursor.next()
                if cursor.peek() == "]":
                    cursor.next()
                else:
                    while True:
                        yield self._value()
                        separator = self._next()
                        if separator == "]":
                            break
                        if separator != ",":
                            raise self._bad("',' or ']' after an item")
            else:
                value = self._value()
                if isinstance(value, str | int | float | bool) or value is None:
                    self.scalars[key] = value if not isinstance(value, str) else value[:200]
            separator = self._next()
            if separator == "}":
                return
            if separator != ",":
                raise self._bad("',' or '}' after a member")

    def _next(self) -> str:
        char = self._cursor.next()
        if not char:
            raise self._truncated()
        return char

    def _value(self) -> Any:
        try:
            return self._cursor.value()
        except JsonTruncatedError:
            raise self._truncated() from None
        except JsonTooLongError:
            raise ImportFormatError(
                f"{self._name}: a value longer than {self._cursor.max_value:,} characters near line "
                f"{self._cursor.line()}; this is not a Mastodon archive's JSON"
            ) from None
        except JsonInvalidError as exc:
            raise ImportFormatError(f"{self._name}: not valid JSON ({exc.reason})") from None

    def _found(self) -> str:
        snippet = self._cursor.snippet()
        return repr(snippet) if snippet else "nothing"

    def _bad(self, expected: str) -> ImportFormatError:
        return ImportFormatError(f"{self._name}: not valid JSON: expected {expected}, found {self._found()}")

    def _truncated(self) -> ImportFormatError:
        return ImportFormatError(f"{self._name}: the JSON ends early; the archive is cut short or damaged")


# -- small readers of ActivityStreams values --------------------------------------------------


def _uri(value: Any) -> str:
    """A link value: a URI string, or an object with an ``id`` (or ``href``)."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        for key in ("id", "href", "url"):
            found = value.get(key)
            if isinstance(found, str):
                return found
    return ""


def _uris(value: Any) -> list[str]:
    if isinstance(value, list):
        return [u for u in map(_uri, value) if u]
    found = _uri(value)
    return [found] if found else []


def account_of_actor(actor_uri: str, username: str = "") -> str:
    """``@name@host`` of an actor URI (``https://host/users/name``); ``username`` when given
    (``preferredUsername``) names it; ``""`` when the URI is not a web address."""
    parts = urlsplit(actor_uri)
    if not parts.hostname:
        return ""
    name = username or PurePosixPath(parts.path).name.removeprefix("@")
    return f"@{name}@{parts.hostname}" if name else ""


def visibility_of(obj: dict[str, Any], activity: dict[str, Any]) -> str:
    """Who an object was addressed to (Mastodon marks it only by ``to``/``cc``, of the object
    and of its activity): ``public`` (the public collection in ``to``), ``unlisted`` (in
    ``cc``), ``followers`` (a followers collection without it), else ``direct``, an object
    addressed to nobody (``to: []``, ``cc: []``) too: nothing says anyone else may read it."""
    to = [*_uris(obj.get("to")), *_uris(activity.get("to"))]
    cc = [*_uris(obj.get("cc")), *_uris(activity.get("cc"))]
    if obj.get("directMessage") is True:
        return "direct"
    if any(t in _PUBLIC for t in to):
        return "public"
    if any(t in _PUBLIC for t in cc):
        return "unlisted"
    if any(t.endswith("/followers") for t in (*to, *cc)):
        return "followers"
    return "direct"


def _media_type(given: Any, kind: Any) -> str:
    mime = given if isinstance(given, str) else ""
    top = mime.split("/", 1)[0]
    if mime == "image/gif":
        return "gif"
    if top in ("image", "video", "audio"):
        return top
    if kind in ("Image", "Video", "Audio"):
        return str(kind).lower()
    return "file"


def _media(obj: dict[str, Any]) -> tuple[Media, ...]:
    found = []
    attachments = obj.get("attachment")
    for item in attachments if isinstance(attachments, list) else [attachments]:
        if not isinstance(item, dict):
            continue
        url = _uri(item.get("url"))
        alt = item.get("name")
        alt = alt.strip() if isinstance(alt, str) else ""
        relative = bool(url) and not urlsplit(url).scheme
        found.append(
            Media(
                type=_media_type(item.get("mediaType"), item.get("type")),
                path=url.lstrip("/") if relative else "",
                url="" if relative else url,
                alt=alt,
            )
        )
    return tuple(found)


def _content(obj: dict[str, Any]) -> tuple[str, str]:
    """The object's text and language (``contentMap``'s key when it has exactly one)."""
    content_map = obj.get("contentMap")
    lang = ""
    content = obj.get("content")
    if isinstance(content_map, dict) and len(content_map) == 1:
        ((lang, mapped),) = content_map.items()
        if not isinstance(content, str):
            content = mapped
    text = html_to_text(content) if isinstance(content, str) else ""
    options = [
        option.get("name")
        for key in ("oneOf", "anyOf")
        for option in (obj.get(key) or [])
        if isinstance(option, dict) and isinstance(option.get("name"), str)
    ]
    if options:
        text = "\n\n".join(part for part in (text, "\n".join(f"- {o}" for o in options)) if part)
    return text, lang if isinstance(lang, str) else ""


# -- the files of an archive, packed or not ----------------------------------------------------


def _role(name: str) -> str | None:
    """Which archive file a member is (``outbox.json``...), at the root or one folder down."""
    path = PurePosixPath(name)
    if len(path.parts) > 2 or path.name not in _WANTED:
        return None
    return path.name


def _kind_of_file(path: Path) -> str:
    """``"dir"``, ``"zip"``, one of :data:`_TARS` or ``""`` by the first bytes, not the name."""
    if path.is_dir():
        return "dir"
    with open(path, "rb") as raw:
        head = raw.read(512)
    if head[:2] == b"\x1f\x8b":
        return "tar.gz"
    if head[:3] == b"BZh":
        return "tar.bz2"
    if head[:6] == b"\xfd7zXZ\x00":
        return "tar.xz"
    if head[:4] == b"PK\x03\x04":
        return "zip"
    if len(head) == 512 and head[257:262] == b"ustar":
        return "tar"
    return ""


def _dir_files(path: Path) -> dict[str, Path]:
    """The archive files of a folder (or of its single subfolder, as some unpackers make)."""
    for folder in (path, *[child for child in path.iterdir() if child.is_dir()][:1]):
        files = {name: folder / name for name in _WANTED if (folder / name).is_file()}
        if _OUTBOX in files:
            return files
    return {}


def _zip_files(archive: zipfile.ZipFile) -> dict[str, zipfile.ZipInfo]:
    files: dict[str, zipfile.ZipInfo] = {}
    for info in archive.infolist():
        role = _role(info.filename)
        if role is not None and role not in files and not info.is_dir():
            files[role] = info
    return {role: files[role] for role in _WANTED if role in files}  # the actor first


_DAMAGED = (EOFError, OSError, zlib.error, lzma.LZMAError, tarfile.TarError, zipfile.BadZipFile)
"""What reading a cut or corrupt tar, gzip or zip raises (BadGzipFile is an OSError)."""


class _Counting(io.RawIOBase):
    """A plain byte stream that knows how many bytes were read from it (the progress of a
    compressed stream is the compressed bytes read). With ``where``, a damaged or cut archive
    met while reading is an :class:`ImportFormatError` naming it, in one line."""

    def __init__(self, raw: IO[bytes], where: Path | None = None) -> None:
        self._raw = raw
        self._where = where
        self.done = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        try:
            data = self._raw.read(len(buffer))
        except _DAMAGED as exc:
            if self._where is None:
                raise
            raise ImportFormatError(
                f"{self._where}: a damaged or truncated archive ({_reason(exc)})"
            ) from None
        memoryview(buffer).cast("B")[: len(data)] = data
        self.done += len(data)
        return len(data)

    def close(self) -> None:
        self._raw.close()
        super().close()


_TARS = ("tar", "tar.gz", "tar.bz2", "tar.xz")
"""The tars read: plain, or compressed as people recompress them (gzip is Mastodon's own)."""


class _Expanding(io.RawIOBase):
    """The decompressed stream of a tar, refused once it has grown more than ``max_bytes`` beyond
    the compressed file: a tar is read through to its end, media included, so this is what
    bounds the time a small hostile file can take (a media-heavy archive barely expands)."""

    def __init__(self, stream: IO[bytes], where: Path, allowed: int, max_bytes: int) -> None:
        self._stream = stream
        self._where = where
        self._allowed = allowed
        self._max_bytes = max_bytes
        self.total = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        data = self._stream.read(len(buffer))
        self.total += len(data)
        if self.total > self._allowed:
            raise ImportFormatError(
                f"{self._where}: expands by more than {self._max_bytes:,} bytes once decompressed; "
                "raise --max-bytes if this archive is really that large"
            )
        memoryview(buffer).cast("B")[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self._stream.close()
        super().close()


def _unpacked(
    raw: IO[bytes], packing: str, path: Path | None = None, limits: ReadLimits | None = None
) -> IO[bytes]:
    """The tar stream of a tar or compressed tar (:class:`gzip.GzipFile` reads several members);
    with ``limits``, refused once it expands more than ``limits.max_bytes`` beyond ``path``."""
    if packing == "tar.gz":
        stream = cast(IO[bytes], gzip.GzipFile(fileobj=raw))
    elif packing == "tar.bz2":
        stream = cast(IO[bytes], bz2.BZ2File(raw))
    elif packing == "tar.xz":
        stream = cast(IO[bytes], lzma.LZMAFile(raw))  # noqa: SIM115 - closed with the tar
    else:
        return raw
    if path is None or limits is None:
        return stream
    allowed = path.stat().st_size + limits.max_bytes
    return cast(IO[bytes], io.BufferedReader(_Expanding(stream, path, allowed, limits.max_bytes), 1 << 16))


def _tar_members(
    path: Path, packing: str, limits: ReadLimits, counter: _Counting | None = None
) -> Iterator[tuple[str, IO[bytes]]]:
    """``(role, stream)`` for each archive file of a tar(.gz), in the tar's order, streamed."""
    raw = counter if counter is not None else _Counting(open(path, "rb"))  # noqa: SIM115
    try:
        source = _unpacked(cast(IO[bytes], raw), packing, path, limits)
        try:
            with tarfile.open(fileobj=source, mode="r|") as tar:
                for member in tar:
                    role = _role(member.name)
                    if role is None or not member.isfile():
                        continue
                    stream = tar.extractfile(member)
                    if stream is not None:
                        yield role, stream
        except _DAMAGED as exc:
            raise ImportFormatError(f"{path}: a damaged or truncated archive ({_reason(exc)})") from None
    finally:
        raw.close()


def _reason(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return text.splitlines()[0][:120]


def _text(stream: _Counting) -> IO[str]:
    """A member as text (through the plain reader: a tar member in stream mode cannot say
    whether it is seekable, and TextIOWrapper asks)."""
    return io.TextIOWrapper(io.BufferedReader(stream, 1 << 16), encoding="utf-8-sig", errors="replace")


# -- the reader ---------------------------------------------------------------------------------


class MastodonReader:
    """One Mastodon archive as an :class:`~mcpkit.archive.importers.base.ExportReader`."""

    format = FORMAT

    def __init__(self, path: Path, limits: ReadLimits | None = None) -> None:
        self.path = Path(path)
        self.limits = limits or ReadLimits()
        self._packing = _kind_of_file(self.path) if self.path.exists() else ""
        self._summary = ReadSummary()
        self._counter: _Counting | None = None
        self._done = 0
        self._size = 0
        self._user = ""
        self.account = ""
        self._check()

    # opening

    def _check(self) -> None:
        """Refuse what is not a Mastodon archive; name the account from the actor or the first
        activity (cheap: Mastodon writes ``outbox.json`` first)."""
        if not self.path.exists():
            raise ImportFormatError(f"{self.path}: no such file or folder")
        if not self._packing:
            raise ImportFormatError(
                f"{self.path}: expected a Mastodon archive (a tar.gz, tar.bz2, tar.xz, zip or folder with "
                "outbox.json), "
                "found a file that is none of these"
            )
        self._size = self._json_bytes()
        found: list[str] = []
        files = self._files()
        try:
            for role, stream in files:
                if role == _ACTOR:
                    self._take_actor(stream)
                elif role == _OUTBOX:
                    if not self.account:
                        self._account_from_outbox(stream)
                    return
                found.append(role)
        finally:
            files.close()
        raise ImportFormatError(
            f"{self.path}: expected a Mastodon archive (outbox.json), found "
            + (", ".join(found) if found else f"no outbox.json in this {self._packing}")
        )

    def _files(self) -> Generator[tuple[str, _Counting], None, None]:
        """The archive files: actor first where the packing allows it, else in stored order."""
        if self._packing == "dir":
            for role, file in _dir_files(self.path).items():
                self._check_size(role, file.stat().st_size)
                with open(file, "rb") as plain:
                    yield role, _Counting(plain, self.path)
        elif self._packing == "zip":
            try:
                with zipfile.ZipFile(self.path) as archive:
                    for role, info in _zip_files(archive).items():
                        self._check_size(role, info.file_size)
                        with open_zip_member(self.path, info, self.limits) as member:
                            yield role, _Counting(member, self.path)
            except (zipfile.BadZipFile, NotImplementedError, EOFError, zlib.error) as exc:
                raise ImportFormatError(f"{self.path}: a damaged zip archive ({_reason(exc)})") from None
        else:
            for role, stream in _tar_members(self.path, self._packing, self.limits, self._counter):
                self._check_size(role, getattr(stream, "size", 0) or 0)
                yield role, _Counting(stream, self.path)

    def _json_bytes(self) -> int:
        """What :meth:`position` counts to: the whole file of a tar, the JSON files otherwise."""
        if self._packing == "dir":
            return sum(file.stat().st_size for file in _dir_files(self.path).values())
        if self._packing == "zip":
            with (
                contextlib.suppress(zipfile.BadZipFile, NotImplementedError, OSError),
                zipfile.ZipFile(self.path) as archive,
            ):
                return sum(info.file_size for info in _zip_files(archive).values())
            return 0
        return self.path.stat().st_size

    def _check_size(self, role: str, size: int) -> None:
        if size > self.limits.max_bytes:
            raise ImportFormatError(
                f"{self.path}: {role} is {size:,} bytes, more than the {self.limits.max_bytes:,}-byte "
                "limit; raise --max-bytes if this archive is really that large"
            )

    def _take_actor(self, stream: _Counting) -> None:
        data = io.BufferedReader(stream).read(self.limits.max_line_bytes + 1)
        try:
            actor = json.loads(data.decode("utf-8-sig", errors="replace"))
        except ValueError:
            self._summary.add_malformed("actor.json: not valid JSON")
            return
        if not isinstance(actor, dict):
            self._summary.add_malformed("actor.json: not a JSON object")
            return
        name = actor.get("preferredUsername")
        account = account_of_actor(_uri(actor.get("id")), name if isinstance(name, str) else "")
        if account:
            self.account = account
            self._user = account[1:]

    def _account_from_outbox(self, stream: _Counting) -> None:
        collection = JsonCollection(_text(stream), _OUTBOX)
        for item in collection.items():
            if isinstance(item, dict):
                account = account_of_actor(_uri(item.get("actor")))
                if account:
                    self.account, self._user = account, account[1:]
                    return

    # reading

    def records(self) -> Iterator[Post]:
        packed = self._packing in _TARS
        if packed:  # progress: the compressed bytes read of the one pass over the file
            self._counter = _Counting(open(self.path, "rb"))  # noqa: SIM115 - closed by _tar_members
        for role, stream in self._files():
            if not packed:  # progress: the bytes read of the JSON files
                self._done += self._counter.done if self._counter is not None else 0
                self._counter = stream
            if role == _ACTOR:
                self._take_actor(stream)
            elif role == _OUTBOX:
                yield from self._outbox(stream)
            else:
                yield from self._uris(role, stream)
        self._counter, self._done = None, self._size

    def _outbox(self, stream: _Counting) -> Iterator[Post]:
        collection = JsonCollection(_text(stream), _OUTBOX)
        for number, item in enumerate(collection.items(), 1):
            post = self._activity(item)
            if isinstance(post, str):
                self._summary.add_malformed(f"outbox.json item {number}: {post}")
            elif post is not None:
                self._summary.kinds[post.kind] += 1
                if post.visibility == "direct":
                    self._summary.direct += 1
                yield post
        if not collection.found:
            raise ImportFormatError(f"{self.path}: outbox.json has no orderedItems; not a Mastodon outbox")

    def _uris(self, role: str, stream: _Counting) -> Iterator[Post]:
        kind = "like" if role == _LIKES else "bookmark"
        for number, item in enumerate(JsonCollection(_text(stream), role).items(), 1):
            uri = _uri(item)
            if not uri:
                self._summary.add_malformed(f"{role} item {number}: not a URI ({str(item)[:40]!r})")
                continue
            self._summary.kinds[kind] += 1
            yield export_post(FORMAT, uri, kind, self.account, url=uri)

    def _activity(self, item: Any) -> Post | str | None:
        """The post of one outbox item; why it is malformed; or None when skipped (counted)."""
        if not isinstance(item, dict):
            return f"not an object ({str(item)[:40]!r})"
        kind = item.get("type")
        if not self.account:
            account = account_of_actor(_uri(item.get("actor")))
            if account:
                self.account, self._user = account, account[1:]
        if kind == "Announce":
            return self._boost(item)
        if kind != "Create":
            self._summary.skipped[str(kind)[:40]] += 1
            return None
        obj = item.get("object")
        if not isinstance(obj, dict):
            return "a Create whose object is not included"
        if obj.get("type") not in ("Note", "Question"):
            self._summary.skipped[f"Create {str(obj.get('type'))[:40]}"] += 1
            return None
        source_id = _uri(obj.get("id"))
        if not source_id:
            return "a Note without an id"
        text, lang = _content(obj)
        reply_to = _uri(obj.get("inReplyTo"))
        quote_of = next((q for q in (_uri(obj.get(key)) for key in _QUOTE_FIELDS) if q), "")
        kind = "reply" if reply_to else "quote" if quote_of else "post"
        warning = obj.get("summary")
        return export_post(
            FORMAT,
            source_id,
            kind,
            self.account,
            user=self._user,
            timestamp=utc_timestamp(obj.get("published") or item.get("published")),
            url=_uri(obj.get("url")) or source_id,
            content=text,
            reply_to=reply_to,
            quote_of=quote_of,
            content_warning=warning.strip() if isinstance(warning, str) else "",
            lang=lang,
            media=_media(obj),
            visibility=visibility_of(obj, item),
        )

    def _boost(self, item: dict[str, Any]) -> Post | str:
        source_id = _uri(item.get("id"))
        target = _uri(item.get("object"))
        if not source_id or not target:
            return "an Announce without its id or object"
        return export_post(
            FORMAT,
            source_id,
            "repost",
            self.account,
            timestamp=utc_timestamp(item.get("published")),
            url=target,
            repost_of=target,
            visibility=visibility_of(item, {}),
        )

    def summary(self) -> ReadSummary:
        return self._summary

    def position(self) -> tuple[int, int]:
        """Bytes read so far, of how many: of the whole file for a tar (read once, in order),
        of the JSON files for a zip or folder (the media files are never read)."""
        done = self._done + (self._counter.done if self._counter is not None else 0)
        return min(done, self._size), self._size


# -- the module's face -------------------------------------------------------------------------


def sniff(path: Path) -> bool:
    """Whether ``path`` is a Mastodon archive: a folder, zip or tar(.gz) with ``outbox.json``
    (looked for among the first :data:`SNIFF_MEMBERS` members of a tar). Never raises."""
    path = Path(path)
    with contextlib.suppress(Exception):
        packing = _kind_of_file(path)
        if packing == "dir":
            return bool(_dir_files(path))
        if packing == "zip":
            with zipfile.ZipFile(path) as archive:
                return _OUTBOX in _zip_files(archive)
        if packing in _TARS:
            with open(path, "rb") as raw, tarfile.open(fileobj=_unpacked(raw, packing), mode="r|") as tar:
                for count, member in enumerate(tar):
                    if _role(member.name) == _OUTBOX:
                        return True
                    if count >= SNIFF_MEMBERS:
                        break
    return False


def open_reader(path: Path, limits: ReadLimits | None = None) -> MastodonReader:
    """A reader of the Mastodon archive at ``path``; :class:`ImportFormatError` (one line) when
    it is not one."""
    return MastodonReader(Path(path), limits)
