"""Client overhead: mcpkit ``Session.call`` vs the SDK's bare ``ClientSession.call_tool``.

Both talk to the same stdio echo server (tests/fixtures/servers/sdk_echo.py, one process
each), sequentially and with 32 calls in flight, in one run. Prints calls/s and the ratio
mcpkit/bare (goal: >= 0.95): the median over ``--rounds`` paired rounds (ABBA order, so
neither client always runs on the warmer machine) of calls/s and of the per-pair ratio.
Short by default; ``--calls 1000 --rounds 10`` for a careful run.

    .venv/bin/python bench/client_overhead.py
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from mcpkit.client import connect

SERVER = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "servers" / "sdk_echo.py"
ARGS = {"text": "hello"}

Call = Callable[[], Awaitable[object]]


async def throughput(call: Call, total: int, concurrency: int) -> float:
    """Calls per second for ``total`` calls with ``concurrency`` in flight."""
    per_worker = total // concurrency

    async def worker() -> None:
        for _ in range(per_worker):
            await call()

    started = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for _ in range(concurrency):
            tg.start_soon(worker)
    return per_worker * concurrency / (time.perf_counter() - started)


async def main(total: int, rounds: int) -> None:
    params = StdioServerParameters(command=sys.executable, args=[str(SERVER)])
    results: dict[str, dict[str, float]] = {}
    async with stdio_client(params) as (read, write), ClientSession(read, write) as bare:
        await bare.initialize()
        async with connect([sys.executable, str(SERVER)], timeout=60) as ours:

            async def bare_call() -> object:
                return await bare.call_tool("echo", ARGS)

            async def our_call() -> object:
                return await ours.call("echo", ARGS)

            for label, conc in (("sequential", 1), ("32-concurrent", 32)):
                calls = total if conc == 1 else total * 2
                # Alternate the two clients round by round so machine noise hits both alike.
                for call in (bare_call, our_call):
                    for _ in range(20):  # warm-up: imports, caches, the SDK's implicit tools/list
                        await call()
                # Paired rounds in ABBA order: whichever client runs second in a round gets a
                # warmer machine, so alternate who goes first and compare each pair.
                bare_rates: list[float] = []
                our_rates: list[float] = []
                for r in range(rounds):
                    order = (bare_call, our_call) if r % 2 == 0 else (our_call, bare_call)
                    for call in order:
                        rate = await throughput(call, calls, conc)
                        (bare_rates if call is bare_call else our_rates).append(rate)
                ratios = [o / b for o, b in zip(our_rates, bare_rates, strict=True)]
                results[label] = {
                    "bare": statistics.median(bare_rates),
                    "mcpkit": statistics.median(our_rates),
                    "ratio": statistics.median(ratios),
                }
    print(f"{'mode':<15}{'bare SDK calls/s':>18}{'mcpkit calls/s':>18}{'ratio':>8}")
    for label, r in results.items():
        print(f"{label:<15}{r['bare']:>18.0f}{r['mcpkit']:>18.0f}{r['ratio']:>8.2f}")
    worst = min(r["ratio"] for r in results.values())
    print(
        f"goal >= 0.95 of bare throughput: {'met' if worst >= 0.95 else 'NOT met'} (worst ratio {worst:.2f})"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=640, help="calls per sequential round (x2 concurrent)")
    parser.add_argument("--rounds", type=int, default=8)
    a = parser.parse_args()
    anyio.run(main, a.calls, a.rounds)
