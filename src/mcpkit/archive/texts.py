"""The archive's result texts, shared by the MCP face, the CLI and the shell.

The layout is twilog-search's MCP wrapper's after its "formatted text" redesign: a ranking
with 🔍, 📝 for text search, 👥 for users, 📊 for database statistics, 🟢/🔴 for status;
numbers with thousands separators; post bodies with blank lines collapsed. The words come
from :mod:`mcpkit.archive.messages`: English unless ``lang`` is ``"ja"`` (upstream's Japanese).
Two deliberate changes: every line of a multi-line post is indented (upstream indented only
the first), so a post's later lines can no longer be mistaken for a new entry; and a like or
bookmark names its author as unknown when the export does not, and says which time it shows.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from mcpkit.archive import messages as m
from mcpkit.archive.messages import Lang

_BLANK_LINES = re.compile(r"\n\s*\n")
INDENT = "   "
_SAVED = frozenset({"like", "bookmark"})


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


def search_header(query: str, count: int, lang: Lang = "en") -> str:
    return m.SEARCH_HEADER(lang, count=count, query=query)


_AUDIENCES = {"unlisted": "unlisted", "followers": "followers only", "direct": "direct"}
"""How a head line marks a post not addressed to the public (a public post says nothing)."""


def post_marks(post: Mapping[str, Any]) -> str:
    """What an mcpkit post adds to its head line: its kind when not a plain post
    (`` [reply]``, `` [like]``...), and who it was addressed to when not the public
    (`` [followers only]``, `` [direct]``); nothing for upstream's posts, which have neither."""
    kind = post.get("kind")
    marks = f" [{kind}]" if isinstance(kind, str) and kind and kind != "post" else ""
    audience = _AUDIENCES.get(str(post.get("visibility") or ""))
    return marks + (f" [{audience}]" if audience else "")


def post_author(post: Mapping[str, Any], lang: Lang = "en") -> str:
    """``@user``; for a liked or bookmarked post whose author the export does not name, says so
    (never a bare ``@``). An authored post keeps upstream's ``@`` with whatever user it has."""
    user = str(post.get("user") or "")
    if user or post.get("kind") not in _SAVED:
        return f"@{user}"
    return m.AUTHOR_UNKNOWN(lang)


def post_head(post: Mapping[str, Any], lang: Lang = "en") -> str:
    """``@user (time)`` of a post's head line.

    A liked or bookmarked post is someone else's, and its time is labelled with what it is:
    an X archive's like has no time of its own, only the liked post's (from its id); a Bluesky
    like record has the like's; a Mastodon archive's likes and bookmarks are URIs only."""
    timestamp = str(post.get("timestamp") or "")
    kind = post.get("kind")
    if kind not in _SAVED:
        return f"{post_author(post, lang)} ({timestamp})"
    if not timestamp:
        when = m.NO_TIME(lang)
    elif post.get("platform") == "bluesky" and kind == "like":
        when = m.LIKED_AT(lang, time=timestamp)
    else:
        when = m.POSTED_AT(lang, time=timestamp)
    return f"{post_author(post, lang)} ({when})"


def post_body(post: Mapping[str, Any]) -> str:
    """The indented text of a post, its content warning first when it has one."""
    text = str(post.get("content", ""))
    warning = post.get("content_warning")
    if isinstance(warning, str) and warning:
        text = f"[CW: {warning}]\n{text}"
    return indent_body(text)


def search_items(results: Sequence[Mapping[str, Any]], start: int = 1, lang: Lang = "en") -> list[str]:
    """One entry per result: ``i. [0.879] @user (time) url`` and the indented post."""
    items = []
    for index, result in enumerate(results, start):
        post = result.get("post") or {}
        score = result.get("score")
        shown = f"{score:.3f}" if isinstance(score, (int, float)) else "?"
        head = f"{index}. [{shown}] {post_head(post, lang)} {post.get('url', '')}"
        items.append(head + post_marks(post) + "\n" + post_body(post))
    return items


def format_search_results(
    query: str, results: Sequence[Mapping[str, Any]], lang: Lang = "en", *, start: int = 1
) -> str:
    """``search_similar``: ``🔍 Search results: N (query: "q")`` then ``i. [0.879] @user (time) url``,
    ``i`` counted from ``start`` (the offset asked for, plus one)."""
    if not results:
        return m.NO_RESULTS(lang)
    return _joined(
        search_header(query, len(results), lang) + match_note(results, lang),
        search_items(results, start, lang=lang),
    )


