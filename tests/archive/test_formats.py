"""Each import format is declared once, in its importer module, and every table derives from it.

A new format is one new importer module: the test adds one (a real module file on the
importers package's path) and checks that detection picks it, an import names it in its
summary line, a refusal names it among what is expected and the pages know its platform.
"""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

import mcpkit.archive.importers as importers
from mcpkit.archive.importers.base import ExportFormat
from mcpkit.archive.importers.detect import declared, detect, expected, formats
from mcpkit.errors import McpkitError

FAKE = textwrap.dedent(
    '''
    """A made-up export for the test: one post per line of a .fakeexport file."""

    from collections import Counter
    from collections.abc import Iterator
    from pathlib import Path

    from mcpkit.archive.importers.base import ExportFormat, ReadLimits, ReadSummary, export_post
    from mcpkit.archive.posts import Post

    DECLARED = ExportFormat("fake-export", "Fake export", "mastodon", "a fake export (.fakeexport)", 5)


    def sniff(path: Path) -> bool:
        return path.is_file() and path.suffix == ".fakeexport"


    class FakeReader:
        format = DECLARED.name
        account = "@me@fake.example"

        def __init__(self, path: Path) -> None:
            self.path = path
            self._summary = ReadSummary(Counter())

        def records(self) -> Iterator[Post]:
            for number, line in enumerate(self.path.read_text().splitlines(), 1):
                self._summary.kinds["post"] += 1
                yield export_post(
                    "mastodon", f"https://fake.example/{number}", "post", self.account,
                    user="me", timestamp="2024-01-0%d 00:00:00" % number, content=line,
                )

        def summary(self) -> ReadSummary:
            return self._summary


    def open_reader(path: Path, limits: ReadLimits | None = None) -> FakeReader:
        return FakeReader(path)
    '''
)


@pytest.fixture
def fake_format(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    folder = tmp_path / "more_importers"
    folder.mkdir()
    (folder / "fake_export.py").write_text(FAKE, encoding="utf-8")
    monkeypatch.setattr(importers, "__path__", [*importers.__path__, str(folder)])
    formats.cache_clear()
    yield "mcpkit.archive.importers.fake_export"
    sys.modules.pop("mcpkit.archive.importers.fake_export", None)
    monkeypatch.undo()
    formats.cache_clear()


def test_every_shipped_format_is_declared_in_its_importer_module() -> None:
    found = {f.name: f for f in formats()}
    assert list(found) == ["bluesky-car", "x-archive", "mastodon", "twilog-csv"]  # the order tried
    for name, fmt in found.items():
        assert isinstance(fmt.declared, ExportFormat) and fmt.module.DECLARED is fmt.declared
        assert declared(name) is fmt.declared
        assert fmt.declared.expected in expected()
    assert declared("no-such-format") is None


def test_a_new_format_needs_nothing_but_its_module(fake_format: str, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from mcpkit.archive.cli import app
    from mcpkit.archive.pages.columns import _platform_of

    export = tmp_path / "mine.fakeexport"
    export.write_text("first post\nsecond post\n", encoding="utf-8")
    assert detect(export).name == "fake-export"
    assert "a fake export (.fakeexport)" in expected()
    assert _platform_of("fake-export", "x") == "mastodon"

    db = tmp_path / "a.db"
    ran = CliRunner().invoke(app, ["import", str(export), "--db", str(db)])
    assert ran.exit_code == 0, ran.output
    assert ran.stdout.startswith(f"{export}: Fake export of @me@fake.example: 2 posts;"), ran.stdout

    unknown = tmp_path / "notes.bin"
    unknown.write_bytes(b"\x00\x01\x02binary")
    with pytest.raises(McpkitError) as caught:
        detect(unknown)
    assert "a fake export (.fakeexport)" in str(caught.value) and "\n" not in str(caught.value)
