"""Twilog CSV importer: property tests (quoting, newlines, entities, duplicates) and the edges."""

from __future__ import annotations

import gzip
import html
import tempfile
import threading
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpkit.archive.errors import ImportFormatError
from mcpkit.archive.importers import import_csv, twilog_csv
from mcpkit.archive.query import parse_terms
from mcpkit.archive.store import Store
from mcpkit.archive.store import _writer as store_module

from .helpers import csv_text, row, write_csv
from .naive import naive_text_search

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


class _Interrupt:
    """A progress callback that raises KeyboardInterrupt (Ctrl-C) at its n-th write report."""

    def __init__(self, at: int) -> None:
        self.at = at
        self.calls = 0

    def __call__(self, stage: str, done: int, total: int) -> None:
        if stage == "write":
            self.calls += 1
            if self.calls == self.at:
                raise KeyboardInterrupt


def _stored(store: Store) -> dict[int, tuple[str, str, int]]:
    rows = store.reader.execute(
        "SELECT p.post_id, coalesce(u.name, ''), p.content, p.log_type FROM posts p "
        "LEFT JOIN users u ON u.user_id = p.user_id"
    )
    return {pid: (user, content, log_type) for pid, user, content, log_type in rows}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(ENTRY, min_size=1, max_size=25))
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
    with pytest.raises(KeyboardInterrupt):
        import_csv(big, store, progress=_Interrupt(2))
    assert set(_stored(store)) == {1}


# -- the parser thread and the batched writer ---------------------------------------------------


@pytest.fixture
def tiny_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    """Batches of a few rows and index chunks of a few entries: every seam gets crossed."""
    _tiny(monkeypatch)


def _tiny(patch: pytest.MonkeyPatch) -> None:
    patch.setattr(twilog_csv, "_FIRST_BATCH", 1)
    patch.setattr(twilog_csv, "_BATCH", 3)
    patch.setattr(twilog_csv, "_QUEUE", 1)
    patch.setattr(store_module, "FTS_CHUNK", 4)


def _parser_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "twilog-csv-parser"]


def _rows(entries: list[tuple[int, str, int]]) -> list[tuple[str, str, str, str, str]]:
    return [row(post_id, "u", content, log_type=log_type) for post_id, content, log_type in entries]


SMALL_ENTRY = st.tuples(
    st.integers(1, 10), st.sampled_from(["apple", "banana", "cherry", "apricot"]), st.integers(1, 3)
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(SMALL_ENTRY, max_size=12), st.lists(SMALL_ENTRY, min_size=1, max_size=25))
def test_batched_import_counts_as_if_the_whole_file_were_deduplicated_first(before, entries) -> None:
    """Repeats across batches, against a store that already holds some of the posts. A post
    keeps the row with the larger log_type and the relations of every row (post, like,
    bookmark: log_type 1, 2, 3 here), so a row that adds a relation updates it too."""

    def chosen(items: list[tuple[int, str, int]]) -> dict[int, tuple[str, int]]:
        out: dict[int, tuple[str, int]] = {}
        for post_id, content, log_type in items:
            if post_id not in out or log_type > out[post_id][1]:
                out[post_id] = (content, log_type)
        return out

    def relations(items: list[tuple[int, str, int]]) -> dict[int, set[int]]:
        out: dict[int, set[int]] = {}
        for post_id, _, log_type in items:
            out.setdefault(post_id, set()).add(log_type)
        return out

    stored, incoming = chosen(before), chosen(entries)
    held, brought = relations(before), relations(entries)
    want_new = sum(1 for i in incoming if i not in stored)
    want_updated = sum(
        1 for i, (_, t) in incoming.items() if i in stored and (t > stored[i][1] or not brought[i] <= held[i])
    )
    want = dict(stored)
    for post_id, (content, log_type) in incoming.items():
        if post_id not in stored or log_type > stored[post_id][1]:
            want[post_id] = (content, log_type)
    with pytest.MonkeyPatch.context() as patch, tempfile.TemporaryDirectory() as tmp:
        _tiny(patch)
        store = Store(Path(tmp) / "a.db")
        if before:  # an export without records is refused (tests/archive/importers/test_limits.py)
            import_csv(write_csv(Path(tmp) / "0.csv", _rows(before)), store)
        summary = import_csv(write_csv(Path(tmp) / "1.csv", _rows(entries)), store)
        assert (summary.new, summary.updated, summary.unchanged) == (
            want_new,
            want_updated,
            len(incoming) - want_new - want_updated,
        )
        assert summary.rows == len(entries)
        assert summary.duplicates_in_file == len(entries) - len(incoming)
        assert {pid: (content, log_type) for pid, (_, content, log_type) in _stored(store).items()} == want
        for term in ("apple", "ban", "apr", "erry", "an"):
            assert store.text_search(parse_terms(term), 50) == naive_text_search(store, term, 50)
        store.close()


