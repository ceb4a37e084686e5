"""SQLite store of the archive: posts, users, enrichments and FTS5 trigram indexes.

Split by job: :mod:`._schema` (migrations, database faults), :mod:`._writer` (bulk post
writes), :mod:`._queries` (reads), :mod:`._text` (the one text search's candidates, for every caller), :mod:`._columns` (the per-post filter
columns, kept current from the log of changed posts), :mod:`._store` (the :class:`Store` that
owns the connections and transactions).

Text search runs on *contentless* FTS5 tables holding the case-folded text with a
case-sensitive trigram tokenizer. Because the folding is Python's (:func:`posts.fold`) on both
sides, a trigram match is a superset of "folded term is a substring of folded text"; every
result is re-checked, so FTS is only ever an accelerator, never a different answer.
"""

from mcpkit.archive.store._columns import UNKNOWN_CODE, PostArrays, columns_path, facet_mask
from mcpkit.archive.store._merge import is_cut, merge_posts, normalized
from mcpkit.archive.store._queries import SOURCES, add_enrichment, post_dict
from mcpkit.archive.store._schema import SCHEMA_VERSION, DatabaseError, describe_db_error, remove_database
from mcpkit.archive.store._store import Store
from mcpkit.archive.store._text import (
    doclist,
    long_term_ids,
    long_term_match,
    phrase,
    short_term_ids,
    term_trigrams,
    trigram_query,
    vocabulary,
)
from mcpkit.archive.store._writer import (
    BULK_HASHSIZE,
    FTS_CHUNK,
    POST_COLUMNS,
    TWILOG_COLUMNS,
    BatchBuilder,
    JoinedRow,
    PostBatch,
    PostWriter,
    TwilogRow,
    UpsertCounts,
    WriteBase,
    joined_rows,
    read_posts,
)

__all__ = [
    "BULK_HASHSIZE",
    "FTS_CHUNK",
    "POST_COLUMNS",
    "SCHEMA_VERSION",
    "SOURCES",
    "TWILOG_COLUMNS",
    "UNKNOWN_CODE",
    "BatchBuilder",
    "DatabaseError",
    "JoinedRow",
    "PostArrays",
    "PostBatch",
    "PostWriter",
    "Store",
    "TwilogRow",
    "UpsertCounts",
    "WriteBase",
    "add_enrichment",
    "columns_path",
    "describe_db_error",
    "doclist",
    "facet_mask",
    "is_cut",
    "joined_rows",
    "long_term_ids",
    "long_term_match",
    "merge_posts",
    "normalized",
    "phrase",
    "post_dict",
    "read_posts",
    "remove_database",
    "short_term_ids",
    "term_trigrams",
    "trigram_query",
    "vocabulary",
]
