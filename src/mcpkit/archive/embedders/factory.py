"""Build an embedder from the name a vector space records."""

from __future__ import annotations

from mcpkit.archive.embedders.base import DEFAULT_MODEL, Embedder


def create_embedder(name: str | None = None) -> Embedder:
    """``None``/``use-multilingual-v3`` -> default; ``openai:MODEL[@URL]`` -> HTTP; else sentence-transformers."""
    name = (name or DEFAULT_MODEL).strip()
    if name == DEFAULT_MODEL:
        from mcpkit.archive.embedders.use import UseEmbedder

        return UseEmbedder()
    if name.startswith("openai:"):
        from mcpkit.archive.embedders.openai_http import OpenAIEmbedder

        model, _, url = name[len("openai:") :].partition("@")
        return OpenAIEmbedder(model, url or None)
    from mcpkit.archive.embedders.sentence_transformers import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder(name.removeprefix("st:"))
