"""Bluesky repository CAR -> posts: the file "Export my data" gives (``com.atproto.sync.getRepo``).

The CAR (v1) is a header naming one root, then blocks, each ``varint(length) CID bytes``. The
root is the signed commit (``did``, ``rev``, ``data``, ``version`` 3); ``data`` is the root of a
Merkle Search Tree whose keys are ``collection/rkey`` and whose values link the records. Node
entries are prefix-compressed: ``{p: shared prefix length, k: key suffix, v: record, t: right
subtree}``, with ``l`` the subtree left of the first entry.

Why the tree and not the blocks: identical records (two likes of one post made in the same
second, two equal posts) are one block named by two keys, and blocks the tree no longer links
may remain in the file. So the records are counted by walking the tree in key order; the
walk checks that keys ascend, which also stops a crafted tree that links a subtree twice.

Memory, and its bound: blocks are found by CID in any order, so the reader first scans the
file once and keeps, per block, the last 8 bytes of its CID, its offset and its length in three
numpy arrays (20 bytes a block, sorted once; a block is then read with one seek, its CID and,
for SHA-256, its hash checked). Beyond that index it holds one path of tree nodes (the tree's
height, a few dozen at most) and one record at a time; never the file, never every block.
A million-post repository (about 1.4M blocks) takes about 28 MB of index, 60 MB while it is
sorted.

What becomes of each collection:

* ``app.bsky.feed.post``: the text with link facets restored (the visible text shortens a link,
  ``example.com/very/lo...``; the facet, at UTF-8 byte offsets, holds the whole URI, which
  replaces the shortened text), ``createdAt``, ``reply.parent``/``reply.root`` as ``reply_to``
  and ``thread_root`` (``at://`` URIs), images and video with their alt text (the blob's CID as
  ``url``; ``path`` is ``""``: the CAR holds no blobs), a quoted record (``embed.record`` or
  ``recordWithMedia``) as ``quote_of``, the language when ``langs`` names one, self-labels
  (``nsfw``, ``graphic-media``...) as the content warning;
* ``app.bsky.feed.repost`` and ``app.bsky.feed.like``: the subject's URI only (the text is not
  in the repository): ``repost_of`` for a repost, and for both ``url`` the subject's bsky.app
  page;
* every other collection (follows, blocks, profiles, other apps' records) is counted in the
  summary's ``skipped`` by its name, without being decoded.

The account is the repository's DID; its handle is not in the CAR (a DID document gives it),
so the caller may pass one: ``open_reader(path, limits, handle="alice.bsky.social")`` makes the
account ``@alice.bsky.social``. Post URLs use the DID, which never changes.
"""

from __future__ import annotations

import hashlib
import re
from array import array
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import libipld
import numpy as np
import numpy.typing as npt

from mcpkit.archive.errors import ImportFormatError
from mcpkit.archive.importers.base import ExportFormat, ReadLimits, ReadSummary, export_post, utc_timestamp
from mcpkit.archive.importers.export_file import magic_kind
from mcpkit.archive.importers.html_text import is_shortened_url
from mcpkit.archive.posts import Media, Post

__all__ = ["DECLARED", "FORMAT", "BlueskyCarReader", "open_reader", "restore_links", "sniff"]

FORMAT = "bluesky-car"
DECLARED = ExportFormat(FORMAT, "Bluesky repository", "bluesky", "a Bluesky CAR", 10, takes_handle=True)
PLATFORM = "bluesky"

POST, REPOST, LIKE = "app.bsky.feed.post", "app.bsky.feed.repost", "app.bsky.feed.like"
_LINK_FACET = "app.bsky.richtext.facet#link"

MAX_BLOCK = 4 << 20
"""Largest block read (atproto records are at most 1 MB; a larger one means a broken file)."""
MAX_DEPTH = 64
"""Deepest tree walked (a repository of a billion records is about 16 levels deep)."""
SCAN_CHUNK = 1 << 20
"""Bytes read at a time while the blocks are indexed."""
_SNIFF_BYTES = 4096
_HANDLE = re.compile(
    r"(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
)
"""A handle is a domain name (atproto's handle syntax: labels of letters, digits and hyphens,
at least two, the last not starting with a digit)."""
_SHA256 = 0x12


# -- CAR framing ------------------------------------------------------------------------------


class _Cut(Exception):
    """The bytes end inside a varint or a CID."""


def _varint(data: bytes | memoryview, pos: int) -> tuple[int, int]:
    """An unsigned LEB128 integer at ``pos``: (value, position after it)."""
    value = shift = 0
    while True:
        if pos >= len(data):
            raise _Cut
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7
        if shift > 63:
            raise ValueError("a varint longer than 9 bytes")


