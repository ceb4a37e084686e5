"""Exports the tests write themselves, in each format and generation people hold.

One module per format (``x_archive``, ...). Each turns simple records into the export's real
shape, with the traps of the real exports, so importer and merge tests build what they need
without shipping anyone's data.
"""

from __future__ import annotations

import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from mcpkit.archive.errors import ImportFormatError
from mcpkit.archive.posts import Post


@dataclass(frozen=True)
class Expected:
    """One record a person expects from a sample export, with the fields that matter; the
    samples of each format build these, and the reader tests compare :meth:`of` each read post."""

    kind: str
    source_id: str
    content: str = ""
    url: str = ""
    reply_to: str = ""
    thread_root: str = ""
    quote_of: str = ""
    repost_of: str = ""
    content_warning: str = ""
    lang: str = ""
    timestamp: str = ""
    media: tuple[tuple[str, str, str, str], ...] = ()  # (type, path, url, alt)
    visibility: str = "public"

    @classmethod
    def of(cls, post: Post, prefix: str = "") -> Expected:
        """What ``post`` holds of these fields; ``prefix`` is cut from its source id (a Bluesky
        sample names records by their key in the repository)."""
        return cls(
            post.kind,
            post.source_id.removeprefix(prefix),
            post.content,
            post.url,
            post.reply_to,
            post.thread_root,
            post.quote_of,
            post.repost_of,
            post.content_warning,
            post.lang,
            post.timestamp,
            tuple((m.type, m.path, m.url, m.alt) for m in post.media),
            post.visibility,
        )


def other_exports(folder: Path) -> list[Path]:
    """A Twilog CSV and an X archive zip in ``folder``: exports of other formats, which a
    reader of a third must refuse."""
    csv = folder / "export.csv"
    csv.write_text('"1","https://x.com/a/status/1","2024-01-01 00:00:00","hi","1"\n')
    x_zip = folder / "x.zip"
    with zipfile.ZipFile(x_zip, "w") as packed:
        packed.writestr("data/tweets.js", "window.YTD.tweets.part0 = []")
    return [csv, x_zip]


def one_line_refusal(read: Callable[[], object]) -> str:
    """The :class:`ImportFormatError` that ``read()`` ends in, checked to be one line."""
    try:
        read()
    except ImportFormatError as exc:
        message = str(exc)
        assert message and "\n" not in message
        return message
    raise AssertionError("expected a one-line refusal (ImportFormatError); the export was read")
