"""Logging set-up shared by every mcpkit command: stderr only, at the level it is given.

stdout is the MCP stdio channel, so nothing may ever log there. The level is a value: the CLIs
read ``MCPKIT_LOG`` (:func:`mcpkit.cli_kit.log_level`) and pass it, so a program that embeds a
server decides its own logging and no variable changes it behind its back.

Trace context: a request whose ``_meta`` carries a W3C ``traceparent`` (SEP-414; the SDK's
server middleware reads it into OpenTelemetry's current context for the request's handler)
has its trace id and span id on every record written while it is handled::

    2026-11-25 05:40:01,123 INFO mcpkit.server [trace_id=0af7...319c span_id=b7ad...3331]: tools/call probe

so one call can be followed by its trace id through a gateway into a downstream server's log.
The ids come from OpenTelemetry's API, which the SDK depends on; no tracing SDK or exporter is
needed for them (the API's no-op tracer keeps the caller's ids current), and with one
installed the ids are those of the server's own span. Fast paths that answer a request
without the SDK's middleware enter its context with :func:`continue_trace`.
"""

from __future__ import annotations

import contextlib
import logging
import re
import sys
from collections.abc import Iterator
from typing import Any, TextIO

ENV_LOG = "MCPKIT_LOG"
FORMAT = "%(asctime)s %(levelname)s %(name)s%(trace)s: %(message)s"
"""The line every mcpkit command writes; ``%(trace)s`` is empty outside a traced request."""


class _StderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to whatever ``sys.stderr`` is at the moment of the record, not the stream it was
    made with: a command run in-process (typer's CliRunner, an embedding program) swaps stderr
    per run, and a handler holding the first run's stream wrote to a closed file afterwards."""

    _mcpkit = True

    def __init__(self) -> None:
        super().__init__(sys.stderr)

    @property
    def stream(self) -> TextIO:
        return sys.stderr

    @stream.setter
    def stream(self, _value: TextIO) -> None:
        pass


def setup_logging(level_name: str = "warning") -> None:
    """Send mcpkit's logs to stderr at ``level_name`` (debug, info, warning, error; an unknown
    name means warning). Called by the commands and the server runner, never at import."""
    level = logging.getLevelName(level_name.strip().upper())
    if not isinstance(level, int):
        level = logging.WARNING
    root = logging.getLogger()
    if not any(getattr(h, "_mcpkit", False) for h in root.handlers):
        handler = _StderrHandler()
        handler.addFilter(TraceFields())
        handler.setFormatter(logging.Formatter(FORMAT))
        root.addHandler(handler)
    root.setLevel(level)


def current_trace_ids() -> tuple[str, str] | None:
    """The trace id (32 hex digits) and span id (16) of the request being handled, or None.

    Read from OpenTelemetry's current context; when OpenTelemetry was never imported nothing
    can have set one, and nothing is imported here (a command that never loads the SDK pays
    nothing per record)."""
    trace = sys.modules.get("opentelemetry.trace")
    if trace is None:
        return None
    context = trace.get_current_span().get_span_context()
    if not context.is_valid:
        return None
    return format(context.trace_id, "032x"), format(context.span_id, "016x")


class TraceFields(logging.Filter):
    """Puts ``trace_id`` and ``span_id`` (empty outside a traced request) and ``trace`` (their
    `` [trace_id=... span_id=...]`` for :data:`FORMAT`) on every record it sees; never drops one.

    A handler filter rather than a logger's: records of every logger (the SDK's, a tool's own,
    one written from a worker thread, which carries the request's context) pass the handler.
    A program with its own handlers adds it to them to get the same fields."""

    def filter(self, record: logging.LogRecord) -> bool:
        ids = current_trace_ids()
        if ids is None:
            record.trace_id = record.span_id = record.trace = ""
        else:
            record.trace_id, record.span_id = ids
            record.trace = f" [trace_id={ids[0]} span_id={ids[1]}]"
        return True


@contextlib.contextmanager
def continue_trace(meta: Any) -> Iterator[None]:
    """Handle a request in the trace its ``_meta`` names, as the SDK's server middleware does
    for the requests it dispatches: for a fast path that answers a request itself (the
    gateway's stdio lane and HTTP hot path), so its log records and the requests it sends on
    carry the caller's trace. A missing, malformed or non-object ``_meta`` or ``traceparent``
    changes nothing: trace context is a hint, never a reason to fail a call."""
    context = _extracted(meta)
    if context is None:
        yield
        return
    from opentelemetry import context as otel_context

    token = otel_context.attach(context)
    try:
        yield
    finally:
        otel_context.detach(token)


_TRACEPARENT = re.compile(
    r"^[ \t]*([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(?:(-.*)|[ \t]*)$"
)
_MAX_TRACEPARENT, _MAX_TRACESTATE = 512, 8192
"""The W3C propagator's pattern and its length limits (a ``tracestate`` over its limit is dropped,
the trace kept)."""


def _extracted(meta: Any) -> Any:
    """The OpenTelemetry context ``meta`` carries, or None, as the SDK's server reads it (the
    W3C propagator, any error meaning none: ``mcp.shared._otel.extract_trace_context``).

    A string ``traceparent`` with no or a string ``tracestate`` (what every client sends) is
    read here by the propagator's own rules, without its generic carrier handling, which cost
    about half of the fast path's per-call time; anything else goes to the SDK's reading.
    tests/server/test_trace_context.py holds the two readings equal."""
    if not isinstance(meta, dict) or "traceparent" not in meta:
        return None
    value, state = meta.get("traceparent"), meta.get("tracestate")
    if not isinstance(value, str) or not (state is None or isinstance(state, str)):
        return _sdk_extracted(meta)
    match = _TRACEPARENT.search(value) if len(value) <= _MAX_TRACEPARENT else None
    if match is None:
        return None
    version, trace_hex, span_hex, flags, rest = match.groups()
    trace_id, span_id = int(trace_hex, 16), int(span_hex, 16)
    if not trace_id or not span_id or version == "ff" or (version == "00" and rest):
        return None
    from opentelemetry import trace

    trace_state = None
    if state is not None and len(state) <= _MAX_TRACESTATE:
        trace_state = trace.TraceState.from_header([state])
    span = trace.NonRecordingSpan(
        trace.SpanContext(
            trace_id,
            span_id,
            is_remote=True,
            trace_flags=trace.TraceFlags(int(flags, 16)),
            trace_state=trace_state,
        )
    )
    return trace.set_span_in_context(span)


def _sdk_extracted(meta: dict[str, Any]) -> Any:
    """What the SDK's server reads from ``meta``: the global propagator, None on any error or
    without a valid span."""
    from opentelemetry import trace
    from opentelemetry.propagate import extract

    try:
        context = extract(meta)
    except Exception:  # any carrier value: the propagator's errors are not part of its contract
        return None
    return context if trace.get_current_span(context).get_span_context().is_valid else None
