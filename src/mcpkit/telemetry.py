"""Spans and duration histograms per the OpenTelemetry semantic conventions for MCP, and the
gateway's built-in call counts for Prometheus.

Off and free unless configured: with ``OTEL_EXPORTER_OTLP_ENDPOINT`` unset (or
``OTEL_SDK_DISABLED=true``) :func:`active` returns None, nothing of OpenTelemetry's SDK or
exporters is imported, and a call site pays one test of a cached value. With it set (and the
``otel`` extra installed) spans and the ``mcp.server.operation.duration`` /
``mcp.client.operation.duration`` histograms go over OTLP/HTTP to that endpoint, configured by
the standard ``OTEL_*`` variables (service name, headers, export interval).

What is recorded (the conventions' names): a span per operation named ``{method} {target}``
(``tools/call echo``), with ``mcp.method.name``, ``gen_ai.tool.name`` and
``gen_ai.operation.name`` for a tool call, ``jsonrpc.request.id``, ``mcp.session.id`` where
known, and ``error.type`` when it failed (a JSON-RPC code, ``tool_error`` for a result with
isError, else the exception's class). Never an argument value, a result or an error's text.

mcpkit exports through a provider of its own rather than OpenTelemetry's global one: the MCP
SDK's dispatcher makes a span of its own per request when a global provider is set, which would
give every call two spans under two names. The W3C trace context still travels as the
conventions say: a client span is made current while its request is sent, so the ``traceparent``
written into ``params._meta`` (:mod:`mcpkit.client._tracecontext`) names it, and a server span's
parent is the ``traceparent`` it received.
"""

from __future__ import annotations

import atexit
import os
import threading
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

T = TypeVar("T")

ENDPOINT_VARIABLE = "OTEL_EXPORTER_OTLP_ENDPOINT"
"""Tracing is on when this standard variable names a collector."""

DURATION_BUCKETS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)
"""The conventions' advised bucket boundaries (seconds) for the operation durations."""

TOOL_ERROR = "tool_error"
"""``error.type`` of a call whose result says isError (the conventions' value)."""


def configured(environ: Mapping[str, str] | None = None) -> bool:
    """Whether the standard variables ask for export (an endpoint, the SDK not disabled)."""
    env = os.environ if environ is None else environ
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    return bool(env.get(ENDPOINT_VARIABLE, "").strip())


_sending: ContextVar[bool] = ContextVar("mcpkit_telemetry_sending", default=False)
"""True while a client operation's request is being sent (:meth:`Operation.current`), so the
client session under the gateway's hop does not trace the same request twice."""


def sending() -> bool:
    """Whether the request about to be sent is already a traced client operation's."""
    return _sending.get()


def error_type(exc: BaseException) -> str:
    """The conventions' ``error.type`` of a failure: a JSON-RPC error's code, else the class."""
    code = getattr(exc, "code", None)
    return str(code) if isinstance(code, int) else type(exc).__qualname__


def target_of(method: str, params: Mapping[str, Any] | None) -> str | None:
    """The span name's target: the tool's or prompt's name (never anything else of ``params``)."""
    if method in ("tools/call", "prompts/get") and params is not None:
        name = params.get("name")
        return name if isinstance(name, str) else None
    return None


class Operation:
    """One MCP operation being traced: its span and, on :meth:`end`, its duration."""

    __slots__ = ("_attributes", "_client", "_histogram", "_start", "span")

    def __init__(self, span: Any, histogram: Any, attributes: dict[str, Any], client: bool) -> None:
        self.span = span
        self._histogram = histogram
        self._attributes = attributes
        self._client = client
        self._start = time.perf_counter()

    def failed(self, error_type: str) -> None:
        """Mark the operation failed with the conventions' ``error.type`` (a code or a class
        name, never a message: messages can quote what the caller sent)."""
        from opentelemetry.trace import StatusCode

        self._attributes["error.type"] = error_type
        self.span.set_attribute("error.type", error_type)
        self.span.set_status(StatusCode.ERROR)

    def result(self, raw: Any) -> None:
        """Look at a ``tools/call`` result (wire form or model) for isError; nothing of it is
        recorded."""
        error = raw.get("isError") if isinstance(raw, Mapping) else getattr(raw, "is_error", None)
        if error is True:
            self.failed(TOOL_ERROR)

    def end(self) -> None:
        self._histogram.record(time.perf_counter() - self._start, self._attributes)
        self.span.end()

    @contextmanager
    def current(self) -> Iterator[None]:
        """This operation's span current, so a request sent now carries it as its parent."""
        from opentelemetry import trace

        token = _sending.set(self._client)
        try:
            with trace.use_span(self.span, end_on_exit=False):
                yield
        finally:
            _sending.reset(token)


