"""Embedders: the real default model, sentence-transformers prefixes, OpenAI-compatible HTTP."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
import pytest

from mcpkit.archive.embedders import DEFAULT_MODEL, create_embedder
from mcpkit.archive.embedders.openai_http import OpenAIEmbedder
from mcpkit.archive.embedders.sentence_transformers import SentenceTransformerEmbedder, prefixes_for
from mcpkit.archive.embedders.use import UseEmbedder
from mcpkit.archive.errors import EmbedderUnavailableError


def test_default_model_is_offline_multilingual_and_normalised() -> None:
    embedder = create_embedder(None)
    assert isinstance(embedder, UseEmbedder) and embedder.name == DEFAULT_MODEL and embedder.dimension == 512
    docs = embedder.embed_documents(
        ["今日は公園を散歩した", "株価が大きく下落した", "I ate ramen for dinner"]
    )
    assert docs.shape == (3, 512) and np.allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-5)
    walk_ja = embedder.embed_query("散歩に出かけた")
    walk_en = embedder.embed_query("I went for a walk in the park")
    assert int(np.argmax(docs @ walk_ja)) == 0
    assert int(np.argmax(docs @ walk_en)) == 0  # English query finds the Japanese post


def test_ruri_prefixes_on_both_sides_without_the_package() -> None:
    embedder = create_embedder("cl-nagoya/ruri-v3-310m")
    assert isinstance(embedder, SentenceTransformerEmbedder)
    assert embedder.document_texts(["猫"]) == ["検索文書: 猫"]
    assert embedder.query_text("猫") == "検索クエリ: 猫"
    assert prefixes_for("intfloat/multilingual-e5-small").query == "query: "
    assert prefixes_for("some/unknown-model").document == ""


def test_missing_sentence_transformers_is_a_clear_error() -> None:
    try:
        import sentence_transformers  # type: ignore[import-not-found]  # noqa: F401
    except ImportError:
        with pytest.raises(EmbedderUnavailableError, match="pip install sentence-transformers"):
            create_embedder("cl-nagoya/ruri-v3-310m").embed_query("x")
    else:  # pragma: no cover - only where the optional package is present
        pytest.skip("sentence-transformers is installed")


class _Endpoint:
    """A real tiny /v1/embeddings server on loopback; can fail the first N requests."""

    def __init__(self, fail_first: int = 0, status: int = 500) -> None:
        self.requests: list[dict[str, Any]] = []
        self.fail_left = fail_first
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                endpoint.requests.append(
                    {"path": self.path, "body": body, "auth": self.headers.get("Authorization")}
                )
                if endpoint.fail_left > 0:
                    endpoint.fail_left -= 1
                    self.send_response(status)
                    self.end_headers()
                    return
                data = [
                    {"index": i, "embedding": [float(len(text)), 1.0, float(i)]}
                    for i, text in enumerate(body["input"])
                ]
                payload = json.dumps({"data": list(reversed(data)), "model": body["model"]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def endpoint() -> Iterator[_Endpoint]:
    server = _Endpoint(fail_first=1)
    yield server
    server.close()


def test_openai_batches_orders_by_index_and_retries(endpoint: _Endpoint) -> None:
    embedder = OpenAIEmbedder("nomic", endpoint.url, api_key="sekret", batch_size=2, backoff=0.0)
    vectors = embedder.embed_documents(["a", "bb", "ccc", "dddd", "e"])
    assert vectors.shape == (5, 3)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    lengths = vectors[:, 0] / vectors[:, 1]
    assert np.allclose(lengths, [1, 2, 3, 4, 1])  # rows in input order although the server reversed them
    bodies = [r["body"]["input"] for r in endpoint.requests]
    assert bodies == [["a", "bb"], ["a", "bb"], ["ccc", "dddd"], ["e"]]  # first one failed with 500, retried
    assert {r["path"] for r in endpoint.requests} == {"/v1/embeddings"}
    assert endpoint.requests[0]["auth"] == "Bearer sekret"
    assert embedder.name == "openai:nomic" and embedder.dimension == 3


def test_openai_client_error_is_not_retried() -> None:
    server = _Endpoint(fail_first=5, status=400)
    try:
        embedder = OpenAIEmbedder("m", server.url, backoff=0.0)
        with pytest.raises(EmbedderUnavailableError, match="refused the request: HTTP 400"):
            embedder.embed_query("x")
        assert len(server.requests) == 1
    finally:
        server.close()


def test_openai_unreachable_is_a_clear_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    embedder = create_embedder(f"openai:m@http://127.0.0.1:{port}/v1")
    assert isinstance(embedder, OpenAIEmbedder)
    embedder.backoff = 0.0
    with pytest.raises(
        EmbedderUnavailableError, match=rf"cannot reach embedding endpoint http://127.0.0.1:{port}/v1"
    ):
        embedder.embed_query("x")
