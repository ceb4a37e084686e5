"""The REST client: error mapping to one actionable line, the key check, the key never leaking.

Status codes Redmine rarely produces on demand (412, 5xx) come from a stand-in transport;
connection refused and timeouts use real local sockets.
"""

from __future__ import annotations

import contextlib
import logging
import shutil
import socket
import ssl
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx2
import pytest

from mcpkit.redmine.api import KeyRefusedError, RedmineClient, RedmineError
from mcpkit.redmine.config import RedmineConfig

KEY = "abcdef0123456789abcdef0123456789abcdef01"


def config(url: str = "http://redmine.invalid", timeout: float = 5.0) -> RedmineConfig:
    return RedmineConfig(url=url, api_key=KEY, timeout=timeout)


def client_answering(status: int, body: bytes = b"", headers: dict[str, str] | None = None) -> RedmineClient:
    def answer(request: httpx2.Request) -> httpx2.Response:
        assert request.headers["X-Redmine-API-Key"] == KEY
        if request.url.path == "/users/current.json":
            return httpx2.Response(200, json={"user": {"id": 1, "login": "a"}})
        return httpx2.Response(status, content=body, headers=headers or {"content-type": "application/json"})

    return RedmineClient(config(), transport=httpx2.MockTransport(answer))


async def fail(client: RedmineClient) -> str:
    with pytest.raises(RedmineError) as info:
        await client.get("issues/42.json", what="issue 42")
    return str(info.value)


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        (401, b"", "REDMINE_API_KEY"),
        (403, b"", "administrator"),
        (404, b"", "no issue 42"),
        (412, b"", "412"),
        (
            422,
            b'{"errors":["Subject cannot be blank","Tracker is invalid"]}',
            "Subject cannot be blank; Tracker",
        ),
        (500, b"<html>boom</html>", "retry later"),
        (503, b"", "HTTP 503"),
        (302, b"", "redirects are not followed"),
    ],
)
def test_status_codes_map_to_one_actionable_line(status: int, body: bytes, expected: str) -> None:
    message = anyio.run(fail, client_answering(status, body, {"location": "https://elsewhere/"}))
    assert expected in message
    assert "\n" not in message and KEY not in message


def test_refused_key_fails_every_call_until_accepted() -> None:
    state = {"accept": False, "calls": 0}

    def answer(request: httpx2.Request) -> httpx2.Response:
        if request.url.path == "/users/current.json":
            return httpx2.Response(200 if state["accept"] else 401, json={"user": {"id": 1}})
        state["calls"] += 1
        return httpx2.Response(200, json={"issues": []})  # what an anonymous user would see

    client = RedmineClient(config(), transport=httpx2.MockTransport(answer))

    async def scenario() -> None:
        for _ in range(2):
            with pytest.raises(KeyRefusedError) as info:
                await client.get("issues.json", what="issues")
            assert "refused the API key" in str(info.value)
        assert state["calls"] == 0, "no data request is made with a refused key"
        state["accept"] = True
        assert await client.get("issues.json", what="issues") == {"issues": []}

    anyio.run(scenario)


def test_connection_refused_names_the_url() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    client = RedmineClient(config(f"http://127.0.0.1:{port}"))
    message = anyio.run(fail, client)
    assert f"127.0.0.1:{port}" in message and "running" in message and KEY not in message


