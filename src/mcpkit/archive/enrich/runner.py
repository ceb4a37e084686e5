"""``mcpkit archive enrich``: which posts are due, and running them through the endpoint.

A post is due when it was never enriched, when its text or the prompt version changed since,
or when its last attempt failed. Posts that already have an enrichment from elsewhere (an
upstream migration) are left alone. The text sent is the post as upstream sent it (URLs and
mentions stripped); a post that strips to nothing is skipped.

``concurrency`` requests are in flight at once; results are committed every
:data:`COMMIT_EVERY` posts, so a run that is stopped keeps what it finished and the next run
continues with the rest (resumable), and a finished post is never sent twice (idempotent).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mcpkit.archive.enrich.client import EndpointError, EnrichClient, PostFailedError, Reply
from mcpkit.archive.enrich.prompt import PROMPT_VERSION, SYSTEM_PROMPT, content_hash
from mcpkit.archive.messages import Said
from mcpkit.archive.posts import strip_content
from mcpkit.archive.store import Store

__all__ = ["COMMIT_EVERY", "EnrichPlan", "EnrichSummary", "enrich", "plan_enrichment"]

COMMIT_EVERY = 256
OUTPUT_TOKENS_PER_POST = 120
"""Typical answer size (a reasoning sentence, a summary, a few tags), for ``--dry-run``."""

ProgressFn = Callable[[int, int, int], None]
"""``progress(done, total, tokens_so_far)``, called on the event loop after each post."""


@dataclass(frozen=True, slots=True)
class DuePost:
    post_id: int
    text: str  # as sent: stripped
    digest: str  # of the stored content


@dataclass(slots=True)
class EnrichPlan:
    due: list[DuePost]
    total_posts: int = 0
    done_before: int = 0
    failed_before: int = 0
    imported: int = 0
    empty: int = 0

    def estimate_tokens(self) -> tuple[int, int]:
        """Rough input and output tokens for ``due`` (a CJK character is about one token,
        four other characters about one)."""
        prompt = _tokens(SYSTEM_PROMPT) + 10
        return sum(prompt + _tokens(p.text) for p in self.due), OUTPUT_TOKENS_PER_POST * len(self.due)

    def as_dict(self) -> dict[str, Any]:
        input_tokens, output_tokens = self.estimate_tokens()
        return {
            "due": len(self.due),
            "total_posts": self.total_posts,
            "done_before": self.done_before,
            "failed_before": self.failed_before,
            "imported": self.imported,
            "empty": self.empty,
            "estimated_input_tokens": input_tokens,
            "estimated_output_tokens": output_tokens,
        }


def _tokens(text: str) -> int:
    wide = sum(1 for c in text if ord(c) > 0x2FF)
    return wide + (len(text) - wide + 3) // 4


@dataclass(slots=True)
class EnrichSummary:
    enriched: int = 0
    failed: int = 0
    failures: list[tuple[int, str]] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    retried: int = 0
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "enriched": self.enriched,
            "failed": self.failed,
            "failures": [{"post_id": pid, "reason": why} for pid, why in self.failures],
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "requests_retried": self.retried,
            "seconds": round(self.seconds, 3),
        }


def plan_enrichment(store: Store, limit: int | None = None) -> EnrichPlan:
    """The posts due for enrichment, oldest post id first, at most ``limit``; never a direct
    post (their texts would go to a hosted model)."""
    states = store.enrichment_states()
    enriched = store.enriched_ids()
    plan = EnrichPlan(due=[])
    for post_id, content in store.iter_texts("content", shown=True):
        plan.total_posts += 1
        digest = content_hash(content)
        state = states.get(post_id)
        if state is None and post_id in enriched:
            plan.imported += 1
            continue
        if state is not None and state[:2] == (digest, PROMPT_VERSION):
            if state[2]:
                plan.done_before += 1
                continue
            plan.failed_before += 1
        text = strip_content(content)
        if not text:
            plan.empty += 1
            continue
        if limit is None or len(plan.due) < limit:
            plan.due.append(DuePost(post_id, text, digest))
    return plan


async def enrich(
    store: Store,
    client: EnrichClient,
    plan: EnrichPlan,
    *,
    concurrency: int = 8,
    progress: ProgressFn | None = None,
) -> EnrichSummary:
    """Enrich ``plan.due`` with ``concurrency`` requests in flight; see the module docstring.

    An :class:`EndpointError` stops the run after committing what was finished, and is raised.
    """
    summary = EnrichSummary()
    started = time.perf_counter()
    queue: asyncio.Queue[DuePost] = asyncio.Queue()
    for post in plan.due:
        queue.put_nowait(post)
    finished: list[tuple[DuePost, Reply | str]] = []
    total = len(plan.due)

    def commit() -> None:
        batch = finished[:]
        finished.clear()
        if batch:
            _commit(store, client.model, batch)

    async def worker() -> None:
        while True:
            try:
                post = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            try:
                outcome: Reply | str = await client.enrich(post.text)
            except PostFailedError as exc:  # the English line, worded again for a reader by in_lang
                outcome = Said(exc.message, **exc.fields)
            if isinstance(outcome, str):
                summary.failed += 1
                summary.failures.append((post.post_id, outcome))
            else:
                summary.enriched += 1
                summary.prompt_tokens += outcome.prompt_tokens
                summary.completion_tokens += outcome.completion_tokens
                summary.retried += outcome.attempts > 1
            finished.append((post, outcome))
            if len(finished) >= COMMIT_EVERY:
                commit()
            if progress is not None:
                progress(
                    summary.enriched + summary.failed,
                    total,
                    summary.prompt_tokens + summary.completion_tokens,
                )

    workers = [asyncio.create_task(worker()) for _ in range(max(1, min(concurrency, total)))]
    try:
        await asyncio.gather(*workers)
    except EndpointError:
        for task in workers:
            task.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
        raise
    finally:
        commit()
        summary.seconds = time.perf_counter() - started
    return summary


def _commit(store: Store, model: str, batch: list[tuple[DuePost, Reply | str]]) -> None:
    """Enrichments and states of finished posts, in one transaction."""
    states: list[tuple[int, str, str, str, bool, str | None, int]] = []
    enrichments: list[tuple[int, str | None, str | None, str | None]] = []
    for post, outcome in batch:
        if isinstance(outcome, str):
            states.append((post.post_id, post.digest, PROMPT_VERSION, model, False, str(outcome), 0))
            continue
        found = outcome.enrichment
        enrichments.append((post.post_id, found.reasoning, found.summary, found.tags_json()))
        tokens = outcome.prompt_tokens + outcome.completion_tokens
        states.append((post.post_id, post.digest, PROMPT_VERSION, model, True, None, tokens))
    with store.transaction() as conn:
        store.upsert_enrichments(conn, enrichments)
        store.record_enrichment_states(conn, states)
