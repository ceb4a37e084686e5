"""Hybrid search's hub scores, stored beside the vectors and measured off the query path.

A post's hubness (:func:`mcpkit.archive.ranking.neighbour_means`: its mean cosine with its
nearest reference posts) costs ``rows x 1,024 x dim`` multiply-adds: about 10^12 at a million
posts, minutes on 2 cores. Computed on the first hybrid search, as it first was, that blocked the
query for those minutes. Now:

* a query asks only for the rows it ranks (:meth:`HubScores.for_rows`, a few hundred): rows
  already measured are read from memory, the others are measured on the spot against the same
  references (milliseconds), so the values are the same either way;
* :meth:`HubScores.fill` measures every row in the background (``Engine.warm``, which the
  server and the shell call at start) and commits each chunk to ``hubness.f32`` beside the
  space's vectors, with ``hubness.json`` as the commit point (as ``meta.json`` is the vectors'):
  a killed process resumes at the last chunk, and the next process reads the file instead of
  measuring again.

The stored scores belong to the vectors they were measured on: ``hubness.json`` records the
reference rows and a fingerprint of the ids; a space rebuilt or repaired under them is measured
again.
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mcpkit.archive.ranking import HUB_REFERENCES, hub_references, neighbour_means
from mcpkit.archive.vectors import FloatArray, IntArray, VectorSpace, prefix_fingerprint

VALUES = "hubness.f32"
META = "hubness.json"
CHUNK = 65_536
"""Rows measured and committed at a time by :meth:`HubScores.fill` (about a second on 2 cores)."""


@dataclass(frozen=True, slots=True)
class _State:
    count: int  # rows [0, count) measured
    references: IntArray
    reference_vectors: FloatArray
    values: FloatArray
    fingerprint: str


class HubScores:
    """The hub scores of one space directory; thread-safe (state swapped whole)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._state: _State | None = None
        self._loaded = False
        self._fill_lock = threading.Lock()
        self.measured_on_demand = 0
        """Rows measured in a query's path (only the rows it ranked)."""
        self.measured_in_fill = 0

    # -- state -----------------------------------------------------------------------------------

    def _fresh(self, space: VectorSpace) -> _State:
        references = hub_references(len(space))
        return _State(0, references, space.read_rows(references), np.zeros(0, np.float32), "")

    def _load(self, space: VectorSpace) -> _State | None:
        try:
            meta = json.loads((self.directory / META).read_text(encoding="utf-8"))
            count = int(meta["count"])
            references = np.asarray(meta["references"], dtype=np.int64)
            fingerprint = str(meta["fingerprint"])
            values = np.fromfile(self.directory / VALUES, dtype=np.float32, count=count)
        except (OSError, ValueError, KeyError, TypeError):
            return None
        if len(values) != count or count > len(space) or prefix_fingerprint(space, count) != fingerprint:
            return None
        if len(references) == 0 or int(references.max()) >= len(space):
            return None
        return _State(count, references, space.read_rows(references), values, fingerprint)

    def _current(self, space: VectorSpace) -> _State:
        """The state valid for ``space``: loaded once from disk, started afresh when the space
        no longer matches it (rebuilt, repaired, or grown while still under
        :data:`HUB_REFERENCES` rows, when the references themselves change)."""
        state = self._state
        if state is None and not self._loaded:
            self._loaded = True
            state = self._load(space)
        if state is not None:
            small = len(state.references) < HUB_REFERENCES and len(space) > len(state.references)
            if (
                small
                or state.count > len(space)
                or int(state.references.max()) >= len(space)
                or (state.count and state.fingerprint != prefix_fingerprint(space, state.count))
            ):
                state = None
        if state is None:
            state = self._fresh(space)
        self._state = state
        return state

    # -- reading and measuring -------------------------------------------------------------------

    def for_rows(self, space: VectorSpace, rows: IntArray) -> FloatArray:
        """Hubness of each of ``rows``: stored values, and the rows not yet measured measured now
        (never more than the rows asked for)."""
        state = self._current(space)
        rows = np.asarray(rows, dtype=np.int64)
        out = np.empty(len(rows), dtype=np.float32)
        known = rows < state.count
        out[known] = state.values[rows[known]]
        missing = rows[~known]
        if len(missing):
            out[~known] = neighbour_means(
                space.read_rows(missing), missing, state.reference_vectors, state.references
            )
            self.measured_on_demand += len(missing)
        return out

    @property
    def complete_rows(self) -> int:
        state = self._state
        return 0 if state is None else state.count

    def fill(self, space: VectorSpace) -> None:
        """Measure every row not yet measured, committing each chunk (resumable)."""
        with self._fill_lock:
            state = self._current(space)
            if state.count == 0:
                self._commit(space, state)  # the references, before any value: a fresh start
            with open(space.directory / "vectors.f32", "rb") as handle:
                while state.count < len(space):
                    start, stop = state.count, min(len(space), state.count + CHUNK)
                    handle.seek(start * space.dim * 4)
                    vectors = np.fromfile(handle, dtype=np.float32, count=(stop - start) * space.dim)
                    values = neighbour_means(
                        vectors.reshape(stop - start, space.dim),
                        np.arange(start, stop, dtype=np.int64),
                        state.reference_vectors,
                        state.references,
                    )
                    state = _State(
                        stop,
                        state.references,
                        state.reference_vectors,
                        np.concatenate([state.values, values]),
                        prefix_fingerprint(space, stop),
                    )
                    self._commit(space, state, values, start)
                    self.measured_in_fill += stop - start
                    self._state = state

    def _commit(
        self, space: VectorSpace, state: _State, values: FloatArray | None = None, at: int = 0
    ) -> None:
        """Write the new values past the committed ones, then replace hubness.json (the commit)."""
        path = self.directory / VALUES
        with open(path, "ab+") as handle:
            handle.truncate(at * 4)
            if values is not None:
                handle.write(np.asarray(values, dtype=np.float32).tobytes())
            handle.flush()
            os.fsync(handle.fileno())
        tmp = self.directory / (META + ".tmp")
        payload = {
            "count": state.count,
            "references": state.references.tolist(),
            "fingerprint": state.fingerprint,
            "dim": space.dim,
        }
        tmp.write_text(json.dumps(payload), encoding="utf-8")
        os.replace(tmp, self.directory / META)
