"""What does a Redmine tool call cost over the raw REST call it makes? Measured side by side.

The same reads (one issue with get_issue's default includes; a page of 25 issues) as raw REST
calls on a kept-alive httpx2 client (the HTTP client the server itself uses) and as tool calls
over real stdio to ``mcpkit redmine mcp``, interleaved in rounds so machine noise hits both
alike; medians and their ratio (goal: tool call <= 1.2x raw). A third column repeats the raw
call with ``Connection: close``, which shows a server-side stall on kept-alive connections
(WEBrick writes the header and body of an answer in two writes without TCP_NODELAY; Nagle
then waits for the client's delayed ACK, about 40 ms). Then spawn-to-initialize of the
Redmine server against the bench's bare SDK echo server (goal: <= +300 ms).

    set -a; . .redmine/env; set +a
    python bench/redmine_overhead.py [--rounds 15] [--spawns 10] [--url URL]

``--url`` points the same run at another Redmine (the Puma-served one of
``REDMINE_SERVER=puma scripts/redmine-up.sh``), so both servers' figures come from one machine.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from urllib.parse import urlsplit

import anyio
import httpx2
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

HERE = Path(__file__).resolve().parent
BARE = HERE / "bare_echo_server.py"
INCLUDES = "journals,children,relations,watchers,attachments"


def _env(url: str, key: str) -> dict[str, str]:
    return {**os.environ, "REDMINE_URL": url, "REDMINE_API_KEY": key}


def _server(url: str, key: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=["-m", "mcpkit", "redmine", "mcp"], env=_env(url, key)
    )


async def _spawn_to_initialize(params: StdioServerParameters) -> float:
    start = time.perf_counter()
    async with stdio_client(params) as (r, w), ClientSession(r, w) as session:
        await session.initialize()
        return time.perf_counter() - start


async def _timed(call: Callable[[], Awaitable[object]]) -> float:
    start = time.perf_counter()
    await call()
    return (time.perf_counter() - start) * 1000


def _raw_socket_rounds(host: str, port: int, key: str, *, quickack: bool, requests: int = 25) -> float:
    """Median of the requests after the first on one kept-alive raw socket, in ms.

    With ``quickack`` the client ACKs every segment at once (``TCP_QUICKACK`` before each read):
    if the stall disappears, it was Nagle on the server waiting for a delayed ACK.
    """
    request = (
        f"GET /issues.json?limit=1 HTTP/1.1\r\nHost: {host}:{port}\r\nX-Redmine-API-Key: {key}\r\n"
        "Accept: application/json\r\n\r\n"
    ).encode()
    times: list[float] = []
    with socket.create_connection((host, port)) as sock:
        for _ in range(requests):
            start = time.perf_counter()
            sock.sendall(request)
            data = b""
            while b"\r\n\r\n" not in data or len(data.partition(b"\r\n\r\n")[2]) < _length(data):
                if quickack:
                    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_QUICKACK, 1)
                data += sock.recv(65536)
            times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times[1:])


def _length(data: bytes) -> int:
    head = data.partition(b"\r\n\r\n")[0].decode("latin-1").lower()
    for line in head.split("\r\n"):
        name, _, value = line.partition(":")
        if name == "content-length":
            return int(value)
    return 0


def _fixture(url: str, key: str) -> tuple[str, int]:
    """A project with 30 issues, one of them with 10 notes, made for this run."""
    ident = f"bench-{uuid.uuid4().hex[:8]}"
    with httpx2.Client(base_url=url, headers={"X-Redmine-API-Key": key}) as http:
        http.post(
            "/projects.json", json={"project": {"name": "Bench", "identifier": ident}}
        ).raise_for_status()
        first = 0
        for n in range(30):
            body = {"issue": {"project_id": ident, "subject": f"Issue {n}", "description": "text " * 100}}
            made = http.post("/issues.json", json=body)
            made.raise_for_status()
            first = first or int(made.json()["issue"]["id"])
        for n in range(10):
            http.put(f"/issues/{first}.json", json={"issue": {"notes": f"note {n} " * 40}}).raise_for_status()
    return ident, first


def _drop(url: str, key: str, ident: str) -> None:
    with httpx2.Client(base_url=url, headers={"X-Redmine-API-Key": key}) as http:
        http.delete(f"/projects/{ident}.json")


async def main(opts: argparse.Namespace) -> None:
    url, key = opts.url.rstrip("/"), os.environ["REDMINE_API_KEY"]
    ident, issue = _fixture(url, key)
    reads = {
        "get issue": (f"issues/{issue}.json", {"include": INCLUDES}, "get_issue", {"id": issue}),
        "list 25 issues": (
            "issues.json",
            {"project_id": ident, "limit": 25},
            "list_issues",
            {"project": ident, "limit": 25},
        ),
    }
    times: dict[tuple[str, str], list[float]] = {}
    headers = {"X-Redmine-API-Key": key, "Accept": "application/json"}
    try:
        async with (
            httpx2.AsyncClient(base_url=url + "/", headers=headers) as raw,
            stdio_client(_server(url, key)) as (r, w),
            ClientSession(r, w) as session,
        ):
            await session.initialize()
            for _ in range(3):  # warm-up: connections, the key check, Rails caches
                for path, params, tool, args in reads.values():
                    await raw.get(path, params=params)
                    await session.call_tool(tool, args)
            for _ in range(opts.rounds):
                for name, (path, params, tool, args) in reads.items():
                    samples: dict[str, Callable[[], Awaitable[object]]] = {
                        "raw kept-alive": partial(raw.get, path, params=params),
                        "raw close": partial(raw.get, path, params=params, headers={"Connection": "close"}),
                        "tool call": partial(session.call_tool, tool, args),
                    }
                    for kind, call in samples.items():
                        times.setdefault((name, kind), []).append(await _timed(call))
        spawn: dict[str, list[float]] = {"bare SDK echo": [], "mcpkit redmine": []}
        bare = StdioServerParameters(command=sys.executable, args=[str(BARE)])
        for _ in range(opts.spawns):
            spawn["bare SDK echo"].append(await _spawn_to_initialize(bare))
            spawn["mcpkit redmine"].append(await _spawn_to_initialize(_server(url, key)))
    finally:
        _drop(url, key, ident)

    print(
        f"Redmine at {url}, {opts.rounds} interleaved rounds, medians in ms (Python {sys.version.split()[0]})"
    )
    print(f"{'read':16} {'raw kept-alive':>15} {'raw close':>10} {'tool call':>10} {'tool/raw':>9}")
    for name in reads:
        med = {
            kind: statistics.median(times[(name, kind)])
            for kind in ("raw kept-alive", "raw close", "tool call")
        }
        ratio = med["tool call"] / med["raw kept-alive"]
        print(
            f"{name:16} {med['raw kept-alive']:15.1f} {med['raw close']:10.1f} {med['tool call']:10.1f} "
            f"{ratio:9.2f}  (goal <= 1.20)"
        )
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    plain = _raw_socket_rounds(host, port, key, quickack=False)
    quick = _raw_socket_rounds(host, port, key, quickack=True)
    print(
        f"raw socket, one kept-alive connection, median after the first request: {plain:.1f} ms; "
        f"with TCP_QUICKACK on the client: {quick:.1f} ms (a gap is the server's Nagle stall)"
    )
    b, k = (statistics.median(spawn[n]) * 1000 for n in ("bare SDK echo", "mcpkit redmine"))
    print(
        f"spawn to initialize (median of {opts.spawns}): bare SDK echo {b:.0f} ms, "
        f"mcpkit redmine {k:.0f} ms, difference {k - b:+.0f} ms (goal <= +300 ms)"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default=os.environ.get("REDMINE_URL", "http://127.0.0.1:3000"))
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--spawns", type=int, default=10)
    anyio.run(main, parser.parse_args())