def match_note(results: Sequence[Mapping[str, Any]], lang: Lang = "en") -> str:
    """A line under the header when no hit of the answer is a real match (every ``match`` is
    false: archive/ranking.py's verdict, carried by every mode of mcpkit's requests). Upstream's
    requests carry no ``match``, so their text stays upstream's."""
    if not results or any(r.get("match") is not False for r in results):
        return ""
    similarity = results[0].get("similarity")
    shown = f"{similarity:.2f}" if isinstance(similarity, (int, float)) else "?"
    return "\n" + m.NO_GOOD_MATCH(lang, similarity=shown)


def text_header(term: str, count: int, lang: Lang = "en") -> str:
    return m.TEXT_HEADER(lang, count=count, term=term)


def text_items(posts: Sequence[Mapping[str, Any]], start: int = 1, lang: Lang = "en") -> list[str]:
    """One entry per post: ``i. @user (time)`` and the indented post."""
    return [
        f"{index}. {post_head(post, lang)}{post_marks(post)}\n" + post_body(post)
        for index, post in enumerate(posts, start)
    ]


def format_text_results(
    term: str, posts: Sequence[Mapping[str, Any]], lang: Lang = "en", *, start: int = 1
) -> str:
    """``search_posts_by_text``: ``📝 Text search results: N (terms: "q")`` then ``i. @user (time)``,
    ``i`` counted from ``start``."""
    if not posts:
        return m.NO_TEXT_RESULTS(lang, term=term)
    return _joined(text_header(term, len(posts), lang), text_items(posts, start, lang=lang))


MEANING_TOP = 10
"""How many of the best hits of :func:`meaning_search` :func:`meaning_note` reads."""


def meaning_search(term: str, filters: Mapping[str, Any]) -> dict[str, Any]:
    """The ``search_similar`` call whose verdict :func:`meaning_note` reads: the same words, by
    words and meaning together (hybrid), under the same ``filters``."""
    return {"query": term, "settings": {"top_k": MEANING_TOP}, "mode": "hybrid", **filters}


def meaning_note(hits: Sequence[Mapping[str, Any]], lang: Lang = "en") -> str:
    """A line under a text search that found nothing: whether some post comes close in meaning
    (``hits``: a hybrid search of the same words, with its verdict), so "no post holds these
    words" is not read as "nothing answers this". Nothing when the hits carry no verdict."""
    flags = [hit.get("match") for hit in hits]
    if not flags or None in flags:
        return ""
    return "\n" + (m.CLOSE_IN_MEANING(lang) if any(flags) else m.NOTHING_CLOSE(lang))


def users_header(count: int, lang: Lang = "en") -> str:
    return m.USERS_HEADER(lang, count=count)


def user_items(stats: Sequence[Mapping[str, Any]], start: int = 1, lang: Lang = "en") -> list[str]:
    return [
        m.USER_ITEM(lang, index=i, user=s.get("user", ""), count=num(s.get("post_count", 0)))
        for i, s in enumerate(stats, start)
    ]


def format_user_stats(stats: Sequence[Mapping[str, Any]], lang: Lang = "en") -> str:
    """``get_user_stats``: ``👥 Posts per user (top N)`` then ``i. user: 1,234 posts``."""
    return "\n".join([users_header(len(stats), lang), "", *user_items(stats, lang=lang)]) + "\n"


def _joined(header: str, items: Sequence[str]) -> str:
    """Upstream's layout: the header, a blank line, each entry followed by a blank line."""
    return "\n".join([header, "", *(item + "\n" for item in items)]) + "\n"


def format_database_stats(stats: Mapping[str, Any], lang: Lang = "en") -> str:
    """``get_database_stats``: totals, the period and, for a filtered request, the counts by
    kind, platform and account (of the same posts as the totals)."""
    out = [m.STATS_TITLE(lang), ""]
    out.append(m.TOTAL_POSTS(lang, count=num(stats.get("total_posts") or 0)))
    out.append(m.TOTAL_USERS(lang, count=num(stats.get("total_users") or 0)))
    date_range = stats.get("date_range")
    if date_range:
        earliest, latest = date_range.get("earliest"), date_range.get("latest")
        # no dated post selected: say so, rather than a range with nothing on either side
        out.append(
            m.DATE_RANGE(lang, earliest=earliest, latest=latest)
            if earliest or latest
            else m.NO_DATE_RANGE(lang)
        )
    for key, line in (("by_kind", m.BY_KIND), ("by_platform", m.BY_PLATFORM), ("by_account", m.BY_ACCOUNT)):
        counts = stats.get(key)
        if isinstance(counts, Mapping) and counts:
            shown = ", ".join(f"{name or m.UNKNOWN_NAME(lang)} {num(n)}" for name, n in counts.items())
            out.append(line(lang, counts=shown))
    out += format_enrichment(stats.get("enrichment"), lang)
    return "\n".join(out) + "\n"


