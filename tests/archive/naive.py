"""The reference semantics of text search: test every post in Python, sort newest first.

The store answers through FTS5 trigram candidates or a walk of the time index; the tests (and
the benchmark) hold those answers to this scan, which is too slow to serve but obviously right.
"""

from __future__ import annotations

from typing import Any

from mcpkit.archive.query import TextFilter, parse_terms
from mcpkit.archive.store import Store, add_enrichment, post_dict


def naive_text_search(
    store: Store, terms: str | TextFilter, limit: int, source: str = "content"
) -> list[dict[str, Any]]:
    """What ``search_posts_by_text(terms, limit, source)`` must answer."""
    text_filter = parse_terms(terms) if isinstance(terms, str) else terms
    rows = store.reader.execute(
        "SELECT p.post_id, coalesce(u.name, ''), p.timestamp, p.url, p.content, "
        "e.reasoning, e.summary, e.tags FROM posts p LEFT JOIN users u ON u.user_id = p.user_id "
        "LEFT JOIN enrichments e ON e.post_id = p.post_id"
    ).fetchall()
    column = {"content": 4, "reasoning": 5, "summary": 6}[source]
    hits = [row for row in rows if text_filter.matches(row[column])]
    hits.sort(key=lambda r: (r[2], r[0]), reverse=True)
    out = []
    for row in hits[:limit]:
        post = post_dict(row)
        add_enrichment(post, row[5], row[6], row[7])
        out.append(post)
    return out
