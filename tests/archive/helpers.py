"""Test helpers: CSV writing and two small deterministic embedders.

The embedders are stand-ins on purpose: engine tests need *hand-made* vectors so every score is
known in advance, and the resume test needs an embedder that is cheap and reproducible in a
child process. The real default model is exercised in test_embedders.py.
"""

from __future__ import annotations

import csv
import hashlib
import io
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from mcpkit.archive.embedders import normalize_rows

Row = tuple[str, str, str, str, str]


def csv_text(rows: Sequence[Sequence[str]]) -> str:
    """Rows as Twilog writes them: every field quoted, no header, ``\\n`` line ends."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, quoting=csv.QUOTE_ALL, lineterminator="\n")
    for row in rows:
        writer.writerow(row)
    return buffer.getvalue()


def write_csv(path: Path, rows: Sequence[Sequence[str]]) -> Path:
    path.write_text(csv_text(rows), encoding="utf-8")
    return path


def row(
    post_id: int, user: str, content: str, timestamp: str = "2024-01-01 00:00:00", log_type: int = 1
) -> Row:
    return (str(post_id), f"https://x.com/{user}/status/{post_id}", timestamp, content, str(log_type))


class TableEmbedder:
    """Queries map to fixed vectors from a table; unknown texts get a hash vector."""

    def __init__(
        self, table: Mapping[str, Sequence[float]], name: str = "test-table", dim: int | None = None
    ):
        self.table = {k: np.asarray(v, dtype=np.float32) for k, v in table.items()}
        self._name = name
        self._dim = dim if dim is not None else len(next(iter(self.table.values())))
        self.queries: list[str] = []

    @property
    def name(self) -> str:
        return self._name

    @property
    def dimension(self) -> int:
        return self._dim

    def embed_query(self, text: str) -> np.ndarray:
        self.queries.append(text)
        if text in self.table:
            return normalize_rows(self.table[text]).reshape(-1)
        return HashEmbedder(self._dim).embed_query(text)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return (
            np.vstack([self.embed_query(t) for t in texts]) if texts else np.zeros((0, self._dim), np.float32)
        )


class HashEmbedder:
    """Deterministic pseudo-embeddings from a text hash; optional delay per batch (resume test)."""

    def __init__(self, dim: int = 16, delay: float = 0.0, name: str = "test-hash") -> None:
        self._dim = dim
        self.delay = delay
        self._name = name
        self.batches = 0

    @property
    def name(self) -> str:
        return self._name

    @property
    def dimension(self) -> int:
        return self._dim

    def vector(self, text: str) -> np.ndarray:
        seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
        return normalize_rows(np.random.default_rng(seed).standard_normal(self._dim)).reshape(-1)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        self.batches += 1
        if self.delay:
            time.sleep(self.delay)
        if not texts:
            return np.zeros((0, self._dim), np.float32)
        return np.vstack([self.vector(t) for t in texts])

    def embed_query(self, text: str) -> np.ndarray:
        return self.vector(text)


def ids_of(results: Sequence[dict[str, Any]]) -> list[int]:
    """Post ids of search results, for tests that only check the ranking."""
    return [int(r["post"]["post_id"]) for r in results]
