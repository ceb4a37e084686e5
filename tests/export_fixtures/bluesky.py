"""Bluesky repository CARs built by the tests from records they make, the way a PDS writes them.

Records and tree nodes are DAG-CBOR blocks encoded by ``libipld`` (which writes a CID's bytes
as a link); their CIDs are CIDv1 DAG-CBOR SHA-256. The Merkle Search Tree is built as atproto
builds it: a key's layer is the number of leading zero bit pairs of its SHA-256, keys sorted,
each node holding the keys of its layer with the lower ones in subtrees (``l`` left of the
first entry, ``t`` right of each), keys prefix-compressed (``p`` shared bytes with the previous
key of the node, ``k`` the rest). ``libipld`` has no CAR writer, so the framing (a varint
length before the header and before each block) is written here.

:func:`sample_repository` has every trap: two records in one block, another app's collection,
link facets at UTF-8 byte offsets after emoji, a block no key links, blocks in shuffled order.
"""

from __future__ import annotations

import functools
import hashlib
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import libipld

from tests.export_fixtures import Expected

DID = "did:plc:abcdefghijklmnopqrstuvwx"
OTHER = "did:plc:zyxwvutsrqponmlkjihgfedc"
DAG_CBOR, RAW = 0x71, 0x55


def varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def cid_of(data: bytes, codec: int = DAG_CBOR) -> bytes:
    """CIDv1 (binary) of ``data``: version, codec, SHA-256 multihash."""
    return bytes([1, codec, 0x12, 0x20]) + hashlib.sha256(data).digest()


def layer_of(key: bytes) -> int:
    """atproto's MST layer of a key: leading zero bit pairs of its SHA-256 (fanout 4)."""
    zeros = 0
    for byte in hashlib.sha256(key).digest():
        if byte < 64:
            zeros += 1
        if byte < 16:
            zeros += 1
        if byte < 4:
            zeros += 1
        if byte != 0:
            break
        zeros += 1
    return zeros


def short_url(url: str) -> str:
    """How the Bluesky app shows a link in a post's text (host, then 13 characters and ``...``)."""
    parts = urlsplit(url)
    path = "" if parts.path == "/" else parts.path
    path += (f"?{parts.query}" if parts.query else "") + (f"#{parts.fragment}" if parts.fragment else "")
    return parts.netloc + (path[:13] + "..." if len(path) > 15 else path)


def text_with_links(pieces: list[tuple[str, str | None]]) -> tuple[str, list[dict[str, Any]], str]:
    """A post text of ``(words, url or None)`` pieces, each link shown shortened: the text,
    its link facets (UTF-8 byte offsets), and the text with every URL whole."""
    text, whole, facets = "", "", []
    for words, url in pieces:
        text += words
        whole += words
        if url is not None:
            start = len(text.encode())
            text += short_url(url)
            whole += url
            facets.append(
                {
                    "$type": "app.bsky.richtext.facet",
                    "index": {"byteStart": start, "byteEnd": len(text.encode())},
                    "features": [{"$type": "app.bsky.richtext.facet#link", "uri": url}],
                }
            )
    return text, facets, whole


def blob(data: bytes, mime: str = "image/jpeg") -> dict[str, Any]:
    return {"$type": "blob", "ref": cid_of(data, RAW), "mimeType": mime, "size": len(data)}


def strong_ref(uri: str) -> dict[str, Any]:
    return {"uri": uri, "cid": libipld.encode_cid(cid_of(uri.encode()))}


@dataclass
class Repository:
    """Records to write: ``(collection, rkey) -> record``; blocks shuffled with ``seed``."""

    records: dict[tuple[str, str], dict[str, Any]]
    did: str = DID
    stale: list[dict[str, Any]] = field(default_factory=list)  # blocks no key links
    seed: int = 7


def _node(items: list[tuple[bytes, bytes, int]], layer: int, blocks: dict[bytes, bytes]) -> bytes:
    """Write the node of ``layer`` over sorted ``(key, record cid, key layer)``; its CID."""
    entries: list[dict[str, Any]] = []
    left: bytes | None = None
    lower: list[tuple[bytes, bytes, int]] = []

    def subtree() -> bytes | None:
        nonlocal lower
        found = _node(lower, layer - 1, blocks) if lower else None
        lower = []
        return found

    for key, cid, key_layer in items:
        if key_layer == layer:
            below = subtree()
            if entries:
                entries[-1]["t"] = below
            else:
                left = below
            entries.append({"key": key, "v": cid, "t": None})
        else:
            lower.append((key, cid, key_layer))
    below = subtree()
    if entries:
        entries[-1]["t"] = below
    else:
        left = below
    previous = b""
    encoded = []
    for entry in entries:
        key = entry.pop("key")
        shared = 0
        while shared < min(len(key), len(previous)) and key[shared] == previous[shared]:
            shared += 1
        encoded.append({"p": shared, "k": key[shared:], "v": entry["v"], "t": entry["t"]})
        previous = key
    data = libipld.encode_dag_cbor({"l": left, "e": encoded})
    cid = cid_of(data)
    blocks[cid] = data
    return cid


