"""Mastodon archive reader: every trap of a real archive, each packing, bad input, bounded memory,
and property tests of the HTML-to-text rules and of the streamed JSON collection."""

from __future__ import annotations

import gzip
import io
import json
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpkit.archive.errors import ImportFormatError
from mcpkit.archive.importers import mastodon
from mcpkit.archive.importers.html_text import html_to_text
from mcpkit.archive.importers.mastodon import JsonCollection
from mcpkit.archive.posts import Post, post_key
from tests.archive.importers.test_json_stream import JSON_VALUE
from tests.export_fixtures import Expected, one_line_refusal, other_exports
from tests.export_fixtures.mastodon import (
    ACCOUNT,
    Archive,
    actor,
    escape,
    hashtag_html,
    large_archive,
    link_html,
    mastodon_html,
    mention_html,
    note,
    sample_archive,
    tar_bytes,
    write_archive,
)

PACKINGS = ["tar.gz", "zip", "dir"]


def _write(tmp_path: Path, archive: Archive, packing: str) -> Path:
    path = tmp_path / ("archive" if packing == "dir" else f"archive.{packing}")
    if packing == "dir":
        path.mkdir()
    return write_archive(path, archive, packing)


def _read(path: Path) -> tuple[mastodon.MastodonReader, list[Post]]:
    reader = mastodon.open_reader(path)
    return reader, list(reader.records())


@pytest.mark.parametrize("packing", PACKINGS)
def test_sample_archive_reads_as_a_person_expects(tmp_path: Path, packing: str) -> None:
    archive, expected, skipped = sample_archive()
    path = _write(tmp_path, archive, packing)
    assert mastodon.sniff(path)
    reader, posts = _read(path)
    assert [Expected.of(p) for p in posts] == expected
    assert reader.account == ACCOUNT
    assert {p.account for p in posts} == {ACCOUNT}
    assert {p.platform for p in posts} == {"mastodon"}
    assert all(p.post_id == post_key("mastodon", p.source_id) for p in posts)
    summary = reader.summary()
    assert dict(summary.skipped) == skipped
    assert summary.malformed == 1 and summary.samples == ["outbox.json item 11: not an object ('42')"]
    assert dict(summary.kinds) == {"post": 6, "reply": 1, "quote": 1, "repost": 1, "like": 2, "bookmark": 1}
    done, total = reader.position()
    assert done == total > 0


def test_direct_messages_are_read_marked_direct(tmp_path: Path) -> None:
    """A DM is kept with its mark, which keeps it out of every search that does not ask for it
    (tests/archive/test_visibility.py); nothing else of the archive is marked so."""
    archive, _, _ = sample_archive()
    _, posts = _read(_write(tmp_path, archive, "tar.gz"))
    assert [p.content for p in posts if p.visibility == "direct"] == ["@bob secret"]


def test_the_account_comes_from_the_activities_when_the_actor_is_missing(tmp_path: Path) -> None:
    archive, _, _ = sample_archive()
    archive.actor = None
    reader, posts = _read(_write(tmp_path, archive, "tar.gz"))
    assert reader.account == ACCOUNT and posts[0].account == ACCOUNT


def test_the_actor_names_the_account_in_a_zip(tmp_path: Path) -> None:
    archive, _, _ = sample_archive()
    archive.actor = actor("Alice_Renamed")
    reader, posts = _read(_write(tmp_path, archive, "zip"))
    assert reader.account == "@Alice_Renamed@example.social" == posts[0].account


def test_an_empty_outbox_reads_no_records(tmp_path: Path) -> None:
    reader, posts = _read(_write(tmp_path, Archive([]), "tar.gz"))
    assert posts == [] and reader.summary().records == 0


# -- not an archive, damaged archives ----------------------------------------------------------


def _one_line_refusal(path: Path) -> str:
    return one_line_refusal(lambda: list(mastodon.open_reader(path).records()))


