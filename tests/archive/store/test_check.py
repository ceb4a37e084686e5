"""A damaged vector store is found when it is opened, named in one line with the way out
(``embed --repair``), and repaired by it: with really truncated files and a garbage meta.json,
through the API, the search command and the embed command, never a traceback."""

from __future__ import annotations

import json
import os
import shutil
import traceback
from collections.abc import Callable
from importlib import resources
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from mcpkit.archive.api import ArchiveAPI
from mcpkit.archive.errors import DamagedSpaceError
from mcpkit.archive.vectors import VectorSpace, describe, repair_space, vectors_root
from mcpkit.jsonrpc import JsonRpcError

pytestmark = pytest.mark.anyio


def sample_csv() -> Path:
    return Path(str(resources.files("mcpkit.archive") / "data" / "sample_twilog.csv"))


@pytest.fixture(scope="module")
def embedded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample archive imported and embedded with the default model, once."""
    from mcpkit.archive.embedders import create_embedder
    from mcpkit.archive.embedding import embed_missing
    from mcpkit.archive.importers import import_csv
    from mcpkit.archive.store import Store

    db = tmp_path_factory.mktemp("store_check") / "a.db"
    store = Store(db)
    try:
        import_csv(sample_csv(), store)
        embed_missing(store, "content", create_embedder(None))
    finally:
        store.close()
    return db


@pytest.fixture
def db(embedded: Path, tmp_path: Path) -> Path:
    """A copy of the embedded archive to damage."""
    copy = tmp_path / "a.db"
    shutil.copy(embedded, copy)
    shutil.copytree(vectors_root(embedded), vectors_root(copy))
    return copy


def space_dir(db: Path) -> Path:
    return vectors_root(db) / "content"


def count_of(db: Path) -> int:
    return int(json.loads((space_dir(db) / "meta.json").read_text())["count"])


def truncate(path: Path, keep_fraction: float) -> None:
    os.truncate(path, int(path.stat().st_size * keep_fraction))


DAMAGE: dict[str, tuple[Callable[[Path], None], str]] = {
    "vectors truncated": (
        lambda d: truncate(d / "vectors.f32", 0.5),
        "vectors.f32 holds",
    ),
    "ids truncated": (lambda d: truncate(d / "ids.i64", 0.3), "ids.i64 holds"),
    "ids missing": (lambda d: (d / "ids.i64").unlink(), "ids.i64 holds 0 of"),
    "garbage meta": (lambda d: (d / "meta.json").write_bytes(b"\x00\xffnot json"), "meta.json is not JSON"),
    "meta without dim": (
        lambda d: (d / "meta.json").write_text('{"space": "content", "model": "m", "count": 3}'),
        "meta.json has no valid dim",
    ),
    "lengths mismatched": (
        lambda d: (d / "meta.json").write_text(
            json.dumps({**json.loads((d / "meta.json").read_text()), "count": 10_000})
        ),
        "of the 10,000 rows meta.json promises",
    ),
}


def run_cli(*args: str) -> tuple[int, str, str]:
    from mcpkit.archive.cli import app

    done = CliRunner().invoke(app, list(args), env={"MCPKIT_ARCHIVE_URL": "ws://127.0.0.1:9"})
    stderr = done.stderr
    if done.exception is not None and not isinstance(done.exception, SystemExit):
        stderr += "".join(traceback.format_exception(done.exception))
    return done.exit_code, done.stdout, stderr


def one_line(text: str) -> str:
    # the query commands first say which archive answers ("in-process on ..."): not an error line
    lines = [line for line in text.splitlines() if line.strip() and not line.startswith("in-process on ")]
    assert len(lines) == 1, text
    assert "Traceback" not in text
    return lines[0]


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_damage_is_found_at_open_in_one_line(db: Path, damage: str) -> None:
    do, says = DAMAGE[damage]
    do(space_dir(db))
    with pytest.raises(DamagedSpaceError) as info:
        VectorSpace.open(vectors_root(db), "content")
    message = str(info.value)
    assert says in message and "\n" not in message
    assert "mcpkit archive embed --space content --repair" in message
    assert "damaged" in describe(vectors_root(db))["content"]  # status shows it, not fails


@pytest.mark.parametrize("damage", list(DAMAGE))
async def test_api_search_says_the_line(db: Path, damage: str) -> None:
    DAMAGE[damage][0](space_dir(db))
    api = ArchiveAPI.open(db)
    try:
        with pytest.raises(JsonRpcError) as info:
            await api.call("search_similar", {"query": "coffee"})
        assert info.value.code == -32603
        assert "--repair" in info.value.message and "mmap" not in info.value.message
        assert isinstance(await api.call("search_posts_by_text", {"search_term": "the"}), list)
    finally:
        await api.aclose()


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_search_command_says_the_line(db: Path, damage: str) -> None:
    DAMAGE[damage][0](space_dir(db))
    code, _, err = run_cli("search", "coffee", "--db", str(db))
    assert code == 1
    assert "--repair" in one_line(err)


def test_embed_says_the_line_then_repair_keeps_what_is_intact(db: Path) -> None:
    total = count_of(db)
    truncate(space_dir(db) / "vectors.f32", 0.5)
    code, out, err = run_cli("embed", "--db", str(db))
    assert code == 1 and "vectors.f32 holds" in one_line(err) and not out
    code, out, err = run_cli("embed", "--repair", "--db", str(db))
    assert code == 0, err
    assert "Traceback" not in err
    assert "repaired (the files hold" in err and "loading model" in err
    kept = total // 2
    assert f"kept {kept:,} intact rows" in err
    assert f"{total - kept} embedded, {kept} already" in out
    assert count_of(db) == total
    space = VectorSpace.open(vectors_root(db), "content")
    assert space is not None and len(set(np.asarray(space.ids).tolist())) == total


def test_repair_after_garbage_meta_embeds_everything_again(db: Path) -> None:
    total = count_of(db)
    (space_dir(db) / "meta.json").write_text("{")
    code, out, err = run_cli("embed", "--repair", "--db", str(db))
    assert code == 0, err
    assert "meta.json is not JSON: every post is embedded again" in err
    assert f"{total} embedded, 0 already" in out
    code, out, _ = run_cli("search", "coffee", "--db", str(db), "--json")
    assert code == 0 and json.loads(out)


def test_repair_drops_repeated_and_broken_rows(db: Path) -> None:
    """Rows the files hold but that are not whole (a repeated id, a NaN vector) go too."""
    directory = space_dir(db)
    total = count_of(db)
    ids = np.fromfile(directory / "ids.i64", dtype=np.int64)
    ids[3] = ids[2]
    ids.tofile(directory / "ids.i64")
    matrix = np.memmap(directory / "vectors.f32", dtype=np.float32, mode="r+").reshape(total, -1)
    matrix[7, 0] = np.nan
    matrix.flush()
    del matrix
    report = repair_space(vectors_root(db), "content")
    assert report.kept == total - 2 and report.dropped == 2
    assert "2 rows with a repeated or invalid id or vector" in report.line
    assert repair_space(vectors_root(db), "content").problem is None  # now whole
    space = VectorSpace.open(vectors_root(db), "content")
    assert space is not None and np.isfinite(np.asarray(space.matrix)).all()


def test_intact_store_is_left_alone(db: Path) -> None:
    before = (space_dir(db) / "vectors.f32").read_bytes()
    code, _, err = run_cli("embed", "--repair", "--db", str(db))
    assert code == 0 and "the vector store is intact" in err
    assert "loading model" not in err  # nothing to embed: the model is not loaded
    assert (space_dir(db) / "vectors.f32").read_bytes() == before
