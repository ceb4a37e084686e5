"""OpenAI-compatible ``/v1/embeddings`` endpoints (Ollama, TEI, vLLM, ...), stdlib HTTP only.

Batched requests, retries with backoff on connection errors, 429 and 5xx, and one clear error
naming the URL when the endpoint cannot be reached. The URL and API key are given (the CLI
reads ``$MCPKIT_EMBED_URL`` and ``$MCPKIT_EMBED_API_KEY``); the key never appears in messages.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Any

import numpy as np

from mcpkit.archive.embedders.base import Matrix, normalize_rows
from mcpkit.archive.errors import EmbedderUnavailableError

DEFAULT_URL = "http://127.0.0.1:11434/v1"


class OpenAIEmbedder:
    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        *,
        api_key: str | None = None,
        batch_size: int = 64,
        retries: int = 3,
        timeout: float = 60.0,
        backoff: float = 0.5,
    ) -> None:
        self.model = model
        self.base_url = (base_url or DEFAULT_URL).rstrip("/")
        self._api_key = api_key
        self.batch_size = batch_size
        self.retries = retries
        self.timeout = timeout
        self.backoff = backoff
        self._dimension: int | None = None

    @property
    def name(self) -> str:
        return f"openai:{self.model}"

    @property
    def dimension(self) -> int:
        if self._dimension is None:
            self._dimension = int(self._post(["dimension probe"]).shape[1])
        return self._dimension

    def embed_documents(self, texts: Sequence[str]) -> Matrix:
        parts = [
            self._post(list(texts[i : i + self.batch_size])) for i in range(0, len(texts), self.batch_size)
        ]
        if not parts:
            return np.zeros((0, self._dimension or 0), dtype=np.float32)
        return np.vstack(parts)

    def embed_query(self, text: str) -> Matrix:
        return self._post([text]).reshape(-1)

    def _post(self, texts: list[str]) -> Matrix:
        url = f"{self.base_url}/embeddings"
        body = json.dumps({"model": self.model, "input": texts}).encode()
        headers = {"Content-Type": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        last = ""
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(self.backoff * 2 ** (attempt - 1))
            request = urllib.request.Request(url, data=body, headers=headers, method="POST")
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    payload = json.loads(response.read())
            except urllib.error.HTTPError as exc:
                last = f"HTTP {exc.code} {exc.reason}"
                if exc.code == 429 or exc.code >= 500:
                    continue
                raise EmbedderUnavailableError(
                    f"embedding endpoint {url} refused the request: {last}"
                ) from exc
            except (urllib.error.URLError, OSError, TimeoutError) as exc:
                reason = getattr(exc, "reason", exc)
                last = str(reason)
                continue
            except ValueError as exc:
                raise EmbedderUnavailableError(f"embedding endpoint {url} returned invalid JSON") from exc
            return self._parse(payload, len(texts), url)
        raise EmbedderUnavailableError(
            f"cannot reach embedding endpoint {url} after {self.retries + 1} attempts: {last} "
            "(is the server running? set MCPKIT_EMBED_URL)"
        )

    def _parse(self, payload: Any, expected: int, url: str) -> Matrix:
        try:
            items = sorted(payload["data"], key=lambda item: item.get("index", 0))
            rows = [item["embedding"] for item in items]
        except (KeyError, TypeError, AttributeError) as exc:
            raise EmbedderUnavailableError(
                f"embedding endpoint {url} answered without data[].embedding"
            ) from exc
        if len(rows) != expected:
            raise EmbedderUnavailableError(
                f"embedding endpoint {url} returned {len(rows)} vectors for {expected}"
            )
        matrix = normalize_rows(rows)
        self._dimension = int(matrix.shape[1])
        return matrix
