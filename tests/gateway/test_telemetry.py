"""Observability: a real gateway in front of a real mcpkit server, exporting over OTLP/HTTP to a
receiver in the test (the protobuf decoded with ``opentelemetry-proto``); its ``/metrics``; and
nothing of OpenTelemetry's SDK loaded when tracing is not configured."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import uuid
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

from mcpkit.client import ServerConfig, Session, SessionOptions
from tests.client.procs import free_port
from tests.gateway.support import HERE, gateway_argv, wait_port, write_config

pytest.importorskip("opentelemetry.sdk", reason="the otel extra is not installed (pip install '.[otel]')")

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

pytestmark = [pytest.mark.slow]

TOOLKIT_ECHO = HERE / "fixtures" / "toolkit_echo_server.py"
CALLS = 3
SERVER, CLIENT = 2, 3  # opentelemetry.proto.trace.v1.Span.SpanKind


class Receiver:
    """An OTLP/HTTP collector: keeps every request's raw bytes and its decoded spans and metrics."""

    def __init__(self) -> None:
        self.raw: list[bytes] = []
        self.spans: list[tuple[str, Any]] = []  # (service.name, Span)
        self.metrics: dict[str, int] = {}  # histogram name -> highest count of data points' calls
        self.changed = threading.Condition()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                receiver.take(self.path, body)
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def take(self, path: str, body: bytes) -> None:
        with self.changed:
            self.raw.append(body)
            if path == "/v1/traces":
                traces = ExportTraceServiceRequest.FromString(body)
                for rs in traces.resource_spans:
                    service = _service(rs.resource)
                    self.spans += [(service, span) for ss in rs.scope_spans for span in ss.spans]
            elif path == "/v1/metrics":
                metrics = ExportMetricsServiceRequest.FromString(body)
                for rm in metrics.resource_metrics:
                    service = _service(rm.resource)
                    for sm in rm.scope_metrics:
                        for metric in sm.metrics:
                            count = sum(p.count for p in metric.histogram.data_points)
                            key = f"{service} {metric.name}"
                            self.metrics[key] = max(self.metrics.get(key, 0), count)
            self.changed.notify_all()

    def wait(self, done: Callable[[], bool], what: str, timeout: float = 120) -> None:
        with self.changed:
            if not self.changed.wait_for(done, timeout):
                raise AssertionError(f"the receiver never got {what}: {self.summary()}")

    def summary(self) -> str:
        return f"spans {[(s, span.name) for s, span in self.spans]}, metrics {self.metrics}"


def _service(resource: Any) -> str:
    return next((a.value.string_value for a in resource.attributes if a.key == "service.name"), "")


def _attrs(span: Any) -> dict[str, str]:
    return {a.key: a.value.string_value for a in span.attributes}


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    yield r
    r.server.shutdown()


def _otel_env(receiver: Receiver) -> dict[str, str]:
    return {
        "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url,
        "OTEL_BSP_SCHEDULE_DELAY": "50",  # exported while the processes run, not only at exit
        "OTEL_METRIC_EXPORT_INTERVAL": "200",
        "MCPKIT_LOG": "warning",
    }


def _config(tmp_path: Path) -> Path:
    return write_config(
        tmp_path / "gw.json", {"kit": {"command": sys.executable, "args": [str(TOOLKIT_ECHO)]}}
    )


async def _calls(session: Session, secret: str) -> None:
    names = [t["name"] for t in await session.list_tools()]
    assert "kit_echo" in names, names
    for i in range(CALLS):
        raw = await session.request(
            "tools/call", {"name": "kit_echo", "arguments": {"text": f"{secret}-{i}"}}
        )
        assert raw["content"][0]["text"] == f"{secret}-{i}"


