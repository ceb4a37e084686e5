"""``archive enrich`` against a real local OpenAI-compatible server (a fake of a hosted LLM API,
see fake_llm.py): answers, retries, failures, idempotence, and every mode working afterwards."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

import pytest

from mcpkit.archive.api import ArchiveAPI
from mcpkit.archive.embedders import create_embedder
from mcpkit.archive.embedding import embed_missing
from mcpkit.archive.enrich import EndpointError, EnrichClient, enrich, plan_enrichment
from mcpkit.archive.enrich import prompt as prompt_module
from mcpkit.archive.enrich.client import api_key_from
from mcpkit.archive.enrich.prompt import MalformedAnswerError, parse_answer
from mcpkit.archive.importers import import_csv
from mcpkit.archive.posts import strip_content
from mcpkit.archive.settings import MODES
from mcpkit.archive.store import Store

from .fake_llm import MODEL, FakeLLM, answer_for, running
from .helpers import row, write_csv

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def llm() -> Iterator[tuple[FakeLLM, str]]:
    with running() as served:
        yield served


def _client(url: str, **kwargs: object) -> EnrichClient:
    return EnrichClient(url, MODEL, max_attempts=3, backoff=0.01, **kwargs)  # type: ignore[arg-type]


async def _enrich(store: Store, url: str, concurrency: int = 8, limit: int | None = None) -> object:
    client = _client(url)
    try:
        return await enrich(store, client, plan_enrichment(store, limit), concurrency=concurrency)
    finally:
        await client.aclose()


def _sample_csv() -> Path:
    return Path(str(resources.files("mcpkit.archive") / "data" / "sample_twilog.csv"))


async def test_every_mode_and_source_works_after_enriching_a_csv_import(
    llm: tuple[FakeLLM, str], tmp_path: Path
) -> None:
    db = tmp_path / "a.db"
    store = Store(db)
    import_csv(_sample_csv(), store)
    embedder = create_embedder(None)
    embed_missing(store, "content", embedder)
    before = ArchiveAPI.open(db)
    with pytest.raises(Exception, match="no reasoning vectors"):
        await before.call("search_similar", {"query": "猫", "mode": "reasoning"})
    await before.aclose()

    summary = await _enrich(store, llm[1], concurrency=16)
    assert summary.failed == 0 and summary.enriched == plan_enrichment(store).done_before  # type: ignore[attr-defined]
    for space in ("reasoning", "summary"):
        assert embed_missing(store, space, embedder).embedded == summary.enriched  # type: ignore[attr-defined]
    store.close()

    api = ArchiveAPI.open(db)
    try:
        for mode in MODES:
            results = await api.call(
                "search_similar", {"query": "猫", "mode": mode, "settings": {"top_k": 5}}
            )
            assert len(results) == 5, mode
            assert all("summary" in r["post"] and "tags" in r["post"] for r in results), mode
        for source in ("reasoning", "summary"):
            found = await api.call(
                "search_posts_by_text",
                {"search_term": "要約" if source == "summary" else "検討", "source": source, "limit": 3},
            )
            assert len(found) == 3 and all(p["summary"].startswith("要約") for p in found)
        post = (await api.call("search_posts_by_text", {"search_term": "猫", "limit": 1}))[0]
        want = answer_for(strip_content(post["content"]))
        assert post["summary"] == want["summary"][:30] and post["tags"] == want["tags"]
        stats = await api.call("get_database_stats", {})
        assert (
            stats["enrichment"]["enriched"]
            == stats["enrichment"]["total_posts"] - plan_enrichment(api.engine.store).empty
        )
        status = await api.call("get_status", {})
        assert status["data_stats"]["total_summaries"] == stats["enrichment"]["enriched"]
    finally:
        await api.aclose()


FAILURE_POSTS = {
    1: "an ordinary post about coffee",
    2: "RATE429 asked to slow down",
    3: "FAIL500 a hiccup",
    4: "BROKEN1 garbled once",
    5: "BROKEN garbled always",
    6: "ALWAYS500 never answers",
    7: "LONGSUMMARY too wordy",
}


@pytest.fixture
def failing_store(tmp_path: Path) -> Iterator[Store]:
    store = Store(tmp_path / "f.db")
    import_csv(
        write_csv(tmp_path / "f.csv", [row(i, "alice", text) for i, text in FAILURE_POSTS.items()]), store
    )
    yield store
    store.close()


async def test_retries_failures_and_resuming(llm: tuple[FakeLLM, str], failing_store: Store) -> None:
    fake, url = llm
    summary = await _enrich(failing_store, url)
    assert (summary.enriched, summary.failed) == (5, 2)  # type: ignore[attr-defined]
    reasons = dict(summary.failures)  # type: ignore[attr-defined]
    assert (
        reasons[5].startswith("malformed answer twice") and reasons[6] == "the endpoint answered 500 3 times"
    )
    requests = {pid: fake.requests[text] for pid, text in FAILURE_POSTS.items()}
    assert requests == {1: 1, 2: 2, 3: 2, 4: 2, 5: 2, 6: 3, 7: 1}
    posts = failing_store.posts_by_ids(list(FAILURE_POSTS))
    assert len(posts[7]["summary"]) == 30 and "summary" not in posts[5]
    assert failing_store.enrichment_coverage() == {"total_posts": 7, "enriched": 5, "failed": 2}

    plan = plan_enrichment(failing_store)  # only the failed posts are due again
    assert sorted(p.post_id for p in plan.due) == [5, 6] and plan.done_before == 5 and plan.failed_before == 2
    await _enrich(failing_store, url)
    assert fake.requests[FAILURE_POSTS[1]] == 1  # never sent twice


async def test_changed_text_or_prompt_makes_a_post_due(
    llm: tuple[FakeLLM, str], failing_store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await _enrich(failing_store, llm[1])
    import_csv(
        write_csv(tmp_path / "g.csv", [row(1, "alice", "a different post now", log_type=3)]), failing_store
    )
    assert [p.post_id for p in plan_enrichment(failing_store).due] == [1, 5, 6]
    monkeypatch.setattr("mcpkit.archive.enrich.runner.PROMPT_VERSION", "2")
    assert len(plan_enrichment(failing_store).due) == 7
    assert len(plan_enrichment(failing_store, limit=3).due) == 3


async def test_dry_run_estimate(failing_store: Store) -> None:
    report = plan_enrichment(failing_store).as_dict()
    assert report["due"] == 7 and report["done_before"] == 0
    assert report["estimated_input_tokens"] > 7 * 50 and report["estimated_output_tokens"] == 7 * 120


async def test_key_is_sent_and_never_shown(
    llm: tuple[FakeLLM, str], failing_store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    key = api_key_from({"OPENAI_API_KEY": "sk-other", "MCPKIT_ENRICH_API_KEY": "sk-very-secret"})
    client = _client(llm[1], api_key=key)
    try:
        summary = await enrich(failing_store, client, plan_enrichment(failing_store))
    finally:
        await client.aclose()
    assert "Bearer sk-very-secret" in llm[0].authorizations
    assert "sk-very-secret" not in caplog.text and "sk-very-secret" not in repr(summary)


async def test_wrong_model_or_url_stops_the_run_in_one_line(
    failing_store: Store, llm: tuple[FakeLLM, str]
) -> None:
    client = EnrichClient(llm[1], "no-such-model", max_attempts=2, backoff=0.01)
    with pytest.raises(EndpointError) as info:
        await enrich(failing_store, client, plan_enrichment(failing_store))
    await client.aclose()
    assert "404 for model 'no-such-model'" in str(info.value) and "\n" not in str(info.value)
    assert failing_store.enrichment_coverage()["enriched"] == 0
    client = EnrichClient("http://127.0.0.1:9/v1", MODEL, max_attempts=2, backoff=0.01)
    with pytest.raises(EndpointError, match=r"cannot reach http://127\.0\.0\.1:9/v1"):
        await enrich(failing_store, client, plan_enrichment(failing_store))
    await client.aclose()


@pytest.mark.parametrize(
    "answer",
    [
        None,
        "",
        "not json",
        "[1, 2]",
        '{"reasoning": 1, "summary": "s", "tags": []}',
        '{"reasoning": "r", "summary": "s", "tags": "x"}',
        '{"reasoning": "r", "tags": []}',
    ],
)
def test_malformed_answers(answer: str | None) -> None:
    with pytest.raises(MalformedAnswerError):
        parse_answer(answer)


def test_fenced_answer_and_trimmed_summary() -> None:
    found = parse_answer(
        '```json\n{"reasoning": " r ", "summary": "' + "あ" * 40 + '", "tags": ["a", " "]}\n```'
    )
    assert (
        found.reasoning == "r" and found.summary == "あ" * prompt_module.SUMMARY_MAX and found.tags == ("a",)
    )
