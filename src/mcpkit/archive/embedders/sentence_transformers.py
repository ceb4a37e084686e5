"""``sentence-transformers`` models by name or local path (optional dependency).

The package is imported only when such a model is used. Prefixes follow the model family's
documentation; upstream used ruri's document prefix but forgot the query prefix, which lowers
retrieval quality, so here both sides get theirs.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from mcpkit.archive.embedders.base import Matrix, normalize_rows
from mcpkit.archive.errors import EmbedderUnavailableError


@dataclass(frozen=True, slots=True)
class Prefixes:
    document: str = ""
    query: str = ""


_FAMILIES: tuple[tuple[str, Prefixes], ...] = (
    ("ruri", Prefixes("検索文書: ", "検索クエリ: ")),
    ("multilingual-e5", Prefixes("passage: ", "query: ")),
    ("e5-", Prefixes("passage: ", "query: ")),
)


def prefixes_for(model: str) -> Prefixes:
    """The document/query prefixes a model family expects (none when unknown)."""
    lowered = model.lower().rsplit("/", 1)[-1]
    for marker, prefixes in _FAMILIES:
        if marker in lowered:
            return prefixes
    return Prefixes()


class SentenceTransformerEmbedder:
    def __init__(self, model: str, prefixes: Prefixes | None = None, device: str | None = None) -> None:
        self.model = model
        self.prefixes = prefixes if prefixes is not None else prefixes_for(model)
        self._device = device
        self._impl: Any = None
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return self.model

    def _load(self) -> Any:
        with self._lock:
            if self._impl is None:
                try:
                    from sentence_transformers import SentenceTransformer  # type: ignore[import-not-found]
                except ImportError as exc:
                    raise EmbedderUnavailableError(
                        f"model {self.model!r} needs sentence-transformers: pip install sentence-transformers"
                    ) from exc
                try:
                    self._impl = SentenceTransformer(self.model, device=self._device)
                except Exception as exc:
                    raise EmbedderUnavailableError(f"cannot load model {self.model!r}: {exc}") from exc
            return self._impl

    @property
    def dimension(self) -> int:
        return int(self._load().get_sentence_embedding_dimension())

    def document_texts(self, texts: Sequence[str]) -> list[str]:
        return [self.prefixes.document + t for t in texts]

    def query_text(self, text: str) -> str:
        return self.prefixes.query + text

    def embed_documents(self, texts: Sequence[str]) -> Matrix:
        return normalize_rows(self._load().encode(self.document_texts(texts), normalize_embeddings=True))

    def embed_query(self, text: str) -> Matrix:
        return normalize_rows(
            self._load().encode([self.query_text(text)], normalize_embeddings=True)
        ).reshape(-1)
