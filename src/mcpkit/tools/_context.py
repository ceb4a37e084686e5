"""ToolContext: what a handler may use besides its arguments, as the SDK's own handlers can.

A handler is ``async def handler(args)`` or ``async def handler(args, ctx)``; the server looks at
the signature once, at build time. Through ``ctx`` a long tool reports progress (sent only when
the client asked for it with a progress token), writes log messages to the client (only when the
server declares the logging capability; always to the server's own log), notices that the client
cancelled it (``ctx.cancelled``, which a worker thread can poll), and reads who is calling: the
client's name and, over HTTP, the request's headers (a per-user API key, for example).
"""

from __future__ import annotations

import inspect
import logging
import threading
from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

__all__ = ["LOG_LEVELS", "ToolContext", "current_context", "takes_context"]

logger = logging.getLogger("mcpkit.tools")

LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
"""The MCP log levels, least severe first."""

_PYTHON_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "alert": logging.CRITICAL,
    "emergency": logging.CRITICAL,
}

Notify = Callable[..., Awaitable[None]]
Elicit = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any] | None]]
"""Asks the client's user (message, requested schema): ``elicitation/create`` on the 2025 wire; on
2026-07-28 the answer from the call's retry, or the server's signal that ends this round with
the question (see :mod:`mcpkit.server` ``ask``). The answer, or ``None`` if none came."""


async def _nothing(*_: Any, **__: Any) -> None:
    return None


@dataclass
class ToolContext:
    """One tool call's context. Outside a server (unit tests) every method is a safe no-op."""

    tool: str = ""
    request_id: str | int | None = None
    client_name: str | None = None
    request_headers: Mapping[str, str] = field(default_factory=dict)
    """The HTTP request's headers with lower-case names; empty over stdio."""
    cancelled: threading.Event = field(default_factory=threading.Event)
    """Set when the client cancels this call; code in a worker thread can poll it."""
    _send_progress: Notify = _nothing
    _send_log: Notify = _nothing
    _log_threshold: Callable[[], str | None] = lambda: None
    _elicit: Elicit | None = None

    @property
    def can_elicit(self) -> bool:
        """Whether the client declared it can fill a form for its user (``elicitation``), on either era."""
        return self._elicit is not None

    async def elicit(self, message: str, requested_schema: Mapping[str, Any]) -> dict[str, Any] | None:
        """Ask the client's user (form mode): ``{"action": "accept"|"decline"|"cancel", "content": ...}``,
        or ``None`` when the client cannot be asked or did not answer. See :mod:`mcpkit.server` ``ask``."""
        if self._elicit is None:
            return None
        return await self._elicit(message, dict(requested_schema))

    async def progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        """Report progress; sent as ``notifications/progress`` when the client gave a token."""
        await self._send_progress(progress, total, message)

    async def log(self, level: str, message: str) -> None:
        """Log ``message`` to the server's log and, when enabled, to the client.

        The client gets it as ``notifications/message`` only when the server declares logging
        and the level is at or above the one the client set with ``logging/setLevel``.
        """
        if level not in _PYTHON_LEVELS:
            raise ValueError(f"unknown log level {level!r}: use one of {', '.join(LOG_LEVELS)}")
        logger.log(_PYTHON_LEVELS[level], "%s: %s", self.tool or "tool", message)
        threshold = self._log_threshold()
        if threshold is not None and LOG_LEVELS.index(level) >= LOG_LEVELS.index(threshold):
            await self._send_log(level, message)


_CURRENT: ContextVar[ToolContext | None] = ContextVar("mcpkit_tool_context", default=None)


def current_context() -> ToolContext:
    """The running tool call's :class:`ToolContext`, for a handler bound to an application
    context (:meth:`ToolSpec.bind`), whose second argument is that context instead: a Redmine
    bulk change reports its progress through this one. Outside a call, a no-op context."""
    return _CURRENT.get() or ToolContext()


def takes_context(handler: Callable[..., Any]) -> bool:
    """Whether ``handler`` accepts a second positional parameter (the :class:`ToolContext`)."""
    try:
        parameters = list(inspect.signature(handler).parameters.values())
    except (TypeError, ValueError):
        return False
    positional = [
        p
        for p in parameters
        if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    ]
    return len(positional) >= 2 or any(p.kind == inspect.Parameter.VAR_POSITIONAL for p in parameters)
