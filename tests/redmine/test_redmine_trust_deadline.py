"""REDMINE_TIMEOUT is one deadline per request: connect, headers and body together.

A server that sent its headers and then one byte a second kept ``get_issue`` waiting for
minutes with ``REDMINE_TIMEOUT=5``: the HTTP client's timeouts are per phase (each read may
take that long), so a slow drip never tripped them. The server here is a real socket server
in a thread doing exactly that; the test waits on events, never on the clock.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator

import anyio
import pytest

from mcpkit.redmine.api import RedmineClient, RedmineError
from mcpkit.redmine.config import RedmineConfig

pytestmark = pytest.mark.anyio

KEY = "0123456789abcdef0123456789abcdef01234567"
USER = json.dumps({"user": {"id": 1, "login": "admin", "admin": True}}).encode()


class DripServer:
    """Answers ``/users/current.json`` at once and every other request with headers, then a byte a tick.

    ``closed`` is set when the client hangs up on the drip (the send fails), which is how the
    test knows the client gave up by itself rather than the drip running out.
    """

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.closed = threading.Event()
        self.stop = threading.Event()
        self.dripped = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            request = b""
            while b"\r\n\r\n" not in request:
                chunk = conn.recv(4096)
                if not chunk:
                    return
                request += chunk
            if b"/users/current.json" in request.split(b"\r\n", 1)[0]:
                conn.sendall(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n"
                    + f"Content-Length: {len(USER)}\r\n\r\n".encode()
                    + USER
                )
                return
            conn.sendall(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"
            )
            # One byte a tick for as long as the client keeps reading (the stop event is the tick:
            # it is never set while the test waits, so wait() paces the drip without a clock assertion).
            try:
                while not self.stop.wait(0.2):
                    conn.sendall(b" ")
                    self.dripped += 1
            except OSError:
                self.closed.set()

    def close(self) -> None:
        self.stop.set()
        self.sock.close()


@pytest.fixture
def drip() -> Iterator[DripServer]:
    server = DripServer()
    yield server
    server.close()


async def test_a_server_that_drips_its_body_is_cut_at_the_deadline(drip: DripServer) -> None:
    config = RedmineConfig(url=f"http://127.0.0.1:{drip.port}", api_key=KEY, timeout=1.0)
    client = RedmineClient(config)
    try:
        # The outer guard only keeps a broken build from hanging the run; the client must end first.
        with anyio.fail_after(120):
            with pytest.raises(RedmineError) as caught:
                await client.get("issues/1.json", what="issue 1")
    finally:
        await client.aclose()
    message = str(caught.value)
    assert "did not finish answering issue 1 within 1 s" in message
    assert "REDMINE_TIMEOUT" in message and "\n" not in message
    # The client hung up on the drip: the server's next send failed.
    with anyio.fail_after(30):
        while not drip.closed.is_set():
            await anyio.sleep(0.05)
