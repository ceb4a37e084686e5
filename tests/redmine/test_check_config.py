"""``mcpkit redmine check-config`` against addresses that are wrong in the two common ways
(issue 39 point 7): a path prefix under which no Redmine answers, and https:// to a port that
speaks plain HTTP. Real child processes against real local sockets.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

KEY = "abcdef0123456789abcdef0123456789abcdef01"


class NotFound(BaseHTTPRequestHandler):
    """A web server with no Redmine under it: 404 for every path, as a wrong prefix gets."""

    def do_GET(self) -> None:
        body = b"<html><body>Not Found</body></html>"
        self.send_response(404)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def plain_http() -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), NotFound)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def check_config(url: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("REDMINE_")}
    return subprocess.run(
        [sys.executable, "-m", "mcpkit.redmine", "check-config"],
        env={**clean, "REDMINE_URL": url, "REDMINE_API_KEY": KEY, "REDMINE_TIMEOUT": "30"},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_wrong_path_prefix_says_there_is_no_redmine_api_there(plain_http: int) -> None:
    url = f"http://127.0.0.1:{plain_http}/tracker"
    done = check_config(url)
    assert done.returncode == 1 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert f"no Redmine API at {url}" in lines[0] and "check the path prefix" in lines[0]
    assert "has no the key owner" not in lines[0] and KEY not in lines[0]


def test_https_to_a_plain_http_port_says_the_port_does_not_speak_tls(plain_http: int) -> None:
    url = f"https://127.0.0.1:{plain_http}"
    done = check_config(url)
    assert done.returncode == 1 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert f"port {plain_http} does not speak TLS" in lines[0] and "http://" in lines[0]
    assert "REDMINE_CA_BUNDLE" not in lines[0] and "verification" not in lines[0]