def test_what_is_not_a_mastodon_archive_is_refused_in_one_line(tmp_path: Path) -> None:
    other_tar = tmp_path / "other.tar.gz"
    other_tar.write_bytes(gzip.compress(tar_bytes([("notes.txt", b"hello")])))
    empty = tmp_path / "empty"
    empty.mkdir()
    for path in (*other_exports(tmp_path), other_tar, empty, tmp_path / "missing.tar.gz"):
        assert not mastodon.sniff(path)
        message = _one_line_refusal(path)
        assert "expected a Mastodon archive" in message or "no such file" in message


@pytest.mark.parametrize("cut", [0.3, 0.6, 0.9])
def test_a_truncated_tar_gz_is_refused_in_one_line(tmp_path: Path, cut: float) -> None:
    archive = large_archive(300)
    whole = _write(tmp_path, archive, "tar.gz").read_bytes()
    path = tmp_path / "cut.tar.gz"
    path.write_bytes(whole[: int(len(whole) * cut)])
    message = _one_line_refusal(path)
    assert "cut short" in message or "truncated" in message or "damaged" in message


def test_bad_json_in_the_outbox_is_refused_in_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "a"
    folder.mkdir()
    (folder / "outbox.json").write_text(
        '{"type": "OrderedCollection", "orderedItems": [{"type": "Create"} {]}'
    )
    assert "not valid JSON" in _one_line_refusal(folder)


def test_an_outbox_without_items_is_not_an_outbox(tmp_path: Path) -> None:
    folder = tmp_path / "a"
    folder.mkdir()
    (folder / "outbox.json").write_text('{"type": "Person", "name": "x"}')
    assert "no orderedItems" in _one_line_refusal(folder)


# -- HTML to text ---------------------------------------------------------------------------------


def test_html_rules() -> None:
    url = "https://example.org/a/very/long/path?q=1&r=2"
    assert html_to_text(f"<p>see {link_html(url)}</p>") == f"see {url}"
    assert html_to_text("<p>it&#39;s &amp;#39; &lt;b&gt;</p>") == "it's &#39; <b>"
    assert html_to_text("<p>one</p><p>two<br>three<br/>four</p>") == "one\n\ntwo\nthree\nfour"
    assert html_to_text(f"<p>{mention_html('bob', 'h.example')} {hashtag_html('tag')}</p>") == "@bob #tag"
    # a link shortened in the HTML itself is restored; anchor words that are no URL are kept
    assert html_to_text(f'<a href="{url}">example.org/a/very/lo…</a>') == url
    assert html_to_text(f'<a href="{url}">read this</a>') == "read this"
    assert html_to_text("no markup\nat all") == "no markup at all"
    assert html_to_text("<script>x()</script><p>kept</p>") == "kept"


LINE = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\n\r\x00"),
    min_size=1,
    max_size=30,
).filter(lambda line: line.strip() != "")
TEXT = st.lists(st.lists(LINE, min_size=1, max_size=4).map("\n".join), min_size=1, max_size=4).map(
    "\n\n".join
)


@settings(max_examples=300, deadline=None)
@given(TEXT)
def test_any_text_survives_mastodon_escaping_and_import_unchanged(text: str) -> None:
    text = text.strip()
    if not text or "\n\n\n" in text:
        return
    assert html_to_text(mastodon_html(text)) == text


WORD = st.text(alphabet=st.characters(whitelist_categories=("L", "N")), min_size=1, max_size=12)
WRAP = st.sampled_from(
    [
        "{}",
        "<p>{}</p>",
        "<span>{}</span>",
        '<span class="invisible">{}</span>',
        '<span class="ellipsis">{}</span>',
        "<b>{}</b><br />",
        '<a href="https://h.example/tags/x" class="mention hashtag">#<span>{}</span></a>',
        '<span class="h-card"><a href="https://h.example/@x" class="u-url mention">@<span>{}</span></a></span>',
        "<blockquote><p>{}</p></blockquote>",
        "<ul><li>{}</li></ul>",
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(WORD, WRAP), min_size=1, max_size=12))
def test_html_to_text_keeps_every_word(pieces: list[tuple[str, str]]) -> None:
    html = " ".join(wrap.format(escape(word)) for word, wrap in pieces)
    text = html_to_text(html)
    position = 0
    for word, _ in pieces:  # every word, in order
        found = text.find(word, position)
        assert found >= 0, (word, text)
        position = found + len(word)