def _cid_end(data: bytes | memoryview, pos: int) -> int:
    """Where the binary CID starting at ``pos`` ends (CIDv0: a bare SHA-256 multihash)."""
    if pos + 2 > len(data):
        raise _Cut
    if data[pos] == _SHA256 and data[pos + 1] == 0x20:
        end = pos + 34
    else:
        version, after = _varint(data, pos)
        if version != 1:
            raise ValueError(f"a CID of version {version}")
        _, after = _varint(data, after)  # codec
        _, after = _varint(data, after)  # hash function
        size, after = _varint(data, after)
        end = after + size
    if end > len(data):
        raise _Cut
    return end


def _key(cid: bytes | memoryview) -> int:
    """The index key of a CID: its last 8 bytes (digest bytes; a collision is caught when the
    block's own CID is compared)."""
    return int.from_bytes(bytes(cid[-8:]), "little")


def _header(head: bytes) -> tuple[dict[str, Any], int]:
    """The CAR header and where the first block starts; ValueError/_Cut when it is none."""
    length, start = _varint(head, 0)
    if length == 0 or length > _SNIFF_BYTES:
        raise ValueError("no CAR header")
    if start + length > len(head):
        raise _Cut
    header = libipld.decode_dag_cbor(head[start : start + length])
    if not isinstance(header, dict):
        raise ValueError("the CAR header is not a map")
    return header, start + length


def _link(value: Any) -> bytes | None:
    """A decoded DAG-CBOR link as binary CID bytes (libipld gives bytes; older releases a
    string), or None."""
    if isinstance(value, bytes) and value:
        return value
    if isinstance(value, str) and value:
        try:
            return bytes(libipld.decode_multibase(value)[1])
        except ValueError:
            return None
    return None


class _Blocks:
    """The CAR's blocks by CID: a scan of the file into a sorted index, then one seek a block."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.size = path.stat().st_size
        self._file: IO[bytes] = open(path, "rb")  # noqa: SIM115 - closed by close()
        try:
            self.root, first = self._read_header()
            self._keys, self._offsets, self._lengths = self._scan(first)
        except BaseException:
            self._file.close()
            raise

    def _read_header(self) -> tuple[bytes, int]:
        head = self._file.read(_SNIFF_BYTES)
        try:
            header, first = _header(head)
        except _Cut:
            raise ImportFormatError(
                f"{self.path}: the CAR file ends inside its header (it is cut short)"
            ) from None
        except ValueError as exc:
            raise ImportFormatError(
                f"{self.path}: expected a Bluesky repository (a CAR file), found {_describe(head)} ({exc})"
            ) from None
        if header.get("version") != 1:
            raise ImportFormatError(
                f"{self.path}: expected a CAR version 1 (a Bluesky repository export), "
                f"found CAR version {header.get('version')!r}"
            )
        roots = header.get("roots")
        root = _link(roots[0]) if isinstance(roots, list) and len(roots) == 1 else None
        if root is None:
            raise ImportFormatError(f"{self.path}: expected one root in the CAR header, found {roots!r:.60}")
        return root, first

    def _scan(
        self, pos: int
    ) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint64], npt.NDArray[np.uint32]]:
        """Index every block: key, offset of its CID, length of CID and data."""
        keys, offsets, lengths = array("Q"), array("Q"), array("I")
        buffer, start = b"", pos  # buffer holds the file from `start`
        file, size = self._file, self.size
        while pos < size:
            at = pos - start
            if at + 64 > len(buffer) and start + len(buffer) < size:
                file.seek(pos)
                buffer, start, at = file.read(SCAN_CHUNK), pos, 0
            try:
                length, cid_at = _varint(buffer, at)
                cid_end = _cid_end(buffer, cid_at)
            except _Cut:
                raise self._cut() from None
            except ValueError as exc:
                raise ImportFormatError(
                    f"{self.path}: not a valid CAR block at byte {pos:,} ({exc})"
                ) from None
            if length < cid_end - cid_at or length > MAX_BLOCK:
                raise ImportFormatError(f"{self.path}: a CAR block of {length:,} bytes at byte {pos:,}")
            block_at = start + cid_at
            if block_at + length > size:
                raise self._cut()
            keys.append(_key(buffer[cid_end - 8 : cid_end]))
            offsets.append(block_at)
            lengths.append(length)
            pos = block_at + length
        order = np.argsort(np.frombuffer(keys, dtype=np.uint64), kind="stable")
        return (
            np.frombuffer(keys, dtype=np.uint64)[order],
            np.frombuffer(offsets, dtype=np.uint64)[order],
            np.frombuffer(lengths, dtype=np.uint32)[order],
        )

    def _cut(self) -> ImportFormatError:
        return ImportFormatError(f"{self.path}: the CAR file ends inside a block (it is cut short)")

    def __len__(self) -> int:
        return len(self._keys)

    def get(self, cid: bytes) -> bytes | None:
        """The block's data, or None when the CAR lacks it; ImportFormatError when it is damaged."""
        key = np.uint64(_key(cid))
        index = int(np.searchsorted(self._keys, key))
        while index < len(self._keys) and self._keys[index] == key:
            self._file.seek(int(self._offsets[index]))
            section = self._file.read(int(self._lengths[index]))
            if section[: len(cid)] == cid:
                data = section[len(cid) :]
                if len(section) != int(self._lengths[index]):
                    raise self._cut()
                self._check_hash(cid, data)
                return data
            index += 1
        return None

    def _check_hash(self, cid: bytes, data: bytes) -> None:
        """A SHA-256 CID must hash its data (a damaged file is refused, not misread)."""
        if len(cid) == 34:
            code, digest = cid[0], cid[2:]
        else:
            _, after = _varint(cid, 0)
            _, after = _varint(cid, after)
            code, after = _varint(cid, after)
            _, after = _varint(cid, after)
            digest = cid[after:]
        if code == _SHA256 and hashlib.sha256(data).digest() != digest:
            raise ImportFormatError(f"{self.path}: a block does not match its CID (the file is damaged)")

    def close(self) -> None:
        self._file.close()


