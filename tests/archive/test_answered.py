"""Every request on every face of the archive gets exactly one answer with a valid code,
whatever its bytes, and the server keeps serving: the WebSocket JSON-RPC server, the MCP server
over stdio and over streamable HTTP.

The property tests send arbitrary bytes, JSON values (lone surrogates included, as JSON's
``\\ud800`` escapes carry them), request-shaped objects and deep nesting, each followed by a
probe request; the expected number of answers comes from what the message is (a notification
or a response gets none, everything else one).
"""

from __future__ import annotations

import http.client
import json
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mcp_types
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from websockets.sync.client import ClientConnection, connect

from mcpkit.archive.importers import import_csv
from mcpkit.archive.rpc.protocol import Request, parse_message
from mcpkit.archive.store import Store
from tests.archive.helpers import row, write_csv
from tests.support.archive_thread import ThreadServer
from tests.support.raw_stdio import REPO, RawStdioClient

STANDARD_CODES = {-32700, -32600, -32601, -32602, -32603}


def valid_code(code: Any) -> bool:
    """A JSON-RPC 2.0 code: a standard one, or the range reserved for server errors."""
    return isinstance(code, int) and (code in STANDARD_CODES or -32099 <= code <= -32000)


# -- what is sent --------------------------------------------------------------------------------

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(codec=None), max_size=12),  # lone surrogates included
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)
request_like = st.fixed_dictionaries(
    {"jsonrpc": st.sampled_from(["2.0", "2.0", "1.0"])},
    optional={
        "id": st.one_of(st.integers(), st.text(st.characters(codec=None), max_size=5), st.none()),
        "method": st.one_of(
            st.sampled_from(["get_status", "search_posts_by_text", "tools/call", "ping", "tools/list"]),
            st.text(st.characters(codec=None), max_size=8),
        ),
        "params": json_values,
    },
)
junk = st.one_of(
    st.binary(max_size=200),
    json_values.map(lambda v: json.dumps(v).encode()),
    request_like.map(lambda v: json.dumps(v).encode()),
    st.integers(1, 3000).map(lambda n: b"[" * n + b"]" * n),
    st.integers(1, 3000).map(
        lambda n: b'{"jsonrpc":"2.0","id":5,"method":"ping","params":' + b'{"a":' * n + b"1" + b"}" * n + b"}"
    ),
)

SURROGATE_QUERY = (
    b'{"jsonrpc":"2.0","id":3,"method":"search_posts_by_text","params":{"search_term":"a\\ud800b"}}'
)


@pytest.fixture(scope="module")
def archive_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("answered")
    store = Store(folder / "a.db")
    try:
        rows = [row(i, "ann", f"post number {i} about tea and rain") for i in range(1, 60)]
        import_csv(write_csv(folder / "a.csv", rows), store)
    finally:
        store.close()
    return folder / "a.db"


# -- WebSocket -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ws_server(archive_db: Path) -> Iterator[ThreadServer]:
    server = ThreadServer(archive_db)
    yield server
    server.close()


def ws_expected_answers(message: bytes) -> int:
    """One answer per message, except a notification or a batch of nothing but notifications."""
    incoming = parse_message(message)
    answerable = [i for i in incoming.items if not (isinstance(i, Request) and i.notification)]
    return 1 if answerable else 0


def ws_send(ws: ClientConnection, message: bytes) -> None:
    try:
        ws.send(message.decode())  # a text frame when it is UTF-8
    except UnicodeDecodeError:
        ws.send(message)  # else a binary frame


def answers_until_probe(receive: Any, probe_id: str, want_others: int) -> list[dict[str, Any]]:
    """Messages received up to the probe's answer, and after it until ``want_others`` came."""
    others: list[dict[str, Any]] = []
    probed = False
    while not probed or len(others) < want_others:
        message = receive()
        if isinstance(message, dict) and message.get("id") == probe_id:
            probed = True
            assert "result" in message, message
        else:
            others.append(message)
    return others


