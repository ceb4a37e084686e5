"""Enrichment pipeline overhead: ``archive enrich`` against an endpoint that answers at once.

The endpoint is the tests' fake of a hosted LLM API (tests/archive/fake_llm.py) in its own
process, so the model costs nothing and what is measured is the pipeline: planning, the
``openai`` client, retries bookkeeping, JSON parsing and the SQLite commits. Side by side in
one run (alternating rounds):

* baseline: the same ``openai`` client sending the same requests the same way (its generic
  ``post``) at the same concurrency and doing nothing with the answers: what the endpoint and
  the HTTP client alone allow;
* pipeline: ``plan_enrichment`` + ``enrich`` on a fresh archive of the same posts.

Prints posts/s of both (wall clock, and per CPU second of this process: what one free core
sustains, which a loaded machine does not change) and their ratios; the goal is >= 500
posts/s at concurrency 32.

    python bench/enrich.py [--posts 3000] [--concurrency 32] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx2
import openai

from mcpkit.archive.enrich import EnrichClient, enrich, plan_enrichment
from mcpkit.archive.enrich.prompt import RESPONSE_FORMAT, messages_for
from mcpkit.archive.importers import import_csv
from mcpkit.archive.store import Store

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tests.archive.fake_llm import MODEL  # noqa: E402
from tests.archive.helpers import row, write_csv  # noqa: E402


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _texts(n: int) -> list[str]:
    words = ["猫", "コーヒー", "python", "東京", "雨", "本", "sqlite", "散歩"]
    return [f"{words[i % 8]}と{words[(i * 3) % 8]}の話 その{i} " + "とても" * (i % 5) for i in range(n)]


async def _baseline(url: str, texts: list[str], concurrency: int) -> tuple[float, float]:
    client = openai.AsyncOpenAI(base_url=url, api_key="no-key", max_retries=0)
    queue = list(texts)
    start, cpu = time.perf_counter(), time.process_time()

    async def worker() -> None:
        while queue:
            text = queue.pop()
            body = {
                "model": MODEL,
                "messages": messages_for(text),
                "response_format": RESPONSE_FORMAT,
                "temperature": 0,
            }
            (await client.post("/chat/completions", cast_to=httpx2.Response, body=body)).json()

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    elapsed, used = time.perf_counter() - start, time.process_time() - cpu
    await client.close()
    return len(texts) / elapsed, len(texts) / used


async def _pipeline(
    url: str, texts: list[str], concurrency: int, tmp: Path, index: int
) -> tuple[float, float]:
    store = Store(tmp / f"bench{index}.db")
    import_csv(write_csv(tmp / f"bench{index}.csv", [row(i + 1, "u", t) for i, t in enumerate(texts)]), store)
    client = EnrichClient(url, MODEL)
    start, cpu = time.perf_counter(), time.process_time()
    summary = await enrich(store, client, plan_enrichment(store), concurrency=concurrency)
    elapsed, used = time.perf_counter() - start, time.process_time() - cpu
    await client.aclose()
    assert summary.enriched == len(texts) and summary.failed == 0, summary.as_dict()
    store.close()
    return len(texts) / elapsed, len(texts) / used


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--posts", type=int, default=3000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    port = _free_port()
    server = subprocess.Popen([sys.executable, "-m", "tests.archive.fake_llm", "--port", str(port)], cwd=ROOT)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        texts = _texts(args.posts)
        asyncio.run(_baseline(url, texts[:200], args.concurrency))  # warm up both sides
        base: list[tuple[float, float]] = []
        pipe: list[tuple[float, float]] = []
        with tempfile.TemporaryDirectory() as tmp:
            for index in range(args.rounds):
                base.append(asyncio.run(_baseline(url, texts, args.concurrency)))
                pipe.append(asyncio.run(_pipeline(url, texts, args.concurrency, Path(tmp), index)))
    finally:
        server.terminate()
        server.wait(timeout=10)
    b, p = statistics.median(r[0] for r in base), statistics.median(r[0] for r in pipe)
    bc, pc = statistics.median(r[1] for r in base), statistics.median(r[1] for r in pipe)
    print(f"posts {args.posts}, concurrency {args.concurrency}, rounds {args.rounds} (medians)")
    print(f"  baseline (openai client alone): {b:8.1f} posts/s  {bc:8.1f} posts per CPU second")
    print(f"  enrich pipeline:                {p:8.1f} posts/s  {pc:8.1f} posts per CPU second")
    print(f"  ratio pipeline/baseline: {p / b:.2f} (wall), {pc / bc:.2f} (CPU); goal >= 500 posts/s")
    print("  (posts per CPU second: what the pipeline sustains on one free core, whatever the load)")


if __name__ == "__main__":
    main()
