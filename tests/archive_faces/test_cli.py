"""The CLI face in child processes: import, embed, queries in-process, exit codes, JSON output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.archive_faces.conftest import cli, sample_csv


def test_import_is_idempotent_and_embed_resumes(tmp_path: Path) -> None:
    db = str(tmp_path / "a.db")
    first = cli("import", str(sample_csv()), "--db", db, "--json")
    assert first.returncode == 0, first.stderr
    report = json.loads(first.stdout)
    assert report["new"] == 330 and report["malformed"] == 0
    again = json.loads(cli("import", str(sample_csv()), "--db", db, "--json").stdout)
    assert again["new"] == 0 and again["unchanged"] == 330
    embedded = json.loads(cli("embed", "--db", db, "--json").stdout)
    assert embedded["embedded"] == 330
    assert json.loads(cli("embed", "--db", db, "--json").stdout)["embedded"] == 0


def test_search_in_process_says_so(sample_db: Path) -> None:
    done = cli("search", "猫が寝ている", "--top-k", "3", "--db", str(sample_db), "--json")
    assert done.returncode == 0, done.stderr
    assert "in-process" in done.stderr
    results = json.loads(done.stdout)
    assert len(results) == 3 and "猫" in results[0]["post"]["content"]
    text = cli("search", "猫が寝ている", "--top-k", "2", "--db", str(sample_db))
    assert text.stdout.startswith('🔍 Search results: 2 (query: "猫が寝ている")')
    text = cli("search", "猫が寝ている", "--top-k", "2", "--db", str(sample_db), "--lang", "ja")
    assert text.stdout.startswith('🔍 検索結果: 2件 (クエリ: "猫が寝ている")')


def test_search_filters_reach_the_api(sample_db: Path) -> None:
    done = cli(
        "search", "travel", "--user", "kenji_travel", "--to", "2024-03-31", "--top-k", "20",
        "--db", str(sample_db), "--json",
    )  # fmt: skip
    results = json.loads(done.stdout)
    assert results and all(r["post"]["user"] == "kenji_travel" for r in results)
    assert all(r["post"]["timestamp"] <= "2024-03-31 23:59:59" for r in results)


def test_text_stats_users(sample_db: Path) -> None:
    posts = json.loads(cli("text", "コーヒー", "--limit", "5", "--db", str(sample_db), "--json").stdout)
    assert len(posts) == 5 and all("コーヒー" in p["content"] for p in posts)
    assert [p["timestamp"] for p in posts] == sorted((p["timestamp"] for p in posts), reverse=True)
    stats = json.loads(cli("stats", "--db", str(sample_db), "--json").stdout)
    # every one of the sample's 330 posts was written by its account; 36 of them the author also
    # liked and 37 bookmarked (the CSV's rows: log_type 1, 2, 3): relations, counted as such
    assert stats["total_posts"] == 330 and stats["total_users"] == 4  # posts, replies, quotes
    assert stats["by_kind"] == {"post": 330, "like": 36, "bookmark": 37}  # of those same posts
    stats = json.loads(cli("stats", "--kind", "all", "--db", str(sample_db), "--json").stdout)
    assert stats["total_posts"] == 330
    assert stats["by_kind"] == {"post": 330, "like": 36, "bookmark": 37}
    users = json.loads(cli("users", "--limit", "2", "--db", str(sample_db), "--json").stdout)
    assert len(users) == 2 and users[0]["post_count"] >= users[1]["post_count"]
    shown = cli("stats", "--db", str(sample_db)).stdout
    assert "Posts: 330\n" in shown


def test_exit_codes(sample_db: Path, tmp_path: Path) -> None:
    bad_params = cli("search", "x", "--mode", "sideways", "--db", str(sample_db))
    assert bad_params.returncode == 2 and "mode" in bad_params.stderr
    bad_flag = cli("search", "x", "--top-k", "abc", "--db", str(sample_db))
    assert bad_flag.returncode == 2
    missing = cli("stats", "--db", str(tmp_path / "none.db"))
    assert missing.returncode == 1 and "import" in missing.stderr
    broken = cli("import", str(tmp_path / "nope.csv"), "--db", str(tmp_path / "x.db"))
    assert broken.returncode == 1


@pytest.mark.parametrize("flag", ["--url", "--server"])
def test_the_server_url_is_url_and_the_old_spelling_still_works(sample_db: Path, flag: str) -> None:
    """--url names the server in every part; --server (the archive's old spelling, which names a
    config entry in mcpkit call) is still taken, unlisted."""
    done = cli("stats", flag, "ws://127.0.0.1:1", "--json", env={"MCPKIT_ARCHIVE_DB": str(sample_db)})
    assert done.returncode == 0, done.stderr
    assert "no archive server answers at ws://127.0.0.1:1" in done.stderr
    assert json.loads(done.stdout)["total_posts"] == 330
    shown = cli("stats", "--help").stdout
    assert "--url" in shown and "--server" not in shown


def test_search_and_text_page_on_with_offset(sample_db: Path) -> None:
    """``--offset N`` is the API's offset: the answer starts where the first N results end, and
    the text numbers its entries from N + 1."""
    db = str(sample_db)
    whole = json.loads(cli("search", "猫が寝ている", "--top-k", "5", "--db", db, "--json").stdout)
    rest = cli("search", "猫が寝ている", "--top-k", "3", "--offset", "2", "--db", db, "--json")
    assert rest.returncode == 0, rest.stderr
    assert [r["post"]["post_id"] for r in json.loads(rest.stdout)] == [
        r["post"]["post_id"] for r in whole[2:5]
    ]
    shown = cli("search", "猫が寝ている", "--top-k", "3", "--offset", "2", "--db", db).stdout
    assert "\n3. [" in shown and "\n1. [" not in shown
    posts = json.loads(cli("text", "コーヒー", "--limit", "6", "--db", db, "--json").stdout)
    later = json.loads(cli("text", "コーヒー", "--limit", "3", "--offset", "3", "--db", db, "--json").stdout)
    assert later == posts[3:6]
    assert "\n4. @" in cli("text", "コーヒー", "--limit", "3", "--offset", "3", "--db", db).stdout
