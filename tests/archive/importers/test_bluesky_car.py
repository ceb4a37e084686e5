"""Bluesky repository CAR reader: CARs written by the test with libipld from records it makes
(a real Merkle Search Tree), every trap of the facts file, damaged files, bounded memory, and
property tests of the tree walk and of link facets at arbitrary UTF-8 offsets."""

from __future__ import annotations

import tracemalloc
from pathlib import Path
from typing import Any

import libipld
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpkit.archive.importers import bluesky_car
from mcpkit.archive.importers.bluesky_car import restore_links
from mcpkit.archive.posts import Post, post_key
from tests.export_fixtures import Expected, one_line_refusal, other_exports
from tests.export_fixtures.bluesky import (
    DID,
    Repository,
    build_blocks,
    cid_of,
    large_repository,
    sample_repository,
    text_with_links,
    varint,
    write_car,
)


def _read(path: Path, **options: Any) -> tuple[bluesky_car.BlueskyCarReader, list[Post]]:
    reader = bluesky_car.open_reader(path, **options)
    return reader, list(reader.records())


def test_sample_repository_reads_as_a_person_expects(tmp_path: Path) -> None:
    repo, expected, skipped = sample_repository()
    path = write_car(tmp_path / "repo.car", repo)
    assert bluesky_car.sniff(path)
    reader, posts = _read(path)
    assert [Expected.of(p, f"at://{DID}/") for p in posts] == expected
    assert reader.account == DID and {p.account for p in posts} == {DID}
    assert {p.platform for p in posts} == {"bluesky"}
    assert all(p.post_id == post_key("bluesky", p.source_id) for p in posts)
    assert all(p.source_id.startswith(f"at://{DID}/") for p in posts)
    authored = [p for p in posts if p.kind in ("post", "reply", "quote")]
    assert {p.user for p in authored} == {DID} and {p.user for p in posts if p not in authored} == {""}
    summary = reader.summary()
    assert dict(summary.skipped) == skipped and summary.malformed == 0
    assert dict(summary.kinds) == {"like": 2, "post": 2, "reply": 1, "quote": 2, "repost": 1}


def test_two_records_in_one_block_count_twice_and_unlinked_blocks_not_at_all(tmp_path: Path) -> None:
    repo, _, skipped = sample_repository()
    record_blocks = {libipld.encode_dag_cbor(record) for record in repo.records.values()}
    assert len(record_blocks) == len(repo.records) - 1  # the two likes are one block
    _, posts = _read(write_car(tmp_path / "repo.car", repo))
    assert len(posts) + sum(skipped.values()) == len(repo.records)
    assert "deleted long ago" not in {p.content for p in posts}  # the stale block


def test_a_handle_given_by_the_caller_names_the_account(tmp_path: Path) -> None:
    repo, _, _ = sample_repository()
    reader, posts = _read(write_car(tmp_path / "repo.car", repo), handle="@alice.bsky.social")
    assert reader.account == "@alice.bsky.social" == posts[0].account
    assert {p.user for p in posts if p.kind == "post"} == {"alice.bsky.social"}
    assert posts[2].url == f"https://bsky.app/profile/{DID}/post/3kpost000000a"  # URLs keep the DID


def test_a_large_repository_walks_a_deep_tree(tmp_path: Path) -> None:
    repo = large_repository(3000)
    path = write_car(tmp_path / "big.car", repo)
    reader, posts = _read(path)
    assert len(posts) == 3000
    assert [p.source_id for p in posts] == sorted(f"at://{DID}/{c}/{r}" for c, r in repo.records)
    root = libipld.decode_dag_cbor(build_blocks(repo)[1][libipld.decode_dag_cbor(_commit(repo))["data"]])
    assert root["l"] is not None or any(e["t"] for e in root["e"])  # more than one layer
    assert dict(reader.summary().kinds) == {"like": 600, "repost": 300, "post": 1800, "reply": 300}


