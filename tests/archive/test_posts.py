"""Post rules shared by importer, embedder and engine; query syntax parsing."""

from __future__ import annotations

import calendar
import datetime as dt

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


def test_timestamp_epoch() -> None:
    assert timestamp_epoch("1970-01-02 00:00:00") == 86400
    assert timestamp_epoch("") is None and timestamp_epoch("2024/01/01") is None


@given(st.datetimes(min_value=dt.datetime(1, 1, 1), max_value=dt.datetime(9999, 12, 31)), st.text(max_size=3))
def test_timestamp_fast_path_agrees_with_strptime(moment: dt.datetime, noise: str) -> None:
    for text in (moment.strftime("%Y-%m-%d %H:%M:%S"), moment.strftime("%Y-%m-%d %H:%M:%S") + noise, noise):
        try:
            want: int | None = calendar.timegm(
                dt.datetime.strptime(text.strip(), "%Y-%m-%d %H:%M:%S").timetuple()
            )
        except ValueError:
            want = None
        assert timestamp_epoch(text) == want
