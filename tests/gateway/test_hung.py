"""Deadline-driven health through a real gateway child: a server that hangs on one call.

The downstream (tests/gateway/fixtures/hanging_server.py, an mcpkit.server toolkit server)
blocks its whole event loop in ``hang``: it is alive, its stdin pipe still takes what it is
sent (about 64 KiB), and it answers nothing. After that one call, a trickle of calls follows,
one at a time, each ending at its own deadline. The gateway must see that the server's calls
keep passing their deadlines with nothing answered, say "hung" in its log, restart the stdio
server (reconnect a URL), and answer the later calls. Before deadline-driven health every
later call timed out for as long as the handler ran (an hour), with no "hung" in the log.

Nothing waits a fixed time: each step is a call bounded by the gateway's ``call_timeout``,
and the number of calls that may fail on the way is bounded (``TRICKLE``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpkit.client import ServerConfig, Session, SessionOptions
from tests.client.procs import free_port
from tests.gateway.support import HERE, gateway_argv, gateway_session, wait_port, write_config

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

HANGING = HERE / "fixtures" / "hanging_server.py"
CALL_TIMEOUT = 3.0
TRICKLE = 10
"""Calls after the hanging one that may fail before one is answered again. The hung server
is declared within one call timeout of the first miss, so two or three fail while it is
restarted (more on a loaded machine, where starting Python takes seconds); without the
health check every one of them timed out."""

GUARD = 60.0
"""Seconds within which a reconnected URL must answer (a hang detector only)."""

Call = Callable[[str], Awaitable[dict[str, Any]]]


def text(raw: dict[str, Any]) -> str:
    return "\n".join(str(c.get("text")) for c in raw.get("content", []))


def gateway_settings(**more: Any) -> dict[str, Any]:
    return {"call_timeout": CALL_TIMEOUT, "restart": {"backoff": 0.1}, **more}


async def hang_then_trickle(call: Call, log: Callable[[], str]) -> tuple[str, str]:
    """Call ``hang`` once, then ``pid`` one call after another until one is answered; the
    pids before and after."""
    before = await call("slow_pid")
    assert not before.get("isError"), text(before)
    hung = await call("slow_hang")
    assert hung.get("isError") is True, text(hung)
    failures: list[str] = []
    while True:
        after = await call("slow_pid")
        if not after.get("isError"):
            break
        failures.append(text(after))
        assert len(failures) <= TRICKLE, (failures, log())
    assert "hung" in log(), log()
    return text(before), text(after)


async def test_a_stdio_server_hung_on_one_call_is_restarted_behind_the_stdio_front(tmp_path: Path) -> None:
    config = write_config(
        tmp_path / "gw.json",
        {"slow": {"command": sys.executable, "args": [str(HANGING)]}},
        gateway_settings(),
    )
    async with gateway_session(config) as session:

        async def call(name: str) -> dict[str, Any]:
            return await session.request("tools/call", {"name": name, "arguments": {}})

        before, after = await hang_then_trickle(call, lambda: "\n".join(session.stderr_tail()))
    assert before != after  # a new process answers


@contextmanager
def http_gateway(config: Path, log: Path) -> Iterator[str]:
    """A gateway child on HTTP for ``config``, its log in ``log``: its URL until the end."""
    port = free_port()
    with log.open("wb") as err:
        proc = subprocess.Popen(
            gateway_argv(config, "--transport", "http", "--port", str(port)),
            env={**os.environ, "MCPKIT_LOG": "warning"},
            stdin=subprocess.DEVNULL,
            stderr=err,
        )
    try:
        wait_port(port)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(30)


def http_client(url: str) -> Session:
    return Session(ServerConfig(name="gateway", url=url), SessionOptions(timeout=60, raise_on_error=False))


async def test_a_stdio_server_hung_on_one_call_is_restarted_behind_the_http_front(tmp_path: Path) -> None:
    config = write_config(
        tmp_path / "gw.json",
        {"slow": {"command": sys.executable, "args": [str(HANGING)]}},
        gateway_settings(),
    )
    log = tmp_path / "gateway.log"
    with http_gateway(config, log) as url:
        async with http_client(url) as session:

            async def call(name: str) -> dict[str, Any]:
                return await session.request("tools/call", {"name": name, "arguments": {}})

            before, after = await hang_then_trickle(call, lambda: log.read_text("utf-8", "replace"))
    assert before != after


async def test_a_hung_url_server_is_reconnected(tmp_path: Path) -> None:
    """The same over HTTP to the downstream: the gateway says the URL is hung and reconnects;
    once a working server listens there again, calls are answered by it."""
    port = free_port()
    config = write_config(
        tmp_path / "gw.json",
        {"slow": {"url": f"http://127.0.0.1:{port}/mcp", "type": "http"}},
        {**gateway_settings(connect_timeout=CALL_TIMEOUT), "restart": {"backoff": 0.1, "max_backoff": 1}},
    )

    def start() -> subprocess.Popen[bytes]:
        proc = subprocess.Popen([sys.executable, str(HANGING), "http", str(port)], stderr=subprocess.DEVNULL)
        wait_port(port)
        return proc

    server = start()
    try:
        async with gateway_session(config) as session:

            async def call(name: str) -> dict[str, Any]:
                return await session.request("tools/call", {"name": name, "arguments": {}})

            def log() -> str:
                return "\n".join(session.stderr_tail())

            before = await call("slow_pid")
            assert text(before) == str(server.pid)
            assert (await call("slow_hang")).get("isError") is True
            for _ in range(TRICKLE):  # the hung server answers nothing: calls fail at their deadlines
                if "hung" in log():
                    break
                assert (await call("slow_pid")).get("isError") is True
            assert "hung" in log() and "reconnect" in log(), log()
            server.kill()
            server.wait(10)
            server = start()
            with anyio.fail_after(GUARD):  # a reconnection attempt finds it (backoff at most 1 s)
                while True:
                    after = await call("slow_pid")
                    if not after.get("isError"):
                        break
                    await anyio.sleep(0.2)  # calls fail at once while the URL counts as unhealthy
            assert text(after) == str(server.pid), log()
    finally:
        server.kill()
        server.wait(10)