def _commit(repo: Repository) -> bytes:
    root, blocks = build_blocks(repo)
    return blocks[root]


# -- damaged and foreign files ------------------------------------------------------------------


def _one_line_refusal(path: Path) -> str:
    return one_line_refusal(lambda: _read(path))


def test_what_is_not_a_repository_car_is_refused_in_one_line(tmp_path: Path) -> None:
    empty = tmp_path / "empty.car"
    empty.write_bytes(b"")
    v2 = tmp_path / "v2.car"
    header = libipld.encode_dag_cbor({"version": 2})
    v2.write_bytes(varint(len(header)) + header + bytes(40))
    for path in (*other_exports(tmp_path), empty):
        assert not bluesky_car.sniff(path)
        assert "expected" in _one_line_refusal(path) or "cut short" in _one_line_refusal(path)
    assert not bluesky_car.sniff(v2)
    assert "CAR version 2" in _one_line_refusal(v2)
    assert "no such file" in _one_line_refusal(tmp_path / "missing.car")


def test_a_root_that_is_no_commit_is_refused(tmp_path: Path) -> None:
    record = libipld.encode_dag_cbor({"text": "not a commit"})
    cid = cid_of(record)
    header = libipld.encode_dag_cbor({"version": 1, "roots": [cid]})
    path = tmp_path / "other.car"
    path.write_bytes(varint(len(header)) + header + varint(len(cid) + len(record)) + cid + record)
    assert bluesky_car.sniff(path)  # a CAR, but not a repository
    assert "expected a repository commit" in _one_line_refusal(path)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_a_car_cut_anywhere_is_refused_in_one_line(tmp_path: Path, data: st.DataObject) -> None:
    repo, _, _ = sample_repository()
    repo.stale = []  # so that every block is needed: any cut loses something
    whole = write_car(tmp_path / "whole.car", repo).read_bytes()
    cut = data.draw(st.integers(0, len(whole) - 1))
    path = tmp_path / "cut.car"
    path.write_bytes(whole[:cut])
    message = _one_line_refusal(path)
    assert "cut short" in message or "expected" in message


def test_a_damaged_block_is_refused(tmp_path: Path) -> None:
    repo, _, _ = sample_repository()
    data = bytearray(write_car(tmp_path / "repo.car", repo).read_bytes())
    at = data.find(b"replying to myself")
    data[at] ^= 0x20
    path = tmp_path / "damaged.car"
    path.write_bytes(bytes(data))
    assert "does not match its CID" in _one_line_refusal(path)


def test_tree_keys_out_of_order_are_refused(tmp_path: Path) -> None:
    record = libipld.encode_dag_cbor({"$type": "app.bsky.feed.like", "subject": {"uri": "at://x/y/z"}})
    rcid = cid_of(record)
    node = libipld.encode_dag_cbor(
        {
            "l": None,
            "e": [
                {"p": 0, "k": b"app.bsky.feed.like/b", "v": rcid, "t": None},
                {"p": 19, "k": b"a", "v": rcid, "t": None},
            ],
        }
    )
    ncid = cid_of(node)
    commit = libipld.encode_dag_cbor(
        {"did": DID, "version": 3, "data": ncid, "rev": "x", "prev": None, "sig": bytes(64)}
    )
    ccid = cid_of(commit)
    header = libipld.encode_dag_cbor({"version": 1, "roots": [ccid]})
    path = tmp_path / "bad.car"
    path.write_bytes(
        varint(len(header))
        + header
        + b"".join(varint(len(c) + len(d)) + c + d for c, d in ((ccid, commit), (ncid, node), (rcid, record)))
    )
    assert "out of order" in _one_line_refusal(path)


# -- memory ----------------------------------------------------------------------------------------


