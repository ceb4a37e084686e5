"""Trace context in ``_meta`` carried into logs: one trace id from the client to the server's log.

A request whose ``_meta`` carries a W3C ``traceparent`` has its trace id and span id on every
record the server writes while handling it (mcpkit.log); mcpkit's client sends one with every
request (a new span under the caller's current span, else under the session's own trace); the
gateway sends the downstream call as a child span of the request it handles, on each of its
paths (the SDK's, the stdio fast lane, the HTTP hot path). Real servers throughout: the fixture
server (tests/fixtures/servers/traced_server.py) on stdio and HTTP, the gateway as a child
process, and the log lines each server wrote.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from mcp.shared._otel import extract_trace_context
from opentelemetry import trace
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags, TraceState

from mcpkit.client import ServerConfig, Session, SessionOptions, connect
from mcpkit.client._tracecontext import RequestSpans
from mcpkit.log import _extracted, continue_trace, current_trace_ids
from mcpkit.server import build_server
from mcpkit.tools import ToolSpec
from mcpkit.tools.params import object_schema, string
from tests.client.procs import free_port
from tests.gateway.support import gateway_argv, gateway_session, wait_port, write_config

pytestmark = pytest.mark.anyio

SERVER = Path(__file__).resolve().parents[1] / "fixtures" / "servers" / "traced_server.py"
TRACE_ID = "0af7651916cd43dd8448eb211c80319c"
SPAN_ID = "b7ad6b7169203331"
LINE = re.compile(
    r" (?P<logger>\S+)(?: \[trace_id=(?P<trace>[0-9a-f]{32}) span_id=(?P<span>[0-9a-f]{16})\])?: (?P<msg>.*)"
)


@contextmanager
def caller_span(trace_id: str = TRACE_ID, span_id: str = SPAN_ID) -> Iterator[None]:
    """The caller's own current span, as an application with OpenTelemetry would have one."""
    context = SpanContext(
        int(trace_id, 16),
        int(span_id, 16),
        is_remote=False,
        trace_flags=TraceFlags(TraceFlags.SAMPLED),
        trace_state=TraceState([("vendor", "opaque")]),
    )
    with trace.use_span(NonRecordingSpan(context), end_on_exit=False):
        yield


def work_lines(log: Path, label: str) -> list[tuple[str | None, str | None]]:
    """(trace id, span id) of each record the tool wrote for the call labelled ``label``."""
    found = []
    for line in log.read_text(encoding="utf-8").splitlines():
        match = LINE.search(line)
        if match and match["msg"].startswith(f"work {label}:"):
            found.append((match["trace"], match["span"]))
    assert len(found) == 2, log.read_text(encoding="utf-8")  # the handler's and the worker thread's
    return found


def traced_server(log: Path) -> ServerConfig:
    return ServerConfig(name="traced", command=[sys.executable, str(SERVER)], env={"TRACED_LOG": str(log)})


def one_trace(lines: list[tuple[str | None, str | None]]) -> tuple[str, str]:
    """The one (trace, span) all of a call's records name."""
    assert len(set(lines)) == 1 and lines[0][0] is not None, lines
    trace_id, span_id = lines[0]
    assert trace_id is not None and span_id is not None
    return trace_id, span_id


async def test_a_stdio_server_logs_the_trace_of_each_call(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    async with Session(traced_server(log), SessionOptions(timeout=60)) as session:
        with caller_span():
            assert (await session.call("work", {"label": "mine"})).text == "done mine"
        await session.call("work", {"label": "first"})
        await session.call("work", {"label": "second"})
        # the caller's own traceparent is sent as written, a malformed one ignored by the server
        answer = await session.request(
            "tools/call",
            {"name": "work", "arguments": {"label": "garbled"}, "_meta": {"traceparent": "00-zz-yy-01"}},
        )
        assert answer["content"][0]["text"] == "done garbled"

    trace_id, span_id = one_trace(work_lines(log, "mine"))
    assert trace_id == TRACE_ID and span_id != SPAN_ID  # a new span under the caller's
    first, second = one_trace(work_lines(log, "first")), one_trace(work_lines(log, "second"))
    assert first[0] == second[0] != TRACE_ID  # the session's own trace, one for all its calls
    assert first[1] != second[1]  # a new span per call
    assert work_lines(log, "garbled") == [(None, None), (None, None)]
    debug = [m for m in map(LINE.search, log.read_text().splitlines()) if m and m["msg"] == "tools/call work"]
    assert len(debug) == 4 and sum(m["trace"] == TRACE_ID for m in debug) == 1


async def test_an_http_server_logs_the_trace_of_each_call(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(SERVER), "--http", str(port)],
        env={**os.environ, "TRACED_LOG": str(log)},
        stdin=subprocess.DEVNULL,
    )
    try:
        wait_port(port)
        async with connect(f"http://127.0.0.1:{port}/mcp") as session:
            with caller_span():
                await session.call("work", {"label": "http"})
    finally:
        process.terminate()
        process.wait(30)
    trace_id, span_id = one_trace(work_lines(log, "http"))
    assert trace_id == TRACE_ID and span_id != SPAN_ID


@pytest.mark.parametrize("fast_lane", [True, False], ids=["fast-lane", "sdk-path"])
async def test_one_trace_id_through_the_stdio_gateway_into_the_servers_log(
    tmp_path: Path, fast_lane: bool
) -> None:
    log = tmp_path / "server.log"
    server = {"command": sys.executable, "args": [str(SERVER)], "env": {"TRACED_LOG": str(log)}}
    config = write_config(tmp_path / "gw.json", {"traced": server}, {"fast_lane": fast_lane})
    async with gateway_session(config) as session:
        name = next(t["name"] for t in await session.list_tools() if t["name"].endswith("work"))
        with caller_span():
            assert (await session.call(name, {"label": "via"})).text == "done via"
    trace_id, span_id = one_trace(work_lines(log, "via"))
    assert trace_id == TRACE_ID and span_id != SPAN_ID


