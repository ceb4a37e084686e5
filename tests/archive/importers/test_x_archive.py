"""The X archive reader: every generation, zipped or unpacked, with the traps of real archives."""

from __future__ import annotations

import json
import re
import tempfile
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpkit.archive.errors import ImportFormatError
from mcpkit.archive.importers.base import ExportReader, Progressive, ReadLimits
from mcpkit.archive.importers.x_archive import XArchiveReader, open_reader, sniff
from mcpkit.archive.posts import Media, Post, post_key
from tests.export_fixtures.x_archive import (
    GENERATIONS,
    XLike,
    XMedia,
    XTweet,
    archive_files,
    escape,
    expected_kind,
    expected_text,
    js_file,
    trap_records,
    write_x_archive,
)

EDITED_FIRST = "1623552437155561484"


def _read(path: Path, limits: ReadLimits | None = None) -> tuple[XArchiveReader, dict[str, Post]]:
    reader = open_reader(path, limits or ReadLimits())
    posts = list(reader.records())
    by_id = {p.source_id: p for p in posts}
    assert len(by_id) == len(posts), "every record once"
    return reader, by_id


def _archive(tmp_path: Path, generation: str, *, zipped: bool = True, **options: object) -> Path:
    tweets, likes = trap_records(generation)
    dest = tmp_path / (f"{generation}.zip" if zipped else generation)
    return write_x_archive(dest, tweets, likes, generation=generation, zipped=zipped, **options)  # type: ignore[arg-type]


@pytest.mark.parametrize("zipped", [True, False], ids=["zip", "folder"])
@pytest.mark.parametrize("generation", GENERATIONS)
def test_every_generation_reads_with_the_counts_kinds_and_text_a_person_expects(
    tmp_path: Path, generation: str, zipped: bool
) -> None:
    tweets, likes = trap_records(generation)
    path = _archive(tmp_path, generation, zipped=zipped)
    assert sniff(path)
    reader, posts = _read(path)
    assert isinstance(reader, ExportReader) and isinstance(reader, Progressive)
    assert reader.format == "x-archive" and reader.account == "@alice"

    authored = [t for t in tweets if t.id != EDITED_FIRST]
    assert sorted(posts) == sorted([t.id for t in authored] + [like.id for like in likes])
    summary = reader.summary()
    expected_kinds: dict[str, int] = {}
    for tweet in authored:
        expected_kinds[expected_kind(tweet)] = expected_kinds.get(expected_kind(tweet), 0) + 1
    if likes:
        expected_kinds["like"] = len(likes)
    assert dict(summary.kinds) == expected_kinds
    assert summary.malformed == 0
    for tweet in authored:
        post = posts[tweet.id]
        assert post.content == expected_text(tweet, generation), tweet.id
        assert post.kind == expected_kind(tweet), tweet.id
        assert post.post_id == post_key("x", tweet.id) == int(tweet.id)
        assert post.timestamp == tweet.created
        assert post.user == "alice" and post.account == "@alice" and post.platform == "x"
        assert post.url == f"https://x.com/alice/status/{tweet.id}"
        assert post.log_type == 1
        assert post.reply_to == tweet.reply_to
    assert reader.position()[0] == reader.position()[1] > 0


def test_texts_are_unescaped_once_and_links_expanded(tmp_path: Path) -> None:
    _, posts = _read(_archive(tmp_path, "current"))
    assert posts["1623552437155561474"].content == "A plain post: fish & chips <3 > 2"
    assert posts["1623552437155561476"].content == (
        "Read this https://example.com/a?b=1&c=2 and that https://example.org/x"
    )
    assert posts["1623552437155561477"].content == "Two pictures"  # the media link is dropped