@pytest.fixture
def silent_server() -> Iterator[int]:
    """A real socket that accepts and never answers."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join()
    for conn in held:
        conn.close()
    server.close()


def test_timeout_says_which_setting_to_raise(silent_server: int) -> None:
    client = RedmineClient(config(f"http://127.0.0.1:{silent_server}", timeout=0.3))
    message = anyio.run(fail, client)
    assert "REDMINE_TIMEOUT" in message and "0.3 s" in message


def test_key_never_logged(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    for status in (200, 401, 404, 422, 500):
        client = client_answering(status, b'{"errors":["x"]}')
        with contextlib.suppress(RedmineError):
            anyio.run(lambda c=client: c.get("issues/42.json", what="issue 42"))
    assert caplog.records, "the client logs its requests at debug level"
    assert all(KEY not in r.getMessage() for r in caplog.records)


def test_scrub_removes_the_key_from_any_message() -> None:
    client = RedmineClient(config())
    assert client._scrub(f"oops {KEY} leaked") == "oops *** leaked"


@pytest.fixture
def tls_server(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    """A real TLS socket with a self-signed certificate that answers every request with a user."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is needed to make a test certificate")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            str(key),
            "-out",
            str(cert),
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
        ],
        check=True,
        capture_output=True,
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.2)
    stop = threading.Event()
    body = b'{"user": {"id": 1, "login": "tls"}}'

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            try:
                with context.wrap_socket(conn, server_side=True) as tls:
                    tls.recv(65536)
                    tls.sendall(
                        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n"
                        + f"Content-Length: {len(body)}\r\n\r\n".encode()
                        + body
                    )
            except (OSError, ssl.SSLError):
                conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1], cert
    stop.set()
    thread.join()
    server.close()


def test_tls_failure_names_the_ca_bundle_setting_and_the_bundle_fixes_it(
    tls_server: tuple[int, Path],
) -> None:
    port, cert = tls_server
    url = f"https://127.0.0.1:{port}"
    message = anyio.run(fail, RedmineClient(config(url)))
    assert "TLS verification failed" in message and "REDMINE_CA_BUNDLE" in message
    trusted = RedmineClient(RedmineConfig(url=url, api_key=KEY, ca_bundle=cert, timeout=5))
    user = anyio.run(trusted.check_key)
    assert user["login"] == "tls"


def test_a_text_too_long_for_any_url_is_one_clear_line() -> None:
    client = client_answering(200, b'{"results": []}')

    async def search() -> str:
        with pytest.raises(RedmineError) as info:
            await client.get("search.json", what="the search", params={"q": "x" * 5_000_000})
        return str(info.value)

    message = anyio.run(search)
    assert "too long for a URL" in message and "5000002 characters" in message and "\n" not in message


def test_a_redirect_inside_redmine_is_followed_and_one_elsewhere_is_a_config_error() -> None:
    """A renamed wiki page's old title answers 302 to the new title without ``.json``: followed,
    with ``.json`` put back. A redirect to another origin or outside the base path is not
    followed (the key would go with it) and names REDMINE_URL."""
    seen: list[str] = []

    def answer(request: httpx2.Request) -> httpx2.Response:
        seen.append(str(request.url))
        path = request.url.path
        if path == "/redmine/users/current.json":
            return httpx2.Response(200, json={"user": {"id": 1}})
        if path == "/redmine/projects/p/wiki/Old.json":
            return httpx2.Response(
                302, headers={"location": "http://redmine.test/redmine/projects/p/wiki/New"}
            )
        if path == "/redmine/projects/p/wiki/New.json":
            return httpx2.Response(200, json={"wiki_page": {"title": "New"}})
        if path == "/redmine/away.json":
            return httpx2.Response(302, headers={"location": "https://elsewhere.test/redmine/x.json"})
        if path == "/redmine/up.json":
            return httpx2.Response(302, headers={"location": "/other/x.json"})
        return httpx2.Response(404)

    client = RedmineClient(config("http://redmine.test/redmine"), transport=httpx2.MockTransport(answer))

    async def scenario() -> None:
        page = await client.get("projects/p/wiki/Old.json", what="wiki page Old")
        assert page == {"wiki_page": {"title": "New"}}
        for path in ("away.json", "up.json"):
            with pytest.raises(RedmineError) as info:
                await client.get(path, what="it")
            assert "REDMINE_URL" in str(info.value) and "\n" not in str(info.value)
        with pytest.raises(RedmineError) as write:
            await client.put("projects/p/wiki/Old.json", what="wiki page Old", json={})
        assert "not followed for a write" in str(write.value)

    anyio.run(scenario)
    assert not any("elsewhere" in url or "/other/" in url for url in seen), "the key went nowhere else"
