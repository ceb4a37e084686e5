"""Who a post was addressed to, from the export's own addressing, stored and a filter (issue 40,
point 3).

Mastodon marks a post's audience only by its ActivityPub ``to``/``cc``: the public collection in
``to`` is public, in ``cc`` unlisted, a followers collection without it followers-only, anything
else (named people only, or nobody: ``to: []`` and ``cc: []``) a direct post. Direct posts are
stored but never shown by a search, listing, stats or thread unless asked for by name
(``visibility=direct``); followers-only posts are shown and say so.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpkit.archive.api import ArchiveAPI
from mcpkit.archive.filters import parse_visibilities
from mcpkit.archive.importers import mastodon as mastodon_importer
from mcpkit.archive.posts import VISIBILITIES
from mcpkit.errors import ValidationError
from mcpkit.jsonrpc import JsonRpcError
from tests.archive_faces.conftest import cli
from tests.export_fixtures import mastodon

PUBLIC = mastodon.PUBLIC
FOLLOWERS = mastodon.FOLLOWERS
BOB = "https://other.example/users/bob"

NOTES = {
    "public": mastodon.note(1, mastodon.mastodon_html("zebra for everyone")),
    "unlisted": mastodon.note(2, mastodon.mastodon_html("zebra unlisted"), to=[FOLLOWERS], cc=[PUBLIC]),
    "followers": mastodon.note(3, mastodon.mastodon_html("zebra for followers"), to=[FOLLOWERS], cc=[]),
    "direct": mastodon.note(4, mastodon.mastodon_html("zebra secret to bob"), to=[BOB], cc=[]),
    "nobody": mastodon.note(5, mastodon.mastodon_html("zebra secret to nobody"), to=[], cc=[]),
}


def _archive(tmp_path: Path) -> Path:
    path = mastodon.write_archive(tmp_path / "archive.tar.gz", mastodon.Archive(list(NOTES.values())))
    db = tmp_path / "a.db"
    done = cli("import", str(path), "--db", str(db), "--json")
    assert done.returncode == 0, done.stderr
    return db


def _json(*args: str) -> Any:
    done = cli(*args, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _texts(found: list[dict[str, Any]]) -> set[str]:
    return {p["content"] for p in found}


def test_a_direct_post_with_empty_to_and_cc_is_not_found_until_asked_for(tmp_path: Path) -> None:
    db = _archive(tmp_path)
    shown = _json("text", "zebra", "--db", str(db))
    assert _texts(shown) == {"zebra for everyone", "zebra unlisted", "zebra for followers"}
    assert not any(
        "secret" in json.dumps(p) for p in _json("text", "secret", "--kind", "all", "--db", str(db))
    )
    assert _json("stats", "--db", str(db))["total_posts"] == 3
    asked = _json("text", "zebra", "--visibility", "direct", "--db", str(db))
    assert _texts(asked) == {"zebra secret to bob", "zebra secret to nobody"}
    assert {p["visibility"] for p in asked} == {"direct"}
    every = _json("stats", "--visibility", "all", "--db", str(db))
    assert every["total_posts"] == 5
    assert every["by_visibility"] == {"public": 1, "unlisted": 1, "followers": 1, "direct": 2}


def test_followers_only_posts_are_shown_and_marked(tmp_path: Path) -> None:
    db = _archive(tmp_path)
    marks = {p["content"]: p["visibility"] for p in _json("text", "zebra", "--db", str(db))}
    assert marks == {
        "zebra for everyone": "public",
        "zebra unlisted": "unlisted",
        "zebra for followers": "followers",
    }


def test_every_face_takes_the_visibility_filter(tmp_path: Path) -> None:
    db = _archive(tmp_path)
    api = ArchiveAPI.open(db)
    try:
        direct = anyio.run(api.call, "search_posts_by_text", {"search_term": "zebra", "visibility": "direct"})
        assert _texts(direct) == {"zebra secret to bob", "zebra secret to nobody"}
        upstream = anyio.run(api.call, "search_posts_by_text", {"search_term": "zebra"})
        assert not any("secret" in p["content"] for p in upstream)
        users = anyio.run(api.call, "get_user_stats", {})
        assert sum(u["post_count"] for u in users) == 3
        upstream_stats = anyio.run(api.call, "get_database_stats", {})
        assert upstream_stats["total_posts"] == 3
        with pytest.raises(JsonRpcError) as refused:
            anyio.run(api.call, "search_posts_by_text", {"search_term": "zebra", "visibility": "secret"})
        assert refused.value.code == -32602 and "visibility must be" in str(refused.value)
    finally:
        api.close()
    from mcpkit.archive.mcp import ArchiveTools, tool_specs

    schemas = {spec.name: spec.input_schema for spec in tool_specs(ArchiveTools(api))}
    for name in ("search_similar", "search_posts_by_text", "get_database_stats", "get_user_stats"):
        assert "visibility" in schemas[name]["properties"], name


_ADDRESSES = st.lists(
    st.sampled_from([PUBLIC, "as:Public", FOLLOWERS, BOB, "https://x.example/users/c"]), max_size=3
)


@given(_ADDRESSES, _ADDRESSES)
def test_visibility_follows_the_addressing(to: list[str], cc: list[str]) -> None:
    obj = {"to": to, "cc": cc}
    found = mastodon_importer.visibility_of(obj, {})
    public = {PUBLIC, "as:Public"}
    if public & set(to):
        assert found == "public"
    elif public & set(cc):
        assert found == "unlisted"
    elif any(a.endswith("/followers") for a in to + cc):
        assert found == "followers"
    else:
        assert found == "direct"


@given(st.text(max_size=20))
def test_visibility_words_read_or_refuse_in_one_line(text: str) -> None:
    try:
        chosen = parse_visibilities(text)
    except ValidationError as exc:
        assert "\n" not in str(exc) and "visibility must be" in str(exc)
        return
    assert chosen is None or chosen <= frozenset(VISIBILITIES)


def test_enrichment_never_sends_a_direct_post_to_a_language_model(tmp_path: Path) -> None:
    """``archive enrich`` sends post texts to a hosted model: a direct post is not published
    that way either."""
    from mcpkit.archive.enrich.runner import plan_enrichment
    from mcpkit.archive.store import Store

    store = Store(_archive(tmp_path))
    try:
        due = {post.text for post in plan_enrichment(store).due}
    finally:
        store.close()
    assert due == {"zebra for everyone", "zebra unlisted", "zebra for followers"}


def test_the_import_line_says_how_many_direct_posts_stay_hidden(tmp_path: Path) -> None:
    path = mastodon.write_archive(tmp_path / "archive.tar.gz", mastodon.Archive(list(NOTES.values())))
    db = tmp_path / "a.db"
    done = cli("import", str(path), "--db", str(db))
    assert done.returncode == 0, done.stderr
    assert "2 direct posts, shown only when asked for (--visibility direct)" in done.stdout + done.stderr
    again = cli("import", str(path), "--db", str(db), "--json")
    assert json.loads(again.stdout)["exports"][0]["direct"] == 2


def test_the_web_page_lists_and_counts_no_direct_post_and_marks_followers_only(tmp_path: Path) -> None:
    from mcpkit.archive.facets import Filters
    from mcpkit.archive.pages.columns import FacetIndex
    from mcpkit.archive.store import Store

    store = Store(_archive(tmp_path))
    try:
        index = FacetIndex(store)
        cols = index.columns()
        shown = [int(cols.ids[r]) for r in np.flatnonzero(index.mask(cols, Filters()))]
        posts = index.posts(shown)
        assert {p["content"]: p["visibility"] for p in posts.values()} == {
            "zebra for everyone": "public",
            "zebra unlisted": "unlisted",
            "zebra for followers": "followers",
        }
        kinds = {v["value"]: v["count"] for v in index.counts(cols, Filters())["kind"]}
        assert kinds["post"] == 3
    finally:
        store.close()


def test_upstreams_searches_by_meaning_leave_direct_posts_out(tmp_path: Path) -> None:
    """Upstream's requests name no filter: their answers hold no direct post either, not even
    ``vector_search``'s bare ids."""
    from mcpkit.archive.embedding import embed_missing
    from mcpkit.archive.engine import Engine
    from mcpkit.archive.store import Store
    from mcpkit.archive.vectors import vectors_root
    from tests.archive.helpers import HashEmbedder

    db = _archive(tmp_path)
    store = Store(db)
    embed_missing(store, "content", HashEmbedder(16))
    direct = {
        int(r[0]) for r in store.reader.execute("SELECT post_id FROM posts WHERE visibility = 'direct'")
    }
    assert len(direct) == 2
    engine = Engine(store, vectors_root(db), embedder=HashEmbedder(16))
    try:
        engine.warm()
        found = {r["post"]["post_id"] for r in engine.search_similar("zebra secret")}
        assert found and not found & direct
        ranked = {post_id for post_id, _ in engine.vector_search("zebra secret")}
        assert len(ranked) == 3 and not ranked & direct
    finally:
        engine.close()


