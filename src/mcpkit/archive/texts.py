"""Upstream's Japanese text formats for archive results, shared by the MCP face and the CLI.

These are the formats of twilog-search's MCP wrapper after its "formatted text" redesign:
a ranking with 🔍, 📝 for text search, 👥 for users, 📊 for database statistics, 🟢/🔴 for
status; numbers with thousands separators; post bodies with blank lines collapsed. One
deliberate change: every line of a multi-line post is indented (upstream indented only the
first), so a post's later lines can no longer be mistaken for a new entry.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

NO_RESULTS = "検索結果が見つかりませんでした"
_BLANK_LINES = re.compile(r"\n\s*\n")
INDENT = "   "


def collapse_blank_lines(text: str) -> str:
    """Upstream's ``content.replace(/\\n\\s*\\n/g, '\\n').trim()``: no empty lines, no outer space."""
    previous = None
    while previous != text:  # a single pass leaves "\n\n\n" -> "\n\n" when runs overlap
        previous, text = text, _BLANK_LINES.sub("\n", text)
    return text.strip()


def indent_body(text: str) -> str:
    return "\n".join(INDENT + line for line in collapse_blank_lines(text).split("\n"))


def num(value: Any) -> str:
    """``1234`` -> ``"1,234"`` as JavaScript's ``toLocaleString()`` printed it; non-numbers as is."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value if value is not None else 0)
    return f"{value:,}"


def search_header(query: str, count: int) -> str:
    return f'🔍 検索結果: {count}件 (クエリ: "{query}")'


def post_marks(post: Mapping[str, Any]) -> str:
    """What an mcpkit post adds to its head line: its kind when not a plain post
    (`` [reply]``, `` [like]``...); nothing for upstream's posts, which have no kind."""
    kind = post.get("kind")
    return f" [{kind}]" if isinstance(kind, str) and kind and kind != "post" else ""


def post_body(post: Mapping[str, Any]) -> str:
    """The indented text of a post, its content warning first when it has one."""
    text = str(post.get("content", ""))
    warning = post.get("content_warning")
    if isinstance(warning, str) and warning:
        text = f"[CW: {warning}]\n{text}"
    return indent_body(text)


def search_items(results: Sequence[Mapping[str, Any]], start: int = 1) -> list[str]:
    """One entry per result: ``i. [0.879] @user (time) url`` and the indented post."""
    items = []
    for index, result in enumerate(results, start):
        post = result.get("post") or {}
        score = result.get("score")
        shown = f"{score:.3f}" if isinstance(score, (int, float)) else "?"
        head = (
            f"{index}. [{shown}] @{post.get('user', '')} ({post.get('timestamp', '')}) {post.get('url', '')}"
        )
        items.append(head + post_marks(post) + "\n" + post_body(post))
    return items


def format_search_results(query: str, results: Sequence[Mapping[str, Any]]) -> str:
    """``search_similar``: ``🔍 検索結果: N件 (クエリ: "q")`` then ``i. [0.879] @user (time) url``."""
    if not results:
        return NO_RESULTS
    return _joined(search_header(query, len(results)) + match_note(results), search_items(results))


def match_note(results: Sequence[Mapping[str, Any]]) -> str:
    """A line under the header when the best hit of a ``hybrid`` answer is no real match
    (its ``match`` is false: archive/ranking.py's calibration). Upstream's modes carry no
    ``match``, so their text stays upstream's."""
    if not results or results[0].get("match") is not False:
        return ""
    similarity = results[0].get("similarity")
    shown = f"{similarity:.2f}" if isinstance(similarity, (int, float)) else "?"
    return f"\n⚠️ 良い一致なし: 最も近い投稿も弱い一致です (類似度 {shown})"


def text_header(term: str, count: int) -> str:
    return f'📝 テキスト検索結果: {count}件 (検索語: "{term}")'


def text_items(posts: Sequence[Mapping[str, Any]], start: int = 1) -> list[str]:
    """One entry per post: ``i. @user (time)`` and the indented post."""
    return [
        f"{index}. @{post.get('user', '')} ({post.get('timestamp', '')}){post_marks(post)}\n"
        + post_body(post)
        for index, post in enumerate(posts, start)
    ]


def format_text_results(term: str, posts: Sequence[Mapping[str, Any]]) -> str:
    """``search_posts_by_text``: ``📝 テキスト検索結果: N件 (検索語: "q")`` then ``i. @user (time)``."""
    if not posts:
        return f'{NO_RESULTS} (検索語: "{term}")'
    return _joined(text_header(term, len(posts)), text_items(posts))


def users_header(count: int) -> str:
    return f"👥 ユーザー別投稿統計 (上位{count}人)"


def user_items(stats: Sequence[Mapping[str, Any]], start: int = 1) -> list[str]:
    return [
        f"{i}. {s.get('user', '')}: {num(s.get('post_count', 0))}投稿" for i, s in enumerate(stats, start)
    ]


def format_user_stats(stats: Sequence[Mapping[str, Any]]) -> str:
    """``get_user_stats``: ``👥 ユーザー別投稿統計 (上位N人)`` then ``i. user: 1,234投稿``."""
    return "\n".join([users_header(len(stats)), "", *user_items(stats)]) + "\n"


