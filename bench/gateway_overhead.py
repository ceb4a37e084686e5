"""Gateway overhead: calls through ``mcpkit gateway`` vs direct to the same server, and start-up.

1. Latency, stdio: the same client (``mcpkit.client.Session``) calls ``echo`` on the SDK echo
   server (bench/gateway_echo_server.py) directly, and through a gateway child whose one
   downstream is that server. Goal: gateway p50 <= 1.2x direct p50. Beside it, the floor:
   the same calls through a bare Python relay (bench/gateway_relay_floor.py: no SDK, no
   checks), the least any Python gateway can add.
2. Latency, HTTP: the echo server on streamable HTTP; the client calls it directly, and
   through a gateway on stateless HTTP whose downstream is that URL. Same goal. Beside it,
   the HTTP floor: the same calls through a bare uvicorn + httpx2 relay
   (bench/gateway_http_relay_floor.py), one more HTTP server and client and nothing else.
3. The gateway's own work per call, in-process (``--parts own``): ``CallPipeline.call`` against the
   echo server over stdio, minus the time spent in the downstream request itself (routing,
   argument translation, result validation; no transport in front).
4. Spawn-to-ready with 5 downstreams (mcp-server-time, mcp-server-fetch, server-everything,
   mcpkit's archive on the sample data, the echo server): time from spawning the gateway to
   its ``initialize`` answer (the gateway answers once every downstream has), against each
   downstream's own spawn-to-initialize. Goal: <= the slowest downstream's own + 300 ms.
   Five Python and node start-ups at once need more CPU than a 2-core machine has, so the
   same is also measured against the five spawned at once without a gateway, and for the
   gateway with only the echo server (where cores are spare, as on a workstation).
5. Beside mcp-proxy (``--parts proxy``), the most-used Python MCP proxy on PyPI, installed by
   scripts/third-party.sh in a venv of its own (.third-party/mcp-proxy, pinned in
   third_party/mcp-proxy.txt). mcp-proxy bridges one transport to the other, so each of its two
   modes is set beside the gateway doing the same bridge, on the same echo server and the same
   calls: HTTP in front of the stdio echo server (mcp-proxy's server mode, ``--port``) and stdio
   in front of the echo server on HTTP (its client mode, ``--transport streamablehttp URL``).
   Each round measures direct, gateway and mcp-proxy in turn (the order reversed every other
   round); the ratios are per round, then the median.
6. Tracing (``--parts tracing``, issue 38): the stdio gateway with tracing off (no
   ``OTEL_EXPORTER_OTLP_ENDPOINT``) and on (exporting to a collector in this process that
   accepts and drops everything), side by side in one run; with ``--base DIR`` (a checkout
   of the code before, e.g. ``git worktree add DIR HEAD~3`` or ``git archive``), also that
   code's gateway, so "off" is measured against it in the same rounds (goal: within 5%).

Latency rounds are paired (ABBA order, so neither side always runs on the warmer machine);
each figure is the median over rounds. Run from the repository root:

    .venv/bin/python bench/gateway_overhead.py                 # short
    .venv/bin/python bench/gateway_overhead.py --calls 500 --rounds 6
    .venv/bin/python bench/gateway_overhead.py --parts proxy      # beside mcp-proxy only
    .venv/bin/python bench/gateway_overhead.py --parts tracing --base /tmp/base
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import AsyncExitStack, contextmanager
from pathlib import Path
from typing import Any

import anyio

from mcpkit.client import ServerConfig, Session, SessionOptions

ROOT = Path(__file__).resolve().parents[1]
ECHO = ROOT / "bench" / "gateway_echo_server.py"
FLOOR = ROOT / "bench" / "gateway_relay_floor.py"
HTTP_FLOOR = ROOT / "bench" / "gateway_http_relay_floor.py"
THIRD = ROOT / ".third-party"
MCP_PROXY = THIRD / "mcp-proxy" / "bin" / "mcp-proxy"
SAMPLE = ROOT / "src" / "mcpkit" / "archive" / "data" / "sample_twilog.csv"
ARGS: dict[str, Any] = {"text": "hello"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_port(port: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.02)
    raise RuntimeError(f"nothing listens on port {port}")


@contextmanager
def child(argv: list[str], port: int | None = None) -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        if port is not None:
            wait_port(port)
        yield proc
    finally:
        proc.terminate()
        proc.wait(30)


def gateway_argv(config: Path, *flags: str) -> list[str]:
    return [sys.executable, "-m", "mcpkit", "gateway", "--config", str(config), *flags]


def write_config(path: Path, servers: dict[str, Any]) -> Path:
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return path


async def latencies(session: Session, calls: int, work_ms: float = 0) -> list[float]:
    out = []
    args = {**ARGS, "work_ms": work_ms}
    tool = "echo" if "echo" in {t["name"] for t in await session.list_tools()} else "echo_echo"
    for _ in range(calls):
        started = time.perf_counter()
        await session.request("tools/call", {"name": tool, "arguments": args})
        out.append(time.perf_counter() - started)
    return out


async def paired(
    direct: ServerConfig, through: ServerConfig, calls: int, rounds: int, work_ms: float
) -> dict[str, float]:
    """Median over rounds of each side's p50 (ms) and of the per-round ratio."""
    p50s: dict[str, list[float]] = {"direct": [], "gateway": []}
    ratios = []
    async with (
        Session(direct, SessionOptions(timeout=60)) as d,
        Session(through, SessionOptions(timeout=60, connect_timeout=120)) as g,
    ):
        await latencies(d, 20)
        await latencies(g, 20)  # warm both
        for r in range(rounds):
            order = [("direct", d), ("gateway", g)]
            if r % 2:
                order.reverse()
            got = {}
            for name, session in order:
                got[name] = statistics.median(await latencies(session, calls, work_ms)) * 1000
                p50s[name].append(got[name])
            ratios.append(got["gateway"] / got["direct"])
    return {
        "direct_p50_ms": statistics.median(p50s["direct"]),
        "gateway_p50_ms": statistics.median(p50s["gateway"]),
        "ratio": statistics.median(ratios),
    }


