"""Mastodon archives written the way a Mastodon server writes them, for the importer's tests.

:func:`mastodon_html` is Mastodon's text formatter (escape ``& < > " '`` as ``&amp; &lt; &gt;
&quot; &#39;``, paragraphs on blank lines, ``<br />`` for line feeds); :func:`link_html` splits a
link into ``invisible``/``ellipsis`` spans as Mastodon does. :func:`write_archive` packs an
outbox, likes, bookmarks, actor and media files as a tar.gz (``outbox.json`` first in a gzip
member of its own, the rest in a second member, as Mastodon's BackupService writes it), a zip
(Mastodon 4.3 and later) or a folder. :func:`sample_archive` is one archive with every trap
of the facts file, and what a person reading it expects to find.
"""

from __future__ import annotations

import functools
import gzip
import io
import json
import tarfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.export_fixtures import Expected

HOST = "example.social"
USER = "alice"
ACTOR = f"https://{HOST}/users/{USER}"
ACCOUNT = f"@{USER}@{HOST}"
PUBLIC = "https://www.w3.org/ns/activitystreams#Public"
FOLLOWERS = f"{ACTOR}/followers"


def escape(text: str) -> str:
    """Mastodon's (Rails') HTML escaping: the apostrophe as ``&#39;``."""
    return (
        text.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("'", "&#39;")
    )


def mastodon_html(text: str) -> str:
    """A plain text as Mastodon's formatter writes it: ``<p>`` per paragraph, ``<br />`` per line."""
    paragraphs = [p for p in text.split("\n\n") if p]
    return "".join("<p>" + "<br />".join(escape(line) for line in p.split("\n")) + "</p>" for p in paragraphs)


def link_html(url: str, shown: int = 23) -> str:
    """A link as Mastodon writes it: scheme hidden, the first ``shown`` characters visible with a
    CSS ellipsis, the rest hidden; the spans' texts joined give the URL back."""
    scheme, rest = url.split("://", 1)
    visible, hidden = rest[:shown], rest[shown:]
    return (
        f'<a href="{escape(url)}" target="_blank" rel="nofollow noopener" translate="no">'
        f'<span class="invisible">{escape(scheme)}://</span>'
        f'<span class="{"ellipsis" if hidden else ""}">{escape(visible)}</span>'
        f'<span class="invisible">{escape(hidden)}</span></a>'
    )


def mention_html(name: str, host: str) -> str:
    return (
        f'<span class="h-card" translate="no"><a href="https://{host}/@{name}" class="u-url mention">'
        f"@<span>{name}</span></a></span>"
    )


def hashtag_html(tag: str) -> str:
    return f'<a href="https://{HOST}/tags/{tag}" class="mention hashtag" rel="tag">#<span>{tag}</span></a>'


def status_uri(number: int, host: str = HOST, user: str = USER) -> str:
    return f"https://{host}/users/{user}/statuses/{number}"


def note(
    number: int,
    html: str,
    *,
    published: str = "2023-05-01T10:00:00Z",
    lang: str | None = "en",
    summary: str | None = None,
    in_reply_to: str | None = None,
    quote: str | None = None,
    attachments: list[dict[str, Any]] | None = None,
    to: list[str] | None = None,
    cc: list[str] | None = None,
    kind: str = "Note",
    **extra: Any,
) -> dict[str, Any]:
    """A ``Create`` activity of the account's status ``number``, as Mastodon serialises it."""
    uri = status_uri(number)
    obj: dict[str, Any] = {
        "id": uri,
        "type": kind,
        "summary": summary,
        "inReplyTo": in_reply_to,
        "published": published,
        "url": f"https://{HOST}/@{USER}/{number}",
        "attributedTo": ACTOR,
        "to": [PUBLIC] if to is None else to,
        "cc": [FOLLOWERS] if cc is None else cc,
        "sensitive": summary is not None,
        "atomUri": uri,
        "conversation": f"tag:{HOST},2023-05-01:objectId={number}:objectType=Conversation",
        "content": html,
        "attachment": attachments or [],
        "tag": [],
        "replies": {"id": f"{uri}/replies", "type": "Collection"},
    }
    if lang is not None:
        obj["contentMap"] = {lang: html}
    if quote is not None:
        obj["quote"] = quote
    obj.update(extra)
    return {
        "id": f"{uri}/activity",
        "type": "Create",
        "actor": ACTOR,
        "published": published,
        "to": obj["to"],
        "cc": obj["cc"],
        "object": obj,
    }


