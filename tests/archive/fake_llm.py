"""A fake of a hosted LLM API (OpenAI-compatible ``/v1/chat/completions``), for tests and bench.

This is a fake on purpose: a hosted model (or ollama with a real model) cannot run here, and
its answers would not be deterministic. It is a real HTTP server (uvicorn) speaking the real
protocol, so the ``openai`` client library, retries and concurrency are exercised for real.

Answers are derived from the post text, so tests can predict them. Markers in a post steer
the failure modes:

* ``RATE429``: the first request for that post answers 429 with ``Retry-After: 0``;
* ``FAIL500``: the first request answers 500; ``ALWAYS500``: every request does;
* ``BROKEN1``: the first answer is not JSON; ``BROKEN``: no answer ever is;
* ``LONGSUMMARY``: the summary is longer than the 30 characters asked for.

Run alone (for the benchmark): ``python -m tests.archive.fake_llm --port 8099``.
"""

from __future__ import annotations

import argparse
import json
import socket
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

MODEL = "fake-enricher"
POST_HEADER = "### 投稿\n"


def answer_for(text: str) -> dict[str, Any]:
    """The deterministic enrichment of a post text."""
    words = [w for w in text.split() if w.isalpha()]
    summary = "要約" + text[:20]
    if "LONGSUMMARY" in text:
        summary = "長い要約" * 20
    return {
        "reasoning": f"検討: {text[:60]}",
        "summary": summary,
        "tags": ["投稿", *words[:2]],
    }


class FakeLLM:
    """The fake endpoint's state: what it was asked, and how many times per post."""

    def __init__(self, model: str = MODEL) -> None:
        self.model = model
        self.requests: Counter[str] = Counter()
        self.authorizations: set[str] = set()
        self.app = Starlette(routes=[Route("/v1/chat/completions", self.complete, methods=["POST"])])

    async def complete(self, request: Request) -> Response:
        body = await request.json()
        self.authorizations.add(request.headers.get("authorization", ""))
        if body.get("model") != self.model:
            return JSONResponse({"error": {"message": f"model {body.get('model')!r} not found"}}, 404)
        if (body.get("response_format") or {}).get("type") != "json_schema":
            return JSONResponse({"error": {"message": "expected a json_schema response_format"}}, 400)
        prompt = body["messages"][-1]["content"]
        text = prompt.split(POST_HEADER, 1)[-1]
        self.requests[text] += 1
        seen = self.requests[text]
        if "RATE429" in text and seen == 1:
            return JSONResponse({"error": {"message": "slow down"}}, 429, headers={"Retry-After": "0"})
        if ("FAIL500" in text and seen == 1) or "ALWAYS500" in text:
            return JSONResponse({"error": {"message": "overloaded"}}, 500)
        if "BROKEN" in text and (seen == 1 or "BROKEN1" not in text):
            content = '{"reasoning": "cut off'
        else:
            content = json.dumps(answer_for(text), ensure_ascii=False)
        prompt_chars = sum(len(m["content"]) for m in body["messages"])
        return JSONResponse(
            {
                "id": f"chatcmpl-{seen}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": self.model,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": prompt_chars // 2,
                    "completion_tokens": len(content) // 2,
                    "total_tokens": prompt_chars // 2 + len(content) // 2,
                },
            }
        )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def running(fake: FakeLLM | None = None) -> Iterator[tuple[FakeLLM, str]]:
    """Serve a :class:`FakeLLM` on a free loopback port in a thread; yields it and its /v1 URL."""
    fake = fake or FakeLLM()
    port = _free_port()
    config = uvicorn.Config(fake.app, host="127.0.0.1", port=port, log_level="warning", access_log=False)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="fake-llm", daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the fake LLM server did not start")
        time.sleep(0.01)
    try:
        yield fake, f"http://127.0.0.1:{port}/v1"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8099)
    args = parser.parse_args()
    uvicorn.run(FakeLLM().app, host="127.0.0.1", port=args.port, log_level="warning", access_log=False)


if __name__ == "__main__":
    main()
