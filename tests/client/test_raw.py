"""Raw requests beside the SDK session (``Session.send_raw``): the same contract as ``request``.

Each behaviour is checked against a real stdio child (the gateway's flaky fixture server) and,
where it has one, against what ``Session.request`` does for the same request.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpkit.client import (
    CallError,
    CallTimeoutError,
    JsonRpcError,
    ServerConfig,
    ServerExitedError,
    Session,
    SessionOptions,
)
from mcpkit.client._raw import RAW_ID_BASE, RAW_ID_SPAN, RawAnswer, RawRequests, has_lone_surrogate
from tests.gateway.support import FLAKY

pytestmark = pytest.mark.anyio

SERVER = ServerConfig(name="flaky", command=[sys.executable, str(FLAKY)])


class Answers:
    """Collects the answers of raw requests and lets a test wait for them."""

    def __init__(self) -> None:
        self.got: dict[str, RawAnswer] = {}
        self._arrived = anyio.Event()

    def handler(self, key: str) -> Any:
        def answer(value: RawAnswer) -> None:
            assert key not in self.got, f"{key} answered twice"
            self.got[key] = value
            self._arrived.set()
            self._arrived = anyio.Event()

        return answer

    async def wait(self, *keys: str, timeout: float = 10) -> None:
        with anyio.fail_after(timeout):
            while not all(k in self.got for k in keys):
                await self._arrived.wait()


async def stats(session: Session) -> dict[str, int]:
    result = await session.request("tools/call", {"name": "stats", "arguments": {}})
    parsed: dict[str, int] = json.loads(result["content"][0]["text"])
    return parsed


async def test_a_raw_call_gets_the_result_the_session_gets() -> None:
    answers = Answers()
    params = {"name": "echo", "arguments": {"text": 'héllo \n"quoted"'}}
    async with Session(SERVER, SessionOptions(timeout=10)) as session:
        rid = session.send_raw("tools/call", params, answers.handler("raw"))
        assert rid is not None and RAW_ID_BASE <= rid < RAW_ID_BASE + RAW_ID_SPAN
        await answers.wait("raw")
        assert answers.got["raw"] == await session.request("tools/call", params)


async def test_an_error_answer_is_the_json_rpc_error_request_raises() -> None:
    answers = Answers()
    async with Session(SERVER, SessionOptions(timeout=10)) as session:
        session.send_raw("nope/nothing", {}, answers.handler("raw"))
        await answers.wait("raw")
        with pytest.raises(JsonRpcError) as direct:
            await session.request("nope/nothing", {})
    raw = answers.got["raw"]
    assert isinstance(raw, JsonRpcError)
    assert (
        (raw.code, raw.message)
        == (direct.value.code, direct.value.message)
        == (
            -32601,
            "Method not found: nope/nothing",
        )
    )


async def test_no_answer_in_time_is_a_timeout_and_the_server_is_told_to_stop() -> None:
    answers = Answers()
    async with Session(SERVER, SessionOptions(timeout=10)) as session:
        session.send_raw(
            "tools/call", {"name": "sleep", "arguments": {"seconds": 5}}, answers.handler("raw"), timeout=0.3
        )
        await answers.wait("raw")
        raw = answers.got["raw"]
        assert isinstance(raw, CallTimeoutError) and raw.timeout == 0.3
        with anyio.fail_after(60):  # a guard only: the cancellation is a notification
            while (await stats(session))["cancelled"] < 1:
                await anyio.sleep(0.05)


async def test_a_cancelled_call_is_stopped_on_the_server_and_never_answered() -> None:
    answers = Answers()
    async with Session(SERVER, SessionOptions(timeout=10)) as session:
        rid = session.send_raw(
            "tools/call", {"name": "sleep", "arguments": {"seconds": 5}}, answers.handler("raw")
        )
        assert rid is not None
        with anyio.fail_after(60):  # a guard only: until the server runs the sleep
            while (await stats(session))["active"] < 1:
                await anyio.sleep(0.01)
        assert session.cancel_raw(rid, "the client gave up")
        assert not session.cancel_raw(rid)  # only once
        with anyio.fail_after(60):  # a guard only: the cancellation is a notification
            while (await stats(session))["cancelled"] < 1:
                await anyio.sleep(0.05)
        assert answers.got == {}


async def test_a_server_that_exits_fails_every_raw_call_with_its_exit_code() -> None:
    answers = Answers()
    async with Session(SERVER, SessionOptions(timeout=10)) as session:
        session.send_raw(
            "tools/call", {"name": "sleep", "arguments": {"seconds": 5}}, answers.handler("sleep")
        )
        session.send_raw("tools/call", {"name": "crash", "arguments": {}}, answers.handler("crash"))
        await answers.wait("sleep", "crash")
        for key in ("sleep", "crash"):
            error = answers.got[key]
            assert isinstance(error, ServerExitedError) and error.exit_code == 3, error
        # nothing more is sent on the dead connection: the caller takes the session's way
        assert session.send_raw("ping", {}, answers.handler("late")) is None


async def test_raw_and_session_requests_interleave_without_crossing() -> None:
    answers = Answers()
    async with Session(SERVER, SessionOptions(timeout=30)) as session:
        direct: dict[str, Any] = {}

        async def by_session(i: int) -> None:
            direct[f"s{i}"] = await session.request(
                "tools/call", {"name": "echo", "arguments": {"text": f"s{i}"}}
            )

        async with anyio.create_task_group() as tg:
            for i in range(150):
                tg.start_soon(by_session, i)
                session.send_raw(
                    "tools/call", {"name": "echo", "arguments": {"text": f"r{i}"}}, answers.handler(f"r{i}")
                )
        await answers.wait(*(f"r{i}" for i in range(150)))
    for i in range(150):
        assert answers.got[f"r{i}"] == {"content": [{"type": "text", "text": f"r{i}"}]}
        assert direct[f"s{i}"]["content"] == [{"type": "text", "text": f"s{i}"}]


async def test_a_closed_session_sends_nothing_raw() -> None:
    answers = Answers()
    session = Session(SERVER, SessionOptions(timeout=10))
    assert session.send_raw("ping", {}, answers.handler("before")) is None
    async with session:
        pass
    assert session.send_raw("ping", {}, answers.handler("after")) is None
    assert answers.got == {}


# -- the matching rule on its own: any line, never a wrong answer -------------------------------


def _table() -> tuple[RawRequests, list[bytes]]:
    written: list[bytes] = []

    def write(data: bytes, force: bool) -> bool:
        written.append(data)
        return True

    return RawRequests("t", write), written


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=10,
)


@settings(max_examples=300, deadline=None)
@given(
    line=st.one_of(
        st.binary(max_size=200),
        json_values.map(lambda v: json.dumps(v).encode()),
        st.fixed_dictionaries(
            {"jsonrpc": st.just("2.0"), "id": st.integers() | st.text(max_size=20) | st.none()},
            optional={"result": json_values, "error": json_values, "method": st.text(max_size=10)},
        ).map(lambda v: json.dumps(v).encode()),
    )
)
def test_only_an_answer_to_a_pending_id_is_taken(line: bytes) -> None:
    """Whatever a server writes, ``take`` never raises, and answers a request only when the
    line is a response (no ``method``) carrying exactly that request's id."""

    async def run() -> None:
        table, _ = _table()
        got: list[RawAnswer] = []
        rid = table.send("tools/call", {}, got.append, None)
        assert rid == RAW_ID_BASE
        table.take(line)
        message: Any
        try:
            message = json.loads(line)
        except ValueError:
            message = None
        is_answer = isinstance(message, dict) and "method" not in message and message.get("id") == rid
        is_answer = is_answer and message.get("jsonrpc") == "2.0"
        is_answer = is_answer and type(message.get("id")) is int
        assert len(got) == (1 if is_answer else 0)
        if is_answer:
            answer = got[0]
            if isinstance(message.get("result"), dict):
                assert answer == message["result"]
            else:
                assert isinstance(answer, JsonRpcError | CallError)

    anyio.run(run)


