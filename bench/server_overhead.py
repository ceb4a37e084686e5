"""How much does build_server cost over the bare SDK server? Measured side by side.

Both servers expose the same echo tool over real stdio; the same SDK client drives both
in one run, alternating rounds so machine noise hits both alike. Prints calls/s, p50 and
p99 latency, sequential and 32-concurrent, spawn-to-initialize time, and the ratios.

    python bench/server_overhead.py [--calls 2000] [--rounds 3] [--spawns 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

HERE = Path(__file__).resolve().parent
SERVERS = {"bare SDK": HERE / "bare_echo_server.py", "mcpkit": HERE / "mcpkit_echo_server.py"}


def _params(script: Path) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=[str(script)])


async def _spawn_to_initialize(script: Path) -> float:
    start = time.perf_counter()
    async with stdio_client(_params(script)) as (r, w), ClientSession(r, w) as session:
        await session.initialize()
        elapsed = time.perf_counter() - start
    return elapsed


async def _calls(script: Path, calls: int, concurrency: int) -> tuple[float, list[float]]:
    latencies: list[float] = []
    async with stdio_client(_params(script)) as (r, w), ClientSession(r, w) as session:
        await session.initialize()
        await session.list_tools()
        for _ in range(50):  # warm-up
            await session.call_tool("echo", {"text": "warm"})

        async def worker(n: int) -> None:
            for _ in range(n):
                t0 = time.perf_counter()
                await session.call_tool("echo", {"text": "hello"})
                latencies.append(time.perf_counter() - t0)

        start = time.perf_counter()
        async with anyio.create_task_group() as tg:
            per = calls // concurrency
            for _ in range(concurrency):
                tg.start_soon(worker, per)
        elapsed = time.perf_counter() - start
    return len(latencies) / elapsed, latencies


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


async def main(opts: argparse.Namespace) -> None:
    results: dict[tuple[str, int], dict[str, list[float]]] = {}
    for _ in range(opts.rounds):
        for concurrency in (1, 32):
            for name, script in SERVERS.items():
                rate, lat = await _calls(script, opts.calls, concurrency)
                slot = results.setdefault((name, concurrency), {"rate": [], "lat": []})
                slot["rate"].append(rate)
                slot["lat"].extend(lat)
    spawn: dict[str, list[float]] = {name: [] for name in SERVERS}
    for _ in range(opts.spawns):
        for name, script in SERVERS.items():
            spawn[name].append(await _spawn_to_initialize(script))

    print(
        f"echo over real stdio, {opts.calls} calls x {opts.rounds} rounds (Python {sys.version.split()[0]})"
    )
    print(f"{'server':10} {'mode':8} {'calls/s':>9} {'p50 ms':>8} {'p99 ms':>8}")
    summary: dict[str, Any] = {}
    for (name, conc), data in sorted(results.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        rate = statistics.median(data["rate"])
        p50, p99 = _pct(data["lat"], 0.5), _pct(data["lat"], 0.99)
        summary[(name, conc)] = (rate, p50, p99)
        mode = "seq" if conc == 1 else f"{conc}-conc"
        print(f"{name:10} {mode:8} {rate:9.0f} {p50:8.2f} {p99:8.2f}")
    for conc in (1, 32):
        bare, kit = summary[("bare SDK", conc)], summary[("mcpkit", conc)]
        mode = "sequential" if conc == 1 else f"{conc}-concurrent"
        print(
            f"ratio mcpkit/bare {mode}: throughput {kit[0] / bare[0]:.3f}, "
            f"p50 latency {kit[1] / bare[1]:.3f}, p99 latency {kit[2] / bare[2]:.3f}  (goal: latency <= 1.10)"
        )
    b, k = statistics.median(spawn["bare SDK"]) * 1000, statistics.median(spawn["mcpkit"]) * 1000
    print(
        f"spawn to initialize (median of {opts.spawns}): bare {b:.0f} ms, mcpkit {k:.0f} ms, "
        f"difference {k - b:+.0f} ms (goal: <= +100 ms)"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--spawns", type=int, default=5)
    anyio.run(main, parser.parse_args())
