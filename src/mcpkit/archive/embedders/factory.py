"""Build an embedder from the name a vector space records."""

from __future__ import annotations

from mcpkit.archive.embedders.base import DEFAULT_MODEL, Embedder, EmbedEndpoint


def create_embedder(name: str | None = None, endpoint: EmbedEndpoint | None = None) -> Embedder:
    """``None``/``use-multilingual-v3`` -> default; ``openai:MODEL[@URL]`` -> HTTP; else sentence-transformers.

    ``endpoint`` serves ``openai:`` models whose name carries no URL (and gives the key)."""
    name = (name or DEFAULT_MODEL).strip()
    if name == DEFAULT_MODEL:
        from mcpkit.archive.embedders.use import UseEmbedder

        return UseEmbedder()
    if name.startswith("openai:"):
        from mcpkit.archive.embedders.openai_http import OpenAIEmbedder

        model, _, url = name[len("openai:") :].partition("@")
        endpoint = endpoint or EmbedEndpoint()
        return OpenAIEmbedder(model, url or endpoint.url, api_key=endpoint.api_key)
    from mcpkit.archive.embedders.sentence_transformers import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder(name.removeprefix("st:"))