def announce(number: int, target: str, published: str = "2023-05-02T08:00:00Z") -> dict[str, Any]:
    """A boost: the ``object`` is only the boosted post's URI."""
    return {
        "id": f"{status_uri(number)}/activity",
        "type": "Announce",
        "actor": ACTOR,
        "published": published,
        "to": [PUBLIC],
        "cc": [target.split("/statuses/")[0], FOLLOWERS],
        "object": target,
    }


def outbox(items: list[Any]) -> dict[str, Any]:
    return {
        "@context": "https://www.w3.org/ns/activitystreams",
        "id": "outbox.json",
        "type": "OrderedCollection",
        "totalItems": len(items) + 7,  # never the item count in real archives
        "orderedItems": items,
    }


def collection(name: str, uris: list[str]) -> dict[str, Any]:
    return {
        "@context": "https://www.w3.org/ns/activitystreams",
        "id": name,
        "type": "OrderedCollection",
        "orderedItems": uris,
    }


def actor(name: str = USER) -> dict[str, Any]:
    return {
        "id": ACTOR,
        "type": "Person",
        "preferredUsername": name,
        "name": "Alice",
        "outbox": "outbox.json",
        "likes": "likes.json",
        "bookmarks": "bookmarks.json",
    }


@dataclass
class Archive:
    """What goes into an archive: the JSON files' contents and the media files."""

    items: list[Any]
    likes: list[str] = field(default_factory=list)
    bookmarks: list[str] = field(default_factory=list)
    actor: dict[str, Any] | None = field(default_factory=actor)
    media: dict[str, bytes] = field(default_factory=dict)


def _files(archive: Archive) -> list[tuple[str, bytes]]:
    """The archive's files in Mastodon's order: outbox, media, likes, bookmarks, actor."""
    files = [("outbox.json", json.dumps(outbox(archive.items)).encode())]
    files += sorted(archive.media.items())
    files += [("likes.json", json.dumps(collection("likes.json", archive.likes)).encode())]
    files += [("bookmarks.json", json.dumps(collection("bookmarks.json", archive.bookmarks)).encode())]
    if archive.actor is not None:
        files += [("actor.json", json.dumps(archive.actor).encode())]
    return files