def test_an_answer_for_our_id_is_taken_even_among_other_fields() -> None:
    async def run() -> None:
        table, written = _table()
        got: list[RawAnswer] = []
        rid = table.send("tools/call", {"name": "x"}, got.append, None)
        sent = json.loads(written[0])
        assert sent == {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {"name": "x"}}
        line = json.dumps({"result": {"content": []}, "id": rid, "jsonrpc": "2.0"}).encode()
        assert table.take(line) and got == [{"content": []}]
        assert table.take(line) and got == [{"content": []}]  # a second (late) answer is dropped
        assert not table.take(json.dumps({"jsonrpc": "2.0", "id": 3, "result": {}}).encode())

    anyio.run(run)


@given(st.text(alphabet=st.characters(codec=None, categories=None), max_size=12), st.booleans())
def test_a_lone_surrogate_escape_is_found_exactly(text: str, ascii_only: bool) -> None:
    """Whatever a server escapes (astral characters as pairs, or written raw), only a text with
    a lone surrogate is reported."""
    line = json.dumps({"text": text}, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")
    try:
        text.encode("utf-8")
        lone = False
    except UnicodeEncodeError:
        lone = True
    if not ascii_only and lone:
        return  # written raw, it is not JSON any parser reads: the SDK refuses it anyway
    if lone or "\\u" not in text:  # a literal backslash-u may look like one: a harmless extra scrub
        assert has_lone_surrogate(line) == lone
