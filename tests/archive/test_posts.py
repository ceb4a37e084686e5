"""Post rules shared by importer, embedder and engine; query syntax parsing."""

from __future__ import annotations

import calendar
import datetime as dt
import re

from hypothesis import given
from hypothesis import strategies as st

from mcpkit.archive.posts import dedup_key, strip_content, timestamp_epoch, user_from_url


def test_strip_content_removes_urls_and_mentions_keeps_hashtags() -> None:
    assert strip_content("@bob  見て https://t.co/abc #猫 かわいい\n\n http://x.y") == "見て #猫 かわいい"
    assert strip_content("https://only.link") == ""


@given(st.text())
def test_strip_content_is_idempotent_and_collapsed(text: str) -> None:
    once = strip_content(text)
    assert strip_content(once) == once
    assert "  " not in once and once == once.strip()


def test_dedup_key_and_user_rule() -> None:
    assert dedup_key("a", "x  y https://t.co/1") == dedup_key("a", "x y")
    assert user_from_url("https://x.com/alice/status/5", 5) == "alice"
    assert user_from_url("https://twitter.com/alice/status/6", 5) == ""
    assert user_from_url("not a url", 5) == ""


_URL_PIECES = [
    "https://",
    "http://",
    "x.com",
    "twitter.com",
    "www.",
    "/",
    "status",
    "/status/",
    "al",
    "7",
    "12",
    "\u0663",
    "\n",
    "?s=2",
    "x",
    "u" * 60,  # two make an account URL too long for the table
]
_REFERENCE_URL = re.compile(r"https?://(?:www\.)?(?:twitter\.com|x\.com)/([^/]+)/status/(\d+)")


@given(st.lists(st.sampled_from(_URL_PIECES), max_size=9), st.sampled_from([7, 12, 712]))
def test_user_from_url_agrees_with_the_expression(pieces: list[str], post_id: int) -> None:
    """The account table's fast path finds what the regular expression finds, for URLs put
    together from the pieces that make one (repeated, out of order, with other digits)."""
    url = "".join(pieces)
    match = _REFERENCE_URL.search(url)
    want = match.group(1) if match is not None and int(match.group(2)) == post_id else ""
    assert user_from_url(url, post_id) == want
    assert user_from_url(url, post_id) == want  # the second time from the table


def test_timestamp_epoch() -> None:
    assert timestamp_epoch("1970-01-02 00:00:00") == 86400
    assert timestamp_epoch("") is None and timestamp_epoch("2024/01/01") is None


@given(st.datetimes(min_value=dt.datetime(1, 1, 1), max_value=dt.datetime(9999, 12, 31)), st.text(max_size=3))
def test_timestamp_fast_path_agrees_with_strptime(moment: dt.datetime, noise: str) -> None:
    for text in (moment.strftime("%Y-%m-%d %H:%M:%S"), moment.strftime("%Y-%m-%d %H:%M:%S") + noise, noise):
        assert timestamp_epoch(text) == _strptime_epoch(text)


def _strptime_epoch(text: str) -> int | None:
    """What the reference, ``strptime``, makes of a timestamp (``None``: it refuses it)."""
    try:
        return calendar.timegm(dt.datetime.strptime(text.strip(), "%Y-%m-%d %H:%M:%S").timetuple())
    except ValueError:
        return None


@given(
    st.datetimes(min_value=dt.datetime(1, 1, 1), max_value=dt.datetime(9999, 12, 31)),
    st.lists(st.tuples(st.integers(0, 18), st.sampled_from("0123456789 :-x\u0663\uff11\t")), max_size=3),
)
def test_timestamp_with_characters_replaced_agrees_with_strptime(
    moment: dt.datetime, edits: list[tuple[int, str]]
) -> None:
    """The table lookups of the fast path accept exactly what strptime accepts: a canonical
    timestamp with a few characters replaced (digits out of range, other separators, Arabic
    and full-width digits, tabs) gets the same answer both ways."""
    chars = list(f"{moment.year:04d}" + moment.strftime("-%m-%d %H:%M:%S"))
    for position, char in edits:
        chars[position] = char
    text = "".join(chars)
    assert timestamp_epoch(text) == _strptime_epoch(text)