def test_reposts_are_cut_in_current_archives_and_whole_in_grailbird(tmp_path: Path) -> None:
    _, current = _read(_archive(tmp_path, "current"))
    _, grailbird = _read(_archive(tmp_path, "grailbird"))
    cut, whole = current["1623552437155561475"], grailbird["1623552437155561475"]
    assert cut.kind == whole.kind == "repost"
    assert cut.content.startswith("RT @bob: Reposted words") and cut.content.endswith("…")
    assert whole.content.startswith(cut.content[:-1]) and len(whole.content) > len(cut.content)
    assert whole.repost_of == "1623000000000000001"  # retweeted_status names it
    assert cut.repost_of == ""  # a current archive does not, unless the repost carries media
    assert current["1623552437155561486"].repost_of == "1623000000000000002"
    assert current["1623552437155561486"].content == "RT @frank: a picture worth reposting"


def test_long_posts_get_their_whole_note_even_when_three_share_one_second(tmp_path: Path) -> None:
    tweets, _ = trap_records("current")
    _, posts = _read(_archive(tmp_path, "current"))
    thread = ["1623552437155561471", "1623552437155561472", "1623552437155561473"]
    assert len({posts[i].timestamp for i in thread}) == 1
    for tweet in (t for t in tweets if t.note):
        content = posts[tweet.id].content
        assert content == tweet.text and "…" not in content
        assert "& more" in content and "<angle brackets>" in content  # the note is not escaped
    # the reply's leading @mention and the quote's trailing link are put back
    assert posts["1623552437155561472"].content.startswith("@alice Second of the thread. ")
    quote = posts["1623552437155561482"]
    assert quote.kind == "quote" and quote.quote_of == "1622000000000000042"
    assert quote.content.endswith("that is the end. https://twitter.com/erin/status/1622000000000000042")


def test_replies_threads_and_quotes(tmp_path: Path) -> None:
    _, posts = _read(_archive(tmp_path, "current"))
    assert posts["1623552437155561473"].thread_root == "1623552437155561471"
    assert posts["1623552437155561472"].thread_root == "1623552437155561471"
    assert posts["1623552437155561471"].thread_root == ""
    assert posts["1623552437155561481"].thread_root == "1622000000000000100"  # answers a post not here
    only_mention = posts["1623552437155561480"]  # in_reply_to_user_id alone: not a reply
    assert only_mention.kind == "post" and only_mention.reply_to == ""
    assert posts["1623552437155561479"].quote_of == "1622000000000000009"
    assert posts["1623552437155561483"].quote_of == "1622000000000000043"


def test_media_types_paths_and_alt(tmp_path: Path) -> None:
    _, posts = _read(_archive(tmp_path, "current"))
    assert posts["1623552437155561477"].media == (
        Media(
            "image",
            "data/tweets_media/1623552437155561477-FoAbC1.jpg",
            "https://pbs.twimg.com/media/FoAbC1.jpg",
            "a cat on a mat",
        ),
        Media("image", "", "https://pbs.twimg.com/media/FoAbC2.jpg", ""),
    )
    (video,) = posts["1623552437155561478"].media
    assert video.type == "video" and video.path == "data/tweets_media/1623552437155561478-VidKey9.mp4"
    assert video.url.startswith("https://video.twimg.com/") and "1280x720" in video.url  # the best variant
    _, older = _read(_archive(tmp_path, "2019", zipped=False))
    assert older["1623552437155561477"].media[0].path == "data/tweet_media/1623552437155561477-FoAbC1.jpg"


def test_likes_edits_and_languages(tmp_path: Path) -> None:
    reader, posts = _read(_archive(tmp_path, "current"))
    liked, without_text, with_link = (posts[f"160000000000000000{n}"] for n in (1, 2, 3))
    assert liked.kind == "like" and liked.log_type == 2 and liked.content == "Liked: Q&A <b>bold</b>"
    assert without_text.kind == "like" and without_text.content == ""
    assert with_link.content == "Liked with a link https://t.co/abcdefghij"
    assert liked.user == "" and liked.url == "https://twitter.com/i/web/status/1600000000000000001"
    assert liked.timestamp == "2022-12-06 05:31:41"  # when the liked post was written, from its id
    assert EDITED_FIRST not in posts and posts["1623552437155561485"].content == "Edited, second version"
    assert reader.summary().skipped == {"earlier version of an edited post": 1}
    assert posts["1623552437155561474"].lang == "en"
    assert posts["1623552437155561476"].lang == ""  # "und" is no language
    assert posts["1623552437155561477"].lang == "id"  # X's withdrawn "in"


