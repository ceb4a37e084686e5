"""Bring an existing twilog-search installation across (``mcpkit archive import-twilog-search DIR``).

Upstream's layout, all optional except ``embeddings/meta.json``::

    embeddings/meta.json         {total_posts, chunk_size, chunks, model, embedding_dim,
                                  source_path, source_type}
    embeddings/NNNN.safetensors  {"post_ids": I64 [n], "vectors": F32 [n, dim]}
    batch/results.jsonl          {"key": post_id, "reasoning", "summary", "tags": [...]}
    batch/reasoning/, batch/summary/   same format as embeddings/ (vectors of those texts)

The CSV named by ``source_path`` (upstream's reader looked for ``csv_path``, a bug; both are
accepted) is imported first when present. Vectors keep their model name and dimension, so
queries against them are embedded with the same model (or refused if it is unavailable).
Re-running adds nothing twice: post ids already in a space are skipped.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from mcpkit.archive import safetensors_io
from mcpkit.archive.embedders import normalize_rows
from mcpkit.archive.errors import ImportFormatError
from mcpkit.archive.importers.twilog_csv import import_csv
from mcpkit.archive.store import Store
from mcpkit.archive.vectors import SpaceWriter, vectors_root

Progress = Callable[[str, int, int], None]

_SPACE_DIRS = (
    ("content", ("embeddings",)),
    ("reasoning", ("batch", "reasoning")),
    ("summary", ("batch", "summary")),
)


def _read_meta(directory: Path) -> dict[str, Any]:
    path = directory / "meta.json"
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ImportFormatError(f"{path}: missing (not a twilog-search vector directory)") from exc
    except ValueError as exc:
        raise ImportFormatError(f"{path}: not valid JSON: {exc}") from exc
    if not isinstance(meta, dict) or not meta.get("model"):
        raise ImportFormatError(f"{path}: no model name recorded")
    return meta


def _chunk_files(directory: Path, meta: dict[str, Any]) -> list[Path]:
    declared = meta.get("chunks")
    if isinstance(declared, int):
        files = [directory / f"{i:04d}.safetensors" for i in range(declared)]
        return [f for f in files if f.exists()]
    return sorted(directory.glob("*.safetensors"))


def _iter_chunks(files: list[Path]) -> Iterator[tuple[Path, np.ndarray[Any, Any], np.ndarray[Any, Any]]]:
    for path in files:
        tensors = safetensors_io.load(path)
        if "post_ids" not in tensors or "vectors" not in tensors:
            raise ImportFormatError(f"{path}: expected tensors 'post_ids' and 'vectors'")
        ids = np.asarray(tensors["post_ids"], dtype=np.int64).reshape(-1)
        vectors = np.asarray(tensors["vectors"], dtype=np.float32)
        if vectors.ndim != 2 or len(vectors) != len(ids):
            raise ImportFormatError(f"{path}: {len(ids)} post ids but vectors of shape {vectors.shape}")
        yield path, ids, vectors


def import_space(
    directory: Path, space: str, root: Path, *, progress: Progress | None = None
) -> dict[str, Any]:
    meta = _read_meta(directory)
    files = _chunk_files(directory, meta)
    dim = int(meta.get("embedding_dim") or 0)
    added = skipped = 0
    writer: SpaceWriter | None = None
    have = np.zeros(0, dtype=np.int64)
    for index, (path, ids, vectors) in enumerate(_iter_chunks(files)):
        if writer is None:
            dim = dim or int(vectors.shape[1])
            writer = SpaceWriter(root, space, str(meta["model"]), dim)
            writer.check_model()
            have = writer.existing_ids()
        if vectors.shape[1] != dim:
            raise ImportFormatError(f"{path}: vectors have {vectors.shape[1]} dims, meta.json says {dim}")
        _, first = np.unique(ids, return_index=True)
        keep = np.zeros(len(ids), dtype=bool)
        keep[first] = True
        keep &= ~np.isin(ids, have)
        skipped += int(len(ids) - keep.sum())
        if keep.any():
            writer.append(ids[keep], normalize_rows(vectors[keep]))
            have = np.concatenate([have, ids[keep]])
            added += int(keep.sum())
        if progress is not None:
            progress(space, index + 1, len(files))
    return {"space": space, "model": str(meta["model"]), "dim": dim, "added": added, "skipped": skipped}


def _iter_results(
    path: Path, skipped: list[dict[str, Any]]
) -> Iterator[tuple[int, str | None, str | None, str | None]]:
    """Enrichments of ``results.jsonl``; a line that is not one is skipped and noted in
    ``skipped`` (one bad line must not cost the user every other enrichment)."""
    with open(path, encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
                post_id = int(item["key"])
            except (ValueError, KeyError, TypeError, RecursionError) as exc:
                reason = f"not a results line: {type(exc).__name__}: {' '.join(str(exc).split())[:120]}"
                skipped.append({"file": path.name, "line": number, "reason": reason})
                continue
            tags = item.get("tags")
            yield (
                post_id,
                _text(item.get("reasoning")),
                _text(item.get("summary")),
                json.dumps(tags, ensure_ascii=False) if isinstance(tags, list) else None,
            )


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def find_csv(base: Path, meta: dict[str, Any]) -> Path | None:
    for value in _named_csvs(meta):
        candidate = Path(value)
        for path in (candidate, base / candidate, base / "embeddings" / candidate):
            if path.is_file():
                return path
    return None


def _named_csvs(meta: dict[str, Any]) -> list[str]:
    values = (meta.get(key) for key in ("source_path", "csv_path"))
    return [value for value in values if isinstance(value, str) and value]


def import_twilog_search(
    directory: Path, store: Store, *, csv_path: Path | None = None, progress: Progress | None = None
) -> dict[str, Any]:
    """Import posts (CSV), enrichments and the three vector spaces of an upstream installation.

    The posts are the CSV meta.json names, or ``csv_path``: without posts the vectors would
    find nothing, so a directory whose CSV cannot be found is refused before anything is written.
    """
    base = Path(directory)
    content_dir = base / "embeddings"
    if not (content_dir / "meta.json").is_file():
        raise ImportFormatError(f"{base}: no embeddings/meta.json (is this a twilog-search directory?)")
    meta = _read_meta(content_dir)
    report: dict[str, Any] = {"csv": None, "enrichments": 0, "spaces": [], "skipped_lines": []}
    if csv_path is None:
        csv_path = find_csv(base, meta)
    if csv_path is None:
        named = _named_csvs(meta)
        found = f"names {named[0]!r}, which is not there" if named else "names no CSV"
        raise ImportFormatError(
            f"{base}: embeddings/meta.json {found}; give the Twilog export with --csv PATH"
        )
    report["csv"] = {"path": str(csv_path), **import_csv(csv_path, store).as_dict()}
    results = base / "batch" / "results.jsonl"
    if results.is_file():
        with store.transaction() as conn:
            report["enrichments"] = store.upsert_enrichments(
                conn, _iter_results(results, report["skipped_lines"])
            )
    root = vectors_root(store.path)
    for space, parts in _SPACE_DIRS:
        directory_of_space = base.joinpath(*parts)
        if (directory_of_space / "meta.json").is_file():
            report["spaces"].append(import_space(directory_of_space, space, root, progress=progress))
    return report
