"""How a session behaves, as one value: :class:`SessionOptions`.

Options used to be keywords repeated at each layer (``connect()`` restated all thirteen of
``Session``'s, and the two drifted); now a CLI or an application builds one frozen value and
every layer passes it on unchanged, ``dataclasses.replace`` makes a variant. Nothing here
reads the environment: a CLI decides what ``MCPKIT_TRACE`` means and passes the tracer in.
This module imports nothing of the SDK, so a CLI can build options before it pays for it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from mcpkit.client._handlers import ClientHandlers
    from mcpkit.client._session import Session
    from mcpkit.client._trace import Tracer

DEFAULT_TIMEOUT = 60.0
"""Seconds a call may take when neither the call nor the session says otherwise."""
DEFAULT_CONNECT_TIMEOUT = 30.0
"""Seconds to start and initialize a server when no timeout at all is given."""
DEFAULT_MAX_BODY = 64 * 1024 * 1024
"""Largest HTTP response body read (bytes): a runaway server cannot fill the client's memory."""

Restart = Literal["never", "on-failure"]
Protocol = Literal["auto", "2026-07-28", "2025-11-25"]
PROTOCOLS: tuple[str, ...] = ("auto", "2026-07-28", "2025-11-25")
"""``auto``: the stateless wire (2026-07-28) where the server offers it through ``server/discover``,
the ``initialize`` handshake otherwise; a version: that wire only (2025-11-25 offers the newest
handshake revision; the server may answer with an older one)."""
NotificationHandler = Callable[[str, dict[str, Any]], Awaitable[None]]
"""Receives each server notification (``notifications/tools/list_changed``, progress, log)."""
HungHandler = Callable[["Session"], None]
"""Told once per connection that its stdio server stopped reading its stdin."""


@dataclass(frozen=True, slots=True)
class SessionOptions:
    """Everything about a session but its server.

    ``timeout`` is each call's default deadline (None: wait forever); it covers the whole
    call: waiting for a restart, waiting for room on the server's stdin, writing, waiting
    and reading. ``connect_timeout`` bounds start-up and ``initialize`` (default: the
    ``timeout``, else :data:`DEFAULT_CONNECT_TIMEOUT`). ``restart="on-failure"`` starts a
    stdio server again after it exits or hangs, ``max_restarts`` times, waiting ``backoff``
    seconds doubled each time up to ``max_backoff``. ``raise_on_error`` makes an ``isError``
    result raise :class:`~mcpkit.errors.ToolError`. ``tracer`` records every JSON-RPC message;
    ``forward_stderr`` copies the server's stderr to ours; ``shutdown_grace`` is how long a
    closing server may take before its process group is killed; ``max_body`` is the largest
    HTTP response read (None: no limit). ``handlers`` answers the server's roots, sampling
    and elicitation requests; ``client_info`` is the ``clientInfo`` sent in ``initialize``
    (default: mcpkit's own); ``on_notification`` receives every server notification as
    ``(method, params)``; ``on_hung`` is told when a stdio server stops reading its stdin
    (a supervisor restarts it). ``protocol`` picks the wire (:data:`PROTOCOLS`); the library
    default stays the handshake, which every server speaks and on which relays (the gateway)
    and ``mcpkit check`` still rely for notifications; the CLIs default to ``auto``. ``listen``
    brings the stateless wire's list changes to ``on_notification`` too.
    """

    timeout: float | None = DEFAULT_TIMEOUT
    connect_timeout: float | None = None
    restart: Restart = "never"
    max_restarts: int = 5
    backoff: float = 0.5
    max_backoff: float = 10.0
    raise_on_error: bool = True
    tracer: Tracer | None = None
    forward_stderr: bool = False
    shutdown_grace: float = 1.0
    max_body: int | None = DEFAULT_MAX_BODY
    handlers: ClientHandlers | None = None
    client_info: Mapping[str, Any] | None = None
    on_notification: NotificationHandler | None = None
    on_hung: HungHandler | None = None
    protocol: Protocol = "2025-11-25"
    listen: bool = False
    """On the stateless wire, keep a ``subscriptions/listen`` stream open for the list changes
    the server declares and hand each event to ``on_notification`` as the handshake's
    notification (``notifications/tools/list_changed``, ...); reopened after a drop."""

    def __post_init__(self) -> None:
        if self.protocol not in PROTOCOLS:
            raise ValueError(f"protocol must be one of {', '.join(PROTOCOLS)}, not {self.protocol!r}")
        if self.restart not in ("never", "on-failure"):
            raise ValueError(f"restart must be 'never' or 'on-failure', not {self.restart!r}")
