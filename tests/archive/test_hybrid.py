"""The ``hybrid`` search mode through the one API (what JSON-RPC, CLI, MCP and web call).

Hybrid fuses the trigram text ranking with the hub-corrected vector ranking
(:mod:`mcpkit.archive.ranking`); it is mcpkit's own mode value, so upstream's six modes and
their answers stay as they were (tests/archive/rpc/test_wire_unchanged.py holds their bytes).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from mcpkit.archive.api import ArchiveAPI
from mcpkit.archive.settings import MODES, UPSTREAM_MODES
from mcpkit.jsonrpc import JsonRpcError
from tests.search_quality.corpus import Corpus, build_archive, build_corpus

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ArchiveAPI, Corpus]]:
    db, corpus = build_archive(tmp_path_factory.mktemp("hybrid"), build_corpus(filler=120))
    api = ArchiveAPI.open(db, exact=True)
    yield api, corpus
    api.close()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def relevant(corpus: Corpus, topic: str) -> frozenset[int]:
    return next(j.relevant for j in corpus.queries if j.topic == topic)


async def search(api: ArchiveAPI, **params: Any) -> list[dict[str, Any]]:
    result: list[dict[str, Any]] = await api.call("search_similar", {"mode": "hybrid", **params})
    return result


def test_hybrid_is_an_extra_mode_beside_upstreams_six() -> None:
    assert (*UPSTREAM_MODES, "hybrid") == MODES
    assert UPSTREAM_MODES == ("content", "reasoning", "summary", "average", "maximum", "minimum")


async def test_hybrid_answers_rank_score_post_and_whether_each_hit_is_a_match(
    archive: tuple[ArchiveAPI, Corpus],
) -> None:
    api, corpus = archive
    found = await search(api, query="CrashLoopBackOff", settings={"top_k": 5})
    assert [r["rank"] for r in found] == [1, 2, 3, 4, 5]
    assert [r["score"] for r in found] == sorted((r["score"] for r in found), reverse=True)
    assert set(found[0]) == {"rank", "score", "post", "similarity", "text_match", "match"}
    assert found[0]["post"]["post_id"] in relevant(corpus, "k8s_outage")
    assert found[0]["text_match"] == 1.0 and found[0]["match"] is True
    assert all(0.0 <= r["score"] <= 1.0 for r in found)


async def test_upstream_modes_answer_as_before(archive: tuple[ArchiveAPI, Corpus]) -> None:
    api, _ = archive
    found = await api.call("search_similar", {"query": "CrashLoopBackOff", "mode": "content"})
    assert all(set(r) == {"rank", "score", "post"} for r in found)


async def test_cross_lingual_query_finds_its_posts_through_meaning(
    archive: tuple[ArchiveAPI, Corpus],
) -> None:
    api, corpus = archive
    found = await search(api, query="growing tomatoes on my balcony")
    assert found[0]["post"]["post_id"] in relevant(corpus, "balcony_garden")


async def test_filters_apply_to_both_sides(archive: tuple[ArchiveAPI, Corpus]) -> None:
    api, corpus = archive
    sourdough = relevant(corpus, "sourdough")
    owners = {user for post_id, user, _ in corpus.rows if post_id in sourdough}
    user = sorted(owners)[0]
    found = await search(
        api, query="ルヴァン種 パン", settings={"top_k": 20, "user_filter": {"includes": [user]}}
    )
    assert found and all(r["post"]["user"] == user for r in found)
    dated = await search(
        api,
        query="ルヴァン種 パン",
        settings={"top_k": 20, "date_filter": {"from": "2022-03-01", "to": "2022-03-31"}},
    )
    assert all("2022-03-01" <= r["post"]["timestamp"][:10] <= "2022-03-31" for r in dated)
    excluded = await search(api, query="ルヴァン種", settings={"user_filter": {"excludes": sorted(owners)}})
    assert not {r["post"]["post_id"] for r in excluded} & sourdough


async def test_mcpkit_filters_give_mcpkit_posts_with_the_match_fields(
    archive: tuple[ArchiveAPI, Corpus],
) -> None:
    api, _ = archive
    found = await search(api, query="親知らずの抜歯", settings={"kind": "all", "top_k": 3})
    assert found and isinstance(found[0]["post"]["id"], str) and "match" in found[0]
    none = await search(api, query="親知らずの抜歯", settings={"kind": "like"})
    assert none == []


async def test_the_text_filter_and_text_only_queries_work_in_hybrid(
    archive: tuple[ArchiveAPI, Corpus],
) -> None:
    api, _ = archive
    found = await search(api, query="パンを焼く|ルヴァン", settings={"top_k": 10})
    assert found and all("ルヴァン" in r["post"]["content"] for r in found)
    text_only = await search(api, query="| ルヴァン")
    assert [r["score"] for r in text_only] == [1.0] * len(text_only) and text_only


async def test_paging_continues_the_same_ranking(archive: tuple[ArchiveAPI, Corpus]) -> None:
    api, _ = archive
    whole = await search(api, query="マラソン大会に出た", settings={"top_k": 10})
    second = await search(api, query="マラソン大会に出た", settings={"top_k": 5}, offset=5)
    assert [r["post"]["post_id"] for r in second] == [r["post"]["post_id"] for r in whole[5:]]
    assert [r["rank"] for r in second] == [6, 7, 8, 9, 10]


async def test_vector_search_refuses_hybrid_in_one_line(archive: tuple[ArchiveAPI, Corpus]) -> None:
    api, _ = archive
    with pytest.raises(JsonRpcError) as caught:
        await api.call("vector_search", {"query": "x", "mode": "hybrid"})
    assert caught.value.code == -32602 and "\n" not in caught.value.message


def test_text_faces_say_no_good_match_only_for_answers_that_say_so() -> None:
    from mcpkit.archive import texts

    post = {"post_id": 1, "user": "a", "timestamp": "2024-01-01 00:00:00", "url": "u", "content": "草"}
    weak = [{"rank": 1, "score": 1.0, "post": post, "similarity": 0.21, "text_match": 0.0, "match": False}]
    shown = texts.format_search_results("q", weak)
    assert shown.splitlines()[1] == "⚠️ No good match: even the closest post is a weak match (similarity 0.21)"
    shown = texts.format_search_results("q", weak, "ja")
    assert shown.splitlines()[1] == "⚠️ 良い一致なし: 最も近い投稿も弱い一致です (類似度 0.21)"
    upstream = texts.format_search_results("q", [{"rank": 1, "score": 0.21, "post": post}])
    assert "No good match" not in upstream and upstream.splitlines()[1] == ""


def test_cli_searches_in_hybrid_mode(archive: tuple[ArchiveAPI, Corpus]) -> None:
    from tests.archive_faces.conftest import cli

    api, _ = archive
    db = str(api.engine.store.path)
    done = cli("search", "量子コンピュータの仕組み", "--mode", "hybrid", "--db", db)
    assert done.returncode == 0 and "⚠️ No good match" in done.stdout.splitlines()[1]
    done = cli("search", "ルヴァン種", "--mode", "hybrid", "--db", db, "--json")
    assert done.returncode == 0 and '"match": true' in done.stdout