def test_grailbird_ids_are_json_numbers_above_2_53_read_exactly(tmp_path: Path) -> None:
    path = _archive(tmp_path, "grailbird", zipped=False)
    month = (path / "data/js/tweets/2023_02.js").read_text()
    assert re.search(r'"id" : 1623552437155561474\b', month)
    assert float(1623552437155561474) != 1623552437155561474  # what a float parser would do
    _, posts = _read(path)
    assert posts["1623552437155561474"].post_id == 1623552437155561474
    assert posts["1623552437155561490"].timestamp == "2017-09-30 14:06:46"


def test_parts_and_a_rezipped_folder_read_the_same(tmp_path: Path) -> None:
    _, whole = _read(_archive(tmp_path, "current"))
    parted = _archive(tmp_path / "parts", "current", parts=3)
    assert {"data/tweets.js", "data/tweets-part1.js", "data/tweets-part2.js"} <= set(
        zipfile.ZipFile(parted).namelist()
    )
    _, from_parts = _read(parted)
    root = "twitter-2024-01-01-abc/"
    _, rezipped = _read(_archive(tmp_path / "root", "current", root=root))
    assert from_parts == whole
    # media paths name the file inside what was given: the zip's member, below its folder
    moved = {
        i: replace(p, media=tuple(replace(m, path=m.path.removeprefix(root)) for m in p.media))
        for i, p in rezipped.items()
    }
    assert moved == whole
    assert (
        rezipped["1623552437155561477"].media[0].path
        == f"{root}data/tweets_media/1623552437155561477-FoAbC1.jpg"
    )


def test_media_paths_are_relative_to_the_folder_given(tmp_path: Path) -> None:
    folder = _archive(tmp_path, "current", zipped=False)
    _, from_root = _read(folder)
    assert sniff(folder / "data")
    _, from_data = _read(folder / "data")
    name = "tweets_media/1623552437155561477-FoAbC1.jpg"
    assert from_root["1623552437155561477"].media[0].path == f"data/{name}"
    assert from_data["1623552437155561477"].media[0].path == name
    assert (folder / "data" / name).is_file()


def test_bare_tweet_objects_of_2019(tmp_path: Path) -> None:
    _, wrapped = _read(_archive(tmp_path, "2019"))
    _, bare = _read(_archive(tmp_path / "bare", "2019", bare=True))
    assert bare == wrapped


def test_unknown_files_are_ignored_and_unknown_records_counted(tmp_path: Path) -> None:
    tweet = XTweet("1623552437155561474", "hello")
    files = archive_files([tweet])
    files["data/tweets.js"] = js_file(
        "window.YTD.tweets.part0",
        [
            {"tweet": json.loads(files["data/tweets.js"].split(b"= ", 1)[1])[0]["tweet"]},
            {"community": {"x": 1}},
        ],
    )
    files["data/ad-engagements.js"] = b'window.YTD.ad_engagements.part0 = [ {"ad" : {}} ]'
    files["data/broken-unknown.js"] = b"not javascript at all"
    path = tmp_path / "x.zip"
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    reader, posts = _read(path)
    assert list(posts) == ["1623552437155561474"]
    assert reader.summary().skipped == {"community": 1}


def test_a_record_missing_fields_is_counted_malformed_not_fatal(tmp_path: Path) -> None:
    good = {
        "tweet": {
            "id_str": "1623552437155561474",
            "full_text": "kept",
            "created_at": "Thu Feb 09 03:14:16 +0000 2023",
        }
    }
    items = [
        good,
        {"tweet": {"full_text": "no id", "created_at": "Thu Feb 09 03:14:16 +0000 2023"}},
        {"tweet": {"id_str": "1623552437155561475", "full_text": "no time"}},
        {"tweet": {"id_str": "1623552437155561476", "created_at": "Thu Feb 09 03:14:16 +0000 2023"}},
        {
            "tweet": {
                "id_str": "12.5",
                "full_text": "float id",
                "created_at": "Thu Feb 09 03:14:16 +0000 2023",
            }
        },
        ["not", "an", "object"],
    ]
    folder = tmp_path / "x"
    (folder / "data").mkdir(parents=True)
    (folder / "data/tweets.js").write_bytes(js_file("window.YTD.tweets.part0", items))
    (folder / "data/like.js").write_bytes(js_file("window.YTD.like.part0", [{"like": {"fullText": "no id"}}]))
    reader, posts = _read(folder)
    assert list(posts) == ["1623552437155561474"] and posts["1623552437155561474"].content == "kept"
    assert reader.account == "" and posts["1623552437155561474"].url.endswith("/status/1623552437155561474")
    summary = reader.summary()
    assert summary.malformed == 6
    assert summary.samples[0] == "data/tweets.js item 2: no id_str (found 'None')"
    assert any("created_at" in s for s in summary.samples) and any("full_text" in s for s in summary.samples)


