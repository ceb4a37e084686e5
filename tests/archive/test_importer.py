"""Twilog CSV importer: property tests (quoting, newlines, entities, duplicates) and the edges."""

from __future__ import annotations

import gzip
import html
import tempfile
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpkit.archive.errors import ImportFormatError
from mcpkit.archive.importers import import_csv
from mcpkit.archive.store import Store

from .helpers import csv_text, row, write_csv

CONTENT = st.text(
    alphabet=st.one_of(
        st.sampled_from(list("\",\n\r&<>;'#@ x日本語🎉\t")),
        st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
    ),
    max_size=40,
)
ENTRY = st.tuples(
    st.integers(1, 12),  # few ids: duplicates are common
    st.sampled_from(["alice", "bob", "carol_9"]),
    CONTENT,
    st.integers(1, 3),
    st.booleans(),  # URL names this post (else another post's URL: no user)
)


def _stored(store: Store) -> dict[int, tuple[str, str, int]]:
    rows = store.reader.execute(
        "SELECT p.post_id, coalesce(u.name, ''), p.content, p.log_type FROM posts p "
        "LEFT JOIN users u ON u.user_id = p.user_id"
    )
    return {pid: (user, content, log_type) for pid, user, content, log_type in rows}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(ENTRY, max_size=25))
def test_import_round_trips_content_and_keeps_larger_log_type(entries) -> None:
    rows = []
    want: dict[int, tuple[str, str, int]] = {}
    for post_id, user, content, log_type, own in entries:
        status = post_id if own else post_id + 1000
        rows.append(
            (
                str(post_id),
                f"https://x.com/{user}/status/{status}",
                "2024-01-01 00:00:00",
                html.escape(content),
                str(log_type),
            )
        )
        if post_id not in want or log_type > want[post_id][2]:
            want[post_id] = (user if own else "", content, log_type)
    with tempfile.TemporaryDirectory() as tmp:
        path = write_csv(Path(tmp) / "export.csv", rows)
        store = Store(Path(tmp) / "a.db")
        summary = import_csv(path, store)
        assert summary.malformed == []
        assert summary.new == len(want)
        assert summary.duplicates_in_file == len(rows) - len(want)
        assert _stored(store) == want
        again = import_csv(path, store)
        assert (again.new, again.updated, again.unchanged) == (0, 0, len(want))
        assert _stored(store) == want
        store.close()


def test_overlapping_export_counts_new_updated_unchanged(tmp_path: Path) -> None:
    store = Store(tmp_path / "a.db")
    first = write_csv(tmp_path / "1.csv", [row(1, "a", "one"), row(2, "a", "two", log_type=2)])
    second = write_csv(
        tmp_path / "2.csv", [row(1, "a", "one"), row(2, "a", "two", log_type=3), row(3, "a", "three")]
    )
    import_csv(first, store)
    summary = import_csv(second, store)
    assert (summary.new, summary.updated, summary.unchanged) == (1, 1, 1)
    assert _stored(store)[2] == ("a", "two", 3)
    # a smaller log_type never overwrites
    import_csv(first, store)
    assert _stored(store)[2] == ("a", "two", 3)


def test_malformed_rows_are_counted_with_their_line_numbers(tmp_path: Path) -> None:
    text = csv_text([row(1, "a", "line1\nline2\nline3")])  # lines 1-3
    text += '"x2","https://x.com/a/status/2","2024-01-01 00:00:00","not a number","1"\n'  # line 4
    text += csv_text([row(3, "a", "ok\nok")])  # lines 5-6
    text += '"4","only","three"\n'  # line 7
    text += '"5","https://x.com/a/status/5","2024-01-01 00:00:00","bad type","9"\n'  # line 8
    path = tmp_path / "e.csv"
    path.write_text(text, encoding="utf-8")
    store = Store(tmp_path / "a.db")
    summary = import_csv(path, store)
    assert [(m.line, m.reason.split(":")[0]) for m in summary.malformed] == [
        (4, "post_id is not a number"),
        (7, "expected 5 fields, got 3"),
        (8, "log_type must be 1, 2 or 3, got '9'"),
    ]
    assert summary.new == 2
    assert summary.as_dict()["malformed"] == 3


def test_entities_and_user_rules(tmp_path: Path) -> None:
    path = write_csv(
        tmp_path / "e.csv",
        [
            (
                "10",
                "https://twitter.com/alice/status/10",
                "2024-01-01 00:00:00",
                "a &amp; b &lt;3 &#x1F600;",
                "1",
            ),
            ("11", "https://x.com/bob/status/99", "2024-01-01 00:00:00", "liked", "2"),
            ("12", "https://www.x.com/carol/status/12", "2024-01-01 00:00:00", "hi", "3"),
        ],
    )
    store = Store(tmp_path / "a.db")
    import_csv(path, store)
    assert _stored(store) == {10: ("alice", "a & b <3 😀", 1), 11: ("", "liked", 2), 12: ("carol", "hi", 3)}


@pytest.mark.parametrize("kind", ["gzip", "zip"])
def test_compressed_exports(tmp_path: Path, kind: str) -> None:
    text = csv_text([row(1, "a", "x\ny"), row(2, "b", "z")])
    if kind == "gzip":
        path = tmp_path / "export.csv.gz"
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path = tmp_path / "export.zip"
        with zipfile.ZipFile(path, "w") as archive:
            archive.writestr("twilog.csv", text)
    store = Store(tmp_path / "a.db")
    stages: list[str] = []
    summary = import_csv(path, store, progress=lambda stage, done, total: stages.append(stage))
    assert summary.new == 2 and _stored(store)[1] == ("a", "x\ny", 1)
    assert "read" in stages and "write" in stages


def test_zip_with_several_csvs_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "two.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("a.csv", "")
        archive.writestr("b.csv", "")
    with pytest.raises(ImportFormatError, match="one CSV"):
        import_csv(path, Store(tmp_path / "a.db"))


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ImportFormatError, match="no such file"):
        import_csv(tmp_path / "nope.csv", Store(tmp_path / "a.db"))


def test_failed_import_leaves_the_store_unchanged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = Store(tmp_path / "a.db")
    import_csv(write_csv(tmp_path / "1.csv", [row(1, "a", "one")]), store)
    big = write_csv(tmp_path / "2.csv", [row(i, "a", f"post {i}") for i in range(2, 12000)])
    calls = 0

    def boom(stage: str, done: int, total: int) -> None:
        nonlocal calls
        if stage == "write":
            calls += 1
            if calls == 2:
                raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        import_csv(big, store, progress=boom)
    assert set(_stored(store)) == {1}
