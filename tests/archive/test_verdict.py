"""The "no good match" verdict on real exports, in every search mode and face.

The archives are two real Mastodon exports (English and Chinese, tests/search_quality/real, imported
as the downloaded tar.gz and embedded with the bundled model), each alone and merged as a person
merges their accounts. The judged questions (judged.py) were written from the posts: some have an
answer, some have none. Asked through the archive API as the faces ask it (``kind`` sent), in the
default (meaning) mode, in hybrid mode and in text mode (where no post holds every word, the faces
show hybrid's verdict), "no good match" must be said for at least 8 in 10 questions without an
answer and for at most 1 in 25 with one, per language, in each archive. bench/verdict.py prints
the same figures, and what a fit that never saw a language gives on it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from mcpkit.archive.api import ArchiveAPI
from mcpkit.archive.filters import request_filters
from tests.search_quality.real.judged import QUESTIONS, Question, build_archive, status_id

MODES = {"meaning": "content", "hybrid": "hybrid"}


@pytest.fixture(scope="module")
def merged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_archive(tmp_path_factory.mktemp("real") / "archive.db", ["en", "zh"])


ARCHIVES = {"en": ("en",), "zh": ("zh",), "merged": ("en", "zh")}
"""Each export alone and both merged: a verdict that holds in one archive must hold in the others."""


ZH_ALONE_SHORT = (
    "the Chinese export alone (32 posts) misses the goal: 3 of its 27 questions with an answer get "
    '"no good match" (SMS one-time codes, the first hello, the Starlink joke: their answers score '
    "0.24 at most or are not among the first ten hits, while an unanswered question's best hit "
    "reaches 0.27); bench/verdict.py prints the figures"
)


@pytest.fixture(
    scope="module",
    params=[
        "en",
        pytest.param("zh", marks=pytest.mark.xfail(strict=True, reason=ZH_ALONE_SHORT)),
        "merged",
    ],
)
def each(
    request: pytest.FixtureRequest, merged: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[tuple[str, ...], Path]:
    langs = ARCHIVES[request.param]
    if request.param == "merged":
        return langs, merged
    return langs, build_archive(tmp_path_factory.mktemp(f"real-{request.param}") / "archive.db", list(langs))


@pytest.fixture(scope="module")
def api(merged: Path) -> Iterator[ArchiveAPI]:
    opened = ArchiveAPI.open(merged, exact=True)
    yield opened
    opened.close()


def ask(api: ArchiveAPI, query: str, mode: str, **extra: Any) -> list[dict[str, Any]]:
    params = {"query": query, "settings": {"top_k": 10}, "mode": mode, **request_filters(), **extra}
    result: list[dict[str, Any]] = anyio.run(api.call, "search_similar", params)
    return result


def said_no_good_match(results: list[dict[str, Any]]) -> bool:
    assert all(isinstance(r.get("match"), bool) for r in results), results[:1]
    return not any(r["match"] for r in results)


def verdicts(api: ArchiveAPI, question: Question) -> dict[str, bool]:
    """Per mode: did the search say "no good match"?"""
    out = {name: said_no_good_match(ask(api, question.query, mode)) for name, mode in MODES.items()}
    literal = anyio.run(
        api.call, "search_posts_by_text", {"search_term": question.query, "limit": 10, **request_filters()}
    )
    out["text"] = False if literal else out["hybrid"]
    return out


def test_the_verdict_holds_on_real_exports_of_each_language_in_every_mode(
    each: tuple[tuple[str, ...], Path],
) -> None:
    langs, db = each
    opened = ArchiveAPI.open(db, exact=True)
    try:
        wrong, asked = _judge_all(opened, [q for q in QUESTIONS if q.lang in langs])
    finally:
        opened.close()
    for (lang, answerable), count in asked.items():
        for mode in (*MODES, "text"):
            missed = wrong.get((lang, mode, answerable), [])
            allowed = count // 25 if answerable else count // 5  # at most 1 in 25 / 2 in 10
            assert len(missed) <= allowed, (
                langs,
                lang,
                mode,
                "answerable" if answerable else "no answer",
                missed,
            )


def _judge_all(
    api: ArchiveAPI, questions: list[Question]
) -> tuple[dict[tuple[str, str, bool], list[str]], dict[tuple[str, bool], int]]:
    """The questions each verdict got wrong, per (export, mode, answerable), and how many were asked."""
    wrong: dict[tuple[str, str, bool], list[str]] = {}
    asked: dict[tuple[str, bool], int] = {}
    for question in questions:
        asked[question.lang, question.answerable] = asked.get((question.lang, question.answerable), 0) + 1
        for mode, said_no in verdicts(api, question).items():
            if said_no == question.answerable:
                wrong.setdefault((question.lang, mode, question.answerable), []).append(question.query)
    return wrong, asked


def test_hybrid_still_finds_the_answers(api: ArchiveAPI) -> None:
    """Hybrid puts an answer among its first five at least as often as the search by meaning it
    fuses, and for at least 9 in 10 questions."""
    answerable = [q for q in QUESTIONS if q.answerable]

    def found(mode: str) -> int:
        return sum(
            any(status_id(r["post"]) in q.relevant for r in ask(api, q.query, mode)[:5]) for q in answerable
        )

    hybrid, meaning = found("hybrid"), found("content")
    assert hybrid >= max(meaning, len(answerable) * 9 // 10), (hybrid, meaning, len(answerable))


def test_a_recipe_nobody_posted_is_no_good_match_in_meaning_and_hybrid_mode(api: ArchiveAPI) -> None:
    for mode in MODES.values():
        results = ask(api, "beef wellington recipe", mode)
        assert results and said_no_good_match(results), mode
        assert all(0 <= r["similarity"] <= 1 and 0 <= r["text_match"] <= 1 for r in results)


def test_upstreams_request_gets_upstreams_answer_without_a_verdict(api: ArchiveAPI) -> None:
    """No mcpkit key in the request: upstream's result shape, byte for byte (the golden wire
    test holds the frames; here: the verdict's keys are not added)."""
    results = anyio.run(api.call, "search_similar", {"query": "beef wellington recipe"})
    assert results and all(set(r) == {"rank", "score", "post"} for r in results)


