"""The archive's one text search over its trigram indexes (FTS5, ``detail=none``).

Every search by text finds its candidates here and nowhere else: the API's
``search_posts_by_text`` and ``| T`` queries (:meth:`Store.matching_posts`), hybrid's text
half (:func:`mcpkit.archive.ranking.text_hits`) and the pages' keystroke search
(:mod:`mcpkit.archive.pages.text_index`). Each keeps its own ordering and limits on top; the
final check of a candidate is always :meth:`mcpkit.archive.query.TextFilter.matches`.

* a term of three or more characters: the posts holding every one of its trigrams
  (:func:`long_term_ids`, or :func:`long_term_match` to join them in SQL; a superset: the
  index keeps no positions);
* a term of one or two characters (``猫``, ``東京``): the posts with a trigram starting with it,
  a contiguous range of the index's vocabulary (:func:`short_term_ids`); the posts ending with
  it have no such trigram and come from the tails the pages keep (:mod:`.tails`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = [
    "doclist",
    "long_term_ids",
    "long_term_match",
    "phrase",
    "short_term_ids",
    "term_trigrams",
    "trigram_query",
    "vocabulary",
]

IntArray = npt.NDArray[np.int64]

_LAST_CHAR = "\U0010ffff"


def phrase(gram: str) -> str:
    """One trigram as an FTS5 phrase (quoted, its quotes doubled)."""
    return '"' + gram.replace('"', '""') + '"'


def term_trigrams(terms: Sequence[str]) -> list[str]:
    """The distinct trigrams of the (folded) ``terms``, in order of first appearance."""
    return list(dict.fromkeys(t[i : i + 3] for t in terms for i in range(len(t) - 2)))


def trigram_query(terms: Sequence[str]) -> str:
    """An FTS5 query for rows containing every trigram of every (folded, 3+ character) term.

    The indexes keep no positions, so this finds a superset of the rows containing the terms
    as substrings; callers re-check the text.
    """
    return " AND ".join(phrase(g) for g in term_trigrams(terms))


def vocabulary(conn: sqlite3.Connection, table: str) -> str:
    """The name of a temporary ``fts5vocab`` table (``row`` kind) over the FTS5 ``table`` on
    ``conn``, created on first use: the index's terms with the documents holding each."""
    name = f"mcpkit_vocab_{table}"
    conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{name} USING fts5vocab(main, {table}, row)")
    return f"temp.{name}"


def doclist(conn: sqlite3.Connection, sql: str, params: tuple[Any, ...]) -> IntArray:
    """The ids an SQL ``group_concat(rowid)`` returns, in its order: one string crosses from
    SQLite instead of a row per id (a third of the time for 500,000 ids)."""
    text = conn.execute(sql, params).fetchone()[0]
    if not text:
        return np.zeros(0, dtype=np.int64)
    return np.fromstring(text, dtype=np.int64, sep=",")


def long_term_match(
    conn: sqlite3.Connection, terms: Sequence[str], limit: int, table: str = "fts_content"
) -> tuple[str, str] | None:
    """The SQL selecting the same ids as :func:`long_term_ids` and its one parameter, for a
    caller that joins them in SQL (the ids stay in SQLite); None when they are more than
    ``limit``."""
    query = trigram_query(terms)
    found = conn.execute(
        f"SELECT count(*) FROM (SELECT rowid FROM {table} WHERE {table} MATCH ? LIMIT ?)", (query, limit + 1)
    ).fetchone()[0]
    return None if found > limit else (f"SELECT rowid FROM {table} WHERE {table} MATCH ?", query)


def long_term_ids(
    conn: sqlite3.Connection, terms: Sequence[str], limit: int, table: str = "fts_content"
) -> IntArray | None:
    """Sorted ids whose folded text has every trigram of ``terms`` (each three or more
    characters; a superset of the posts holding the terms), or None when they are more than
    ``limit`` (a common query: the caller walks the posts instead)."""
    ids = doclist(
        conn,
        f"SELECT group_concat(rowid) FROM (SELECT rowid FROM {table} WHERE {table} MATCH ? LIMIT ?)",
        (trigram_query(terms), limit + 1),
    )
    ids.sort()
    return None if len(ids) > limit else ids


def short_term_ids(
    conn: sqlite3.Connection, term: str, limit: int, table: str = "fts_content"
) -> IntArray | None:
    """Sorted ids whose folded text has ``term`` (one or two characters) in one of its trigrams
    (the trigrams starting with it, read from the vocabulary), or None when the vocabulary
    counts more than ``limit`` documents for them."""
    vocab = vocabulary(conn, table)
    grams: list[str] = []
    total = 0
    high = term + _LAST_CHAR * (3 - len(term))
    for gram, docs in conn.execute(
        f"SELECT term, doc FROM {vocab} WHERE term >= ? AND term <= ?", (term, high)
    ):
        total += int(docs)
        if total > limit:
            return None
        grams.append(str(gram))
    if not grams:
        return np.zeros(0, dtype=np.int64)
    ids = doclist(
        conn,
        f"SELECT group_concat(rowid) FROM {table} WHERE {table} MATCH ?",
        (" OR ".join(phrase(g) for g in grams),),
    )
    ids.sort()
    return ids
