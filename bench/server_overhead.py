"""How much does build_server cost over the bare SDK server? Measured side by side.

Both servers expose the same echo tool over real stdio; the same SDK client drives both
in one run, alternating rounds so machine noise hits both alike. Prints calls/s, p50 and
p99 latency, sequential and 32-concurrent, spawn-to-initialize time, and the ratios.

    python bench/server_overhead.py [--calls 2000] [--rounds 3] [--spawns 12]
    python bench/server_overhead.py --startup-only [--archive-db DB] [--redmine]

``--archive-db`` adds ``mcpkit archive mcp --db DB`` and ``--redmine`` adds ``mcpkit redmine
mcp`` (REDMINE_URL and REDMINE_API_KEY from the environment) to the start-up comparison, each
spawned in the same interleaved rounds as the bare SDK server.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

HERE = Path(__file__).resolve().parent
SERVERS = {"bare SDK": HERE / "bare_echo_server.py", "mcpkit": HERE / "mcpkit_echo_server.py"}


MCPKIT = str(Path(sys.executable).with_name("mcpkit"))


def _params(script: Path | list[str]) -> StdioServerParameters:
    if isinstance(script, list):
        return StdioServerParameters(command=script[0], args=script[1:], env=dict(os.environ))
    return StdioServerParameters(command=sys.executable, args=[str(script)])


async def _spawn_to_initialize(script: Path | list[str]) -> float:
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


def _usage_problem(opts: argparse.Namespace, environ: Mapping[str, str]) -> str | None:
    """What is missing for the servers asked for, in one line; None when all can start."""
    if opts.redmine:
        missing = [name for name in ("REDMINE_URL", "REDMINE_API_KEY") if not environ.get(name)]
        if missing:
            return (
                f"--redmine needs {' and '.join(missing)} in the environment "
                "(e.g. set -a; . .redmine/env; set +a)"
            )
    if opts.archive_db and not Path(opts.archive_db).is_file():
        return f"--archive-db {opts.archive_db}: no such file (make one with mcpkit archive import)"
    return None


async def startup(opts: argparse.Namespace) -> None:
    """Spawn-to-initialize of each server, interleaved round by round; medians and differences."""
    targets: dict[str, Path | list[str]] = dict(SERVERS)
    if opts.archive_db:
        targets["archive mcp"] = [MCPKIT, "archive", "mcp", "--db", opts.archive_db]
    if opts.redmine:
        targets["redmine mcp"] = [MCPKIT, "redmine", "mcp"]
    times: dict[str, list[float]] = {name: [] for name in targets}
    for _ in range(opts.spawns):
        for name, target in targets.items():
            times[name].append(await _spawn_to_initialize(target))
    bare = statistics.median(times["bare SDK"]) * 1000
    goals = {"mcpkit": 100, "archive mcp": 300, "redmine mcp": 300}
    print(
        f"spawn to initialize, median of {opts.spawns} interleaved rounds (Python {sys.version.split()[0]})"
    )
    for name, values in times.items():
        ms = statistics.median(values) * 1000
        goal = f"  (goal <= +{goals[name]} ms)" if name in goals else ""
        print(f"{name:12} {ms:7.0f} ms   {ms - bare:+6.0f} ms over bare{goal}")


async def main(opts: argparse.Namespace) -> None:
    if opts.startup_only:
        await startup(opts)
        return
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
    parser.add_argument("--spawns", type=int, default=12)
    parser.add_argument("--startup-only", action="store_true", help="only measure spawn to initialize")
    parser.add_argument("--archive-db", help="also start `mcpkit archive mcp --db` on this archive")
    parser.add_argument("--redmine", action="store_true", help="also start `mcpkit redmine mcp` (env)")
    options = parser.parse_args()
    problem = _usage_problem(options, os.environ)
    if problem:
        # One line and exit 2, as every mcpkit command does on a usage error: without its
        # environment the Redmine server used to die at start and this script ended in a
        # 40-line traceback from inside the SDK's stdio client.
        print(f"server_overhead.py: {problem}", file=sys.stderr)
        raise SystemExit(2)
    anyio.run(main, options)
