"""``embed_missing``: embed what a space lacks, in batches, resumable after a kill.

Each batch is committed atomically by :class:`vectors.SpaceWriter` (rows first, then the meta
file), so after a kill the next run finds exactly the committed posts and embeds the rest.
Texts are stripped as upstream does; texts that strip to nothing are skipped, not embedded.

A damaged space stops the run with one line (:class:`~mcpkit.archive.errors.DamagedSpaceError`);
``repair=True`` (``embed --repair``) first keeps its intact rows and drops the rest, which this
run then embeds again. Loading a model can take many seconds before the first batch: ``announce``
is told so, only when there is something to embed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mcpkit.archive import messages as m
from mcpkit.archive.embedders import Embedder
from mcpkit.archive.messages import Lang
from mcpkit.archive.posts import strip_content
from mcpkit.archive.settings import SPACES
from mcpkit.archive.store import Store
from mcpkit.archive.vectors import RepairReport, SpaceWriter, describe, repair_space, vectors_root
from mcpkit.errors import ValidationError

EmbedProgress = Callable[[int, int], None]
"""``progress(embedded_so_far, to_embed_total)`` after every committed batch."""


@dataclass(frozen=True, slots=True)
class EmbedSummary:
    space: str
    model: str
    embedded: int
    already: int
    empty: int
    total_rows: int

    def as_dict(self) -> dict[str, object]:
        return {
            "space": self.space,
            "model": self.model,
            "embedded": self.embedded,
            "already": self.already,
            "empty": self.empty,
            "total_rows": self.total_rows,
        }


def recorded_model(store: Store, space: str, *, root: Path | None = None) -> str | None:
    """The model a space was built with (``None`` if it has no vectors yet).

    ``embed`` without ``--model`` should continue a space with its own model rather than
    fail on a mismatch with the default: ``create_embedder(model or recorded_model(...))``.
    """
    info = describe(root if root is not None else vectors_root(store.path)).get(space)
    return str(info["model"]) if info and info.get("count") else None


def embed_missing(
    store: Store,
    space: str,
    embedder: Embedder,
    *,
    root: Path | None = None,
    batch_size: int = 256,
    progress: EmbedProgress | None = None,
    announce: Callable[[str], None] | None = None,
    repair: bool = False,
    lang: Lang = "en",
) -> EmbedSummary:
    """Embed every post (or enrichment text) of ``space`` that has no vector yet; what it
    ``announce`` says is worded in ``lang``."""
    if space not in SPACES:
        raise ValidationError(f"space must be one of {', '.join(SPACES)}, got {space!r}")
    root = root if root is not None else vectors_root(store.path)
    repaired: RepairReport | None = repair_space(root, space) if repair else None
    if repaired is not None and announce is not None:
        announce(repaired.text(lang))
    writer = SpaceWriter(root, space, embedder.name, embedder.dimension)
    writer.check_model()
    have = writer.existing_ids()
    pending_ids: list[int] = []
    pending_texts: list[str] = []
    empty = 0
    for post_id, text in store.iter_texts(space):
        stripped = strip_content(text)
        if not stripped:
            empty += 1
            continue
        pending_ids.append(post_id)
        pending_texts.append(stripped)
    ids = np.asarray(pending_ids, dtype=np.int64)
    todo = ~np.isin(ids, have) if len(have) else np.ones(len(ids), dtype=bool)
    todo_idx = np.flatnonzero(todo)
    total = len(todo_idx)
    done = 0
    if total and announce is not None:
        announce(m.LOADING_MODEL(lang, model=embedder.name))
    if progress is not None:
        progress(0, total)
    for start in range(0, total, batch_size):
        batch = todo_idx[start : start + batch_size]
        vectors = embedder.embed_documents([pending_texts[i] for i in batch])
        writer.append(ids[batch], vectors)
        done += len(batch)
        if progress is not None:
            progress(done, total)
    return EmbedSummary(space, embedder.name, done, len(ids) - total, empty, len(ids) + empty)
