"""mcpkit's post filters (kind, platform, account, has media) in every query method and mode.

One archive holds every kind on every platform, for three accounts, with and without media,
written directly through the store (no reader involved). Each answer is compared with the
posts a plain Python test of the same conditions selects: search in every mode (exact and
with the quantised first pass), ``| T`` search, text search, user and database statistics.
The upstream shape (no filter key: every kind, upstream's post) is checked alongside, and the
coercion of filter values is property-tested.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpkit.archive import scan_index
from mcpkit.archive.api import ArchiveAPI
from mcpkit.archive.embedding import embed_missing
from mcpkit.archive.engine import Engine
from mcpkit.archive.filters import (
    AUTHORED,
    PostFilter,
    account_key,
    parse_accounts,
    parse_has_media,
    parse_kinds,
    parse_platforms,
    parse_post_filter,
)
from mcpkit.archive.posts import AUTHORED_KINDS, KINDS, PLATFORMS, Media, Post, log_type_of_kind, post_key
from mcpkit.archive.store import Store
from mcpkit.archive.store import _queries as store_queries
from mcpkit.archive.vectors import vectors_root
from mcpkit.errors import ValidationError
from mcpkit.jsonrpc import JsonRpcError
from tests.archive.helpers import HashEmbedder

ACCOUNTS = {"x": ["@alice", "@bob"], "mastodon": ["@alice@social.example"], "bluesky": ["alice.bsky.social"]}
MODES = ("content", "reasoning", "summary", "average", "maximum", "minimum")


def _post(n: int, platform: str, account: str, kind: str, media: bool) -> Post:
    owner = account.lstrip("@").split("@")[0]
    author = owner if kind in AUTHORED_KINDS or kind == "repost" else f"other{n % 3}"
    if platform == "x":
        source_id = str(1_800_000_000_000_000_000 + n)
        url = f"https://x.com/{author}/status/{source_id}"
    elif platform == "mastodon":
        source_id = f"https://social.example/users/{author}/statuses/{n}"
        url = f"https://social.example/@{author}/{n}"
    else:
        source_id = f"at://did:plc:{author}/app.bsky.feed.post/r{n}"
        url = f"https://bsky.app/profile/did:plc:{author}/post/r{n}"
    return Post(
        post_id=post_key(platform, source_id),
        user=author,
        timestamp=f"2024-{1 + n % 12:02d}-{1 + n % 28:02d} {n % 24:02d}:00:00",
        url=url,
        content=f"word number {n} on {platform} as {kind}",
        log_type=log_type_of_kind(kind),
        platform=platform,
        kind=kind,
        source_id=source_id,
        account=account,
        content_warning="spoiler" if n % 5 == 0 else "",
        lang="en" if n % 2 else "",
        media=(Media("image", path=f"media/{n}.jpg", alt=f"picture {n}"),) if media else (),
    )


def _posts() -> list[Post]:
    posts = []
    n = 0
    for platform, accounts in ACCOUNTS.items():
        for account in accounts:
            for kind in KINDS:
                for media in (False, True):
                    n += 1
                    posts.append(_post(n, platform, account, kind, media))
    return posts


POSTS = _posts()
BY_ID = {p.post_id: p for p in POSTS}


def passes(post: Post, post_filter: PostFilter) -> bool:
    return post_filter.passes(post.kind, post.platform, post.account, bool(post.media))


def expected_ids(post_filter: PostFilter | None) -> set[int]:
    return {p.post_id for p in POSTS if post_filter is None or passes(p, post_filter)}


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("filters") / "a.db"
    store = Store(db)
    try:
        with store.transaction() as conn:
            store.upsert_posts(conn, POSTS)
            store.upsert_enrichments(
                conn,
                [(p.post_id, f"why {p.post_id}", f"gist {p.post_id}", json.dumps(["t"])) for p in POSTS],
            )
        embedder = HashEmbedder(16)
        for space in ("content", "reasoning", "summary"):
            embed_missing(store, space, embedder)
    finally:
        store.close()
    return db


@pytest.fixture(scope="module", params=["exact", "quantised"])
def api(archive: Path, request: pytest.FixtureRequest) -> Iterator[ArchiveAPI]:
    """The API over the archive: exact scans, and the quantised first pass forced on."""
    quantised = request.param == "quantised"
    if quantised and not scan_index.available():
        pytest.skip("faiss-cpu is part of the archive extra")
    engine = Engine(
        Store(archive),
        vectors_root(archive),
        embedder=HashEmbedder(16),
        index_min_rows=1 if quantised else None,
    )
    if quantised:
        for name in ("content", "reasoning", "summary"):
            assert engine.scans.build_now(name, engine.require_space(name)) is not None
    opened = ArchiveAPI(engine)
    yield opened
    opened.close()


def call(api: ArchiveAPI, method: str, params: dict[str, Any]) -> Any:
    return anyio.run(api.call, method, params)


def search_ids(api: ArchiveAPI, params: dict[str, Any], mode: str = "content") -> set[int]:
    results = call(api, "search_similar", {"query": "word", "mode": mode, **params})
    return {int(r["post"]["post_id"]) for r in results}


# -- what a filter request may hold --------------------------------------------------------------

kind_values = st.one_of(
    st.none(),
    st.just("all"),
    st.lists(st.sampled_from(KINDS), min_size=1, max_size=4, unique=True),
    st.sampled_from(KINDS).map(str.upper),
)
platform_values = st.one_of(st.none(), st.lists(st.sampled_from(PLATFORMS), min_size=1, unique=True))
every_account = [a for accounts in ACCOUNTS.values() for a in accounts]
account_values = st.one_of(
    st.none(),
    st.lists(st.sampled_from(every_account), min_size=1, max_size=2, unique=True),
    st.sampled_from(every_account).map(lambda a: a.lstrip("@").upper()),
)
media_values = st.sampled_from([None, True, False, "yes", "false"])


@st.composite
def filter_requests(draw: st.DrawFn) -> dict[str, Any]:
    request: dict[str, Any] = {}
    for key, values in (
        ("kind", kind_values),
        ("platform", platform_values),
        ("account", account_values),
        ("has_media", media_values),
    ):
        value = draw(values)
        if value is not None:
            request[key] = value
    return request


def _filter_of(request: dict[str, Any]) -> PostFilter | None:
    return parse_post_filter(request)


# -- every query method against the plain Python answer -----------------------------------------


@settings(max_examples=25, deadline=None)
@given(request=filter_requests(), mode=st.sampled_from(MODES))
def test_search_in_every_mode_returns_exactly_the_filtered_posts(
    api: ArchiveAPI, request: dict[str, Any], mode: str
) -> None:
    want = expected_ids(_filter_of(request))
    assert search_ids(api, {"settings": {"top_k": 100, **request}}, mode) == want
    assert search_ids(api, {"top_k": 100, **request}, mode) == want  # the MCP tool's flat form


@settings(max_examples=25, deadline=None)
@given(request=filter_requests())
def test_text_queries_return_exactly_the_filtered_posts(api: ArchiveAPI, request: dict[str, Any]) -> None:
    want = expected_ids(_filter_of(request))
    assert search_ids(api, {"query": "| word", "settings": {"top_k": 100}, **request}) == want
    found = call(api, "search_posts_by_text", {"search_term": "word", "limit": 1000, **request})
    assert {int(p["post_id"]) for p in found} == want
    stamps = [(p["timestamp"], int(p["post_id"])) for p in found]
    assert stamps == sorted(stamps, reverse=True)


@settings(max_examples=25, deadline=None)
@given(request=filter_requests())
def test_stats_count_the_filtered_posts(api: ArchiveAPI, request: dict[str, Any]) -> None:
    post_filter = _filter_of(request)
    chosen = [p for p in POSTS if post_filter is None or passes(p, post_filter)]
    users = call(api, "get_user_stats", {"limit": 1000, **request})
    assert {u["user"]: u["post_count"] for u in users} == dict(Counter(p.user for p in chosen))
    stats = call(api, "get_database_stats", request)
    assert stats["total_posts"] == len(chosen)
    assert stats["total_users"] == len({p.user for p in chosen})
    stamps = sorted(p.timestamp for p in chosen)
    assert stats["date_range"] == {
        "earliest": stamps[0] if stamps else "",
        "latest": stamps[-1] if stamps else "",
    }
    if post_filter is None:
        assert "by_kind" not in stats
        return
    # every breakdown counts the posts the totals count (each filter applies to each breakdown)
    for key, field in (("by_kind", "kind"), ("by_platform", "platform"), ("by_account", "account")):
        want = Counter(str(getattr(p, field)) for p in chosen)
        assert stats[key] == dict(want), key
        assert sum(stats[key].values()) == stats["total_posts"], key


@settings(max_examples=15, deadline=None)
@given(request=filter_requests())
def test_the_date_range_of_a_broad_filter_walks_the_time_index(
    archive: Path, request: dict[str, Any]
) -> None:
    """A filter passing many posts has its date range read from each end of the time index,
    not post by post (forced here by counting every filter as broad); the answer is the same."""
    post_filter = _filter_of(request) or PostFilter()
    chosen = sorted(p.timestamp for p in POSTS if passes(p, post_filter))
    store = Store(archive)
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(store_queries, "_FEW_POSTS", 0)
            stats = store.filtered_stats(post_filter)
    finally:
        store.close()
    assert stats["date_range"] == {
        "earliest": chosen[0] if chosen else "",
        "latest": chosen[-1] if chosen else "",
    }
    assert stats["total_posts"] == len(chosen)


def test_a_kind_no_release_names_is_counted_under_its_own_name(tmp_path: Path) -> None:
    """A stored kind or platform outside the known lists (a newer mcpkit's, or a hand edit)
    still shows in the facets, by its stored name and count, never dropped."""
    db = tmp_path / "a.db"
    store = Store(db)
    try:
        with store.transaction() as conn:
            store.upsert_posts(conn, POSTS[:6])
            conn.execute(
                "UPDATE posts SET kind = 'poll', platform = 'threads' WHERE post_id = ?", (POSTS[0].post_id,)
            )
            store.note_post_changes([POSTS[0].post_id])
        stats = store.filtered_stats(PostFilter())
    finally:
        store.close()
    kinds = Counter(p.kind for p in POSTS[1:6])
    assert stats["by_kind"] == {**dict(kinds), "poll": 1}
    assert stats["by_platform"] == {"x": 5, "threads": 1}
    assert stats["total_posts"] == 6


@pytest.mark.parametrize(
    ("request_keys", "low"),
    [
        ({"platform": "x"}, 6),
        ({"platform": "x"}, 7),
        ({"kind": "all", "platform": "x"}, 9),
        ({"kind": "like"}, 2),
    ],
)
def test_user_thresholds_count_what_the_filter_keeps(
    api: ArchiveAPI, request_keys: dict[str, Any], low: int
) -> None:
    """A threshold counts the posts the filter keeps, as the filtered user list shows them:
    alice has 6 authored X posts (16 posts in all), so ``threshold_min 7`` on X keeps nobody."""
    post_filter = _filter_of(request_keys)
    assert post_filter is not None
    counts = Counter(p.user for p in POSTS if passes(p, post_filter))
    for query in ("word", "| word"):
        results = call(
            api,
            "search_similar",
            {
                "query": query,
                "settings": {"top_k": 100, "user_filter": {"threshold_min": low}},
                **request_keys,
            },
        )
        users = {r["post"]["user"] for r in results}
        assert users == {u for u, c in counts.items() if c >= low}, query
        if request_keys == {"platform": "x"} and low == 7:
            assert users == set() and Counter(p.user for p in POSTS)["alice"] > low


# -- shapes: upstream's without filter keys, mcpkit's with them ---------------------------------


def test_a_request_without_filter_keys_is_upstreams(api: ArchiveAPI) -> None:
    results = call(api, "search_similar", {"query": "word", "settings": {"top_k": 100}})
    assert {int(r["post"]["post_id"]) for r in results} == {p.post_id for p in POSTS}
    assert all(
        set(r["post"]) <= {"post_id", "content", "timestamp", "url", "user", "reasoning", "summary", "tags"}
        for r in results
    )
    assert all(isinstance(r["post"]["post_id"], int) for r in results)
    stats = call(api, "get_database_stats", {})
    assert stats["total_posts"] == len(POSTS) and "by_kind" not in stats


def test_any_filter_key_defaults_to_the_authored_kinds(api: ArchiveAPI) -> None:
    found = call(api, "search_posts_by_text", {"search_term": "word", "limit": 1000, "platform": "mastodon"})
    assert {p["kind"] for p in found} == set(AUTHORED_KINDS)
    assert {p["platform"] for p in found} == {"mastodon"}
    everything = call(api, "search_posts_by_text", {"search_term": "word", "limit": 1000, "kind": "all"})
    assert len(everything) == len(POSTS)


def test_mcpkit_posts_carry_every_field_with_string_ids(api: ArchiveAPI) -> None:
    post = next(p for p in POSTS if p.platform == "mastodon" and p.media and p.content_warning)
    found = call(
        api,
        "search_posts_by_text",
        {"search_term": f'"{post.content}"', "kind": "all", "platform": "mastodon", "has_media": True},
    )
    assert len(found) == 1
    got = found[0]
    assert next(iter(got)) == "id" and got["id"] == post.source_id
    assert got["post_id"] == post.post_id  # upstream's fields stay, unchanged
    assert {k: got[k] for k in ("platform", "kind", "account", "content_warning", "lang", "url")} == {
        "platform": "mastodon",
        "kind": post.kind,
        "account": post.account,
        "content_warning": "spoiler",
        "lang": post.lang,
        "url": post.url,
    }
    assert got["media"] == [
        {"type": "image", "path": post.media[0].path, "url": "", "alt": post.media[0].alt}
    ]
    assert {"reply_to", "quote_of", "repost_of", "thread_root"} <= set(got)
    x_post = call(api, "search_posts_by_text", {"search_term": "word", "limit": 1, "platform": "x"})[0]
    assert x_post["id"] == str(x_post["post_id"]) and isinstance(x_post["id"], str)


def test_bad_filter_values_are_one_line_invalid_params(api: ArchiveAPI) -> None:
    cases: list[tuple[dict[str, Any], str]] = [
        ({"kind": "tweets"}, "kind must be post, reply, quote, repost, like, bookmark or all; got 'tweets'"),
        ({"platform": "myspace"}, "platform must be x, mastodon, bluesky or all"),
        ({"has_media": "maybe"}, "has_media must be true or false"),
        ({"kind": 3}, "kind takes a name or a list of names"),
        ({"account": [1]}, "account takes names like"),
    ]
    for params, needle in cases:
        with pytest.raises(JsonRpcError) as info:
            call(api, "search_posts_by_text", {"search_term": "word", **params})
        assert info.value.code == -32602 and needle in str(info.value) and "\n" not in str(info.value)


# -- coercion of filter values ------------------------------------------------------------------


def _spellings(kinds: list[str]) -> st.SearchStrategy[Any]:
    """Ways people and models write the same kinds: a list, "a,b", a JSON array, any case."""
    return st.sampled_from(
        [
            kinds,
            ",".join(kinds),
            " , ".join(k.upper() for k in kinds),
            json.dumps(kinds),
            [",".join(kinds)],
        ]
    )


@given(
    st.lists(st.sampled_from(KINDS), min_size=1, unique=True).flatmap(
        lambda ks: st.tuples(st.just(ks), _spellings(ks))
    )
)
def test_kinds_read_the_same_however_written(case: tuple[list[str], Any]) -> None:
    kinds, written = case
    want = None if set(kinds) == set(KINDS) else frozenset(kinds)
    assert parse_kinds(written) == want


@given(st.lists(st.sampled_from([*KINDS, "all"]), min_size=1).filter(lambda ks: "all" in ks))
def test_all_anywhere_means_every_kind(kinds: list[str]) -> None:
    assert parse_kinds(kinds) is None and parse_kinds(",".join(kinds)) is None


@given(st.text(max_size=20))
def test_kind_text_is_a_set_of_kinds_or_one_line_refusal(text: str) -> None:
    try:
        got = parse_kinds(text)
    except ValidationError as exc:
        assert "\n" not in str(exc) and str(exc).startswith("kind must be")
    else:
        assert got is None or got <= frozenset(KINDS)


@given(st.lists(st.sampled_from(["x", "X", "twitter", "mastodon", "bsky", "Bluesky"]), min_size=1))
def test_platform_aliases(words: list[str]) -> None:
    aliases = {"x": "x", "twitter": "x", "mastodon": "mastodon", "bsky": "bluesky", "bluesky": "bluesky"}
    assert parse_platforms(words) == frozenset(aliases[w.lower()] for w in words)


@given(st.sampled_from(every_account), st.sampled_from([str.upper, str.lower, lambda a: "@" + a, str.strip]))
def test_accounts_match_with_or_without_at_in_any_case(account: str, spell: Any) -> None:
    assert parse_accounts(spell(account)) == frozenset({account_key(account)})


@given(
    st.one_of(
        st.booleans(),
        st.sampled_from(["true", "False", "yes", "NO", "1", "0", " on "]),
        st.sampled_from([0, 1]),
    )
)
def test_has_media_reads_boolean_words(value: Any) -> None:
    truthy = value in (True, 1) or (
        isinstance(value, str) and value.strip().lower() in ("true", "yes", "1", "on")
    )
    assert parse_has_media(value) is truthy


def test_no_filter_key_is_upstreams_request_and_plurals_are_read() -> None:
    assert parse_post_filter({"query": "x", "top_k": 3}) is None
    assert parse_post_filter({"kind": None}) == AUTHORED
    assert parse_post_filter({"kind": "likes,Retweets"}) == PostFilter(kinds=frozenset({"like", "repost"}))
    assert parse_post_filter({"settings_only": 1}, {"kind": "all"}) == PostFilter()


# -- embedding covers every kind with text -------------------------------------------------------


def test_embedding_covers_every_kind_with_text_and_resumes(tmp_path: Path) -> None:
    db = tmp_path / "e.db"
    store = Store(db)
    try:
        with store.transaction() as conn:
            store.upsert_posts(conn, POSTS)
        embedder = HashEmbedder(8)
        first = embed_missing(store, "content", embedder)
        assert first.embedded == len(POSTS)
        from mcpkit.archive.vectors import VectorSpace

        space = VectorSpace.open(vectors_root(db), "content")
        assert space is not None and {int(i) for i in space.ids} == {p.post_id for p in POSTS}
        assert {BY_ID[int(i)].kind for i in space.ids} == set(KINDS)
        liked = _post(999, "bluesky", "alice.bsky.social", "like", False)
        empty = Post(
            post_key("bluesky", "at://did:plc:x/app.bsky.feed.like/1"), "", "2024-01-01 00:00:00", "",
            "", 2, platform="bluesky", kind="like", source_id="at://did:plc:x/app.bsky.feed.like/1",
        )  # fmt: skip
        with store.transaction() as conn:
            store.upsert_posts(conn, [liked, empty])
        again = embed_missing(store, "content", embedder)
        assert (again.embedded, again.already) == (
            1,
            len(POSTS),
        )  # only the new like; the URI-only one has no text
        assert embed_missing(store, "content", embedder).embedded == 0
    finally:
        store.close()


# -- the MCP tools take the filters however a model writes them ----------------------------------


def _sloppy(values: list[str]) -> st.SearchStrategy[Any]:
    """The forms models send for an array of names: a list, "a,b", a JSON array, one bare name."""
    forms: list[Any] = [values, ",".join(values), json.dumps(values)]
    if len(values) == 1:
        forms.append(values[0])
    return st.sampled_from(forms)


@settings(max_examples=30, deadline=None)
@given(
    kinds=st.lists(st.sampled_from(KINDS), min_size=1, max_size=3, unique=True).flatmap(
        lambda ks: st.tuples(st.just(ks), _sloppy(ks))
    ),
    platforms=st.lists(st.sampled_from(PLATFORMS), min_size=1, max_size=2, unique=True).flatmap(
        lambda ps: st.tuples(st.just(ps), _sloppy(ps))
    ),
    media=st.sampled_from([(True, "true"), (False, "no"), (True, True), (None, None)]),
)
def test_mcp_tools_take_sloppy_filters(
    archive: Path,
    kinds: tuple[list[str], Any],
    platforms: tuple[list[str], Any],
    media: tuple[bool | None, Any],
) -> None:
    from mcpkit.archive.mcp import build_archive_mcp

    want_filter = PostFilter(
        kinds=None if set(kinds[0]) == set(KINDS) else frozenset(kinds[0]),
        platforms=frozenset(platforms[0]),
        has_media=media[0],
    )
    want = len(expected_ids(want_filter))
    args: dict[str, Any] = {
        "search_term": "word",
        "limit": "1000",
        "kind": kinds[1],
        "platform": platforms[1],
    }
    if media[1] is not None:
        args["has_media"] = media[1]

    async def run() -> str:
        api = ArchiveAPI.open(archive, embedder=HashEmbedder(16))
        try:
            result = await build_archive_mcp(api).call("search_posts_by_text", args)
        finally:
            await api.aclose()
        text = result.content[0].text  # type: ignore[union-attr]
        assert not result.is_error, text
        return str(text)

    text = anyio.run(run)
    if want:
        assert text.startswith(f'📝 Text search results: {want} (terms: "word")'), text[:200]
    else:
        assert text.startswith("No results found")


# -- end to end: an X archive imported by its reader, counted through the command line ----------


def test_text_counts_authored_posts_of_an_x_archive_unless_asked_for_all(tmp_path: Path) -> None:
    """``mcpkit archive text WORD --json`` on an imported X archive: posts, replies and quotes by
    default, reposts and likes too with ``--kind all``; and a reply's thread by its link."""
    from tests.archive_faces.conftest import cli
    from tests.export_fixtures.x_archive import XLike, XTweet, expected_kind, write_x_archive

    base = 1_800_000_000_000_000_000
    tweets = [
        XTweet(str(base + 1), "probe one: a plain post", created="2024-02-01 10:00:00"),
        XTweet(
            str(base + 2),
            "probe two: the thread goes on",
            created="2024-02-01 10:01:00",
            reply_to=str(base + 1),
        ),
        XTweet(str(base + 3), "probe three: and ends", created="2024-02-01 10:02:00", reply_to=str(base + 2)),
        XTweet(
            str(base + 4),
            f"probe four quotes https://x.com/bob/status/{base + 90}",
            created="2024-02-02 10:00:00",
        ),
        XTweet(
            str(base + 5),
            "RT @bob: probe five, a repost",
            created="2024-02-03 10:00:00",
            retweet_of=str(base + 91),
        ),
        XTweet(str(base + 6), "no such word here", created="2024-02-04 10:00:00"),
    ]
    likes = [XLike(str(base + 50 + n), f"probe liked {n}") for n in range(3)] + [XLike(str(base + 60))]
    archive = write_x_archive(tmp_path / "twitter-2024.zip", list(reversed(tweets)), likes)
    db = str(tmp_path / "x.db")
    done = cli("import", str(archive), "--db", db)
    assert done.returncode == 0, done.stderr

    authored = [t for t in tweets if "probe" in t.text and expected_kind(t) in AUTHORED_KINDS]
    everything = [t for t in tweets if "probe" in t.text] + [like for like in likes if like.text]

    def count(*extra: str) -> list[dict[str, Any]]:
        ran = cli("text", "probe", "--limit", "1000", "--db", db, "--json", *extra)
        assert ran.returncode == 0, ran.stderr
        found: list[dict[str, Any]] = json.loads(ran.stdout)
        return found

    default = count()
    assert sorted(p["id"] for p in default) == sorted(t.id for t in authored)
    assert {p["kind"] for p in default} == {"post", "reply", "quote"}
    assert len(count("--kind", "all")) == len(everything)
    assert {p["id"] for p in count("--kind", "like")} == {like.id for like in likes if like.text}
    stats = json.loads(cli("stats", "--db", db, "--json").stdout)
    assert stats["by_kind"] == {"post": 2, "reply": 2, "quote": 1}  # the default: what the account wrote
    assert stats["by_platform"] == {"x": 5} and stats["total_posts"] == 5
    stats = json.loads(cli("stats", "--kind", "all", "--db", db, "--json").stdout)
    assert stats["by_kind"] == {"post": 2, "reply": 2, "quote": 1, "repost": 1, "like": 4}
    assert stats["by_platform"] == {"x": 10} and stats["total_posts"] == 10
    thread = json.loads(cli("thread", f"https://x.com/alice/status/{base + 2}", "--db", db, "--json").stdout)
    assert [p["id"] for p in thread["posts"]] == [str(base + 1), str(base + 2), str(base + 3)]


def test_the_shell_filters_its_searches(api: ArchiveAPI) -> None:
    from mcpkit.archive.shell import Shell

    lines: list[str] = []
    shell = Shell(api, write=lines.append)

    def run(line: str) -> None:
        anyio.run(shell.handle, line)

    run("/top 100")
    run("word")
    assert {r["post"]["kind"] for r in shell.state.results} == set(AUTHORED_KINDS)
    run("/kind like,bookmark")
    run("/platform bsky")
    run("/media yes")
    assert lines[-1] == "kind: like,bookmark  platform: bsky  account: any  media: yes"
    run("word")
    want = expected_ids(
        PostFilter(kinds=frozenset({"like", "bookmark"}), platforms=frozenset({"bluesky"}), has_media=True)
    )
    assert {int(r["post"]["post_id"]) for r in shell.state.results} == want
    assert any(" [like]" in line for line in lines)
    run("/kind tweets")
    assert lines[-1].startswith("usage: kind must be post, reply, quote, repost, like, bookmark or all")
    run("/kind all")
    run("/platform clear")
    run("/media any")
    run("word")
    assert len(shell.state.results) == len(POSTS)