async def bench_stdio(tmp: Path, calls: int, rounds: int, work_ms: float) -> dict[str, float]:
    config = write_config(tmp / "stdio.json", {"echo": {"command": sys.executable, "args": [str(ECHO)]}})
    direct = ServerConfig(name="echo", command=[sys.executable, str(ECHO)])
    through = ServerConfig(name="gateway", command=gateway_argv(config))
    got = await paired(direct, through, calls, rounds, work_ms)
    floor = ServerConfig(name="floor", command=[sys.executable, str(FLOOR), sys.executable, str(ECHO)])
    bare = await paired(direct, floor, calls, rounds, work_ms)
    return {**got, "floor_p50_ms": bare["gateway_p50_ms"], "floor_ratio": bare["ratio"]}


async def bench_http(tmp: Path, calls: int, rounds: int, work_ms: float) -> dict[str, float]:
    echo_port, gw_port, floor_port = free_port(), free_port(), free_port()
    url = f"http://127.0.0.1:{echo_port}/mcp"
    config = write_config(tmp / "http.json", {"echo": {"url": url, "type": "http"}})
    with (
        child([sys.executable, str(ECHO), "--http", str(echo_port)], echo_port),
        child(gateway_argv(config, "--transport", "http", "--port", str(gw_port)), gw_port),
        child([sys.executable, str(HTTP_FLOOR), str(floor_port), url], floor_port),
    ):
        direct = ServerConfig(name="echo", url=url, transport="http")
        through = ServerConfig(name="gateway", url=f"http://127.0.0.1:{gw_port}/mcp", transport="http")
        got = await paired(direct, through, calls, rounds, work_ms)
        floor = ServerConfig(name="floor", url=f"http://127.0.0.1:{floor_port}/mcp", transport="http")
        bare = await paired(direct, floor, calls, rounds, work_ms)
        return {**got, "floor_p50_ms": bare["gateway_p50_ms"], "floor_ratio": bare["ratio"]}


async def side_by_side(
    configs: dict[str, ServerConfig], calls: int, rounds: int, work_ms: float
) -> list[dict[str, float]]:
    """Each round's p50 (ms) per side, the sides measured in turn (the order reversed every other round)."""
    out: list[dict[str, float]] = []
    async with AsyncExitStack() as stack:
        sessions = {
            name: await stack.enter_async_context(
                Session(config, SessionOptions(timeout=60, connect_timeout=120))
            )
            for name, config in configs.items()
        }
        for session in sessions.values():
            await latencies(session, 20)  # warm every side
        for r in range(rounds):
            order = list(sessions.items())
            if r % 2:
                order.reverse()
            out.append(
                {
                    name: statistics.median(await latencies(session, calls, work_ms)) * 1000
                    for name, session in order
                }
            )
    return out