def _describe(head: bytes) -> str:
    for magic, kind in ((b"PK\x03\x04", "a zip archive"), (b"\x1f\x8b", "a gzip file"), (b"{", "JSON")):
        if head.startswith(magic):
            return kind
    return magic_kind(head) or ("something else" if head else "an empty file")


# -- text -----------------------------------------------------------------------------------------


def restore_links(text: str, facets: Any) -> str:
    """``text`` with each link facet's shortened visible text replaced by the facet's URI.

    Facet offsets count UTF-8 bytes; a facet whose offsets fall outside the text or inside a
    character, overlaps an earlier one, or covers words that are no shortened form of its URI
    (a client's "read this" link) leaves the text as it is."""
    if not facets or not isinstance(facets, list):
        return text
    spans: list[tuple[int, int, str]] = []
    for facet in facets:
        if not isinstance(facet, dict) or not isinstance(facet.get("index"), dict):
            continue
        start, end = facet["index"].get("byteStart"), facet["index"].get("byteEnd")
        features = _list(facet.get("features"))
        uri = next(
            (
                f["uri"]
                for f in features
                if isinstance(f, dict) and f.get("$type") == _LINK_FACET and isinstance(f.get("uri"), str)
            ),
            None,
        )
        if uri and isinstance(start, int) and isinstance(end, int) and 0 <= start < end:
            spans.append((start, end, uri))
    if not spans:
        return text
    data = text.encode("utf-8")
    pieces: list[bytes] = []
    done = 0
    for start, end, uri in sorted(spans):
        if start < done or end > len(data):
            continue
        try:
            shown = data[start:end].decode("utf-8")
        except UnicodeDecodeError:  # an offset inside a character
            continue
        if shown == uri or not is_shortened_url(shown, uri):
            continue
        pieces += [data[done:start], uri.encode("utf-8")]
        done = end
    if not pieces:
        return text
    pieces.append(data[done:])
    return b"".join(pieces).decode("utf-8")


def bsky_url(uri: str) -> str:
    """The bsky.app page of an ``at://`` URI (a post, feed or list); the URI itself otherwise."""
    parts = uri.removeprefix("at://").split("/")
    if not uri.startswith("at://") or len(parts) != 3:
        return uri
    did, collection, rkey = parts
    page = {POST: "post", "app.bsky.feed.generator": "feed", "app.bsky.graph.list": "lists"}.get(collection)
    return f"https://bsky.app/profile/{did}/{page}/{rkey}" if page else uri


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _uri_of(value: Any) -> str:
    """The ``uri`` of a strong reference (``{uri, cid}``)."""
    if isinstance(value, dict) and isinstance(value.get("uri"), str):
        return str(value["uri"])
    return ""


def _blob_cid(blob: Any) -> str:
    if not isinstance(blob, dict):
        return ""
    ref = _link(blob.get("ref"))
    if ref is not None:
        try:
            return str(libipld.encode_cid(ref))
        except ValueError:
            return ""
    legacy = blob.get("cid")  # the blob format of 2022
    return legacy if isinstance(legacy, str) else ""