def build_blocks(repo: Repository) -> tuple[bytes, dict[bytes, bytes]]:
    """The commit's CID and every block (commit, tree nodes, records, stale blocks)."""
    blocks: dict[bytes, bytes] = {}
    items = []
    for (collection, rkey), record in repo.records.items():
        data = libipld.encode_dag_cbor(record)
        cid = cid_of(data)
        blocks[cid] = data  # identical records: one block
        key = f"{collection}/{rkey}".encode()
        items.append((key, cid, layer_of(key)))
    items.sort()
    root = _node(items, max((layer for *_, layer in items), default=0), blocks)
    for record in repo.stale:
        data = libipld.encode_dag_cbor(record)
        blocks[cid_of(data)] = data
    commit = libipld.encode_dag_cbor(
        {"did": repo.did, "version": 3, "data": root, "rev": "3kabcdefghijk", "prev": None, "sig": bytes(64)}
    )
    commit_cid = cid_of(commit)
    blocks[commit_cid] = commit
    return commit_cid, blocks


def write_car(path: Path, repo: Repository) -> Path:
    """The repository as a CAR v1 file: header, the commit first, then the other blocks in a
    shuffled order (a reader must not depend on it)."""
    root, blocks = build_blocks(repo)
    others = [cid for cid in blocks if cid != root]
    random.Random(repo.seed).shuffle(others)
    header = libipld.encode_dag_cbor({"version": 1, "roots": [root]})
    with open(path, "wb") as out:
        out.write(varint(len(header)) + header)
        for cid in [root, *others]:
            out.write(varint(len(cid) + len(blocks[cid])) + cid + blocks[cid])
    return path


def post_uri(rkey: str, did: str = DID) -> str:
    return f"at://{did}/app.bsky.feed.post/{rkey}"


# -- the sample -----------------------------------------------------------------------------------

LINK = "https://example.com/articles/2024/a-very-long-title-indeed?ref=feed"
PICTURE = b"jpeg bytes of a cat"
LIKED = post_uri("3kliked00000a", OTHER)
REPOSTED = post_uri("3kreposted000", OTHER)
QUOTED = post_uri("3kquoted00000", OTHER)


CREATED = "2024-03-01 12:00:00"
"""When the sample's records were made (UTC)."""
_expected = functools.partial(Expected, timestamp=CREATED)