def _joined(header: str, items: Sequence[str]) -> str:
    """Upstream's layout: the header, a blank line, each entry followed by a blank line."""
    return "\n".join([header, "", *(item + "\n" for item in items)]) + "\n"


def format_database_stats(stats: Mapping[str, Any]) -> str:
    """``get_database_stats``: totals and ``データ期間: a ～ b``."""
    out = ["📊 データベース統計", ""]
    out.append(f"総投稿数: {num(stats.get('total_posts') or 0)}件")
    out.append(f"総ユーザー数: {num(stats.get('total_users') or 0)}人")
    date_range = stats.get("date_range")
    if date_range:
        earliest, latest = date_range.get("earliest"), date_range.get("latest")
        # no dated post selected: say so, rather than a range with nothing on either side
        out.append(f"データ期間: {earliest} ～ {latest}" if earliest or latest else "データ期間: なし")
    for key, label in (
        ("by_kind", "種類別"),
        ("by_platform", "プラットフォーム別"),
        ("by_account", "アカウント別"),
    ):
        counts = stats.get(key)
        if isinstance(counts, Mapping) and counts:
            out.append(f"{label}: " + ", ".join(f"{name or '(不明)'} {num(n)}" for name, n in counts.items()))
    out += format_enrichment(stats.get("enrichment"))
    return "\n".join(out) + "\n"


def thread_header(reference: str, thread: Mapping[str, Any]) -> str:
    """``get_thread``: ``🧵 スレッド: N件 (ID: "x")`` and the post the thread answers, if any."""
    out = [f'🧵 スレッド: {num(thread.get("total_count") or 0)}件 (ID: "{reference}")']
    parent = thread.get("in_reply_to")
    if isinstance(parent, Mapping):
        out.append(
            f"返信先: @{parent.get('user', '')} ({parent.get('timestamp', '')}) {parent.get('url', '')}"
            + post_marks(parent)
        )
        out.append(post_body(parent))
    elif thread.get("in_reply_to_id"):
        out.append(f"返信先: {thread['in_reply_to_id']} (アーカイブにありません)")
    return "\n".join(out)


def thread_items(thread: Mapping[str, Any], start: int = 1) -> list[str]:
    """One entry per post of the thread, the asked-for post marked with ``▶``."""
    focus = thread.get("focus_offset")
    items = []
    for index, post in enumerate(thread.get("posts") or [], start):
        mark = "▶ " if focus is not None and index - 1 == focus else ""
        items.append(
            f"{index}. {mark}@{post.get('user', '')} ({post.get('timestamp', '')}) {post.get('url', '')}"
            f"{post_marks(post)}\n{post_body(post)}"
        )
    return items


def format_thread(reference: str, thread: Mapping[str, Any]) -> str:
    """A whole ``get_thread`` answer as text (the CLI's; the MCP face pages it)."""
    offset = int(thread.get("offset") or 0)
    return _joined(thread_header(reference, thread), thread_items(thread, offset + 1))


def format_enrichment(coverage: Any) -> list[str]:
    """One line of enrichment coverage (an mcpkit addition; nothing when there is none)."""
    if not isinstance(coverage, Mapping) or not (coverage.get("enriched") or coverage.get("failed")):
        return []
    line = f"エンリッチ済み: {num(coverage.get('enriched') or 0)} / {num(coverage.get('total_posts') or 0)}件"
    if coverage.get("failed"):
        line += f" (失敗 {num(coverage['failed'])}件)"
    return [line]


def format_status(status: Mapping[str, Any]) -> str:
    """``get_status``: 🟢 running and ready, 🔴 otherwise, then the data statistics."""
    ready = bool(status.get("ready"))
    out = [f"{'🟢' if ready else '🔴'} Twilog Server Status", ""]
    out.append(f"状態: {'稼働中' if ready else '停止中'}")
    out.append(f"サーバータイプ: {status.get('server_type') or 'Unknown'}")
    if status.get("model"):
        out.append(f"モデル: {status['model']}")
    data = status.get("data_stats")
    if isinstance(data, Mapping):
        out += ["", "📊 データ統計:"]
        out.append(f"・投稿数: {num(data.get('total_posts') or 0)}件")
        out.append(f"・ユーザー数: {num(data.get('total_users') or 0)}人")
        if data.get("total_summaries"):
            out.append(f"・要約数: {num(data['total_summaries'])}件")
        if data.get("total_tags"):
            out.append(f"・タグ数: {num(data['total_tags'])}件")
    out += ["・" + line for line in format_enrichment(status.get("enrichment"))]
    return "\n".join(out) + "\n"


def format_embedding(text: str, result: Mapping[str, Any]) -> str:
    """``embed_text``: the base64 length and its first 20 characters, as upstream."""
    vector = result.get("vector")
    if isinstance(vector, str) and vector:
        return (
            f'ベクトル化成功:\n入力テキスト: "{text}"\nBase64データ長: {len(vector)}文字\n'
            f"Base64データ（先頭20文字）: {vector[:20]}..."
        )
    return (
        "ベクトル化は完了しましたが、ベクトルデータが返されませんでした。\n"
        f'入力テキスト: "{text}"\nレスポンス: {dict(result)}'
    )