TEXT_PIECE = st.lists(
    st.sampled_from([*"ab c&;#39>'\"\n…./:", "&amp;", "&#39;", "&lt;", "&gt;", "&amp;#39;"]), max_size=8
).map("".join)
MARKUP = st.recursive(
    TEXT_PIECE,
    lambda inner: (
        st.builds(
            lambda tag, attrs, body: f"<{tag}{attrs}>{body}</{tag}>",
            st.sampled_from(["p", "span", "a", "b", "pre", "li", "P", "A"]),
            st.sampled_from(
                [
                    "",
                    ' class="invisible"',
                    ' href="https://h.example/x/y?z=1&amp;w=2"',
                    " href='https://h.example/a'",
                    ' href="https://h.example/abc" rel="nofollow"',
                    " data-x",
                ]
            ),
            st.lists(inner, max_size=3).map("".join),
        )
        | st.sampled_from(["<br>", "<br />", "<br/>", "<hr>", "<!-- c -->", "<script>x<y</script>", "a < b"])
    ),
    max_leaves=10,
)


@settings(max_examples=400, deadline=None)
@given(st.lists(MARKUP, max_size=5).map("".join))
def test_the_fast_tokenizer_reads_as_html_parser_does(html: str) -> None:
    assert html_to_text(html) == html_to_text(html, fast=False)


# -- the streamed collection ----------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(
    st.lists(JSON_VALUE, max_size=12),
    st.dictionaries(st.sampled_from(["type", "id", "totalItems", "@context"]), JSON_VALUE, max_size=3),
    st.integers(1, 64),
    st.sampled_from([None, 0, 2]),
)
def test_collection_items_are_decoded_one_by_one_whatever_the_chunks(
    items: list[object], others: dict[str, object], chunk: int, indent: int | None
) -> None:
    text = json.dumps({**others, "orderedItems": items}, indent=indent, ensure_ascii=False)
    collection = JsonCollection(io.StringIO(text), "outbox.json", chunk=chunk)
    assert list(collection.items()) == items
    assert collection.found


@settings(max_examples=100, deadline=None)
@given(st.lists(JSON_VALUE, min_size=1, max_size=6), st.integers(1, 16), st.data())
def test_a_collection_cut_anywhere_is_refused(items: list[object], chunk: int, data: st.DataObject) -> None:
    text = json.dumps({"orderedItems": items})
    cut = data.draw(st.integers(0, len(text) - 1))
    with pytest.raises(ImportFormatError):
        list(JsonCollection(io.StringIO(text[:cut]), "outbox.json", chunk=chunk).items())


def test_the_outbox_is_never_held_whole(tmp_path: Path) -> None:
    """A 30 MB outbox is read with a peak of a few MB: one buffer and one item at a time."""
    item = note(1, mastodon_html("x" * 2000))
    folder = tmp_path / "a"
    folder.mkdir()
    count = 12_000
    with open(folder / "outbox.json", "w") as out:
        out.write('{"type": "OrderedCollection", "orderedItems": [')
        out.write(",".join(json.dumps({**item, "id": f"{i}"}) for i in range(count)))
        out.write("]}")
    size = (folder / "outbox.json").stat().st_size
    assert size > 25_000_000
    reader = mastodon.open_reader(folder)
    tracemalloc.start()
    try:
        read = sum(1 for _ in reader.records())
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert read == count
    assert peak < size / 4, f"peak {peak:,} bytes for a {size:,}-byte outbox"


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(TEXT, st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=30))
def test_any_text_survives_a_whole_archive_unchanged(
    tmp_path_factory: pytest.TempPathFactory, text: str, warning: str
) -> None:
    """Through the archive, not only the HTML rules: escaped by Mastodon, packed, read back."""
    text = text.strip()
    if not text or "\n\n\n" in text:
        return
    folder = tmp_path_factory.mktemp("archive")
    write_archive(folder, Archive([note(1, mastodon_html(text), summary=warning or None)]), "dir")
    _, posts = _read(folder)
    assert [(p.content, p.content_warning) for p in posts] == [(text, warning.strip())]
