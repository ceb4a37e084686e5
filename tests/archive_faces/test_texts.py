"""Upstream's text formats: blank-line collapsing (property), numbers, empty results."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from mcpkit.archive import texts


@given(st.text(alphabet=st.sampled_from(list("ab あ\n\t\r ")), max_size=60))
def test_collapse_blank_lines(text: str) -> None:
    out = texts.collapse_blank_lines(text)
    assert out == out.strip()
    assert all(line.strip() for line in out.split("\n")) or out == ""
    assert [w for w in out.split() if w] == [w for w in text.split() if w]


def test_formats() -> None:
    assert texts.num(1234567) == "1,234,567"
    assert texts.format_search_results("q", []) == "No results found"
    assert texts.format_search_results("q", [], "ja") == "検索結果が見つかりませんでした"
    post = {
        "user": "u",
        "timestamp": "2024-01-01 00:00:00",
        "url": "https://x.com/u/status/1",
        "content": "a\n\n\nb",
    }
    out = texts.format_search_results("q", [{"rank": 1, "score": 0.87949, "post": post}], "ja")
    assert out == (
        '🔍 検索結果: 1件 (クエリ: "q")\n\n1. [0.879] @u (2024-01-01 00:00:00) https://x.com/u/status/1\n   a\n   b\n\n'
    )
    status = texts.format_status(
        {"ready": False, "server_type": "TwilogServer", "data_stats": {"total_posts": 1500}}, "ja"
    )
    assert status.startswith("🔴 Twilog Server Status\n\n状態: 停止中\n") and "・投稿数: 1,500件" in status


def test_a_thread_header_counts_one_post_in_the_singular_and_thousands_with_separators() -> None:
    assert texts.thread_header("7", {"total_count": 1}).startswith('🧵 Thread: 1 post (ID: "7")')
    assert texts.thread_header("7", {"total_count": 1200}).startswith('🧵 Thread: 1,200 posts (ID: "7")')
    assert texts.thread_header("7", {"total_count": 1}, "ja").startswith('🧵 スレッド: 1件 (ID: "7")')
