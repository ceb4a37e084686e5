"""A Twilog-only archive answers upstream's clients byte for byte as before archives held kinds.

Why a recorded answer file: the promise is not "answers look right" but "answers did not
change". ``tests/data/archive_wire_golden.json`` holds the raw WebSocket frames the server sent
for every upstream method (and several settings of each) when the archive knew only Twilog rows
(written by the code of commit 6d11796, before kinds, platforms and threads reached the queries).
Every run sends the same requests, the way upstream's clients send them (a connection per
request, ``params`` always present, no mcpkit setting), and compares the frames as text.

The vectors make that comparison exact on any machine: documents are unit vectors whose entries
are 0 and powers of two, queries are one-hot, so every score is one stored entry, the same
whatever the BLAS, summation order or FMA. The quantised first pass is off (``exact``), so
``get_status`` does not depend on whether faiss is installed.

Regenerate only when a change of the upstream wire is intended (it should not be):
``.venv/bin/python tests/archive/rpc/test_wire_unchanged.py --write``.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

GOLDEN = Path(__file__).resolve().parents[2] / "data" / "archive_wire_golden.json"
DIM = 16
MODEL = "test-dyadic"

# Twilog rows: posts, replies as plain posts, "RT @" reposts, likes and bookmarks of others'
# posts (their URL names the author), a post liked by its own author (same id twice: the larger
# log_type wins), HTML entities, a multi-line post, posts of the same text (deduplicated).
ROWS: list[tuple[str, str, str, str, str]] = []


def _row(post_id: int, user: str, when: str, content: str, log_type: int = 1) -> None:
    ROWS.append((str(post_id), f"https://x.com/{user}/status/{post_id}", when, content, str(log_type)))


_row(1790000000000000001, "alice", "2024-01-01 09:00:00", "Morning coffee and a book about cats")
_row(1790000000000000002, "alice", "2024-01-02 10:30:00", "Cats sleep sixteen hours a day &amp; dream")
_row(1790000000000000003, "alice", "2024-01-03 11:00:00", "RT @bob: Deploying on Cloudflare Workers")
_row(1790000000000000004, "bob", "2024-01-04 12:00:00", "Deploying on Cloudflare Workers was easy")
_row(1790000000000000005, "bob", "2024-01-05 13:00:00", "Google search tips &lt;3\n\nline two\n\n\nthree")
_row(1790000000000000006, "carol", "2024-01-06 14:00:00", "AI news from Google today", 2)
_row(1790000000000000007, "carol", "2024-01-07 15:00:00", "workers of cloudflare unite", 3)
_row(1790000000000000008, "dave", "2024-02-01 08:00:00", "猫が日向で寝ている")
_row(1790000000000000009, "dave", "2024-02-02 08:00:00", "猫が日向で寝ている")
_row(1790000000000000010, "alice", "2024-02-03 09:00:00", "A cat photo https://example.com/cat.jpg")
_row(1790000000000000011, "alice", "2024-02-04 09:00:00", "@bob thanks for the coffee tip")
_row(1790000000000000012, "bob", "2024-03-01 00:00:00", "Coffee beans, light roast, 88 degrees")
_row(1790000000000000012, "bob", "2024-03-01 00:00:00", "Coffee beans, light roast, 88 degrees", 2)
_row(1790000000000000013, "erin", "2024-03-02 23:59:59", "Reading Murakami again #books", 2)
_row(1790000000000000014, "erin", "2024-03-03 00:00:00", "Tea or coffee? Both.", 3)
_row(1790000000000000015, "bob", "2024-03-04 07:00:00", "RT @alice: Cats sleep sixteen hours a day & dream")
_row(1790000000000000016, "alice", "2024-03-05 07:00:00", "Typhoon coming; put the plants inside")

ENRICHED = {
    1790000000000000001: ("a morning routine with cats", "coffee and cats", ["coffee", "cats"]),
    1790000000000000004: ("serverless experience", "Workers", ["Cloudflare"]),
    1790000000000000008: ("a sleeping cat", "猫", ["猫"]),
    1790000000000000012: ("about brewing", "coffee", ["coffee"]),
}


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode()).digest()


def _document_vector(text: str) -> np.ndarray:
    """A unit vector from the text's hash: 16 entries of +-1/4, 4 of +-1/2 or 1 of +-1
    (norms exactly 1 in float32), so a one-hot query scores 0, +-1/4, +-1/2 or +-1."""
    digest = _digest(text)
    signs = np.where(np.unpackbits(np.frombuffer(digest[4:6], dtype=np.uint8))[:DIM] == 1, 1.0, -1.0)
    vector = np.zeros(DIM, dtype=np.float32)
    family = digest[0] % 3
    if family == 0:
        vector[:] = 0.25 * signs
    elif family == 1:
        positions = [(digest[1] + 5 * i) % DIM for i in range(4)]
        vector[positions] = 0.5 * signs[:4]
    else:
        vector[digest[1] % DIM] = signs[0]
    return vector


class DyadicEmbedder:
    """Exact scores on every machine: one-hot queries against power-of-two unit vectors."""

    name = MODEL
    dimension = DIM

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        return np.vstack([_document_vector(t) for t in texts])

    def embed_query(self, text: str) -> np.ndarray:
        vector = np.zeros(DIM, dtype=np.float32)
        vector[_digest(text)[0] % DIM] = 1.0
        return vector


def build_archive(directory: Path) -> Path:
    """The Twilog-only archive: the rows above imported, enriched, all three spaces embedded."""
    from mcpkit.archive.embedding import embed_missing
    from mcpkit.archive.importers import import_csv
    from mcpkit.archive.store import Store
    from tests.archive.helpers import write_csv

    db = directory / "twilog.db"
    store = Store(db)
    try:
        import_csv(write_csv(directory / "twilog.csv", ROWS), store)
        with store.transaction() as conn:
            store.upsert_enrichments(
                conn, [(pid, r, s, json.dumps(t, ensure_ascii=False)) for pid, (r, s, t) in ENRICHED.items()]
            )
        for space in ("content", "reasoning", "summary"):
            embed_missing(store, space, DyadicEmbedder())
    finally:
        store.close()
    return db


# Every upstream method, with the settings upstream's clients send. No mcpkit setting anywhere.
REQUESTS: list[tuple[str, dict[str, Any]]] = [
    ("search_similar", {"query": "cats"}),
    ("search_similar", {"query": "coffee", "settings": {"top_k": 100}}),
    ("search_similar", {"query": "coffee", "settings": {"top_k": 5, "user_filter": {"includes": ["alice"]}}}),
    ("search_similar", {"query": "coffee", "settings": {"top_k": 50, "user_filter": {"excludes": ["bob"]}}}),
    (
        "search_similar",
        {"query": "x", "settings": {"top_k": 50, "user_filter": {"threshold_min": 3, "threshold_max": 6}}},
    ),
    (
        "search_similar",
        {
            "query": "tea",
            "settings": {"top_k": 50, "date_filter": {"from": "2024-01-03", "to": "2024-03-01"}},
        },
    ),
    ("search_similar", {"query": "cats|cat", "settings": {"top_k": 50}}),
    ("search_similar", {"query": "| coffee", "settings": {"top_k": 50}}),
    ("search_similar", {"query": "| -coffee", "settings": {"top_k": 3}}),
    ("search_similar", {"query": "cats", "settings": {"top_k": 20}, "mode": "summary"}),
    ("search_similar", {"query": "cats", "settings": {"top_k": 20}, "mode": "reasoning"}),
    (
        "search_similar",
        {"query": "cats", "settings": {"top_k": 20}, "mode": "average", "weights": [0.7, 0.2, 0.1]},
    ),
    ("search_similar", {"query": "cats", "settings": {"top_k": 20}, "mode": "maximum"}),
    ("search_similar", {"query": "cats", "settings": {"top_k": 20}, "mode": "minimum"}),
    ("search_similar", {"query": ""}),
    ("search_similar", {"query": "cats", "settings": {"top_k": 0}}),
    ("vector_search", {"query": "cats"}),
    ("vector_search", {"query": "coffee", "top_k": 4}),
    ("vector_search", {"query": "coffee|coffee", "mode": "content"}),
    ("search_posts_by_text", {"search_term": "coffee"}),
    ("search_posts_by_text", {"search_term": "cats -sleep", "limit": 5}),
    ("search_posts_by_text", {"search_term": '"Cloudflare Workers"'}),
    ("search_posts_by_text", {"search_term": "cats", "source": "summary"}),
    ("search_posts_by_text", {"search_term": "a", "source": "reasoning", "limit": 2}),
    ("search_posts_by_text", {"search_term": "coffee", "limit": 0}),
    ("get_user_stats", {}),
    ("get_user_stats", {"limit": 2}),
    ("get_database_stats", {}),
    ("get_status", {}),
    ("embed_text", {"text": "こんにちは"}),
    ("get_user_list", {}),
    ("check_init", {}),
    ("no_such_method", {}),
]


async def _frames(url: str, method: str, params: dict[str, Any], req_id: int) -> list[str]:
    """The raw text frames one upstream-style request gets (until one without ``more: true``)."""
    import websockets

    async with websockets.connect(url, compression=None, max_size=None) as ws:
        await ws.send(
            json.dumps(
                {"jsonrpc": "2.0", "id": req_id, "method": method, "params": params}, ensure_ascii=False
            )
        )
        frames: list[str] = []
        while True:
            frame = await ws.recv()
            assert isinstance(frame, str)
            frames.append(frame)
            if json.loads(frame).get("more") is not True:
                return frames


async def record(db: Path) -> list[dict[str, Any]]:
    """Every request of :data:`REQUESTS` and the frames the server answered it with."""
    from mcpkit.archive.api import ArchiveAPI
    from mcpkit.archive.rpc import RpcServer, RpcServerOptions

    api = ArchiveAPI.open(db, embedder=DyadicEmbedder(), exact=True)
    try:
        async with RpcServer(api, RpcServerOptions(port=0)) as server:
            return [
                {"method": method, "params": params, "frames": await _frames(server.url, method, params, n)}
                for n, (method, params) in enumerate(REQUESTS, 1)
            ]
    finally:
        api.close()


@pytest.mark.anyio
async def test_every_upstream_method_answers_as_recorded(tmp_path: Path) -> None:
    recorded = json.loads(GOLDEN.read_text(encoding="utf-8"))
    answered = await record(build_archive(tmp_path))
    assert [(a["method"], a["params"]) for a in answered] == [(r["method"], r["params"]) for r in recorded]
    for now, before in zip(answered, recorded, strict=True):
        if now["method"] == "get_status":
            # mcpkit's diagnostics follow upstream's keys and grow with the server (db, pid,
            # the vector index); upstream's own keys, their order and values may not change
            assert _upstream_status(now["frames"]) == _upstream_status(before["frames"])
            continue
        assert now["frames"] == before["frames"], f"{now['method']} {now['params']} answers differently"


UPSTREAM_STATUS_KEYS = ("status", "ready", "server_type", "model", "data_stats")


def _upstream_status(frames: list[str]) -> list[tuple[str, Any]]:
    """The first keys of a ``get_status`` answer, which must be upstream's, in its order."""
    (frame,) = frames
    result = json.loads(frame)["result"]
    return list(result.items())[: len(UPSTREAM_STATUS_KEYS)]


def test_status_starts_with_upstreams_keys() -> None:
    recorded = json.loads(GOLDEN.read_text(encoding="utf-8"))
    (status,) = [r for r in recorded if r["method"] == "get_status"]
    assert [key for key, _ in _upstream_status(status["frames"])] == list(UPSTREAM_STATUS_KEYS)


def _write() -> None:  # pragma: no cover - run by hand, see the module docstring
    import tempfile

    import anyio

    with tempfile.TemporaryDirectory() as tmp:
        answered = anyio.run(record, build_archive(Path(tmp)))
    GOLDEN.parent.mkdir(parents=True, exist_ok=True)
    GOLDEN.write_text(json.dumps(answered, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {len(answered)} answers to {GOLDEN}")


if __name__ == "__main__":  # pragma: no cover
    sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
    if sys.argv[1:] == ["--write"]:
        _write()
    else:
        sys.exit("usage: tests/archive/rpc/test_wire_unchanged.py --write")