def over_rounds(rounds: list[dict[str, float]], side: str, base: str | None = None) -> float:
    """The median over rounds of ``side``'s p50, or of its per-round ratio to ``base``'s."""
    return statistics.median(r[side] / r[base] if base else r[side] for r in rounds)


async def bench_proxy(
    tmp: Path, calls: int, rounds: int, work_ms: float
) -> dict[str, list[dict[str, float]]]:
    """The gateway and mcp-proxy bridging the same echo server, in each of mcp-proxy's two modes."""
    if not MCP_PROXY.exists():
        raise SystemExit(f"{MCP_PROXY} is missing: run bash scripts/third-party.sh")
    out: dict[str, list[dict[str, float]]] = {}
    # HTTP in front of the stdio echo server.
    echo_port, gw_port, proxy_port = free_port(), free_port(), free_port()
    config = write_config(
        tmp / "proxy-stdio.json", {"echo": {"command": sys.executable, "args": [str(ECHO)]}}
    )
    proxy = [str(MCP_PROXY), "--log-level", "WARNING", "--host", "127.0.0.1", "--port", str(proxy_port)]
    proxy += [sys.executable, str(ECHO)]
    with (
        child([sys.executable, str(ECHO), "--http", str(echo_port)], echo_port),
        child(gateway_argv(config, "--transport", "http", "--port", str(gw_port)), gw_port),
        child(proxy, proxy_port),
    ):
        out["HTTP in front of stdio"] = await side_by_side(
            {
                "direct": ServerConfig(
                    name="echo", url=f"http://127.0.0.1:{echo_port}/mcp", transport="http"
                ),
                "gateway": ServerConfig(
                    name="gateway", url=f"http://127.0.0.1:{gw_port}/mcp", transport="http"
                ),
                "mcp-proxy": ServerConfig(
                    name="mcp-proxy", url=f"http://127.0.0.1:{proxy_port}/mcp", transport="http"
                ),
            },
            calls,
            rounds,
            work_ms,
        )
    # stdio in front of the echo server on HTTP.
    echo_port = free_port()
    url = f"http://127.0.0.1:{echo_port}/mcp"
    config = write_config(tmp / "proxy-http.json", {"echo": {"url": url, "type": "http"}})
    with child([sys.executable, str(ECHO), "--http", str(echo_port)], echo_port):
        out["stdio in front of HTTP"] = await side_by_side(
            {
                "direct": ServerConfig(name="echo", url=url, transport="http"),
                "gateway": ServerConfig(name="gateway", command=gateway_argv(config)),
                "mcp-proxy": ServerConfig(
                    name="mcp-proxy", command=[str(MCP_PROXY), "--transport", "streamablehttp", url]
                ),
            },
            calls,
            rounds,
            work_ms,
        )
    return out


