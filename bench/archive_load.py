"""Archive server under a crowd: N clients x M text searches over the WebSocket, against one.

    python bench/archive_load.py                       # 200 clients x 20 searches, 20k posts
    python bench/archive_load.py --clients 50 --posts 100000

The real server (``mcpkit archive serve``) runs in a child process on a synthetic archive
(bench/archive.py's Twilog export); each client holds one connection and sends its searches one
after another, as a person or an agent does. Printed: requests per second, p50 and p99 latency,
the server's peak RSS, and the ratio of the crowd's throughput to one client's (above 1: the
server uses more than one core for a crowd; the report measured 0.70x at 200 clients, p99 3.9 s).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from websockets.asyncio.client import connect

sys.path.insert(0, str(Path(__file__).resolve().parent))
from archive import write_export  # the synthetic corpus of the main bench
from mcpkit.archive.importers import import_csv
from mcpkit.archive.store import Store

TERMS = ["the", "今日", "rain", "コード", "tea", "python", "猫", "night", "http", "bug"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def _client(url: str, searches: int, seed: int, latencies: list[float]) -> None:
    rng = random.Random(seed)
    async with connect(url, max_size=None, compression=None, open_timeout=120) as ws:
        for i in range(searches):
            request = {
                "jsonrpc": "2.0",
                "id": i,
                "method": "search_posts_by_text",
                "params": {"search_term": rng.choice(TERMS), "limit": 50},
            }
            start = time.perf_counter()
            await ws.send(json.dumps(request, ensure_ascii=False))
            answer = json.loads(await ws.recv())
            latencies.append(time.perf_counter() - start)
            if "error" in answer:
                raise RuntimeError(f"the server answered {answer['error']}")


async def _round(url: str, clients: int, searches: int) -> dict[str, float]:
    latencies: list[float] = []
    start = time.perf_counter()
    await asyncio.gather(*(_client(url, searches, seed, latencies) for seed in range(clients)))
    elapsed = time.perf_counter() - start
    latencies.sort()

    def pct(q: float) -> float:
        return latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1000

    return {
        "clients": clients,
        "requests": len(latencies),
        "seconds": elapsed,
        "req_per_s": len(latencies) / elapsed,
        "p50_ms": pct(0.50),
        "p99_ms": pct(0.99),
    }


def run(posts: int, clients: int, searches: int, workdir: Path) -> dict[str, Any]:
    db = workdir / "load.db"
    if not db.exists():
        csv_path = workdir / "posts.csv"
        write_export(csv_path, posts)
        store = Store(db)
        try:
            import_csv(csv_path, store)
        finally:
            store.close()
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "mcpkit.archive.cli", "serve", "--port", str(port), "--db", str(db)],
        stderr=subprocess.PIPE,
        env={**os.environ, "MCPKIT_LOG": "warning"},
    )
    url = f"ws://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:  # ready when it accepts a connection
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the server did not start") from None
                time.sleep(0.05)
        one = asyncio.run(_round(url, 1, searches * 2))  # also warms the server up
        one = asyncio.run(_round(url, 1, searches * 2))
        crowd = asyncio.run(_round(url, clients, searches))
        rss = _peak_rss_mib(server.pid)
    finally:
        server.terminate()
        server.wait(timeout=30)
    return {
        "posts": posts,
        "cores": len(os.sched_getaffinity(0)),
        "one": one,
        "crowd": crowd,
        "ratio": crowd["req_per_s"] / one["req_per_s"],
        "server_peak_rss_mib": rss,
    }


def render(report: dict[str, Any]) -> str:
    one, crowd = report["one"], report["crowd"]
    lines = [
        f"archive server load: {report['posts']:,} posts, text search (limit 50), {report['cores']} cores",
        f"  1 client x {one['requests']}: {one['req_per_s']:.0f} req/s, p50 {one['p50_ms']:.1f} ms, "
        f"p99 {one['p99_ms']:.1f} ms",
        f"  {crowd['clients']} clients x {crowd['requests'] // crowd['clients']}: {crowd['req_per_s']:.0f} req/s, "
        f"p50 {crowd['p50_ms']:.1f} ms, p99 {crowd['p99_ms']:.1f} ms",
        f"  crowd / one client: {report['ratio']:.2f}x; server peak RSS {report['server_peak_rss_mib']:.0f} MiB",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--posts", type=int, default=20_000)
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--searches", type=int, default=20, help="per client")
    parser.add_argument("--workdir", type=Path, default=None, help="keep (and reuse) the archive here")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.workdir is not None:
        args.workdir.mkdir(parents=True, exist_ok=True)
        report = run(args.posts, args.clients, args.searches, args.workdir)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            report = run(args.posts, args.clients, args.searches, Path(tmp))
    print(json.dumps(report, indent=2) if args.json else render(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