MALFORMED = {
    "no prefix": (b'[ {"tweet" : {}} ]', "expected JavaScript starting 'window.YTD.<name>.part0 = ['"),
    "not an array": (
        b"window.YTD.tweets.part0 = 42",
        "expected a JSON array after 'window.YTD.tweets.part0 ='",
    ),
    "cut short": (
        b'window.YTD.tweets.part0 = [ {"tweet" : {"id_str" : "1"',
        "expected a JSON item at line 1",
    ),
    "no closing": (b'window.YTD.tweets.part0 = [ {"tweet" : {}}, ', "found the end of the file"),
    "bad json": (b'window.YTD.tweets.part0 = [ {"tweet" : {"id_str" : 1,,}} ]', "expected a JSON item"),
    "no comma": (b'window.YTD.tweets.part0 = [ {"a" : 1} {"b" : 2} ]', "expected ',' or ']' after an item"),
    "trailing junk": (b"window.YTD.tweets.part0 = [ ] junk", "expected the end of the file after ']'"),
}


@pytest.mark.parametrize("case", MALFORMED)
def test_a_malformed_tweets_js_is_one_line_naming_the_file(tmp_path: Path, case: str) -> None:
    data, expected = MALFORMED[case]
    path = tmp_path / "x.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("data/tweets.js", data)
    assert sniff(path)
    reader = open_reader(path, ReadLimits())
    with pytest.raises(ImportFormatError) as error:
        list(reader.records())
    message = str(error.value)
    assert "\n" not in message and f"{path}: data/tweets.js: " in message and expected in message


