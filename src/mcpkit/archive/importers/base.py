"""What every export reader gives the import flow, whatever the format.

A reader turns one export (a Twilog CSV, an X archive, a Mastodon archive, a Bluesky CAR)
into a stream of :class:`~mcpkit.archive.posts.Post` records; the flow
(:mod:`mcpkit.archive.importers.flow`) writes them, merges them with what the archive holds
and reports. Keeping the two apart is what lets four formats share one merge rule, one
transaction discipline and one summary line.

Why a stream: exports reach millions of records and several GB; a reader holds at most what
it needs to join records (an X archive's long-note texts, say), never every record, so an
import's memory does not grow with the export.

Each format module (``importers/<format>.py``) provides::

    def sniff(path: Path) -> bool                      # cheap: is this my format? never raises
    def open_reader(path: Path, limits: ReadLimits) -> ExportReader

``open_reader`` raises :class:`~mcpkit.archive.errors.ImportFormatError` with one line (what
was expected, what was found) for a file that is not this export, truncated or malformed;
so may ``records()`` while it streams (the flow then rolls the export back: nothing is
half-written). Record types the reader does not know are counted in
:attr:`ReadSummary.skipped` by name, never fatal.

A reader may also offer :class:`Progressive` (bytes read so far of how many), which the flow
turns into a progress bar; without it the bar counts records.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from mcpkit.archive import messages as m
from mcpkit.archive.errors import ImportFormatError
from mcpkit.archive.importers.export_file import ReadLimits, open_export
from mcpkit.archive.messages import Counted, Lang
from mcpkit.archive.posts import KINDS, Media, Post, log_type_of_kind, post_key, twilog_kind

__all__ = [
    "DECLARED",
    "DIRECT_MESSAGE",
    "EARLIER_VERSION",
    "MAX_SAMPLES",
    "SKIPPED_IN_WORDS",
    "ExportFormat",
    "ExportReader",
    "ImportFormatError",
    "Progressive",
    "ReadLimits",
    "ReadSummary",
    "RowReader",
    "TwilogCsvReader",
    "export_post",
    "kind_counts_text",
    "skipped_text",
    "utc_timestamp",
]

MAX_SAMPLES = 5
"""Malformed records a summary describes; the rest are only counted (a junk file must not
grow a list without bound)."""


@dataclass(frozen=True, slots=True)
class ExportFormat:
    """One export format, declared once as ``DECLARED`` in its importer module (which also
    gives ``sniff(path)`` and ``open_reader(path, limits)``). Every table of formats derives
    from these declarations (:func:`~mcpkit.archive.importers.detect.formats`): the order of
    detection, what a refusal says is expected, how a summary line names an export, the
    platform of an export's pictures; so a new format is one new importer module."""

    name: str  # as stored: each post's source, the exports table's format
    title: str  # how a summary line names it ("X archive of @name: ...")
    platform: str  # the platform its posts come from
    expected: str  # how a refusal names what it reads ("an X archive (zip or folder)")
    order: int  # detection tries formats in ascending order: the plain text ones last
    takes_handle: bool = False  # open_reader takes handle= (the export does not name its account)


_KIND_COUNTS: dict[str, Counted] = {
    "post": m.POSTS_READ,
    "reply": m.REPLIES_READ,
    "quote": m.QUOTES_READ,
    "repost": m.REPOSTS_READ,
    "like": m.LIKES_READ,
    "bookmark": m.BOOKMARKS_READ,
}


@dataclass(slots=True)
class ReadSummary:
    """What a reader saw, complete once ``records()`` is exhausted.

    ``kinds`` counts the records yielded by kind (a record the export holds twice counts
    twice: the store's counts of new/updated/unchanged are per post); ``skipped`` counts
    record types the reader does not import, by their name in the export (``dmConversation``,
    ``app.bsky.graph.follow``); ``malformed`` counts records it could not read, of which
    ``samples`` describes the first :data:`MAX_SAMPLES` (``"line 12: expected 5 fields"``);
    ``direct`` counts the records (among ``kinds``) that are direct posts, which the archive keeps
    and shows only when asked for.
    """

    kinds: Counter[str] = field(default_factory=Counter)
    skipped: Counter[str] = field(default_factory=Counter)
    malformed: int = 0
    direct: int = 0  # records addressed to named people only or to nobody (kept, shown when asked)
    samples: list[str] = field(default_factory=list)

    def add_malformed(self, description: str) -> None:
        """Count one malformed record, keeping its description if few are kept so far."""
        self.malformed += 1
        if len(self.samples) < MAX_SAMPLES:
            self.samples.append(description)

    @property
    def records(self) -> int:
        return sum(self.kinds.values())


