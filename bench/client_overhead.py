"""Client overhead: mcpkit ``Session.call`` vs the SDK's bare ``ClientSession.call_tool``.

Both talk to the same echo server (tests/fixtures/servers/sdk_echo.py): over stdio (one
process each) and over streamable HTTP (one server process, both clients on its URL),
sequentially and with 32 calls in flight, in one run. Prints calls/s and the ratio
mcpkit/bare (goal: >= 0.95): the median over ``--rounds`` paired rounds (ABBA order, so
neither client always runs on the warmer machine) of calls/s and of the per-pair ratio.
Short by default; ``--calls 1000 --rounds 10`` for a careful run.

    .venv/bin/python bench/client_overhead.py [--transport stdio|http|both]
"""

from __future__ import annotations

import argparse
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from mcpkit.client import SessionOptions, connect

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


async def compare(
    bare_call: Call, our_call: Call, total: int, rounds: int, prefix: str
) -> dict[str, dict[str, float]]:
    """Paired rounds of both clients, sequential and 32-concurrent; medians and ratio."""
    results: dict[str, dict[str, float]] = {}
    for label, conc in (("sequential", 1), ("32-concurrent", 32)):
        calls = total if conc == 1 else total * 2
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
        results[f"{prefix} {label}"] = {
            "bare": statistics.median(bare_rates),
            "mcpkit": statistics.median(our_rates),
            "ratio": statistics.median(ratios),
        }
    return results


async def stdio_pair(total: int, rounds: int) -> dict[str, dict[str, float]]:
    params = StdioServerParameters(command=sys.executable, args=[str(SERVER)])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as bare:
        await bare.initialize()
        async with connect([sys.executable, str(SERVER)], SessionOptions(timeout=60)) as ours:

            async def bare_call() -> object:
                return await bare.call_tool("echo", ARGS)

            async def our_call() -> object:
                return await ours.call("echo", ARGS)

            return await compare(bare_call, our_call, total, rounds, "stdio")


async def http_pair(total: int, rounds: int) -> dict[str, dict[str, float]]:
    """One HTTP server; the bare SDK client and mcpkit each hold a session on it."""
    port = _free_port()
    proc = subprocess.Popen([sys.executable, str(SERVER), "--http", str(port)], stderr=subprocess.DEVNULL)
    try:
        await _wait_port(port)
        url = f"http://127.0.0.1:{port}/mcp"
        async with streamable_http_client(url) as (read, write), ClientSession(read, write) as bare:
            await bare.initialize()
            async with connect(url, SessionOptions(timeout=60)) as ours:

                async def bare_call() -> object:
                    return await bare.call_tool("echo", ARGS)

                async def our_call() -> object:
                    return await ours.call("echo", ARGS)

                return await compare(bare_call, our_call, total, rounds, "http")
    finally:
        proc.terminate()
        proc.wait(10)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def _wait_port(port: int) -> None:
    for _ in range(600):
        try:
            stream = await anyio.connect_tcp("127.0.0.1", port)
        except OSError:
            await anyio.sleep(0.05)
            continue
        await stream.aclose()
        return
    raise RuntimeError("the HTTP echo server did not start")


async def main(total: int, rounds: int, transports: list[str]) -> None:
    results: dict[str, dict[str, float]] = {}
    if "stdio" in transports:
        results |= await stdio_pair(total, rounds)
    if "http" in transports:
        # HTTP round trips cost ~2x stdio's; fewer calls keep the run short.
        results |= await http_pair(max(total // 2, 32), rounds)
    print(f"{'mode':<20}{'bare SDK calls/s':>18}{'mcpkit calls/s':>18}{'ratio':>8}")
    for label, r in results.items():
        print(f"{label:<20}{r['bare']:>18.0f}{r['mcpkit']:>18.0f}{r['ratio']:>8.2f}")
    worst = min(r["ratio"] for r in results.values())
    print(
        f"goal >= 0.95 of bare throughput: {'met' if worst >= 0.95 else 'NOT met'} (worst ratio {worst:.2f})"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=640, help="calls per sequential round (x2 concurrent)")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--transport", choices=["stdio", "http", "both"], default="both")
    a = parser.parse_args()
    anyio.run(main, a.calls, a.rounds, ["stdio", "http"] if a.transport == "both" else [a.transport])