@pytest.mark.parametrize("front", ["stdio", "http"])
def test_spans_and_histograms_reach_the_collector(tmp_path: Path, receiver: Receiver, front: str) -> None:
    secret = f"secret-{uuid.uuid4().hex}"
    config = _config(tmp_path)
    env = _otel_env(receiver)
    if front == "stdio":
        server = ServerConfig(name="gw", command=gateway_argv(config), env=env)

        async def main() -> None:
            async with Session(server, SessionOptions(timeout=60, connect_timeout=120)) as session:
                await _calls(session, secret)

        anyio.run(main)
    else:
        port = free_port()
        proc = subprocess.Popen(
            gateway_argv(config, "--transport", "http", "--port", str(port)),
            env={**os.environ, **env},
            stdin=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            wait_port(port)
            url = f"http://127.0.0.1:{port}/mcp"

            async def main() -> None:
                config = ServerConfig(name="gw", url=url, transport="http")
                async with Session(config, SessionOptions(timeout=60)) as session:
                    await _calls(session, secret)

            anyio.run(main)
            metrics = httpx2.get(f"http://127.0.0.1:{port}/metrics", timeout=30)
            assert metrics.status_code == 200
            assert metrics.headers["content-type"].startswith("text/plain; version=0.0.4")
            assert (
                f'mcpkit_gateway_calls_total{{server="kit",tool="echo",outcome="ok"}} {CALLS}' in metrics.text
            )
            assert secret not in metrics.text
        finally:
            proc.terminate()
            proc.wait(30)

    def named(kind: int) -> list[tuple[str, Any]]:
        return [(s, span) for s, span in receiver.spans if span.kind == kind and span.name.endswith("echo")]

    def complete() -> bool:
        servers = named(SERVER)
        return (
            len(servers) >= 2 * CALLS
            and len(named(CLIENT)) >= CALLS
            and receiver.metrics.get("mcpkit-gateway mcp.server.operation.duration", 0) >= CALLS
            and receiver.metrics.get("mcpkit-gateway mcp.client.operation.duration", 0) >= CALLS
            and receiver.metrics.get("mcpkit mcp.server.operation.duration", 0) >= CALLS
        )

    receiver.wait(complete, "a span per call and hop, and both histograms")
    routes = [span for s, span in named(SERVER) if s == "mcpkit-gateway"]
    hops = [span for s, span in named(CLIENT) if s == "mcpkit-gateway"]
    handled = [span for s, span in named(SERVER) if s == "mcpkit"]
    assert (len(routes), len(hops), len(handled)) == (CALLS, CALLS, CALLS), receiver.summary()
    assert {r.name for r in routes} == {"tools/call kit_echo"}  # the gateway's public name
    assert {h.name for h in hops} | {h.name for h in handled} == {"tools/call echo"}  # the server's
    by_id = {r.span_id: r for r in routes}
    for hop in hops:
        route = by_id[hop.parent_span_id]  # each hop a child of its route
        assert hop.trace_id == route.trace_id
        assert route.parent_span_id, "the route continues the client's trace (its traceparent)"
    hop_ids = {h.span_id: h for h in hops}
    for span in handled:
        assert span.parent_span_id in hop_ids, "the server's span is the gateway hop's child"
        assert span.trace_id == hop_ids[span.parent_span_id].trace_id
        attrs = _attrs(span)
        assert attrs["mcp.method.name"] == "tools/call"
        assert attrs["gen_ai.tool.name"] == "echo"
        assert attrs["jsonrpc.request.id"]
        assert "error.type" not in attrs
    assert {_attrs(r)["gen_ai.tool.name"] for r in routes} == {"kit_echo"}
    for payload in receiver.raw:
        assert secret.encode() not in payload, "an argument value reached the collector"


def test_untraced_gateway_loads_no_opentelemetry_sdk(tmp_path: Path) -> None:
    """Off and free: without OTEL_EXPORTER_OTLP_ENDPOINT neither the gateway nor the server
    behind it imports OpenTelemetry's SDK or an exporter (every import listed by
    ``-X importtime``, after a call through both)."""
    port = free_port()
    log = tmp_path / "stderr.txt"
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env |= {"PYTHONPROFILEIMPORTTIME": "1", "MCPKIT_LOG": "warning"}
    with log.open("wb") as err:
        proc = subprocess.Popen(
            gateway_argv(_config(tmp_path), "--transport", "http", "--port", str(port)),
            env=env,
            stdin=subprocess.DEVNULL,
            stderr=err,
        )
        try:
            wait_port(port)

            async def main() -> None:
                config = ServerConfig(name="gw", url=f"http://127.0.0.1:{port}/mcp", transport="http")
                async with Session(config, SessionOptions(timeout=60)) as session:
                    await _calls(session, "plain")

            anyio.run(main)
        finally:
            proc.terminate()
            proc.wait(30)
    imported = log.read_text(errors="replace")
    assert "mcpkit.gateway.pipeline" in imported  # the listing is there
    loaded = [
        line
        for line in imported.splitlines()
        if "opentelemetry.sdk" in line or "opentelemetry.exporter" in line
    ]
    assert loaded == []


CLIENT_SCRIPT = """
import sys, anyio
from mcpkit.client import ServerConfig, Session, SessionOptions

async def main():
    server = ServerConfig(name="kit", command=[sys.executable, sys.argv[1]])
    async with Session(server, SessionOptions(timeout=60, connect_timeout=120)) as session:
        for i in range(int(sys.argv[3])):
            await session.request("tools/call", {"name": "echo", "arguments": {"text": sys.argv[2]}})

anyio.run(main)
"""


def test_a_client_session_traces_its_calls(receiver: Receiver) -> None:
    """mcpkit.client's Session: a CLIENT span per call and mcp.client.operation.duration; the
    server it calls (an mcpkit server) records its span as that span's child."""
    secret = f"secret-{uuid.uuid4().hex}"
    env = {**os.environ, **_otel_env(receiver), "OTEL_SERVICE_NAME": "traced"}
    subprocess.run(
        [sys.executable, "-c", CLIENT_SCRIPT, str(TOOLKIT_ECHO), secret, str(CALLS)],
        env=env,
        check=True,
        timeout=180,
        capture_output=True,
    )

    def calls(kind: int) -> list[Any]:
        return [span for _, span in receiver.spans if span.kind == kind and span.name == "tools/call echo"]

    def complete() -> bool:
        return (
            len(calls(CLIENT)) >= CALLS
            and len(calls(SERVER)) >= CALLS
            and receiver.metrics.get("traced mcp.client.operation.duration", 0) >= CALLS
        )

    receiver.wait(complete, "the client's spans and histogram")
    sent = {span.span_id: span for span in calls(CLIENT)}
    assert len(sent) == CALLS, receiver.summary()
    for span in calls(SERVER):
        assert span.parent_span_id in sent, "the server's span is the client call's child"
        assert _attrs(span)["gen_ai.tool.name"] == "echo"
    assert all(_attrs(span)["mcp.method.name"] == "tools/call" for span in sent.values())
    for payload in receiver.raw:
        assert secret.encode() not in payload