@runtime_checkable
class ExportReader(Protocol):
    """One opened export; see the module docstring."""

    format: str  # "twilog-csv" | "x-archive" | "mastodon" | "bluesky-car"
    account: str  # "@name", "@name@host", a handle or a DID; "" when unknown

    def records(self) -> Iterator[Post]:
        """The export's records, streamed (bounded memory); call once."""
        ...

    def summary(self) -> ReadSummary:
        """What ``records()`` saw; complete after it is exhausted."""
        ...


@runtime_checkable
class RowReader(Protocol):
    """A reader of Twilog rows, which the flow writes without a :class:`Post` per row (a
    third of a Twilog import's time went into building them); ``records()`` must give the
    same posts."""

    def rows(self) -> Iterator[tuple[int, str, str, str, str, int]]:
        """``(post_id, user, timestamp, url, content, log_type)`` per record, streamed."""
        ...


@runtime_checkable
class Progressive(Protocol):
    """A reader that knows how far it has read: ``(bytes read, bytes in all)``."""

    def position(self) -> tuple[int, int]: ...


def kind_counts_text(kinds: Counter[str], lang: Lang = "en") -> str:
    """``"12,408 posts, 3,120 likes"``: the kinds a summary line lists, in :data:`KINDS` order."""
    parts = [_KIND_COUNTS[k](lang, count=kinds[k]) for k in KINDS if kinds.get(k)]
    parts += [
        m.KIND_READ(lang, count=f"{n:,}", kind=k)
        for k, n in sorted(kinds.items())
        if k not in _KIND_COUNTS and n
    ]
    return ", ".join(parts) if parts else m.NO_RECORDS(lang)


DIRECT_MESSAGE = "direct message"
EARLIER_VERSION = "earlier version of an edited post"
SKIPPED_IN_WORDS: dict[str, Counted] = {
    DIRECT_MESSAGE: m.SKIPPED_DIRECT_MESSAGES,
    EARLIER_VERSION: m.SKIPPED_EARLIER_VERSIONS,
}
"""What readers leave out on purpose, named in words (in every language); every other name in
:attr:`ReadSummary.skipped` is a record type as the export names it."""


def skipped_text(skipped: Counter[str], most: int = 5, lang: Lang = "en") -> str:
    """``"3 earlier versions of edited posts, 2 direct messages, 1 dmConversation record"``: the
    most frequent ``most`` names, each with its count, in words where the reader gave them."""
    parts = []
    for name, count in skipped.most_common(most):
        if name in SKIPPED_IN_WORDS:
            parts.append(SKIPPED_IN_WORDS[name](lang, count=count))
        else:
            parts.append(m.SKIPPED_RECORDS(lang, count=count, name=name))
    return ", ".join(parts) + (", ..." if len(skipped) > most else "")


def utc_timestamp(value: Any) -> str:
    """``YYYY-MM-DD HH:MM:SS`` in UTC from an ISO 8601 time (``2023-01-02T03:04:05.000Z``),
    ``""`` when there is none or it cannot be read (the post is kept, undated)."""
    if not isinstance(value, str) or not value:
        return ""
    try:
        moment = dt.datetime.fromisoformat(value.strip())
    except ValueError:
        return ""
    if moment.tzinfo is not None:
        moment = moment.astimezone(dt.UTC).replace(tzinfo=None)
    return moment.strftime("%Y-%m-%d %H:%M:%S")


