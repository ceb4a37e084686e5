"""Issue 40 point 6: every stats breakdown (by kind, platform, account) counts the posts the
totals count, whatever the filters, in the CLI (text and JSON) and the MCP tool.

The filter archive of tests/archive/test_filters.py (every kind on every platform, three
accounts, with and without media), written through the store; the CLI through typer's runner,
the MCP face over real stdio with the SDK's client.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from mcpkit.archive.filters import PostFilter, parse_post_filter
from mcpkit.archive.store import Store
from tests.archive.test_filters import POSTS, passes
from tests.archive_faces.conftest import cli
from tests.archive_faces.test_stats_and_language import JAPANESE, _text, mcp_session


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


def _chosen(request: dict[str, Any]) -> list[Any]:
    post_filter = parse_post_filter(request) or PostFilter()
    return [p for p in POSTS if passes(p, post_filter)]


# -- point 6: every breakdown counts the posts the totals count ---------------------------------

FILTERS = [
    (["--account", "@bob"], {"account": ["@bob"]}),
    (["--account", "@alice@social.example"], {"account": ["@alice@social.example"]}),
    (["--platform", "bluesky"], {"platform": ["bluesky"]}),
    (["--kind", "like"], {"kind": ["like"]}),
    (["--kind", "all", "--account", "@alice"], {"kind": "all", "account": ["@alice"]}),
    (["--has-media"], {"has_media": True}),
    (["--no-media", "--platform", "x"], {"has_media": False, "platform": ["x"]}),
    ([], {"kind": ["post", "reply", "quote"]}),  # the command's default: what the accounts wrote
]


@pytest.mark.parametrize(("options", "request_keys"), FILTERS)
def test_stats_breakdowns_count_what_the_totals_count(
    db: Path, options: list[str], request_keys: dict[str, Any]
) -> None:
    chosen = _chosen(request_keys)
    ran = cli("stats", *options, "--db", str(db), "--json")
    assert ran.returncode == 0, ran.stderr
    stats = json.loads(ran.stdout)
    assert stats["total_posts"] == len(chosen) > 0
    for key, field in (("by_kind", "kind"), ("by_platform", "platform"), ("by_account", "account")):
        assert stats[key] == dict(Counter(str(getattr(p, field)) for p in chosen)), key
        assert sum(stats[key].values()) == stats["total_posts"], key
    text = cli("stats", *options, "--db", str(db)).stdout
    accounts = next(line for line in text.splitlines() if line.startswith("By account: "))
    assert accounts == "By account: " + ", ".join(
        f"{name} {count}"
        for name, count in sorted(Counter(p.account for p in chosen).items(), key=lambda i: (-i[1], i[0]))
    )


@pytest.mark.anyio
async def test_the_mcp_stats_tool_breaks_down_only_the_filtered_posts(db: Path) -> None:
    async with mcp_session("--db", str(db)) as session:
        text = await _text(session, "get_database_stats", {"account": ["@bob"]})
        bob = _chosen({"account": ["@bob"]})
        assert f"Posts: {len(bob)}\n" in text
        assert f"By account: @bob {len(bob)}\n" in text
        assert f"By platform: x {len(bob)}\n" in text
        kinds = Counter(p.kind for p in bob)
        assert "By kind: " + ", ".join(f"{k} {n}" for k, n in kinds.items()) + "\n" in text
        assert "like" not in text  # the default covers what the accounts wrote
        assert not JAPANESE.search(text)