def sample_repository() -> tuple[Repository, list[Expected], dict[str, int]]:
    """Records of every kind and trap; the records expected in key order; the skipped counts."""
    text, facets, whole = text_with_links([("🎉 read ", LINK), (" — 日本語 too, ", "https://bsky.app/")])
    created = "2024-03-01T12:00:00.000Z"
    like = {"$type": "app.bsky.feed.like", "subject": strong_ref(LIKED), "createdAt": created}
    records: dict[tuple[str, str], dict[str, Any]] = {
        ("app.bsky.actor.profile", "self"): {"$type": "app.bsky.actor.profile", "displayName": "Alice"},
        ("app.bsky.feed.like", "3klike000000a"): like,
        ("app.bsky.feed.like", "3klike000000b"): dict(like),  # the same record: one block, two keys
        ("app.bsky.feed.post", "3kpost000000a"): {
            "$type": "app.bsky.feed.post",
            "text": text,
            "facets": facets,
            "langs": ["en"],
            "createdAt": created,
        },
        ("app.bsky.feed.post", "3kpost000000b"): {
            "$type": "app.bsky.feed.post",
            "text": "a cat",
            "embed": {
                "$type": "app.bsky.embed.images",
                "images": [{"image": blob(PICTURE), "alt": "a grey cat asleep"}],
            },
            "labels": {"$type": "com.atproto.label.defs#selfLabels", "values": [{"val": "graphic-media"}]},
            "createdAt": "2024-03-01T13:00:00+01:00",
        },
        ("app.bsky.feed.post", "3kpost000000c"): {
            "$type": "app.bsky.feed.post",
            "text": "replying to myself",
            "reply": {
                "root": strong_ref(post_uri("3kpost000000a")),
                "parent": strong_ref(post_uri("3kpost000000b")),
            },
            "langs": ["en", "ja"],
            "createdAt": created,
        },
        ("app.bsky.feed.post", "3kpost000000d"): {
            "$type": "app.bsky.feed.post",
            "text": "look",
            "embed": {"$type": "app.bsky.embed.record", "record": strong_ref(QUOTED)},
            "createdAt": created,
        },
        ("app.bsky.feed.post", "3kpost000000e"): {
            "$type": "app.bsky.feed.post",
            "text": "quote with a picture",
            "embed": {
                "$type": "app.bsky.embed.recordWithMedia",
                "record": {"$type": "app.bsky.embed.record", "record": strong_ref(QUOTED)},
                "media": {"$type": "app.bsky.embed.images", "images": [{"image": blob(PICTURE), "alt": ""}]},
            },
            "createdAt": created,
        },
        ("app.bsky.feed.repost", "3krepost0000a"): {
            "$type": "app.bsky.feed.repost",
            "subject": strong_ref(REPOSTED),
            "createdAt": created,
        },
        ("app.bsky.graph.follow", "3kfollow0000a"): {
            "$type": "app.bsky.graph.follow",
            "subject": OTHER,
            "createdAt": created,
        },
        ("com.whtwnd.blog.entry", "3kblog0000000"): {"$type": "com.whtwnd.blog.entry", "content": "long"},
    }
    stale = [{"$type": "app.bsky.feed.post", "text": "deleted long ago", "createdAt": created}]
    picture = libipld.encode_cid(cid_of(PICTURE, RAW))
    page = f"https://bsky.app/profile/{DID}/post/"
    liked_page = f"https://bsky.app/profile/{OTHER}/post/3kliked00000a"
    expected = [
        _expected("like", "app.bsky.feed.like/3klike000000a", url=liked_page),
        _expected("like", "app.bsky.feed.like/3klike000000b", url=liked_page),
        _expected("post", "app.bsky.feed.post/3kpost000000a", whole, f"{page}3kpost000000a", lang="en"),
        _expected(
            "post",
            "app.bsky.feed.post/3kpost000000b",
            "a cat",
            f"{page}3kpost000000b",
            content_warning="graphic-media",
            media=(("image", "", picture, "a grey cat asleep"),),
        ),
        _expected(
            "reply",
            "app.bsky.feed.post/3kpost000000c",
            "replying to myself",
            f"{page}3kpost000000c",
            reply_to=post_uri("3kpost000000b"),
            thread_root=post_uri("3kpost000000a"),
        ),
        _expected(
            "quote", "app.bsky.feed.post/3kpost000000d", "look", f"{page}3kpost000000d", quote_of=QUOTED
        ),
        _expected(
            "quote",
            "app.bsky.feed.post/3kpost000000e",
            "quote with a picture",
            f"{page}3kpost000000e",
            quote_of=QUOTED,
            media=(("image", "", picture, ""),),
        ),
        _expected(
            "repost",
            "app.bsky.feed.repost/3krepost0000a",
            url=f"https://bsky.app/profile/{OTHER}/post/3kreposted000",
            repost_of=REPOSTED,
        ),
    ]
    skipped = {"app.bsky.actor.profile": 1, "app.bsky.graph.follow": 1, "com.whtwnd.blog.entry": 1}
    return Repository(records, stale=stale), expected, skipped


def large_repository(count: int) -> Repository:
    """``count`` records: posts (a link facet in every third), replies, likes and reposts."""
    records: dict[tuple[str, str], dict[str, Any]] = {}
    created = "2024-03-01T12:00:00.000Z"
    for number in range(count):
        rkey = f"3k{number:011d}"
        mod = number % 10
        if mod < 2:
            records["app.bsky.feed.like", rkey] = {
                "$type": "app.bsky.feed.like",
                "subject": strong_ref(post_uri(f"3x{number:011d}", OTHER)),
                "createdAt": created,
            }
        elif mod == 2:
            records["app.bsky.feed.repost", rkey] = {
                "$type": "app.bsky.feed.repost",
                "subject": strong_ref(post_uri(f"3x{number:011d}", OTHER)),
                "createdAt": created,
            }
        else:
            text, facets, _ = text_with_links(
                [
                    (
                        f"post {number} about things ",
                        f"https://example.org/a/{number}/long-title" if mod == 3 else None,
                    )
                ]
            )
            record: dict[str, Any] = {
                "$type": "app.bsky.feed.post",
                "text": text,
                "langs": ["en"],
                "createdAt": created,
            }
            if facets:
                record["facets"] = facets
            if mod == 4:
                record["reply"] = {"root": strong_ref(post_uri(rkey)), "parent": strong_ref(post_uri(rkey))}
            records["app.bsky.feed.post", rkey] = record
    return Repository(records)


if __name__ == "__main__":  # python -m tests.export_fixtures.bluesky 100000 repo.car
    import sys

    write_car(Path(sys.argv[2]), large_repository(int(sys.argv[1])))
