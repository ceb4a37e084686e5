"""import-twilog-search on a directory built here in upstream's documented format."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from mcpkit.archive import safetensors_io
from mcpkit.archive.engine import Engine
from mcpkit.archive.errors import ImportFormatError, ModelMismatchError
from mcpkit.archive.importers.twilog_search import import_twilog_search
from mcpkit.archive.query import parse_terms
from mcpkit.archive.store import Store
from mcpkit.archive.vectors import VectorSpace, describe, vectors_root

from .helpers import TableEmbedder, ids_of, row, write_csv

MODEL = "cl-nagoya/ruri-v3-310m"


def _unit_rows(n: int, dim: int, seed: int) -> np.ndarray:
    rows = np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def _space_dir(
    directory: Path, ids: list[int], vectors: np.ndarray, chunk: int, key: str = "source_path"
) -> None:
    directory.mkdir(parents=True)
    chunks = 0
    for start in range(0, len(ids), chunk):
        part = {
            "post_ids": np.asarray(ids[start : start + chunk], dtype=np.int64),
            "vectors": vectors[start : start + chunk],
        }
        (directory / f"{chunks:04d}.safetensors").write_bytes(safetensors_io.dumps(part))
        chunks += 1
    meta = {
        "total_posts": len(ids),
        "chunk_size": chunk,
        "chunks": chunks,
        "model": MODEL,
        "embedding_dim": vectors.shape[1],
        key: "twilog.csv",
        "source_type": "csv",
    }
    (directory / "meta.json").write_text(json.dumps(meta), encoding="utf-8")


@pytest.fixture
def upstream(tmp_path: Path) -> Path:
    base = tmp_path / "twilog-search"
    base.mkdir()
    ids = list(range(1, 13))
    write_csv(base / "twilog.csv", [row(i, "alice" if i < 7 else "bob", f"投稿 {i}") for i in ids])
    content = _unit_rows(12, 8, 1)
    _space_dir(base / "embeddings", ids, content, chunk=5)
    batch = base / "batch"
    lines = [
        {"key": str(i), "reasoning": f"理由 {i}", "summary": f"要約 {i}", "tags": ["タグ", f"t{i % 3}"]}
        for i in ids[:10]
    ]
    batch.mkdir()
    (batch / "results.jsonl").write_text(
        "\n".join(json.dumps(x, ensure_ascii=False) for x in lines) + "\n", encoding="utf-8"
    )
    _space_dir(batch / "reasoning", ids[:10], _unit_rows(10, 8, 2), chunk=4)
    _space_dir(batch / "summary", ids[:10], _unit_rows(10, 8, 3), chunk=4)
    np.save(tmp_path / "content.npy", content)
    return base


def test_import_brings_posts_vectors_and_enrichments(upstream: Path, tmp_path: Path) -> None:
    store = Store(tmp_path / "a.db")
    report = import_twilog_search(upstream, store)
    assert report["csv"]["new"] == 12 and report["enrichments"] == 10
    assert [(s["space"], s["added"], s["model"], s["dim"]) for s in report["spaces"]] == [
        ("content", 12, MODEL, 8),
        ("reasoning", 10, MODEL, 8),
        ("summary", 10, MODEL, 8),
    ]
    assert describe(vectors_root(store.path))["content"] == {"model": MODEL, "dim": 8, "count": 12}
    space = VectorSpace.open(vectors_root(store.path), "content")
    assert space is not None and np.allclose(space.matrix, np.load(tmp_path / "content.npy"), atol=1e-6)
    assert [p["post_id"] for p in store.text_search(parse_terms('"要約 1"'), 10, "summary")] == [10, 1]
    post = store.posts_by_ids([3])[3]
    assert post["reasoning"] == "理由 3" and post["tags"] == ["タグ", "t0"]
    assert store.counts()["total_tags"] == 4

    again = import_twilog_search(upstream, store)
    assert [s["added"] for s in again["spaces"]] == [0, 0, 0]
    assert again["csv"]["unchanged"] == 12


def test_imported_spaces_search_with_their_own_model(upstream: Path, tmp_path: Path) -> None:
    store = Store(tmp_path / "a.db")
    import_twilog_search(upstream, store)
    content = np.load(tmp_path / "content.npy")
    engine = Engine(
        store, vectors_root(store.path), embedder=TableEmbedder({"q": content[4]}, name=MODEL, dim=8)
    )
    assert ids_of(engine.search_similar("q"))[0] == 5
    assert len(ids_of(engine.search_similar("q", mode="average"))) == 10  # only posts with all three spaces
    other = Engine(
        store, vectors_root(store.path), embedder=TableEmbedder({"q": content[4]}, name="use-multilingual-v3")
    )
    with pytest.raises(ModelMismatchError, match="ruri"):
        other.search_similar("q")


def test_upstream_csv_path_key_is_accepted_too(tmp_path: Path) -> None:
    base = tmp_path / "old"
    base.mkdir()
    write_csv(base / "twilog.csv", [row(1, "a", "x")])
    _space_dir(base / "embeddings", [1], _unit_rows(1, 4, 0), chunk=10, key="csv_path")
    report = import_twilog_search(base, Store(tmp_path / "a.db"))
    assert report["csv"]["new"] == 1 and report["spaces"][0]["added"] == 1


def test_not_an_upstream_directory(tmp_path: Path) -> None:
    with pytest.raises(ImportFormatError, match=r"embeddings/meta\.json"):
        import_twilog_search(tmp_path, Store(tmp_path / "a.db"))


def test_safetensors_round_trip_and_bf16() -> None:
    data = {"a": np.arange(6, dtype=np.int64).reshape(2, 3), "b": np.ones((1, 4), dtype=np.float32)}
    back = safetensors_io.loads(safetensors_io.dumps(data))
    assert back["a"].tolist() == data["a"].tolist() and back["b"].dtype == np.float32
    header = b'{"x":{"dtype":"BF16","shape":[2],"data_offsets":[0,4]}}'
    blob = len(header).to_bytes(8, "little") + header + np.array([0x3F80, 0xC000], dtype="<u2").tobytes()
    assert safetensors_io.loads(blob)["x"].tolist() == [1.0, -2.0]


def test_bad_results_lines_are_skipped_and_reported(upstream: Path, tmp_path: Path) -> None:
    results = upstream / "batch" / "results.jsonl"
    lines = results.read_text(encoding="utf-8").splitlines()
    lines[2] = '{"key": 3, "reasoning": "cut off'
    lines.insert(5, "not json at all")
    lines.append('{"reasoning": "no key"}')
    results.write_text("\n".join(lines) + "\n", encoding="utf-8")
    store = Store(tmp_path / "a.db")
    report = import_twilog_search(upstream, store)
    assert report["enrichments"] == 9  # ten lines, one of them cut off
    assert [(s["file"], s["line"]) for s in report["skipped_lines"]] == [
        ("results.jsonl", 3),
        ("results.jsonl", 6),
        ("results.jsonl", 12),
    ]
    assert all("\n" not in s["reason"] for s in report["skipped_lines"])
    assert [s["added"] for s in report["spaces"]] == [12, 10, 10]  # the vectors came across anyway


def test_a_directory_without_its_csv_is_refused_unless_given(upstream: Path, tmp_path: Path) -> None:
    moved = tmp_path / "elsewhere.csv"
    (upstream / "twilog.csv").rename(moved)
    store = Store(tmp_path / "a.db")
    with pytest.raises(
        ImportFormatError, match=r"names 'twilog\.csv', which is not there; give .* --csv PATH"
    ):
        import_twilog_search(upstream, store)
    assert store.counts()["total_posts"] == 0 and not describe(vectors_root(store.path))
    report = import_twilog_search(upstream, store, csv_path=moved)
    assert report["csv"]["new"] == 12 and report["spaces"][0]["added"] == 12


def test_another_model_is_refused_with_the_command_that_starts_afresh(upstream: Path, tmp_path: Path) -> None:
    from mcpkit.archive.embedding import embed_missing
    from mcpkit.archive.vectors import drop_space

    from .helpers import HashEmbedder

    store = Store(tmp_path / "a.db")
    import_twilog_search(upstream, store)
    with pytest.raises(ModelMismatchError) as info:
        embed_missing(store, "content", HashEmbedder(dim=16))
    message = str(info.value)
    assert "mcpkit archive embed --space content --model test-hash --fresh" in message
    assert drop_space(vectors_root(store.path), "content")
    assert embed_missing(store, "content", HashEmbedder(dim=16)).embedded == 12
    assert describe(vectors_root(store.path))["content"]["model"] == "test-hash"
