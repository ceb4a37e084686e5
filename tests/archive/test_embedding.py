"""embed_missing: only what is missing, empty texts skipped, resumable after a real kill."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from mcpkit.archive.embedding import embed_missing, recorded_model
from mcpkit.archive.errors import ModelMismatchError
from mcpkit.archive.importers import import_csv
from mcpkit.archive.posts import strip_content
from mcpkit.archive.store import Store
from mcpkit.archive.vectors import VectorSpace, vectors_root

from .helpers import HashEmbedder, row, write_csv


def _archive(tmp_path: Path, n: int) -> Store:
    rows = [row(i, "u", f"post number {i} https://t.co/{i} @someone") for i in range(1, n + 1)]
    rows.append(row(n + 1, "u", "https://only.a/link @and_a_mention"))
    store = Store(tmp_path / "a.db")
    import_csv(write_csv(tmp_path / "e.csv", rows), store)
    return store


def test_embeds_stripped_text_skips_empty_and_is_idempotent(tmp_path: Path) -> None:
    store = _archive(tmp_path, 30)
    embedder = HashEmbedder()
    progress: list[tuple[int, int]] = []
    summary = embed_missing(
        store, "content", embedder, batch_size=8, progress=lambda d, t: progress.append((d, t))
    )
    assert (summary.embedded, summary.empty, summary.already) == (30, 1, 0)
    assert progress[-1] == (30, 30)
    space = VectorSpace.open(vectors_root(store.path), "content")
    assert space is not None and sorted(space.ids.tolist()) == list(range(1, 31))
    row_of_7 = int(space.rows_of([7])[0])
    assert np.allclose(
        space.matrix[row_of_7], embedder.vector(strip_content("post number 7 https://t.co/7 @x"))
    )
    again = embed_missing(store, "content", embedder)
    assert (again.embedded, again.already) == (0, 30)


def test_other_model_is_refused(tmp_path: Path) -> None:
    store = _archive(tmp_path, 3)
    assert recorded_model(store, "content") is None
    embed_missing(store, "content", HashEmbedder())
    assert recorded_model(store, "content") == "test-hash"
    with pytest.raises(ModelMismatchError, match="test-hash"):
        embed_missing(store, "content", HashEmbedder(name="other"))


def test_resume_after_kill(tmp_path: Path) -> None:
    store = _archive(tmp_path, 200)
    child = Path(__file__).with_name("embed_child.py")
    # 4 batches of 10 written, then the child waits in the fifth until it is killed
    proc = subprocess.Popen([sys.executable, str(child), str(store.path), "4", "10"], stdin=subprocess.PIPE)
    meta = vectors_root(store.path) / "content" / "meta.json"
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            space = VectorSpace.open(vectors_root(store.path), "content")
            if space is not None and len(space) >= 40:  # the child now waits: nothing else moves
                break
            assert proc.poll() is None, "child finished before it could be killed"
            time.sleep(0.01)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.stdin is not None
    proc.stdin.close()
    assert proc.returncode == -signal.SIGKILL
    partial = VectorSpace.open(vectors_root(store.path), "content")
    assert partial is not None and len(partial) == 40 and meta.exists()
    embedder = HashEmbedder()
    summary = embed_missing(store, "content", embedder, batch_size=64)
    assert summary.already == len(partial) and summary.embedded == 200 - len(partial)
    full = VectorSpace.open(vectors_root(store.path), "content")
    assert full is not None
    assert sorted(full.ids.tolist()) == list(range(1, 201))  # every post exactly once
    texts = dict(store.iter_texts("content"))
    for index in (0, 55, 199):
        post_id = int(full.ids[index])
        assert np.allclose(full.matrix[index], embedder.vector(strip_content(texts[post_id])), atol=1e-6)
