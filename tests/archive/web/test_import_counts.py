"""Issue 40 point 6: after an import while the web app runs, the counts of a short CJK search
are exact, not "about" (they stayed estimated until a restart).

The web app under uvicorn on a real socket, over a real SQLite archive; the import is the
command's (``mcpkit archive import`` of an X archive, in this process, as a second writer
beside the running app). A term of one or two characters has no trigram of its own: its posts
come from the index and the last two characters of each post (the tails), which the app keeps
per posts generation. The sample size is made small here, so an estimate is visibly one.
"""

from __future__ import annotations

import datetime as dt
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from mcpkit.archive.api import ArchiveAPI
from mcpkit.archive.pages import text_index
from mcpkit.archive.posts import Post
from mcpkit.archive.store import Store
from mcpkit.archive.web.access import WebAccess
from mcpkit.archive.web.app import build_app
from mcpkit.archive.web.views import Views
from tests.archive.web.test_app import RunningApp, Served, free_port
from tests.archive_faces.conftest import cli
from tests.export_fixtures.x_archive import XTweet, write_x_archive

BASE = 1_800_000_000_000_000_000


def _text(n: int) -> str:
    """Three posts of four hold 猫: at the end (found only through the tails), at the start
    (through the trigram index) or alone."""
    return ("犬の散歩", "今日の猫", "猫が寝ている", "猫")[n % 4]


@contextmanager
def running(db: Path) -> Iterator[Served]:
    """The app with its data warmed first (columns and tails of the archive as it is)."""
    api = ArchiveAPI.open(db)
    views = Views(api)
    views.warm()
    port = free_port()
    app = build_app(
        api, WebAccess.for_bind("127.0.0.1", port, None), today=lambda: dt.date(2024, 7, 1), views=views
    )
    try:
        with RunningApp(app, "127.0.0.1", port):
            yield Served(f"http://127.0.0.1:{port}", db, db.parent)
    finally:
        api.close()


def _search(served: Served, term: str) -> dict[str, Any]:
    answer: dict[str, Any] = served.json("/api/search?q=" + urllib.parse.quote(term))
    return answer


@pytest.mark.parametrize("term", ["猫", "の猫"])
def test_short_cjk_counts_are_exact_after_an_import_while_the_page_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, term: str
) -> None:
    monkeypatch.setattr(text_index, "SAMPLE", 5)  # an estimate from 5 posts: visibly one
    db = tmp_path / "archive.db"
    texts = {BASE + n: _text(n) for n in range(1, 61)}
    store = Store(db)
    try:
        with store.transaction() as conn:
            store.upsert_posts(
                conn,
                [
                    Post(
                        i,
                        "alice",
                        f"2024-01-{1 + i % 28:02d} 10:00:00",
                        f"https://x.com/alice/status/{i}",
                        t,
                        1,
                        platform="x",
                        kind="post",
                        source_id=str(i),
                        account="@alice",
                    )
                    for i, t in texts.items()
                ],
                account="@alice",
            )
    finally:
        store.close()
    new = {BASE + n: _text(n) for n in range(100, 190)}
    export = write_x_archive(
        tmp_path / "twitter-2024.zip",
        [XTweet(str(i), t, created=f"2024-03-{1 + i % 28:02d} 10:00:00") for i, t in new.items()],
    )

    def want() -> int:
        return sum(term in t for t in texts.values())

    with running(db) as served:
        before = _search(served, term)
        assert (before["total"], before["approximate"]) == (want(), False)
        done = cli("import", str(export), "--db", str(db))
        assert done.returncode == 0, done.stderr
        texts.update(new)
        for _ in range(2):  # the first answer after the import, and the next one
            after = _search(served, term)
            assert (after["total"], after["approximate"]) == (want(), False)
            kinds = {v["value"]: v["count"] for v in after["facets"]["kind"]}
            assert kinds.get("post") == want()