def test_search_json_in_the_default_mode_carries_the_verdict(merged: Path) -> None:
    from mcpkit.archive.cli import app

    runner = CliRunner()
    shown = runner.invoke(app, ["search", "beef wellington recipe", "--json", "--db", str(merged)])
    assert shown.exit_code == 0, shown.output
    results = json.loads(shown.stdout)
    assert results and all(r["match"] is False for r in results)
    found = runner.invoke(app, ["search", "Korean chicken soup with ginseng", "--json", "--db", str(merged)])
    assert json.loads(found.stdout)[0]["match"] is True
    text = runner.invoke(app, ["search", "beef wellington recipe", "--db", str(merged)])
    assert text.exit_code == 0 and text.stdout.splitlines()[1].startswith("⚠️"), text.stdout[:300]


def test_the_text_answer_says_no_good_match_only_when_no_hit_is_one() -> None:
    from mcpkit.archive import texts

    post = {"post_id": 1, "user": "a", "timestamp": "2024-01-01 00:00:00", "url": "u", "content": "x"}
    weak = {"rank": 1, "score": 0.3, "post": post, "similarity": 0.21, "text_match": 0.0, "match": False}
    real = {"rank": 2, "score": 0.2, "post": post, "similarity": 0.45, "text_match": 0.0, "match": True}
    assert texts.match_note([weak, real]) == ""  # the second hit is a match: say nothing
    assert texts.match_note([weak, dict(weak, rank=2)]).startswith("\n⚠️")
    assert texts.match_note([{"rank": 1, "score": 0.2, "post": post}]) == ""  # upstream's: no verdict


def test_the_page_says_no_good_match_in_every_mode(api: ArchiveAPI) -> None:
    from mcpkit.archive.web.views import Views, parse_state

    views = Views(api)

    def page(query: str, mode: str) -> dict[str, Any]:
        shown: dict[str, Any] = anyio.run(views.search, parse_state({"q": [query], "mode": [mode]}))
        return shown

    for mode in ("semantic", "hybrid"):
        data = page("beef wellington recipe", mode)
        assert data["no_good_match"] and data["results"] == [], mode
        assert page("Korean chicken soup with ginseng", mode)["results"], mode
    words = page("beef wellington recipe", "text")  # no post holds the words: nor the meaning
    assert words["results"] == [] and words["meaning_match"] is False
    assert "no good match" in words["message"]
    close = page("Korean chicken soup with ginseng", "text")  # no post holds "with": one means it
    assert close["results"] == [] and close["meaning_match"] is True
    assert "close in meaning" in close["message"]


def test_a_text_search_that_finds_no_post_says_whether_one_comes_close_in_meaning(
    api: ArchiveAPI, merged: Path
) -> None:
    from mcpkit.archive.cli import app
    from mcpkit.archive.mcp import ArchiveTools

    tools = ArchiveTools(api)
    nothing = anyio.run(tools.search_posts_by_text, {"search_term": "beef wellington recipe"}, None)
    assert isinstance(nothing, str) and "No good match: no post comes close in meaning" in nothing
    close = anyio.run(tools.search_posts_by_text, {"search_term": "Korean chicken soup with ginseng"}, None)
    assert isinstance(close, str) and "Some posts come close in meaning" in close
    runner = CliRunner()
    shown = runner.invoke(app, ["text", "beef wellington recipe", "--db", str(merged)])
    assert shown.exit_code == 0 and "No good match" in shown.stdout, shown.stdout
    shown = runner.invoke(app, ["text", "Korean chicken soup with ginseng", "--db", str(merged)])
    assert shown.exit_code == 0 and "come close in meaning" in shown.stdout, shown.stdout