def _alt(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _embedded(embed: Any) -> tuple[tuple[Media, ...], str]:
    """A post's media and quoted record from its ``embed``."""
    if not isinstance(embed, dict):
        return (), ""
    kind = embed.get("$type")
    if kind == "app.bsky.embed.recordWithMedia":
        media, _ = _embedded(embed.get("media"))
        return media, _uri_of(
            embed.get("record", {}).get("record") if isinstance(embed.get("record"), dict) else None
        )
    if kind == "app.bsky.embed.record":
        return (), _uri_of(embed.get("record"))
    if kind == "app.bsky.embed.images" and isinstance(embed.get("images"), list):
        return tuple(
            Media(type="image", url=_blob_cid(image.get("image")), alt=_alt(image.get("alt")))
            for image in embed["images"]
            if isinstance(image, dict)
        ), ""
    if kind == "app.bsky.embed.video":
        return (Media(type="video", url=_blob_cid(embed.get("video")), alt=_alt(embed.get("alt"))),), ""
    return (), ""


def _labels(record: dict[str, Any]) -> str:
    """Self-labels (``nsfw``, ``graphic-media``...): Bluesky's content warning."""
    labels = record.get("labels")
    values = labels.get("values") if isinstance(labels, dict) else None
    if not isinstance(values, list):
        return ""
    return ", ".join(v["val"] for v in values if isinstance(v, dict) and isinstance(v.get("val"), str))


# -- the reader -----------------------------------------------------------------------------------


class BlueskyCarReader:
    """One repository CAR as an :class:`~mcpkit.archive.importers.base.ExportReader`."""

    format = FORMAT

    def __init__(self, path: Path, limits: ReadLimits | None = None, *, handle: str = "") -> None:
        self.path = Path(path)
        self.limits = limits or ReadLimits()
        if not self.path.is_file():
            raise ImportFormatError(f"{self.path}: no such file")
        if self.path.stat().st_size > self.limits.max_bytes:
            raise ImportFormatError(
                f"{self.path}: {self.path.stat().st_size:,} bytes, more than the "
                f"{self.limits.max_bytes:,}-byte limit; raise --max-bytes if this export is really that large"
            )
        self._blocks = _Blocks(self.path)
        try:
            self.did, self._data = self._commit()
        except BaseException:
            self._blocks.close()
            raise
        self.handle = handle.strip().removeprefix("@")
        if self.handle and _HANDLE.fullmatch(self.handle) is None:
            self._blocks.close()
            raise ImportFormatError(
                f"{self.path}: expected a Bluesky handle such as alice.bsky.social, found {handle[:60]!r}"
            )
        self.account = f"@{self.handle}" if self.handle else self.did
        self._user = self.handle or self.did
        self._summary = ReadSummary()

    def _commit(self) -> tuple[str, bytes]:
        data = self._block(self._blocks.root, "the commit")
        try:
            commit = libipld.decode_dag_cbor(data)
        except ValueError as exc:
            raise ImportFormatError(f"{self.path}: the root block is not DAG-CBOR ({exc})") from None
        did = commit.get("did") if isinstance(commit, dict) else None
        tree = _link(commit.get("data")) if isinstance(commit, dict) else None
        version = commit.get("version") if isinstance(commit, dict) else None
        if not isinstance(did, str) or not did.startswith("did:") or tree is None or version not in (2, 3):
            found = sorted(commit)[:6] if isinstance(commit, dict) else type(commit).__name__
            raise ImportFormatError(
                f"{self.path}: expected a repository commit (did, data, version 3) as the CAR's root, found {found}"
            )
        return did, tree

    def _block(self, cid: bytes, what: str) -> bytes:
        data = self._blocks.get(cid)
        if data is None:
            raise ImportFormatError(
                f"{self.path}: the CAR lacks {what} ({_cid_text(cid)}); the file is cut short or incomplete"
            )
        return data

    def _entries(self) -> Iterator[tuple[str, bytes]]:
        """``(collection/rkey, record CID)`` for every key of the tree, in key order."""
        previous = b""

        def node(cid: bytes, depth: int) -> Iterator[tuple[bytes, bytes]]:
            nonlocal previous
            if depth > MAX_DEPTH:
                raise ImportFormatError(f"{self.path}: the record tree is deeper than {MAX_DEPTH} levels")
            try:
                value = libipld.decode_dag_cbor(self._block(cid, "a node of the record tree"))
            except ValueError as exc:
                raise ImportFormatError(
                    f"{self.path}: a node of the record tree is not DAG-CBOR ({exc})"
                ) from None
            entries = value.get("e") if isinstance(value, dict) else None
            if not isinstance(entries, list):
                raise ImportFormatError(f"{self.path}: a node of the record tree has no entries list")
            left = _link(value.get("l"))
            if left is not None:
                yield from node(left, depth + 1)
            key = b""
            for entry in entries:
                prefix, suffix = (entry.get("p"), entry.get("k")) if isinstance(entry, dict) else (None, None)
                record = _link(entry.get("v")) if isinstance(entry, dict) else None
                if (
                    not isinstance(prefix, int)
                    or not isinstance(suffix, bytes)
                    or record is None
                    or prefix > len(key)
                ):
                    raise ImportFormatError(f"{self.path}: a malformed entry in the record tree")
                key = key[:prefix] + suffix
                if key <= previous:
                    raise ImportFormatError(f"{self.path}: the record tree's keys are out of order")
                previous = key
                yield key, record
                right = _link(entry.get("t"))
                if right is not None:
                    yield from node(right, depth + 1)

        for key, record in node(self._data, 0):
            try:
                yield key.decode("utf-8"), record
            except UnicodeDecodeError:
                self._summary.add_malformed(f"a key that is not UTF-8: {key[:40]!r}")

    def records(self) -> Iterator[Post]:
        try:
            for key, cid in self._entries():
                collection, _, rkey = key.partition("/")
                if collection not in (POST, REPOST, LIKE):
                    self._summary.skipped[collection] += 1
                    continue
                post = self._post(collection, rkey, cid)
                if isinstance(post, str):
                    self._summary.add_malformed(f"{key}: {post}")
                    continue
                self._summary.kinds[post.kind] += 1
                yield post
        finally:
            self._blocks.close()

    def _post(self, collection: str, rkey: str, cid: bytes) -> Post | str:
        try:
            record = libipld.decode_dag_cbor(self._block(cid, f"the record {collection}/{rkey}"))
        except ValueError as exc:
            return f"not DAG-CBOR ({exc})"
        if not isinstance(record, dict):
            return "not a record"
        source_id = f"at://{self.did}/{collection}/{rkey}"
        timestamp = utc_timestamp(record.get("createdAt"))
        if collection != POST:
            subject = _uri_of(record.get("subject"))
            if not subject:
                return "no subject"
            kind = "repost" if collection == REPOST else "like"
            return export_post(
                PLATFORM,
                source_id,
                kind,
                self.account,
                timestamp=timestamp,
                url=bsky_url(subject),
                repost_of=subject if kind == "repost" else "",
            )
        text = record.get("text")
        if not isinstance(text, str):
            return "a post without text"
        reply = _dict(record.get("reply"))
        reply_to, thread_root = _uri_of(reply.get("parent")), _uri_of(reply.get("root"))
        media, quote_of = _embedded(record.get("embed"))
        kind = "reply" if reply_to else "quote" if quote_of else "post"
        langs = record.get("langs")
        return export_post(
            PLATFORM,
            source_id,
            kind,
            self.account,
            user=self._user,
            timestamp=timestamp,
            url=f"https://bsky.app/profile/{self.did}/post/{rkey}",
            content=restore_links(text, record.get("facets")),
            reply_to=reply_to,
            thread_root=thread_root if reply_to else "",
            quote_of=quote_of,
            content_warning=_labels(record),
            lang=langs[0]
            if isinstance(langs, list) and len(langs) == 1 and isinstance(langs[0], str)
            else "",
            media=media,
        )

    def summary(self) -> ReadSummary:
        return self._summary

    @property
    def blocks(self) -> int:
        """Blocks in the CAR (not records: the tree decides those)."""
        return len(self._blocks)


def _cid_text(cid: bytes) -> str:
    try:
        return str(libipld.encode_cid(cid))
    except ValueError:
        return cid.hex()[:20]


# -- the module's face ---------------------------------------------------------------------------


def sniff(path: Path) -> bool:
    """Whether ``path`` starts as a CAR v1 with one root (cheap: its first bytes). Never raises."""
    try:
        with open(path, "rb") as file:
            header, _ = _header(file.read(_SNIFF_BYTES))
        roots = header.get("roots")
        return header.get("version") == 1 and isinstance(roots, list) and len(roots) == 1
    except (OSError, ValueError, _Cut, TypeError):
        return False


def open_reader(path: Path, limits: ReadLimits | None = None, *, handle: str = "") -> BlueskyCarReader:
    """A reader of the repository CAR at ``path``; ``handle`` (``alice.bsky.social``), when the
    caller knows it, names the account instead of the DID. :class:`ImportFormatError` (one
    line) when the file is not a repository CAR or is cut short."""
    return BlueskyCarReader(Path(path), limits, handle=handle)
