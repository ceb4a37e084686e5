"""JSON-RPC message trace: every message with its time and direction, secrets redacted.

Without it, a client that misbehaved left no way to see the messages: a debugging dead end.
``--trace stderr`` (or a file path; the CLIs also read ``MCPKIT_TRACE``, see
:func:`tracer_for`) writes one line per message::

    2026-11-22T22:01:54.123Z [time] -> {"jsonrpc":"2.0","id":1,"method":"tools/call",...}

``->`` is client to server, ``<-`` server to client, ``--`` a connection event (spawn, connect,
exit). Environment values given to a server and credential headers never appear: events show
``<redacted>`` in their place, and any message text that contains one of those values has it
replaced too (a server that echoes its token does not leak it into the trace).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Self, TextIO

import anyio
from mcp.shared.message import SessionMessage

REDACTED = "<redacted>"
TRACE_ENV = "MCPKIT_TRACE"
_MAX_MESSAGE_CHARS = 65_536
_SECRET_HEADER_WORDS = ("authorization", "cookie", "token", "secret", "password", "api-key", "apikey")
_MIN_SECRET_LEN = 4


def tracer_for(trace: str | None, environ: Mapping[str, str]) -> Tracer | None:
    """The tracer a CLI asks for: ``--trace`` (``trace``) wins over ``MCPKIT_TRACE`` in
    ``environ``; None when neither is set. Only CLIs call this: library code is given its
    tracer (in :class:`~mcpkit.client.SessionOptions`) and never reads the environment."""
    where = trace or environ.get(TRACE_ENV)
    return Tracer.open(where) if where else None


def redact_env(env: Mapping[str, str] | None) -> dict[str, str]:
    """Environment for display: the names stay, every value is hidden."""
    return {key: REDACTED for key in (env or {})}


def is_secret_header(name: str) -> bool:
    """Whether a header carries a credential (Authorization, cookies, API keys, tokens)."""
    low = name.lower()
    return any(word in low for word in _SECRET_HEADER_WORDS)


def redact_headers(headers: Mapping[str, str] | None) -> dict[str, str]:
    """Headers for display with credential values hidden."""
    return {k: (REDACTED if is_secret_header(k) else v) for k, v in (headers or {}).items()}


def secrets_of(env: Mapping[str, str] | None, headers: Mapping[str, str] | None) -> set[str]:
    """Values that must never be printed: every given env value and every credential header value."""
    values = set((env or {}).values())
    for key, value in (headers or {}).items():
        if is_secret_header(key):
            values.add(value)
            # "Bearer abc" is also leaked by echoing just "abc".
            values.update(part for part in value.split() if len(part) >= _MIN_SECRET_LEN)
    return {v for v in values if len(v) >= _MIN_SECRET_LEN}


class Tracer:
    """Writes trace lines to one sink; thread-safe, line-buffered, secrets replaced."""

    def __init__(self, sink: TextIO, *, secrets: Iterable[str] = (), owns_sink: bool = False) -> None:
        self._sink = sink
        self._owns = owns_sink
        self._lock = threading.Lock()
        # Longest first so a secret that contains another is replaced whole.
        self._secrets = sorted(set(secrets), key=len, reverse=True)

    @classmethod
    def open(cls, where: str) -> Tracer:
        """``"stderr"`` or a file path (appended to)."""
        if where in ("stderr", "-", ""):
            return cls(sys.stderr)
        path = Path(where).expanduser()
        path.parent.mkdir(parents=True, exist_ok=True)
        return cls(path.open("a", encoding="utf-8", buffering=1), owns_sink=True)

    def with_secrets(self, secrets: Iterable[str]) -> Tracer:
        """A tracer on the same sink that also hides ``secrets``."""
        return Tracer(self._sink, secrets=[*self._secrets, *secrets])

    def redact(self, text: str) -> str:
        for secret in self._secrets:
            if secret in text:
                text = text.replace(secret, REDACTED)
        return text

    def line(self, server: str, direction: str, text: str) -> None:
        """Write one trace line; long messages are cut with a note saying how long they were."""
        if len(text) > _MAX_MESSAGE_CHARS:
            text = f"{text[:_MAX_MESSAGE_CHARS]}... [{len(text):,} chars, cut]"
        stamp = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        out = f"{stamp} [{server}] {direction} {self.redact(text)}\n"
        with self._lock:
            try:
                self._sink.write(out)
                self._sink.flush()
            except (OSError, ValueError):
                pass  # a closed or broken trace sink must never break a call

    def message(self, server: str, direction: str, message: SessionMessage | Exception) -> None:
        if isinstance(message, Exception):
            self.line(server, direction, f"<unparsable: {message}>")
        else:
            self.line(server, direction, message.message.model_dump_json(by_alias=True, exclude_unset=True))

    def close(self) -> None:
        if self._owns:
            self._sink.close()


class TracedReadStream:
    """A read stream that traces each item it hands out as received (``<-``)."""

    def __init__(self, inner: Any, tracer: Tracer, server: str) -> None:
        self._inner = inner
        self._tracer = tracer
        self._server = server

    async def receive(self) -> SessionMessage | Exception:
        item: SessionMessage | Exception = await self._inner.receive()
        self._tracer.message(self._server, "<-", item)
        return item

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> SessionMessage | Exception:

        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()


class TracedWriteStream:
    """A write stream that traces each message as it is sent (``->``)."""

    def __init__(self, inner: Any, tracer: Tracer, server: str) -> None:
        self._inner = inner
        self._tracer = tracer
        self._server = server

    async def send(self, item: SessionMessage, /) -> None:
        self._tracer.message(self._server, "->", item)
        await self._inner.send(item)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()
