"""Enrichment retries with backoff and jitter against a real local HTTP server answering 429:
``Retry-After: 0`` is not taken as "retry at once", and concurrent workers do not retry in step."""

from __future__ import annotations

import itertools
import random
import time
from collections import defaultdict

import pytest
from hypothesis import given
from hypothesis import strategies as st
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from mcpkit.archive.enrich.client import EnrichClient, PostFailedError
from tests.archive.fake_llm import MODEL, POST_HEADER, FakeLLM, running

pytestmark = pytest.mark.anyio

BACKOFF = 0.02


class Throttling(FakeLLM):
    """Answers ``429 Retry-After: 0`` to the first ``refusals`` requests for each post, and
    records when each request came (server side)."""

    def __init__(self, refusals: int) -> None:
        super().__init__()
        self.refusals = refusals
        self.times: defaultdict[str, list[float]] = defaultdict(list)

    async def complete(self, request: Request) -> Response:
        body = await request.json()
        text = body["messages"][-1]["content"].split(POST_HEADER, 1)[-1]
        self.times[text].append(time.monotonic())
        if len(self.times[text]) <= self.refusals:
            return JSONResponse({"error": {"message": "slow down"}}, 429, headers={"Retry-After": "0"})
        return await super().complete(request)


def client(url: str, attempts: int = 6) -> EnrichClient:
    return EnrichClient(url, MODEL, max_attempts=attempts, backoff=BACKOFF, max_backoff=5.0)


async def test_retry_after_zero_waits_the_backoff_and_then_succeeds() -> None:
    with running(Throttling(refusals=5)) as (fake, url):
        enricher = client(url)
        try:
            reply = await enricher.enrich("a post about tea")
        finally:
            await enricher.aclose()
    assert reply.attempts == 6
    (times,) = fake.times.values()
    gaps = [b - a for a, b in itertools.pairwise(times)]
    # each wait is at least half the exponential backoff, though the server asked for none
    for attempt, gap in enumerate(gaps, start=1):
        assert gap >= BACKOFF * 2 ** (attempt - 1) / 2, gaps


async def test_a_post_still_fails_after_max_attempts_in_one_line() -> None:
    with running(Throttling(refusals=100)) as (fake, url):
        enricher = client(url, attempts=3)
        try:
            with pytest.raises(PostFailedError) as info:
                await enricher.enrich("never served")
        finally:
            await enricher.aclose()
    assert str(info.value) == "the endpoint answered 429 3 times"
    assert len(fake.times["never served"]) == 3


@given(
    attempt=st.integers(1, 12),
    asked=st.one_of(st.none(), st.floats(0, 100, allow_nan=False)),
    seed=st.integers(0, 2**32 - 1),
)
def test_delay_is_never_zero_honours_the_ask_and_is_jittered(
    attempt: int, asked: float | None, seed: int
) -> None:
    enricher = EnrichClient.__new__(EnrichClient)
    enricher.backoff, enricher.max_backoff = 0.5, 30.0
    random.seed(seed)
    delays = {enricher._delay(attempt, asked) for _ in range(20)}
    base = min(30.0, 0.5 * 2 ** (attempt - 1))
    assert all(d >= base / 2 for d in delays)  # Retry-After: 0 is not "at once"
    if asked is not None:
        assert all(d >= min(asked, 30.0) for d in delays)  # what the endpoint asked, capped
    assert all(d <= max(base / 2, min(asked or 0.0, 30.0)) + base / 2 for d in delays)
    assert len(delays) > 1  # jittered: workers refused together do not come back together
