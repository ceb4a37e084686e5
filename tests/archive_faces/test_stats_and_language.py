"""Issue 40 point 7: human text (CLI, shell, MCP tool texts) in English unless ``--lang ja``
or a Japanese locale says otherwise; likes name their author and say which time they show.

Real archives written through the store (the filter archive of tests/archive/test_filters.py)
or imported by the command from an X archive the fixtures write; the CLI through typer's
runner (the same parse, streams and exit codes as a user's), the MCP face over real stdio
with the SDK's client.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from mcpkit.archive import messages, texts
from mcpkit.archive.store import Store
from tests.archive.test_filters import POSTS
from tests.archive_faces.conftest import cli

JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("stats") / "a.db"
    store = Store(path)
    try:
        with store.transaction() as conn:
            store.upsert_posts(conn, POSTS)
    finally:
        store.close()
    return path


@asynccontextmanager
async def mcp_session(*args: str, env: dict[str, str] | None = None) -> AsyncIterator[ClientSession]:
    from mcp.client.stdio import get_default_environment

    # the child runs the mcpkit this test imports, in the locale the test gives it (none: English)
    full_env = {**get_default_environment(), **(env or {})}
    if os.environ.get("PYTHONPATH"):
        full_env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "mcpkit.archive.cli", "mcp", *args], env=full_env
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


async def _text(session: ClientSession, name: str, args: dict[str, Any]) -> str:
    result = await session.call_tool(name, args)
    assert not result.is_error, result.content
    return result.content[0].text  # type: ignore[union-attr]


# -- point 7: English by default, Japanese by --lang ja or the locale --------------------------


def test_every_message_is_declared_in_both_languages_with_the_same_fields() -> None:
    catalogue = messages.catalogue()
    assert len(catalogue) > 40
    for name, message in catalogue.items():
        assert message.en and message.ja, name
        assert not JAPANESE.search(message.en), name
        fields = message.fields()
        assert fields["en"] == fields["ja"], name


@given(
    st.dictionaries(
        st.sampled_from(["LC_ALL", "LC_MESSAGES", "LANG", "LANGUAGE", "HOME"]),
        st.sampled_from(["", "C", "C.UTF-8", "POSIX", "en_US.UTF-8", "ja_JP.UTF-8", "ja", "JA_jp", "fr_FR"]),
    ),
    st.sampled_from([None, "", "en", "ja"]),
)
def test_the_language_is_the_flag_else_the_first_locale_variable_set(
    environ: dict[str, str], flag: str | None
) -> None:
    chosen = messages.choose_lang(flag, environ)
    if flag:
        assert chosen == flag
        return
    first = next((environ[n] for n in ("LC_ALL", "LC_MESSAGES", "LANG") if environ.get(n)), "")
    assert chosen == ("ja" if first.lower().startswith("ja") else "en")


@pytest.mark.parametrize(
    ("options", "env", "japanese"),
    [
        ([], {"LANG": "C.UTF-8", "LC_ALL": "", "LC_MESSAGES": ""}, False),
        ([], {"LANG": "es_ES.UTF-8", "LC_ALL": "", "LC_MESSAGES": ""}, False),
        ([], {"LANG": "ja_JP.UTF-8", "LC_ALL": "", "LC_MESSAGES": ""}, True),
        ([], {"LANG": "ja_JP.UTF-8", "LC_ALL": "en_GB.UTF-8", "LC_MESSAGES": ""}, False),
        ([], {"LANG": "C", "LC_ALL": "", "LC_MESSAGES": "ja_JP.UTF-8"}, True),
        (["--lang", "ja"], {"LANG": "C.UTF-8", "LC_ALL": "", "LC_MESSAGES": ""}, True),
        (["--lang", "en"], {"LANG": "ja_JP.UTF-8", "LC_ALL": "", "LC_MESSAGES": ""}, False),
    ],
)
def test_every_query_command_speaks_english_unless_japanese_is_asked_for(
    db: Path, options: list[str], env: dict[str, str], japanese: bool
) -> None:
    for command in (
        ["stats", "--kind", "all"],
        ["users"],
        ["text", "word", "--limit", "3"],
        ["text", "nowhere"],
        ["search", "| word", "--top-k", "2"],
        ["thread", POSTS[0].source_id],
    ):
        ran = cli(*command, *options, "--db", str(db), env=env)
        assert ran.returncode == 0, (command, ran.stderr)
        assert bool(JAPANESE.search(ran.stdout)) == japanese, (command, ran.stdout)
    stats = cli("stats", *options, "--db", str(db), env=env).stdout
    assert stats.startswith("📊 データベース統計\n" if japanese else "📊 Database statistics\n")


def test_a_language_it_does_not_have_is_a_usage_error(db: Path) -> None:
    ran = cli("stats", "--lang", "fr", "--db", str(db))
    assert ran.returncode == 2
    assert ran.stderr.strip().splitlines()[-1] == "error: --lang takes en or ja, got 'fr'"


@pytest.mark.anyio
@pytest.mark.parametrize(("args", "env", "japanese"), [([], None, False), (["--lang", "ja"], None, True)])
async def test_the_mcp_tools_speak_the_servers_language(
    db: Path, args: list[str], env: dict[str, str] | None, japanese: bool
) -> None:
    async with mcp_session("--db", str(db), *args, env=env) as session:
        for name, call in (
            ("get_database_stats", {}),
            ("get_user_stats", {}),
            ("search_posts_by_text", {"search_term": "word", "limit": 2}),
            ("search_posts_by_text", {"search_term": "nowhere"}),
            ("get_thread", {"id": POSTS[0].source_id}),
        ):
            text = await _text(session, name, call)
            assert bool(JAPANESE.search(text)) == japanese, (name, text)
        failed = await session.call_tool("search_similar", {"query": ""})
        assert failed.is_error
        message = failed.content[0].text  # type: ignore[union-attr]
        assert message == (
            "エラー: 検索クエリが指定されていません" if japanese else "Error: no search query given"
        )
        tools = await session.list_tools()
        assert not any(JAPANESE.search(tool.description or "") for tool in tools.tools)


@pytest.mark.anyio
async def test_the_mcp_server_follows_a_japanese_locale() -> None:
    async with mcp_session("--url", "ws://127.0.0.1:9", env={"LANG": "ja_JP.UTF-8"}) as session:
        failed = await session.call_tool("get_database_stats", {})
        text = failed.content[0].text  # type: ignore[union-attr]
        assert failed.is_error and text == "エラー: データベース統計取得に失敗: サーバーが起動していません"
    async with mcp_session("--url", "ws://127.0.0.1:9", env={"LANG": "C.UTF-8"}) as session:
        failed = await session.call_tool("get_database_stats", {})
        text = failed.content[0].text  # type: ignore[union-attr]
        assert failed.is_error and text == (
            "Error: database statistics failed: the archive server is not running"
        )


def test_the_shell_speaks_the_chosen_language(db: Path) -> None:
    english = cli("shell", "--db", str(db), input="| nowhere\n/date 2024-01-01 2024-02-01\n")
    assert "No results found" in english.stdout and "date: 2024-01-01 to 2024-02-01" in english.stdout
    assert not JAPANESE.search(english.stdout)
    japanese = cli("shell", "--db", str(db), "--lang", "ja", input="| nowhere\n")
    assert "検索結果が見つかりませんでした" in japanese.stdout


def test_archive_help_names_every_export_it_imports() -> None:
    ran = cli("--help")
    assert ran.returncode == 0
    help_text = " ".join(ran.stdout.split())
    for name in ("X", "Mastodon", "Bluesky", "Twilog"):
        assert name in help_text
    assert "import Twilog exports" not in help_text


# -- point 7: a like names its author, and its time for what it is ------------------------------


def test_a_liked_post_names_its_author_or_says_the_export_does_not() -> None:
    like = {"user": "", "timestamp": "2024-03-01 10:00:00", "url": "https://x.com/i/web/status/1",
            "content": "liked text", "kind": "like", "platform": "x"}  # fmt: skip
    head = texts.text_items([like])[0].splitlines()[0]
    assert head == "1. (author not in the export) (posted 2024-03-01 10:00:00) [like]"
    assert "@ " not in texts.format_search_results("q", [{"score": 0.5, "post": like}])
    named = texts.post_head({**like, "user": "bob"})
    assert named == "@bob (posted 2024-03-01 10:00:00)"
    bluesky = texts.post_head({**like, "platform": "bluesky", "user": ""})
    assert bluesky == "(author not in the export) (liked 2024-03-01 10:00:00)"
    mastodon = texts.post_head({**like, "platform": "mastodon", "kind": "bookmark", "timestamp": ""})
    assert mastodon == "(author not in the export) (time not in the export)"
    assert texts.post_head({**like, "kind": "post", "user": "me"}) == "@me (2024-03-01 10:00:00)"
    assert texts.post_head(like, "ja") == "(投稿者はエクスポートにありません) (投稿 2024-03-01 10:00:00)"


def test_likes_of_an_imported_x_archive_print_their_author_and_the_posts_time(tmp_path: Path) -> None:
    from tests.export_fixtures.x_archive import XLike, XTweet, write_x_archive

    base = 1_800_000_000_000_000_000
    tweets = [XTweet(str(base + 1), "my own probe post", created="2024-02-01 10:00:00")]
    likes = [
        XLike(str(base + 50), "probe liked, link without its author"),
        XLike(str(base + 51), "probe liked from carol", url=f"https://x.com/carol/status/{base + 51}"),
    ]
    archive = write_x_archive(tmp_path / "twitter-2024.zip", tweets, likes)
    db = str(tmp_path / "x.db")
    assert cli("import", str(archive), "--db", db).returncode == 0
    ran = cli("text", "probe liked", "--kind", "like", "--db", db)
    assert ran.returncode == 0, ran.stderr
    heads = [line for line in ran.stdout.splitlines() if re.match(r"\d+\. ", line)]
    assert len(heads) == 2
    assert not any("@ " in head or head.endswith("@") for head in heads)
    assert any(
        head.startswith("1. @carol (posted ") or head.startswith("2. @carol (posted ") for head in heads
    )
    assert any("(author not in the export) (posted " in head for head in heads)