def test_a_truncated_zip_is_recognised_and_refused_in_one_line(tmp_path: Path) -> None:
    whole = _archive(tmp_path, "current")
    data = whole.read_bytes()
    cut = tmp_path / "cut.zip"
    cut.write_bytes(data[: len(data) * 2 // 3])
    assert sniff(cut)
    with pytest.raises(ImportFormatError) as error:
        open_reader(cut, ReadLimits())
    assert (
        str(error.value)
        == f"{cut}: expected an X archive zip, found a truncated or damaged zip (File is not a zip file)"
    )


def test_a_damaged_member_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "x.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(
            "data/tweets.js", archive_files([XTweet("1623552437155561474", "x " * 5000)])["data/tweets.js"]
        )
    data = bytearray(path.read_bytes())
    data[200:220] = bytes(20)  # inside the compressed member
    path.write_bytes(bytes(data))
    with pytest.raises(ImportFormatError) as error:
        list(open_reader(path, ReadLimits()).records())
    assert "data/tweets.js: expected a complete file, found a truncated or damaged one" in str(error.value)


def test_what_is_not_an_x_archive(tmp_path: Path) -> None:
    csv = tmp_path / "twilog.csv"
    csv.write_text('"1","https://twitter.com/a/status/1","2020-01-01 00:00:00","hi","1"\n')
    other = tmp_path / "other.zip"
    with zipfile.ZipFile(other, "w") as archive:
        archive.writestr("photos/cat.jpg", b"\xff\xd8\xff")
        archive.writestr("data/notes.js", b"var x = 1")
    empty = tmp_path / "empty"
    empty.mkdir()
    for path in (csv, other, empty, tmp_path / "missing.zip"):
        assert not sniff(path)
    with pytest.raises(ImportFormatError) as error:
        open_reader(other, ReadLimits())
    assert str(error.value) == (
        f"{other}: expected an X archive (data/tweets.js, data/tweet.js, data/js/tweets/*.js or "
        "data/like.js), found data/notes.js"
    )
    with pytest.raises(ImportFormatError, match="found a truncated or damaged zip"):
        open_reader(csv, ReadLimits())


def test_limits_bound_the_bytes_and_the_largest_item(tmp_path: Path) -> None:
    path = _archive(tmp_path, "current")
    with pytest.raises(ImportFormatError, match="more than the 1,000-byte limit"):
        open_reader(path, ReadLimits(max_bytes=1000))
    reader = open_reader(path, ReadLimits(max_line_bytes=300))
    with pytest.raises(
        ImportFormatError,
        match=re.escape(
            "data/note-tweet.js: expected items of at most 300 characters, found a longer one at line 1"
        ),
    ):
        list(reader.records())


def test_items_straddling_the_read_buffer_decode_whole(tmp_path: Path) -> None:
    """Megabytes of items with multi-byte characters cut at every possible buffer boundary."""
    tweets = [
        XTweet(str(1623552437155561474 + n), f"猫 {n} & 🐈 " + "日向" * (n % 700), "2023-02-09 03:14:16")
        for n in range(2500)
    ]
    path = write_x_archive(tmp_path / "big.zip", tweets)
    reader, posts = _read(path)
    assert len(posts) == 2500
    assert all(posts[t.id].content == t.text for t in tweets)
    assert reader.position()[1] > 2 << 20


# -- properties ------------------------------------------------------------------------------------

TEXT = st.text(st.characters(blacklist_categories=["Cs"]), max_size=300)


def _one(tweet: XTweet, generation: str = "current") -> Post:
    with tempfile.TemporaryDirectory() as folder:
        write_x_archive(Path(folder) / "x", [tweet], generation=generation, zipped=False)
        reader = open_reader(Path(folder) / "x", ReadLimits())
        (post,) = reader.records()
        assert reader.summary().malformed == 0
        return post


@settings(max_examples=150, deadline=None)
@given(TEXT)
def test_any_text_survives_escape_then_import_unchanged(text: str) -> None:
    post = _one(XTweet("1623552437155561474", text))
    assert post.content == text


@settings(max_examples=60, deadline=None)
@given(TEXT)
def test_any_liked_text_survives_escape_then_import_unchanged(text: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = write_x_archive(Path(folder) / "x", [], [XLike("1600000000000000001", text)], zipped=False)
        (post,) = open_reader(path, ReadLimits()).records()
    assert post.content == text and escape(text).count("&") >= text.count("&")


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 2**63 - 1), st.integers(1, 2**63 - 1), st.sampled_from(GENERATIONS))
def test_any_id_round_trips_exactly(tweet_id: int, parent: int, generation: str) -> None:
    text = str(tweet_id)
    post = _one(XTweet(text, "hello", reply_to=str(parent) if parent != tweet_id else ""), generation)
    assert post.source_id == text and post.post_id == tweet_id
    assert post.url.endswith(f"/status/{text}")
    if parent != tweet_id:
        assert post.reply_to == post.thread_root == str(parent)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from(["", "@bob ", "x", "猫", " ", "&", "<", "https://e.com/p", "\n"]), max_size=40)
)
def test_a_note_is_joined_whatever_its_words(words: list[str]) -> None:
    text = "Long: " + "".join(words) + " " + "z" * 300
    post = _one(XTweet("1623552437155561474", text, note=True, reply_to="1623552437155561400"))
    assert post.content == text


def test_media_without_a_file_keep_their_url() -> None:
    post = _one(
        XTweet("1623552437155561474", "pic", media=(XMedia("animated_gif", "Gif1", "dancing", file=False),))
    )
    assert post.content == "pic"
    assert post.media == (
        Media(
            "gif",
            "",
            "https://video.twimg.com/ext_tw_video/1623552437155561474/pu/vid/1280x720/Gif1.mp4?tag=12",
            "dancing",
        ),
    )