@pytest.mark.timeout(60)
def test_interrupted_threaded_import_resumes_without_loss_or_duplicates(
    tmp_path: Path, tiny_batches: None
) -> None:
    store = Store(tmp_path / "a.db")
    import_csv(write_csv(tmp_path / "1.csv", [row(1, "a", "one")]), store)
    export = write_csv(tmp_path / "2.csv", [row(i, f"u{i % 3}", f"post {i} text") for i in range(1, 40)])
    interrupt = _Interrupt(5)
    with pytest.raises(KeyboardInterrupt):
        import_csv(export, store, progress=interrupt)
    assert interrupt.calls == 5  # it stopped part-way, with batches and index chunks written
    assert set(_stored(store)) == {1}
    assert store.text_search(parse_terms("post"), 50) == []
    assert _parser_threads() == []
    summary = import_csv(export, store)
    assert (summary.new, summary.updated, summary.unchanged) == (38, 0, 1)
    stored = _stored(store)
    assert sorted(stored) == list(range(1, 40))
    assert stored[7] == ("u1", "post 7 text", 1)
    assert store.reader.execute("SELECT count(*) FROM users").fetchone()[0] == 4
    found = store.text_search(parse_terms("text"), 100)
    assert sorted(p["post_id"] for p in found) == list(range(2, 40))
    assert found == naive_text_search(store, "text", 100)


@pytest.mark.timeout(60)
def test_an_error_in_the_parser_thread_is_raised_by_import(
    tmp_path: Path, tiny_batches: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store(tmp_path / "a.db")
    import_csv(write_csv(tmp_path / "1.csv", [row(1, "a", "one")]), store)
    real = twilog_csv.user_from_url

    def broken(url: str, post_id: int) -> str:
        if post_id == 30 and threading.current_thread().name == "twilog-csv-parser":
            raise RuntimeError("parser broke")
        return real(url, post_id)

    monkeypatch.setattr(twilog_csv, "user_from_url", broken)
    rows = [row(i, "a", f"p{i}") for i in range(2, 30)]
    rows.append(row(30, "a", "late", timestamp="2025-01-01 00:00:00"))
    with pytest.raises(RuntimeError, match="parser broke"):
        import_csv(write_csv(tmp_path / "2.csv", rows), store)
    assert set(_stored(store)) == {1}
    assert _parser_threads() == []
    monkeypatch.setattr(twilog_csv, "user_from_url", real)
    assert import_csv(tmp_path / "2.csv", store).new == 29


@pytest.mark.timeout(60)
def test_a_writer_that_gives_up_does_not_wait_for_a_blocked_parser(
    tmp_path: Path, tiny_batches: None
) -> None:
    """The queue holds one batch: the parser is blocked on it when the writer fails at once."""
    store = Store(tmp_path / "a.db")
    export = write_csv(tmp_path / "e.csv", [row(i, "a", f"p{i}") for i in range(1, 200)])

    def fail(stage: str, done: int, total: int) -> None:
        raise ValueError("stop")

    with pytest.raises(ValueError, match="stop"):
        import_csv(export, store, progress=fail)
    assert _parser_threads() == []
    assert _stored(store) == {}


def test_bulk_import_leaves_the_fts_settings_as_they_were(tmp_path: Path) -> None:
    store = Store(tmp_path / "a.db")
    import_csv(write_csv(tmp_path / "e.csv", [row(1, "a", "one"), row(2, "a", "two")]), store)
    config = dict(store.reader.execute("SELECT k, v FROM fts_content_config").fetchall())
    assert config.get("hashsize", 1 << 20) == 1 << 20
