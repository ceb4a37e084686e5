"""Child process of the resume test: embeds PAUSE batches, then waits in the next one until it
is killed (its stdin, held open by the parent and never written, is what it waits on). So the
parent kills it mid-run for certain: with a delay per batch instead, a loaded machine once let
the child reach the end before the kill arrived."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from archive.helpers import HashEmbedder
from mcpkit.archive.embedding import embed_missing
from mcpkit.archive.store import Store


class PausingEmbedder(HashEmbedder):
    def __init__(self, pause_after: int) -> None:
        super().__init__()
        self.pause_after = pause_after

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if self.batches >= self.pause_after:
            sys.stdin.buffer.read()  # until killed (or stdin closed)
        return super().embed_documents(texts)


if __name__ == "__main__":
    store = Store(Path(sys.argv[1]))
    embed_missing(store, "content", PausingEmbedder(int(sys.argv[2])), batch_size=int(sys.argv[3]))