def export_post(
    platform: str,
    source_id: str,
    kind: str,
    account: str,
    *,
    user: str = "",
    timestamp: str = "",
    url: str = "",
    content: str = "",
    reply_to: str = "",
    thread_root: str = "",
    quote_of: str = "",
    repost_of: str = "",
    content_warning: str = "",
    lang: str = "",
    media: tuple[Media, ...] = (),
    visibility: str = "public",
) -> Post:
    """A record of an export (X archive, Mastodon, Bluesky): its key made from its platform and
    source id, its log_type from its kind, as every reader makes them (a Twilog row has its own)."""
    return Post(
        post_id=post_key(platform, source_id),
        user=user,
        timestamp=timestamp,
        url=url,
        content=content,
        log_type=log_type_of_kind(kind),
        platform=platform,
        kind=kind,
        source_id=source_id,
        account=account,
        reply_to=reply_to,
        thread_root=thread_root,
        quote_of=quote_of,
        repost_of=repost_of,
        content_warning=content_warning,
        lang=lang,
        media=media,
        visibility=visibility,
    )


# -- the Twilog CSV, as a reader ------------------------------------------------------------------

_POSITION_EVERY = 1024


class TwilogCsvReader:
    """A Twilog CSV export as an :class:`ExportReader` (the parsing is ``twilog_csv``'s).

    A Twilog export holds one account's posts, likes and bookmarks but never says whose: the
    account is the author named by most of the account's own posts among the first rows
    (:func:`~mcpkit.archive.importers.twilog_csv.first_account`, as ``import_csv`` names it).
    """

    format = "twilog-csv"

    def __init__(self, path: Path, limits: ReadLimits | None = None) -> None:
        from mcpkit.archive.importers.twilog_csv import check_export

        self.path = Path(path)
        self.limits = limits or ReadLimits()
        if not self.path.is_file():
            raise ImportFormatError(f"{self.path}: no such file")
        check_export(self.path, self.limits)
        self._summary = ReadSummary()
        self._done = 0
        self._size = self.path.stat().st_size
        self.account = self._account()

    def _account(self) -> str:
        from mcpkit.archive.importers.twilog_csv import first_account

        return first_account(self._parsed())

    def _parsed(self) -> Iterator[tuple[int, str, str, str, str, int] | str]:
        from mcpkit.archive.importers.twilog_csv import _records

        export = open_export(self.path, self.limits)
        try:
            for count, (line, parsed) in enumerate(_records(export.text, str(self.path))):
                if count % _POSITION_EVERY == 0:
                    self._done = export.raw.tell()
                yield f"line {line}: {parsed}" if isinstance(parsed, str) else parsed
        finally:
            export.close()

    def rows(self) -> Iterator[tuple[int, str, str, str, str, int]]:
        summary = self._summary
        kinds = summary.kinds
        for parsed in self._parsed():
            if isinstance(parsed, str):
                summary.add_malformed(parsed)
                continue
            kinds[twilog_kind(parsed[5], parsed[4])] += 1
            yield parsed
        self._done = self._size

    def records(self) -> Iterator[Post]:
        for row in self.rows():
            yield Post(*row)

    def summary(self) -> ReadSummary:
        return self._summary

    def position(self) -> tuple[int, int]:
        return self._done, self._size


def sniff_twilog_csv(path: Path) -> bool:
    """Whether ``path`` is a Twilog CSV (plain, gzip or a zip holding one CSV)."""
    from mcpkit.archive.importers.twilog_csv import check_export

    try:
        check_export(Path(path))
    except (ImportFormatError, OSError, ValueError):
        return False
    return True


DECLARED = ExportFormat(TwilogCsvReader.format, "Twilog CSV", "x", "a Twilog CSV", 90)
"""The Twilog CSV, declared beside its reader (``twilog_csv`` parses it, and imports no
module of this package that imports it back). Tried last: any text file might be one, and
its reader then says what it found."""

sniff = sniff_twilog_csv


def open_reader(path: Path, limits: ReadLimits | None = None) -> TwilogCsvReader:
    """The Twilog CSV's reader, for the import flow (``twilog_csv.import_csv`` is the direct path)."""
    return TwilogCsvReader(path, limits)