@contextmanager
def null_collector() -> Iterator[str]:
    """An OTLP/HTTP endpoint that answers 200 to everything and keeps nothing."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Drop(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Drop)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


async def bench_tracing(
    tmp: Path, calls: int, rounds: int, work_ms: float, base: Path | None
) -> list[dict[str, float]]:
    """The stdio gateway traced and not (and the code in ``base``), the same echo server."""
    config = write_config(tmp / "tracing.json", {"echo": {"command": sys.executable, "args": [str(ECHO)]}})
    with null_collector() as endpoint:
        sides = {
            "direct": ServerConfig(name="echo", command=[sys.executable, str(ECHO)]),
            "off": ServerConfig(name="off", command=gateway_argv(config)),
            "on": ServerConfig(
                name="on",
                command=gateway_argv(config),
                env={"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint},
            ),
        }
        if base is not None:
            env = {"PYTHONPATH": str(base / "src")}
            sides["base"] = ServerConfig(name="base", command=gateway_argv(config), env=env)
        return await side_by_side(sides, calls, rounds, work_ms)


INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"},
    },
}


def spawn_to_initialize(argv: list[str], started: float | None = None) -> float:
    """Seconds from spawning ``argv`` (or from ``started``) to its ``initialize`` answer on stdout."""
    started = time.perf_counter() if started is None else started
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write((json.dumps(INIT) + "\n").encode())
        proc.stdin.flush()
        while True:
            line = proc.stdout.readline()
            if not line:
                raise RuntimeError(f"{argv[0]} exited before answering initialize")
            if b'"id":1' in line.replace(b" ", b""):
                return time.perf_counter() - started
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


async def _all_at_once(argvs: list[list[str]]) -> float:
    """Seconds from spawning every ``argv`` at once to the last ``initialize`` answer."""
    started = time.perf_counter()
    answered: list[float] = []

    async def one(argv: list[str]) -> None:
        proc = await anyio.open_process(argv, stderr=subprocess.DEVNULL)
        async with proc:
            assert proc.stdin is not None and proc.stdout is not None
            await proc.stdin.send((json.dumps(INIT) + "\n").encode())
            buffer = b""
            while b'"id":1' not in buffer.replace(b" ", b""):
                buffer += await proc.stdout.receive()
            answered.append(time.perf_counter() - started)
            proc.terminate()

    async with anyio.create_task_group() as tg:
        for argv in argvs:
            tg.start_soon(one, argv)
    return max(answered)


def five_downstreams(tmp: Path) -> dict[str, dict[str, Any]]:
    db = tmp / "demo.db"
    subprocess.run(
        [sys.executable, "-m", "mcpkit", "archive", "import", "--db", str(db), str(SAMPLE)],
        check=True,
        capture_output=True,
    )
    return {
        "time": {"command": str(THIRD / "venv" / "bin" / "mcp-server-time")},
        "fetch": {"command": str(THIRD / "venv" / "bin" / "mcp-server-fetch")},
        "everything": {
            "command": str(THIRD / "node" / "node_modules" / ".bin" / "mcp-server-everything"),
            "args": ["stdio"],
        },
        "archive": {"command": sys.executable, "args": ["-m", "mcpkit", "archive", "mcp", "--db", str(db)]},
        "echo": {"command": sys.executable, "args": [str(ECHO)]},
    }


def bench_startup(tmp: Path, rounds: int) -> dict[str, Any]:
    servers = five_downstreams(tmp)
    config = write_config(tmp / "five.json", servers)
    own: dict[str, list[float]] = {name: [] for name in servers}
    gateway: list[float] = []
    for _ in range(rounds):
        for name, entry in servers.items():
            own[name].append(spawn_to_initialize([entry["command"], *entry.get("args", [])]))
        gateway.append(spawn_to_initialize(gateway_argv(config)))
    one = write_config(tmp / "one.json", {"echo": servers["echo"]})
    gateway_one = [spawn_to_initialize(gateway_argv(one)) for _ in range(rounds)]
    argvs = [[e["command"], *e.get("args", [])] for e in servers.values()]
    together = [anyio.run(_all_at_once, argvs) for _ in range(rounds)]
    own_ms = {name: statistics.median(v) * 1000 for name, v in own.items()}
    slowest = max(own_ms, key=lambda n: own_ms[n])
    gw = statistics.median(gateway) * 1000
    all_ms = statistics.median(together) * 1000
    return {
        "own_ms": own_ms,
        "slowest": slowest,
        "gateway_ms": gw,
        "over_slowest_ms": gw - own_ms[slowest],
        "together_ms": all_ms,
        "over_together_ms": gw - all_ms,
        "gateway_one_ms": statistics.median(gateway_one) * 1000,
        "over_echo_ms": statistics.median(gateway_one) * 1000 - own_ms["echo"],
    }


async def own_work(tmp: Path, calls: int) -> tuple[float, float]:
    """p50 of (the gateway's own time per call, the downstream request's), in microseconds."""
    from mcpkit.gateway import Gateway, load_gateway_config

    config = write_config(tmp / "own.json", {"echo": {"command": sys.executable, "args": [str(ECHO)]}})
    gateway = Gateway(load_gateway_config(config))
    async with anyio.create_task_group() as tg:
        await gateway.start(tg)
        view = await gateway.routing.view_async(gateway.profiles_for_query("claude-code", None))
        downstream = gateway.downstreams["echo"]
        inner: list[float] = []
        request = downstream.request

        async def timed(*args: Any, **kwargs: Any) -> dict[str, Any]:
            started = time.perf_counter()
            try:
                return await request(*args, **kwargs)
            finally:
                inner.append(time.perf_counter() - started)

        downstream.request = timed  # type: ignore[method-assign]
        total: list[float] = []
        for _ in range(calls):
            started = time.perf_counter()
            await gateway.pipeline.call(view, "echo_echo", dict(ARGS))
            total.append(time.perf_counter() - started)
        gateway.stop()
        tg.cancel_scope.cancel()
    own = [t - i for t, i in zip(total, inner, strict=True)]
    return statistics.median(own) * 1e6, statistics.median(inner) * 1e6


async def main(
    calls: int, rounds: int, startup_rounds: int, parts: set[str], works: list[float], base: Path | None
) -> None:
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        if "tracing" in parts:
            for work_ms in works:
                got = await bench_tracing(tmp, calls, rounds, work_ms, base)
                line = (
                    f"tracing, tool work {work_ms:g} ms: direct p50 {over_rounds(got, 'direct'):.2f} ms, "
                    f"gateway off {over_rounds(got, 'off'):.2f} ms, on {over_rounds(got, 'on'):.2f} ms; "
                    f"on / off {over_rounds(got, 'on', 'off'):.3f}"
                )
                if base is not None:
                    line += f"; off / base {over_rounds(got, 'off', 'base'):.3f} (goal <= 1.05)"
                print(line)
        for part, run in (("stdio", bench_stdio), ("http", bench_http)):
            for work_ms in works:
                if part in parts:
                    got = await run(tmp, calls, rounds, work_ms)
                    print(
                        f"{part + ',':<6} tool work {work_ms:g} ms: direct p50 {got['direct_p50_ms']:.2f} ms, "
                        f"gateway p50 {got['gateway_p50_ms']:.2f} ms, ratio {got['ratio']:.2f} (goal <= 1.2)"
                    )
                    if "floor_ratio" in got:
                        print(
                            f"{'':<6} bare Python relay (the floor) p50 {got['floor_p50_ms']:.2f} ms, "
                            f"ratio {got['floor_ratio']:.2f}"
                        )
        if "proxy" in parts:
            for work_ms in works:
                for bridge, measured in (await bench_proxy(tmp, calls, rounds, work_ms)).items():
                    print(
                        f"{bridge}, tool work {work_ms:g} ms: direct p50 {over_rounds(measured, 'direct'):.2f} ms, "
                        f"gateway {over_rounds(measured, 'gateway'):.2f} ms (x{over_rounds(measured, 'gateway', 'direct'):.2f}), "
                        f"mcp-proxy {over_rounds(measured, 'mcp-proxy'):.2f} ms "
                        f"(x{over_rounds(measured, 'mcp-proxy', 'direct'):.2f}); "
                        f"gateway / mcp-proxy {over_rounds(measured, 'gateway', 'mcp-proxy'):.2f}"
                    )
        if "own" in parts:
            own, inner = await own_work(tmp, calls * rounds)
            print(
                f"gateway's own work per call p50 {own:.1f} us (the downstream request itself {inner:.1f} us)"
            )
        if "startup" not in parts:
            return
        start = await anyio.to_thread.run_sync(bench_startup, tmp, startup_rounds)
        alone = ", ".join(f"{k} {v:.0f}" for k, v in sorted(start["own_ms"].items(), key=lambda kv: kv[1]))
        print(f"spawn to initialize, each alone (ms): {alone}")
        print(
            f"spawn to ready, gateway with all 5: {start['gateway_ms']:.0f} ms = slowest ({start['slowest']}) "
            f"+ {start['over_slowest_ms']:.0f} ms (goal <= +300 ms)"
        )
        print(
            f"all 5 spawned at once without a gateway, until the last answered: {start['together_ms']:.0f} ms; "
            f"the gateway adds {start['over_together_ms']:.0f} ms to that"
        )
        print(
            f"spawn to ready, gateway with the echo server only: {start['gateway_one_ms']:.0f} ms = "
            f"echo alone + {start['over_echo_ms']:.0f} ms (goal <= +300 ms)"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200, help="calls per side per round")
    parser.add_argument("--rounds", type=int, default=4, help="paired latency rounds")
    parser.add_argument("--startup-rounds", type=int, default=3, help="start-up measurements per side")
    parser.add_argument(
        "--parts", default="stdio,http,proxy,own,startup", help="which measurements, comma-separated"
    )
    parser.add_argument("--work-ms", default="0,10", help="tool work per call in ms, comma-separated")
    parser.add_argument("--base", type=Path, help="a checkout of the code before, for --parts tracing")
    opts = parser.parse_args()
    os.environ.setdefault("MCPKIT_LOG", "warning")
    works = [float(w) for w in opts.work_ms.split(",")]
    parts = set(opts.parts.split(","))
    anyio.run(main, opts.calls, opts.rounds, opts.startup_rounds, parts, works, opts.base)