def check_answer(answer: Any) -> None:
    items = answer if isinstance(answer, list) else [answer]
    for item in items:
        assert item["jsonrpc"] == "2.0"
        assert ("result" in item) != ("error" in item), item
        if "error" in item:
            assert valid_code(item["error"]["code"]), item
            assert "\n" not in item["error"]["message"] and "Traceback" not in item["error"]["message"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(message=junk)
def test_websocket_answers_every_message_once(ws_server: ThreadServer, message: bytes) -> None:
    with connect(ws_server.url, max_size=None) as ws:
        ws_send(ws, message)
        ws.send(json.dumps({"jsonrpc": "2.0", "id": "probe", "method": "get_status"}))
        others = answers_until_probe(
            lambda: json.loads(ws.recv(timeout=60)), "probe", ws_expected_answers(message)
        )
        assert len(others) == ws_expected_answers(message), (message[:200], others)
        for answer in others:
            check_answer(answer)


def test_websocket_lone_surrogates(ws_server: ThreadServer) -> None:
    """In the id and the method the connection used to drop; in a query the answer was -32603
    leaking ``UnicodeEncodeError``."""
    with connect(ws_server.url) as ws:
        ws.send('{"jsonrpc":"2.0","id":"a\\ud800","method":"get_status"}')
        raw = ws.recv(timeout=60)
        assert isinstance(raw, str) and "\\ud800" in raw  # sent back escaped, as it came
        assert json.loads(raw)["id"] == "a\ud800" and "result" in json.loads(raw)
        ws.send('{"jsonrpc":"2.0","id":2,"method":"get_\\udfffstatus"}')
        assert json.loads(ws.recv(timeout=60))["error"]["code"] == -32601
        ws.send(SURROGATE_QUERY.decode())
        answer = json.loads(ws.recv(timeout=60))
        assert answer["id"] == 3
        assert answer["error"] == {
            "code": -32602,
            "message": "Invalid params: search_term is not Unicode text (it holds a lone surrogate)",
        }
        ws.send(json.dumps({"jsonrpc": "2.0", "id": 4, "method": "get_status"}))
        assert "result" in json.loads(ws.recv(timeout=60))


# -- MCP over stdio -------------------------------------------------------------------------------


def mcp_expected_answers(message: bytes) -> int:
    """The SDK answers a request; a notification, a response or a blank line gets nothing; every
    line the SDK cannot take gets one error."""
    if not message.strip(b" \t\r\n"):
        return 0
    try:
        parsed = mcp_types.jsonrpc_message_adapter.validate_json(message, by_name=False)
    except ValueError:
        return 1
    return 1 if isinstance(parsed, mcp_types.JSONRPCRequest) else 0


@pytest.fixture(scope="module")
def stdio_server(archive_db: Path) -> Iterator[RawStdioClient]:
    client = RawStdioClient([sys.executable, "-m", "mcpkit.archive.cli", "mcp", "--db", str(archive_db)])
    client.initialize()
    yield client
    assert client.close() == 0
    assert "Traceback" not in client.stderr


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(message=junk)
def test_mcp_stdio_answers_every_line_once(stdio_server: RawStdioClient, message: bytes) -> None:
    line = message.replace(b"\n", b" ").replace(b"\r", b" ")
    assert stdio_server.proc.stdin is not None
    stdio_server.proc.stdin.write(line + b"\n")
    stdio_server.send({"jsonrpc": "2.0", "id": "probe", "method": "ping"})
    want = mcp_expected_answers(line)
    others = answers_until_probe(stdio_server.receive, "probe", want)
    assert len(others) == want, (line[:200], others)
    for answer in others:
        check_answer(answer)


@pytest.mark.slow
def test_mcp_stdio_named_cases(stdio_server: RawStdioClient) -> None:
    """The lines the SDK dropped: invalid JSON, a lone surrogate, depth-1000 nesting."""
    assert stdio_server.proc.stdin is not None
    cases = [
        (b"{not json", None, -32700),
        (SURROGATE_QUERY, 3, -32700),  # its id is readable: the client's call ends at once
        (b"[" * 1000 + b"]" * 1000, None, -32700),
        (b'{"jsonrpc":"2.0","id":9,"method":"ping","params":[]}', 9, -32602),
        (b'{"jsonrpc":"2.0","id":10}', 10, -32600),
    ]
    for line, request_id, code in cases:
        stdio_server.proc.stdin.write(line + b"\n")
        stdio_server.proc.stdin.flush()
        answer = stdio_server.receive()
        assert answer["id"] == request_id and answer["error"]["code"] == code, answer
    assert "result" in stdio_server.request("ping")


# -- MCP over streamable HTTP ------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


class Answer:
    def __init__(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.status_code = status
        self.headers = headers
        self.content = body

    def json(self) -> Any:
        return json.loads(self.content)


def http_post(port: int, body: bytes, headers: dict[str, str]) -> Answer:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        connection.request("POST", "/mcp", body=body, headers=headers)
        response = connection.getresponse()
        return Answer(response.status, {k.lower(): v for k, v in response.getheaders()}, response.read())
    finally:
        connection.close()


class HttpFace:
    def __init__(self, port: int, session: str) -> None:
        self.port = port
        self.headers = {**HEADERS, "Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}

    def post(self, body: bytes) -> Answer:
        return http_post(self.port, body, self.headers)


def _one_json_answer(response: Answer) -> Any:
    """The answer in a JSON body or in the SSE stream the SDK may answer with."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        # SSE lines end at CR or LF only (splitlines would also split at U+0085 in the data)
        lines = re.split(r"\r\n|\r|\n", response.content.decode())
        data = [d for d in (line[5:].strip() for line in lines if line.startswith("data:")) if d]
        assert len(data) == 1, response.content
        return json.loads(data[0])
    return response.json()


@pytest.fixture(scope="module")
def http_server(archive_db: Path) -> Iterator[HttpFace]:
    port = free_port()
    argv = [sys.executable, "-m", "mcpkit.archive.cli", "mcp", "--db", str(archive_db)]
    argv += ["--transport", "http", "--port", str(port)]
    proc = subprocess.Popen(argv, cwd=REPO, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
                assert time.monotonic() < deadline, "the HTTP server did not start"
                time.sleep(0.05)
        init = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "answered-test", "version": "0"},
            },
        }
        first = http_post(port, json.dumps(init).encode(), HEADERS)
        face = HttpFace(port, first.headers["mcp-session-id"])
        face.post(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode())
        yield face
    finally:
        proc.send_signal(2)
        assert proc.wait(timeout=30) == 0
        err = proc.stderr.read().decode() if proc.stderr else ""
        assert "Traceback" not in err, err[-3000:]


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(message=junk)
def test_mcp_http_answers_every_body_once(http_server: HttpFace, message: bytes) -> None:
    response = http_server.post(message)
    want = mcp_expected_answers(message)
    if want == 0 and response.status_code == 202:
        assert not response.content  # a notification or response: accepted, nothing to answer
    else:
        answer = _one_json_answer(response)
        check_answer(answer)
        if "error" in answer and response.status_code >= 400:
            assert answer["error"]["code"] in STANDARD_CODES
    probe = http_server.post(json.dumps({"jsonrpc": "2.0", "id": "probe", "method": "ping"}).encode())
    assert _one_json_answer(probe) == {"jsonrpc": "2.0", "id": "probe", "result": {}}


@pytest.mark.slow
def test_mcp_http_invalid_request_is_one_line_32600(http_server: HttpFace) -> None:
    """The SDK answered -32602 with a many-line pydantic dump."""
    answer = http_server.post(b'{"jsonrpc":"2.0","id":4}').json()
    assert answer == {
        "jsonrpc": "2.0",
        "id": 4,
        "error": {"code": -32600, "message": "Invalid Request: missing method"},
    }
    answer = http_server.post(b"[1, 2]").json()
    assert answer["id"] is None and answer["error"]["code"] == -32600
