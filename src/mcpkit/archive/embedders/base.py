"""The Embedder protocol and helpers shared by every back end."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

DEFAULT_MODEL = "use-multilingual-v3"

Matrix = npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class EmbedEndpoint:
    """Where ``openai:`` models are served and the key they take, as the CLI read them
    (``$MCPKIT_EMBED_URL``, ``$MCPKIT_EMBED_API_KEY``). A value, so the engine that rebuilds an
    embedder from the name a space records never reads the environment itself."""

    url: str | None = None
    api_key: str | None = None

    def __repr__(self) -> str:  # the key never reaches a log or a traceback
        return f"EmbedEndpoint(url={self.url!r}, api_key={'***' if self.api_key else None})"


@runtime_checkable
class Embedder(Protocol):
    """Documents and queries may be embedded differently (prefixes): keep the two calls apart.

    Both return L2-normalised float32 rows, so a dot product is the cosine.
    """

    @property
    def name(self) -> str: ...

    @property
    def dimension(self) -> int: ...

    def embed_documents(self, texts: Sequence[str]) -> Matrix: ...

    def embed_query(self, text: str) -> Matrix: ...


def normalize_rows(matrix: npt.ArrayLike) -> Matrix:
    """Float32 copy with every row scaled to unit length (zero rows stay zero)."""
    array = np.asarray(matrix, dtype=np.float32)
    if array.ndim == 1:
        array = array.reshape(1, -1)
    norms = np.linalg.norm(array, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.ascontiguousarray(array / norms, dtype=np.float32)