def tar_bytes(files: list[tuple[str, bytes]]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for name, data in files:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o444
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def write_archive(path: Path, archive: Archive, packing: str = "tar.gz") -> Path:
    """Write ``archive`` at ``path`` as ``"tar.gz"``, ``"zip"`` or ``"dir"``; returns ``path``."""
    files = _files(archive)
    if packing == "dir":
        for name, data in files:
            (path / name).parent.mkdir(parents=True, exist_ok=True)
            (path / name).write_bytes(data)
    elif packing == "zip":
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as packed:
            for name, data in files:
                packed.writestr(name, data)
    elif packing == "tar.gz":
        tar = tar_bytes(files)
        first = 512 + -(-len(files[0][1]) // 512) * 512  # outbox.json's header and data
        # Mastodon gzips outbox.json on its own, then the rest: two members, one file
        path.write_bytes(gzip.compress(tar[:first]) + gzip.compress(tar[first:]))
    else:
        raise ValueError(packing)
    return path


# -- the sample: every trap, and what should come out ----------------------------------------

LINK = "https://example.org/a/very/long/path/to/an/article?with=query&and=more"
BOOSTED = "https://other.example/users/bob/statuses/777"
QUOTED = "https://other.example/users/bob/statuses/778"
LIKED = ["https://other.example/users/bob/statuses/900", "https://third.example/notes/9xyz"]
BOOKMARKED = ["https://other.example/users/bob/statuses/901"]
MEDIA_PATH = "media_attachments/files/110/000/001/original/cat.png"


_expected = functools.partial(Expected, timestamp="2023-05-01 10:00:00")


def sample_archive() -> tuple[Archive, list[Expected], dict[str, int]]:
    """The archive, the records expected from it in order, and the skipped counts."""
    first = (
        f"<p>It&#39;s out: {link_html(LINK)} by {mention_html('bob', 'other.example')} "
        f"{hashtag_html('python')}</p><p>second line one<br />second line two &amp; more</p>"
    )
    items: list[Any] = [
        note(1, first, published="2023-05-01T10:00:00.000Z"),
        note(
            2,
            mastodon_html("a picture"),
            summary="spoilers: a cat",
            published="2023-05-01T12:30:00+02:00",
            attachments=[
                {
                    "type": "Document",
                    "mediaType": "image/png",
                    "url": MEDIA_PATH,
                    "name": "a grey cat asleep",
                    "blurhash": "U00000fQfQfQfQfQfQfQfQfQfQfQ",
                    "width": 10,
                    "height": 10,
                }
            ],
        ),
        note(
            3,
            mastodon_html("which one?"),
            kind="Question",
            oneOf=[
                {"type": "Note", "name": "tea", "replies": {"totalItems": 1}},
                {"type": "Note", "name": "coffee"},
            ],
            endTime="2023-05-02T10:00:00Z",
        ),
        note(4, mastodon_html("replying to myself"), in_reply_to=status_uri(1), lang=None),
        note(5, mastodon_html("look at this"), quote=QUOTED),
        announce(6, BOOSTED),
        # a direct message: addressed to one person only; imported, marked direct
        note(7, mastodon_html("@bob secret"), to=["https://other.example/users/bob"], cc=[]),
        # followers-only: imported, marked
        note(8, mastodon_html("for followers"), to=[FOLLOWERS], cc=[]),
        note(9, mastodon_html("edited text"), updated="2023-06-01T00:00:00Z"),
        {"id": f"{status_uri(10)}/activity", "type": "Create", "actor": ACTOR, "object": {"type": "Article"}},
        42,  # not an activity at all
    ]
    archive = Archive(
        items, likes=list(LIKED), bookmarks=list(BOOKMARKED), media={MEDIA_PATH: b"\x89PNG fake"}
    )
    expected = [
        _expected(
            "post",
            status_uri(1),
            f"It's out: {LINK} by @bob #python\n\nsecond line one\nsecond line two & more",
            lang="en",
            url=f"https://{HOST}/@{USER}/1",
            timestamp="2023-05-01 10:00:00",
        ),
        _expected(
            "post",
            status_uri(2),
            "a picture",
            content_warning="spoilers: a cat",
            lang="en",
            url=f"https://{HOST}/@{USER}/2",
            timestamp="2023-05-01 10:30:00",
            media=(("image", MEDIA_PATH, "", "a grey cat asleep"),),
        ),
        _expected(
            "post", status_uri(3), "which one?\n\n- tea\n- coffee", lang="en", url=f"https://{HOST}/@{USER}/3"
        ),
        _expected(
            "reply",
            status_uri(4),
            "replying to myself",
            reply_to=status_uri(1),
            url=f"https://{HOST}/@{USER}/4",
        ),
        _expected(
            "quote",
            status_uri(5),
            "look at this",
            quote_of=QUOTED,
            lang="en",
            url=f"https://{HOST}/@{USER}/5",
        ),
        _expected(
            "repost",
            f"{status_uri(6)}/activity",
            repost_of=BOOSTED,
            url=BOOSTED,
            timestamp="2023-05-02 08:00:00",
        ),
        _expected(
            "post",
            status_uri(7),
            "@bob secret",
            lang="en",
            url=f"https://{HOST}/@{USER}/7",
            visibility="direct",
        ),
        _expected(
            "post",
            status_uri(8),
            "for followers",
            lang="en",
            url=f"https://{HOST}/@{USER}/8",
            visibility="followers",
        ),
        _expected("post", status_uri(9), "edited text", lang="en", url=f"https://{HOST}/@{USER}/9"),
        *[_expected("like", uri, url=uri, timestamp="") for uri in LIKED],
        *[_expected("bookmark", uri, url=uri, timestamp="") for uri in BOOKMARKED],
    ]
    skipped = {"Create Article": 1}
    return archive, expected, skipped


def large_archive(count: int) -> Archive:
    """``count`` items as a busy account's archive has them: posts with links, mentions and
    hashtags, replies, boosts, a picture now and then, and likes (about a fifth)."""
    items: list[Any] = []
    likes: list[str] = []
    for number in range(count):
        mod = number % 10
        if mod in (0, 1):
            likes.append(status_uri(number, "other.example", "bob"))
            continue
        if mod == 2:
            items.append(announce(number, status_uri(number, "other.example", "bob")))
            continue
        html = (
            f"<p>Post {number}: it&#39;s about {hashtag_html('python')} and "
            f"{link_html(f'https://example.org/articles/{number}/some-long-title')} "
            f"with {mention_html('bob', 'other.example')}</p><p>more text here<br />and a last line</p>"
        )
        attachments = (
            [{"type": "Document", "mediaType": "image/jpeg", "url": f"media/{number}.jpg", "name": "alt"}]
            if mod == 3
            else None
        )
        reply = status_uri(number - 1) if mod == 4 else None
        items.append(note(number, html, in_reply_to=reply, attachments=attachments))
    return Archive(items, likes=likes)


if __name__ == "__main__":  # python -m tests.export_fixtures.mastodon 100000 archive.tar.gz
    import sys

    write_archive(Path(sys.argv[2]), large_archive(int(sys.argv[1])), "tar.gz")
