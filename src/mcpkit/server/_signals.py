"""The one place a server waits for the signals that mean "stop now" (SIGINT, SIGTERM, SIGHUP).

A server started by a client must end cleanly when asked to, without a traceback and without
half-written output; stdio and HTTP serving both wait here, so both stop the same way.
"""

from __future__ import annotations

import logging
import signal

import anyio

__all__ = ["STOP_SIGNALS", "stop_signal_received", "wait_for_stop_signal"]

logger = logging.getLogger("mcpkit.server")

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

_received: list[signal.Signals] = []


def stop_signal_received() -> signal.Signals | None:
    """The first stop signal this process received while serving, or None: a command that
    served until one came exits with 128 + its number, as ``mcpkit call`` does."""
    return _received[0] if _received else None


async def wait_for_stop_signal(stop: tuple[signal.Signals, ...] = STOP_SIGNALS) -> signal.Signals:
    """Return when one of ``stop`` (:data:`STOP_SIGNALS`) arrives (the signal received); a
    server that reloads on SIGHUP (the gateway) leaves it out."""
    with anyio.open_signal_receiver(*stop) as signals:
        async for signum in signals:
            received = signal.Signals(signum)
            logger.info("received %s, shutting down", received.name)
            _received.append(received)
            return received
    raise RuntimeError("signal receiver ended")  # pragma: no cover - the iterator never ends
