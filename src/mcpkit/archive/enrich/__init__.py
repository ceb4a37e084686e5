"""LLM enrichment of posts (reasoning, summary, tags) over any OpenAI-compatible endpoint."""

from mcpkit.archive.enrich.client import (
    DEFAULT_ENDPOINT,
    DEFAULT_MODEL,
    EndpointError,
    EnrichClient,
    PostFailedError,
)
from mcpkit.archive.enrich.prompt import PROMPT_VERSION, Enrichment, MalformedAnswerError
from mcpkit.archive.enrich.runner import EnrichPlan, EnrichSummary, enrich, plan_enrichment

__all__ = [
    "DEFAULT_ENDPOINT",
    "DEFAULT_MODEL",
    "PROMPT_VERSION",
    "EndpointError",
    "EnrichClient",
    "EnrichPlan",
    "EnrichSummary",
    "Enrichment",
    "MalformedAnswerError",
    "PostFailedError",
    "enrich",
    "plan_enrichment",
]