def test_the_car_is_never_held_whole(tmp_path: Path) -> None:
    """Reading holds the block index (20 bytes a block, 48 while it is sorted), the scan's
    read buffer and one record at a time: the bound the reader documents, not the file."""
    repo = large_repository(20_000)
    path = write_car(tmp_path / "big.car", repo)
    size = path.stat().st_size
    tracemalloc.start()
    try:
        reader = bluesky_car.open_reader(path)
        count = sum(1 for _ in reader.records())
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert count == 20_000
    bound = 2 * bluesky_car.SCAN_CHUNK + 64 * reader.blocks + (512 << 10)
    assert peak < bound < size, f"peak {peak:,} bytes for a {size:,}-byte CAR of {reader.blocks:,} blocks"


# -- properties --------------------------------------------------------------------------------------

RKEY = st.text(alphabet="abcdefghijklmnopqrstuvwxyz234567", min_size=1, max_size=13)
COLLECTION = st.sampled_from(
    ["app.bsky.feed.like", "app.bsky.feed.post", "app.bsky.feed.repost", "com.example.thing"]
)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sets(st.tuples(COLLECTION, RKEY), max_size=120), st.integers(0, 3))
def test_every_key_of_any_tree_is_read_once_in_order(
    tmp_path: Path, keys: set[tuple[str, str]], variety: int
) -> None:
    records: dict[tuple[str, str], dict[str, Any]] = {}
    for number, (collection, rkey) in enumerate(sorted(keys)):
        marker = number % (variety + 1)  # few distinct records: many keys share blocks
        if collection == "app.bsky.feed.post":
            records[collection, rkey] = {"text": f"post {marker}", "createdAt": "2024-01-01T00:00:00Z"}
        else:
            records[collection, rkey] = {
                "subject": {"uri": f"at://{DID}/app.bsky.feed.post/{marker}", "cid": ""}
            }
    path = write_car(tmp_path / "t.car", Repository(records, seed=variety))
    reader, posts = _read(path)
    read = [p.source_id.removeprefix(f"at://{DID}/") for p in posts]
    wanted = sorted(f"{c}/{r}" for c, r in keys if c != "com.example.thing")
    assert read == wanted
    assert reader.summary().skipped.get("com.example.thing", 0) == sum(
        c == "com.example.thing" for c, _ in keys
    )


URL = st.builds(
    lambda host, path: f"https://{host}.example/{path}",
    st.text(alphabet="abcdefghij", min_size=2, max_size=8),
    st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_/.?=&", max_size=40),
)
WORDS = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=15)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(WORDS, st.one_of(st.none(), URL)), max_size=6))
def test_link_facets_are_restored_at_any_utf8_offsets(pieces: list[tuple[str, str | None]]) -> None:
    text, facets, whole = text_with_links(pieces)
    assert restore_links(text, facets) == whole
    assert restore_links(text, list(reversed(facets))) == whole  # facets in any order


@settings(max_examples=300, deadline=None)
@given(
    st.text(alphabet=st.characters(min_codepoint=0x80, blacklist_categories=("Cs",)), max_size=15),
    st.lists(st.tuples(st.integers(-3, 60), st.integers(-3, 60))),
)
def test_facets_at_wrong_offsets_never_break_the_text(text: str, spans: list[tuple[int, int]]) -> None:
    """Offsets inside a character, past the end, reversed or overlapping, over words that are
    no shortened URL: the text stays as it was (and never fails to decode)."""
    facets = [
        {
            "index": {"byteStart": start, "byteEnd": end},
            "features": [{"$type": "app.bsky.richtext.facet#link", "uri": "https://x.example/a"}],
        }
        for start, end in spans
    ]
    assert restore_links(text, facets) == text


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=300))
def test_any_text_survives_a_whole_repository_unchanged(
    tmp_path_factory: pytest.TempPathFactory, text: str
) -> None:
    record = {"$type": "app.bsky.feed.post", "text": text, "createdAt": "2024-01-01T00:00:00Z"}
    path = write_car(
        tmp_path_factory.mktemp("car") / "r.car", Repository({("app.bsky.feed.post", "3k1"): record})
    )
    _, posts = _read(path)
    assert [p.content for p in posts] == [text]
