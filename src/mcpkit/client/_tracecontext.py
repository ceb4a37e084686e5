"""W3C trace context on every request a session sends, so a server's log names the caller's trace.

A server built with mcpkit writes the trace id and span id of the request it is handling on
every log record (:mod:`mcpkit.log`), read from the ``traceparent`` in the request's ``_meta``
(SEP-414). A client that sent none left those logs without a thread to follow, and a gateway
that sent none cut the trace at itself. Each request of a :class:`~mcpkit.client.Session`
therefore carries one, a new span per request:

- under the caller's current span when there is one (an application's own OpenTelemetry span,
  or the request a gateway is handling: the downstream call is that request's child span, in
  the same trace);
- else under a trace of the session's own, made when it opens, so every request of one session
  shares a trace id.

The SDK's dispatcher injects OpenTelemetry's current context into each request's ``_meta``
(``mcp.shared._otel.inject_trace_context``); :meth:`RequestSpans.around` only makes the span
current that the dispatcher then injects. When the caller's span is a recording one (a tracing
SDK is installed) nothing is made here: the dispatcher's own client span is its child. Requests
sent beside the SDK (:meth:`Session.send_raw`) get the same ``_meta`` from
:meth:`RequestSpans.meta_for`, in the W3C propagator's format; when the current span is a
recording one (the request's own client span, :mod:`mcpkit.telemetry`) it is the one named. A request whose ``_meta`` already
names a ``traceparent`` is sent as the caller wrote it.

Only OpenTelemetry's API is used, which the SDK already depends on; no tracing SDK is needed.
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Iterator, Mapping
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

_SAMPLED = TraceFlags(TraceFlags.SAMPLED)
"""The flags of a session's own trace: sampled, so a server that records spans with the usual
parent-based sampler keeps the calls it handles for this client (a trace nobody keeps would
leave only the log ids)."""


def _nonzero_bits(bits: int) -> int:
    """A random id; W3C forbids all-zero trace and span ids."""
    value = 0
    while not value:
        value = random.getrandbits(bits)
    return value


class RequestSpans:
    """The trace context of one session's requests (see the module's docstring)."""

    def __init__(self) -> None:
        self.trace_id = _nonzero_bits(128)
        """The session's own trace, used for requests made outside any caller's span."""

    def _child(self) -> SpanContext:
        """A new span under the caller's current span, or under the session's trace."""
        parent = trace.get_current_span().get_span_context()
        if parent.is_valid:
            return SpanContext(
                parent.trace_id,
                _nonzero_bits(64),
                is_remote=False,
                trace_flags=parent.trace_flags,
                trace_state=parent.trace_state,
            )
        return SpanContext(self.trace_id, _nonzero_bits(64), is_remote=False, trace_flags=_SAMPLED)

    @contextlib.contextmanager
    def around(self, params: Mapping[str, Any] | None) -> Iterator[None]:
        """Make this request's span current while the SDK's dispatcher sends ``params``."""
        if _names_trace(params) or trace.get_current_span().is_recording():
            yield
            return
        with trace.use_span(NonRecordingSpan(self._child()), end_on_exit=False):
            yield

    def meta_for(self, params: Mapping[str, Any]) -> Mapping[str, Any]:
        """``params`` with this request's ``traceparent`` (and ``tracestate``) in its ``_meta``,
        for a request sent beside the SDK's dispatcher (the gateway's fast lane).

        Written as the W3C propagator writes them, without going through it: the propagator's
        span and context objects cost about 8 us a call, a third of what the fast lane adds
        to a call it relays (tests check the fields against the propagator's reading)."""
        meta = params.get("_meta")
        if (meta is not None and not isinstance(meta, Mapping)) or _names_trace(params):
            return params
        carrier: dict[str, Any] = dict(meta or {})
        current = trace.get_current_span()
        parent = current.get_span_context()
        # a recording span (mcpkit.telemetry's client span for this request) is the request's own
        span_id = parent.span_id if current.is_recording() else _nonzero_bits(64)
        if parent.is_valid:
            carrier["traceparent"] = f"00-{parent.trace_id:032x}-{span_id:016x}-{parent.trace_flags:02x}"
            if parent.trace_state:
                carrier["tracestate"] = parent.trace_state.to_header()
        else:
            carrier["traceparent"] = f"00-{self.trace_id:032x}-{span_id:016x}-{_SAMPLED:02x}"
        return {**params, "_meta": carrier}


def _names_trace(params: Mapping[str, Any] | None) -> bool:
    meta = params.get("_meta") if params is not None else None
    return isinstance(meta, Mapping) and "traceparent" in meta