def test_the_shell_asks_for_direct_posts_by_name(tmp_path: Path) -> None:
    from mcpkit.archive.shell import Shell

    api = ArchiveAPI.open(_archive(tmp_path))
    lines: list[str] = []
    shell = Shell(api, write=lines.append)
    try:
        anyio.run(shell.handle, "| zebra")
        assert not any("secret" in r["post"]["content"] for r in shell.state.results)
        anyio.run(shell.handle, "/visibility direct")
        assert lines[-1].endswith("visibility: direct")
        anyio.run(shell.handle, "| zebra")
        assert {r["post"]["content"] for r in shell.state.results} == {
            "zebra secret to bob",
            "zebra secret to nobody",
        }
        anyio.run(shell.handle, "/visibility secret")
        assert lines[-1].startswith("usage: visibility must be public, unlisted, followers, direct or all")
    finally:
        api.close()


def test_the_text_answers_mark_who_a_post_was_addressed_to(tmp_path: Path) -> None:
    db = _archive(tmp_path)
    done = cli("text", "zebra", "--visibility", "all", "--db", str(db))
    assert done.returncode == 0, done.stderr
    marked = [line for line in done.stdout.splitlines() if "@" in line and "(" in line]
    assert sum("[followers only]" in line for line in marked) == 1
    assert sum("[unlisted]" in line for line in marked) == 1
    assert sum("[direct]" in line for line in marked) == 2
    assert sum("[" in line for line in marked) == 4  # a public post says nothing more