async def test_one_trace_id_through_the_http_gateway_into_the_servers_log(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    server = {"command": sys.executable, "args": [str(SERVER)], "env": {"TRACED_LOG": str(log)}}
    config = write_config(tmp_path / "gw.json", {"traced": server})
    port = free_port()
    gateway = subprocess.Popen(
        gateway_argv(config, "--transport", "http", "--port", str(port)),
        env={**os.environ, "MCPKIT_LOG": "warning"},
        stdin=subprocess.DEVNULL,
    )
    try:
        wait_port(port)
        async with connect(f"http://127.0.0.1:{port}/mcp") as session:
            name = next(t["name"] for t in await session.list_tools() if t["name"].endswith("work"))
            with caller_span():
                assert (await session.call(name, {"label": "hot"})).text == "done hot"
    finally:
        gateway.terminate()
        gateway.wait(30)
    trace_id, span_id = one_trace(work_lines(log, "hot"))
    assert trace_id == TRACE_ID and span_id != SPAN_ID


# -- malformed trace context never breaks a call ---------------------------------------------

seen: list[tuple[str, str] | None] = []


async def _probe(args: dict[str, Any]) -> str:
    seen.append(current_trace_ids())
    return "served"


PROBE = ToolSpec("probe", "Report that the call was served.", object_schema({"x": string("Unused.")}), _probe)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)
traceparents = st.one_of(
    st.text(),
    st.from_regex(r"\A[0-9a-f]{2}-[0-9a-fA-F]{32}-[0-9a-fA-F]{16}-[0-9a-f]{2}\Z"),
    json_values,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(traceparent=traceparents, tracestate=st.one_of(st.text(), json_values))
async def test_any_traceparent_leaves_the_call_served(traceparent: Any, tracestate: Any) -> None:
    server = build_server("probe", "1", [PROBE])
    meta = {"traceparent": traceparent, "tracestate": tracestate}
    async with connect(server) as session:
        answer = await session.request("tools/call", {"name": "probe", "arguments": {}, "_meta": meta})
    assert answer.get("isError") is not True and answer["content"][0]["text"] == "served"
    ids = seen.pop()
    assert ids is None or (len(ids[0]) == 32 and ids[0] != "0" * 32)


@settings(max_examples=200, deadline=None)
@given(
    meta=st.one_of(
        json_values,
        st.fixed_dictionaries({"traceparent": traceparents}, optional={"tracestate": json_values}),
    )
)
def test_continue_trace_takes_any_meta(meta: Any) -> None:
    with continue_trace(meta):
        ids = current_trace_ids()
    assert current_trace_ids() is None
    if ids is not None:
        assert isinstance(meta, dict) and ids[0] in str(meta["traceparent"]).lower()


def _span_of(context: Any) -> SpanContext | None:
    return None if context is None else trace.get_current_span(context).get_span_context()


W3C_LIKE = r"\A[ \t]{0,2}[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}(-[ -~]{0,8})?[ \t\n]{0,2}\Z"


@settings(max_examples=400, deadline=None)
@given(
    traceparent=st.one_of(st.from_regex(W3C_LIKE), st.text(max_size=80)),
    tracestate=st.one_of(st.none(), st.text(max_size=40), st.just("a=1,b@v=2"), st.just("x" * 9000)),
)
@example(traceparent="00-" + "0" * 32 + "-b7ad6b7169203331-01", tracestate=None)
@example(traceparent="ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", tracestate=None)
@example(traceparent="01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-later", tracestate="k=v")
def test_the_fast_paths_read_a_traceparent_as_the_sdks_server_does(
    traceparent: str, tracestate: str | None
) -> None:
    """The gateway's fast paths read ``_meta`` themselves (mcpkit.log), the SDK's path through
    the W3C propagator: both must find the same trace in the same request."""
    meta: dict[str, Any] = {"traceparent": traceparent}
    if tracestate is not None:
        meta["tracestate"] = tracestate
    assert _span_of(_extracted(meta)) == _span_of(extract_trace_context(meta))


def test_a_raw_request_carries_what_the_propagator_would_read() -> None:
    """Requests sent beside the SDK's dispatcher (the gateway's fast lane) write their own
    ``_meta``: the SDK's server must read from it a child of the caller's span, with its flags
    and tracestate, or a span of the session's trace outside any caller's span."""
    spans = RequestSpans()
    params = {"name": "work", "arguments": {}, "_meta": {"progressToken": 7}}
    with caller_span():
        meta = spans.meta_for(params)["_meta"]
    assert meta["progressToken"] == 7 and params["_meta"] == {"progressToken": 7}
    child = _span_of(extract_trace_context(meta))
    assert child is not None and child.trace_id == int(TRACE_ID, 16) and child.span_id != int(SPAN_ID, 16)
    assert child.trace_flags.sampled and dict(child.trace_state) == {"vendor": "opaque"}
    own = [_span_of(extract_trace_context(spans.meta_for(params)["_meta"])) for _ in range(2)]
    assert own[0] is not None and own[1] is not None
    assert own[0].trace_id == own[1].trace_id == spans.trace_id and own[0].span_id != own[1].span_id
    assert own[0].trace_flags.sampled