def test_a_post_among_near_copies_of_itself_is_still_a_match(tmp_path: Path) -> None:
    """The shipped sample repeats posts with small changes, as real archives do (the same post
    twice, a note added to an old one): such a post's nearest posts are its copies, so it never
    stands out of its neighbourhood; a hit that close (``clear``) is a match wherever it lies."""
    from importlib import resources

    from mcpkit.archive.embedders import create_embedder
    from mcpkit.archive.embedding import embed_missing
    from mcpkit.archive.importers import import_csv
    from mcpkit.archive.store import Store

    db = tmp_path / "sample.db"
    store = Store(db)
    try:
        import_csv(Path(str(resources.files("mcpkit.archive") / "data" / "sample_twilog.csv")), store)
        embed_missing(store, "content", create_embedder(None))
    finally:
        store.close()
    sample = ArchiveAPI.open(db, exact=True)
    try:
        hits = ask(sample, "猫が寝ている", "content")  # a cat asleep: several posts say so
    finally:
        sample.close()
    assert "寝" in hits[0]["post"]["content"] and hits[0]["match"] is True


@given(
    similarity=st.floats(0, 1),
    coverage=st.floats(0, 1),
    hubness=st.floats(0, 1),
    more=st.floats(0, 1),
)
def test_a_closer_hit_is_never_less_of_a_match(
    similarity: float, coverage: float, hubness: float, more: float
) -> None:
    """The verdict is monotone: a hit closer in meaning, holding more of the words, or in a
    less crowded neighbourhood never loses a match it had."""
    from mcpkit.archive import ranking

    measured = ranking.calibration_for("use-multilingual-v3")
    assert measured is not None and measured.neighbourhood is not None and measured.clear is not None
    if measured.is_match(similarity, coverage, hubness):
        assert measured.is_match(min(1.0, similarity + more), coverage, hubness)
        assert measured.is_match(similarity, min(1.0, coverage + more), hubness)
        assert measured.is_match(similarity, coverage, max(0.0, hubness - more))


def test_the_shell_says_no_good_match_before_the_weak_hits(merged: Path, tmp_path: Path) -> None:
    from tests.archive_faces.conftest import cli

    lines = ["beef wellington recipe", "Korean chicken soup with ginseng", "/q"]
    done = cli("shell", "--db", str(merged), input="\n".join(lines) + "\n",
               env={"MCPKIT_ARCHIVE_STATE": str(tmp_path)})  # fmt: skip
    assert done.returncode == 0, done.stderr
    weak, found = done.stdout.split("samgyetang", 1)[0], done.stdout.split("⚠️", 1)[-1]
    assert "⚠️ No good match" in weak  # the recipe: said once, before its weak hits
    assert done.stdout.count("⚠️") == 1 and "samgyetang" in found  # the soup: a match, no note


def test_a_post_of_a_few_words_is_discounted_before_the_verdict() -> None:
    """A reply or a link with a few words is near many questions by those words alone (on a
    French X archive merged with these, "@obsolete29 Go with social 😎" was the match for
    organising a wedding at the town hall); the verdict discounts it, a CJK post saying as much
    as a sentence is not."""
    from mcpkit.archive import ranking

    few = "@obsolete29 Go with social 😎"
    said = "Today I finally replaced the old air conditioner, after two years of repairs"
    cjk = "空調被我修好用了兩年，我還是決定換一個新的了"
    few_sim, said_sim, cjk_sim = ranking.hub_adjusted(np.full(3, 0.45, dtype=np.float32), [few, said, cjk])
    assert few_sim < said_sim == cjk_sim == pytest.approx(0.45)
    bare = ranking.hub_adjusted(np.full(1, 0.45, dtype=np.float32), ["https://example.com/x @someone"])
    assert bare[0] < few_sim


@given(words=st.text(max_size=60), more=st.text(min_size=1, max_size=20), wide=st.integers(1, 3))
def test_the_length_discount_counts_words_not_links(words: str, more: str, wide: int) -> None:
    """URLs and mentions say nothing; more text never makes a post shorter; the discount is a
    share between 0 and 1."""
    from mcpkit.archive import ranking

    bare = ranking.text_units(words, wide)
    assert ranking.text_units(f"{words} https://example.com/a/b?c=d @someone", wide) == bare
    assert ranking.text_units(f"{words} {more}", wide) >= bare
    shares = ranking.brevity([words, f"{words} {more}"], ranking.VERDICT_SHORT, wide)
    assert 0 <= shares[1] <= shares[0] <= 1