class Telemetry:
    """The tracer and the two histograms, exporting over OTLP/HTTP (see the module's docstring)."""

    def __init__(self, service: str = "mcpkit") -> None:
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        from mcpkit import __version__

        named = {} if os.environ.get("OTEL_SERVICE_NAME") else {"service.name": service}
        resource = Resource.create(named)
        self._traces = TracerProvider(resource=resource)
        self._traces.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        self._metrics = MeterProvider(
            resource=resource, metric_readers=[PeriodicExportingMetricReader(OTLPMetricExporter())]
        )
        self.tracer = self._traces.get_tracer("mcpkit", __version__)
        meter = self._metrics.get_meter("mcpkit", __version__)
        self._durations = {
            side: meter.create_histogram(
                f"mcp.{side}.operation.duration",
                unit="s",
                description=f"MCP request duration as observed on the {side}",
                explicit_bucket_boundaries_advisory=list(DURATION_BUCKETS),
            )
            for side in ("server", "client")
        }
        atexit.register(self.shutdown)

    def server(
        self,
        method: str,
        target: str | None = None,
        *,
        request_id: Any = None,
        session_id: str | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> Operation:
        """A SERVER operation: its parent the ``traceparent`` in ``meta`` when there is one,
        else the current span."""
        from opentelemetry.propagate import extract
        from opentelemetry.trace import SpanKind

        parent = extract(meta) if isinstance(meta, Mapping) and "traceparent" in meta else None
        return self._start("server", SpanKind.SERVER, method, target, request_id, session_id, parent)

    def client(
        self,
        method: str,
        target: str | None = None,
        *,
        request_id: Any = None,
        session_id: str | None = None,
        parent: Operation | None = None,
    ) -> Operation:
        """A CLIENT operation under ``parent``, else the current span (make it current while
        sending: :meth:`Operation.current`)."""
        from opentelemetry.trace import SpanKind, set_span_in_context

        context = set_span_in_context(parent.span) if parent is not None else None
        return self._start("client", SpanKind.CLIENT, method, target, request_id, session_id, context)

    def _start(
        self,
        side: str,
        kind: Any,
        method: str,
        target: str | None,
        request_id: Any,
        session_id: str | None,
        parent: Any,
    ) -> Operation:
        attributes: dict[str, Any] = {"mcp.method.name": method}
        if target is not None and method == "tools/call":
            attributes["gen_ai.tool.name"] = target
            attributes["gen_ai.operation.name"] = "execute_tool"
        elif target is not None and method == "prompts/get":
            attributes["gen_ai.prompt.name"] = target
        span_attributes = dict(attributes)
        if request_id is not None:
            span_attributes["jsonrpc.request.id"] = str(request_id)
        if session_id:
            span_attributes["mcp.session.id"] = session_id
        name = f"{method} {target}" if target else method
        span = self.tracer.start_span(name, context=parent, kind=kind, attributes=span_attributes)
        return Operation(span, self._durations[side], attributes, side == "client")

    async def client_call(
        self, method: str, params: Mapping[str, Any] | None, call: Callable[[], Awaitable[T]]
    ) -> T:
        """``call()``, the sending of one request, traced as a CLIENT operation."""
        op = self.client(method, target_of(method, params))
        try:
            with op.current():
                result = await call()
            op.result(result)
            return result
        except BaseException as exc:
            op.failed(error_type(exc))
            raise
        finally:
            op.end()

    def shutdown(self) -> None:
        """Export what is pending (run at exit)."""
        self._traces.shutdown()
        self._metrics.shutdown()


_lock = threading.Lock()
_active: Telemetry | None = None
_decided = False


def active() -> Telemetry | None:
    """The process's telemetry when the environment configures it, else None (decided once)."""
    global _active, _decided
    if _decided:
        return _active
    with _lock:
        if not _decided:
            _active = Telemetry(_service()) if configured() else None
            _decided = True
    return _active


def _service() -> str:
    import sys

    argv = sys.argv[1:3]
    return "mcpkit-" + "-".join(a for a in argv if a.isidentifier()) if argv else "mcpkit"


class CallCounts:
    """The gateway's calls counted per server, tool and outcome, for ``GET /metrics``.

    Built in rather than OpenTelemetry's Prometheus reader: that reader is a separate package
    (``opentelemetry-exporter-prometheus``) not in the ``otel`` extra, and these counts must be
    there without any extra, traced or not. Two numbers a call, under the GIL: no lock."""

    __slots__ = ("_counts",)

    def __init__(self) -> None:
        self._counts: dict[tuple[str, str, str], list[float]] = {}

    def add(self, server: str, tool: str, error: bool, seconds: float) -> None:
        key = (server, tool, "error" if error else "ok")
        entry = self._counts.get(key)
        if entry is None:
            self._counts[key] = [1.0, seconds]
        else:
            entry[0] += 1
            entry[1] += seconds

    def exposition(self) -> str:
        """The counts in Prometheus's text exposition format (version 0.0.4)."""
        rows = sorted(self._counts.items())
        lines = [
            "# HELP mcpkit_gateway_calls_total Tool calls the gateway relayed, by server, tool and outcome.",
            "# TYPE mcpkit_gateway_calls_total counter",
        ]
        lines += [f"mcpkit_gateway_calls_total{_labels(k)} {int(v[0])}" for k, v in rows]
        lines += [
            "# HELP mcpkit_gateway_call_seconds_total Time the gateway's relayed tool calls took, summed.",
            "# TYPE mcpkit_gateway_call_seconds_total counter",
        ]
        lines += [f"mcpkit_gateway_call_seconds_total{_labels(k)} {v[1]:.6f}" for k, v in rows]
        return "\n".join(lines) + "\n"


PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def _labels(key: tuple[str, str, str]) -> str:
    server, tool, outcome = (_escape(v) for v in key)
    return f'{{server="{server}",tool="{tool}",outcome="{outcome}"}}'


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