def thread_header(reference: str, thread: Mapping[str, Any], lang: Lang = "en") -> str:
    """``get_thread``: ``🧵 Thread: N posts (ID: "x")`` and the post the thread answers, if any."""
    out = [m.THREAD_HEADER(lang, count=int(thread.get("total_count") or 0), reference=reference)]
    parent = thread.get("in_reply_to")
    if isinstance(parent, Mapping):
        out.append(
            m.IN_REPLY_TO(lang, head=f"{post_head(parent, lang)} {parent.get('url', '')}")
            + post_marks(parent)
        )
        out.append(post_body(parent))
    elif thread.get("in_reply_to_id"):
        out.append(m.PARENT_MISSING(lang, id=thread["in_reply_to_id"]))
    return "\n".join(out)


def thread_items(thread: Mapping[str, Any], start: int = 1, lang: Lang = "en") -> list[str]:
    """One entry per post of the thread, the asked-for post marked with ``▶``."""
    focus = thread.get("focus_offset")
    items = []
    for index, post in enumerate(thread.get("posts") or [], start):
        mark = "▶ " if focus is not None and index - 1 == focus else ""
        items.append(
            f"{index}. {mark}{post_head(post, lang)} {post.get('url', '')}{post_marks(post)}\n{post_body(post)}"
        )
    return items


def format_thread(reference: str, thread: Mapping[str, Any], lang: Lang = "en") -> str:
    """A whole ``get_thread`` answer as text (the CLI's; the MCP face pages it)."""
    offset = int(thread.get("offset") or 0)
    return _joined(thread_header(reference, thread, lang), thread_items(thread, offset + 1, lang))


def format_enrichment(coverage: Any, lang: Lang = "en") -> list[str]:
    """One line of enrichment coverage (an mcpkit addition; nothing when there is none)."""
    if not isinstance(coverage, Mapping) or not (coverage.get("enriched") or coverage.get("failed")):
        return []
    line = m.ENRICHED(
        lang, done=num(coverage.get("enriched") or 0), total=num(coverage.get("total_posts") or 0)
    )
    if coverage.get("failed"):
        line += m.ENRICH_FAILED(lang, count=num(coverage["failed"]))
    return [line]


def format_status(status: Mapping[str, Any], lang: Lang = "en") -> str:
    """``get_status``: 🟢 running and ready, 🔴 otherwise, then the data statistics."""
    ready = bool(status.get("ready"))
    out = [m.STATUS_TITLE(lang, mark="🟢" if ready else "🔴"), ""]
    out.append((m.STATE_RUNNING if ready else m.STATE_STOPPED)(lang))
    out.append(m.SERVER_TYPE(lang, name=status.get("server_type") or "Unknown"))
    if status.get("model"):
        out.append(m.MODEL(lang, name=status["model"]))
    data = status.get("data_stats")
    if isinstance(data, Mapping):
        out += ["", m.DATA_TITLE(lang)]
        out.append(m.DATA_POSTS(lang, count=num(data.get("total_posts") or 0)))
        out.append(m.DATA_USERS(lang, count=num(data.get("total_users") or 0)))
        if data.get("total_summaries"):
            out.append(m.DATA_SUMMARIES(lang, count=num(data["total_summaries"])))
        if data.get("total_tags"):
            out.append(m.DATA_TAGS(lang, count=num(data["total_tags"])))
    out += [m.BULLET(lang) + line for line in format_enrichment(status.get("enrichment"), lang)]
    return "\n".join(out) + "\n"


def format_embedding(text: str, result: Mapping[str, Any], lang: Lang = "en") -> str:
    """``embed_text``: the base64 length and its first 20 characters, as upstream."""
    vector = result.get("vector")
    if isinstance(vector, str) and vector:
        return m.EMBEDDED(lang, text=text, length=len(vector), head=vector[:20])
    return m.NO_VECTOR(lang, text=text, response=dict(result))
