"""Signals end a command the same way Ctrl-C does: every session closes and kills its group.

Python's default for SIGTERM and SIGHUP is to die on the spot, which skips every ``finally``
and the ``atexit`` hook, so ``timeout 5 mcpkit call ...`` or a closed terminal left the
server's whole process group running, re-parented to init (issue 11). Here the three signals
cancel the running command instead; its sessions then close as on any other exit (stdin
closed, SIGTERM, SIGKILL to the group) and the command exits with 128 + the signal number.

A command started with SIGINT ignored keeps ignoring it, as POSIX tools do: a shell starts a
background job (``mcpkit call ... &`` in a script) that way so that Ctrl-C at the terminal
stops only the foreground. Python itself leaves such a SIGINT ignored (no KeyboardInterrupt
ever comes), and a library must not take the signal back from its program; SIGTERM and
SIGHUP still end the command cleanly.
"""

from __future__ import annotations

import signal
from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio
import anyio.abc

from mcpkit.errors import CallError

T = TypeVar("T")
HANDLED = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)


class SignalledError(CallError):
    """The command was stopped by a signal after its servers were shut down."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        self.exit_code = 128 + signum
        super().__init__(f"stopped by {signal.Signals(signum).name}")


def handled_signals() -> tuple[signal.Signals, ...]:
    """The signals a command ends on: SIGTERM, SIGHUP, and SIGINT unless the process was
    started with SIGINT ignored (a background job; see the module's docstring)."""
    ignored = signal.getsignal(signal.SIGINT) == signal.SIG_IGN
    return tuple(s for s in HANDLED if not (s == signal.SIGINT and ignored))


async def run_until_signal(body: Callable[[], Awaitable[T]]) -> T:
    """Await ``body()``; on SIGTERM, SIGHUP or SIGINT cancel it and raise :class:`SignalledError`."""
    caught: list[int] = []
    done: list[T] = []
    handled = handled_signals()

    async def watch(scope: anyio.CancelScope) -> None:
        with anyio.open_signal_receiver(*handled) as signals:
            async for signum in signals:
                caught.append(int(signum))
                scope.cancel()
                return

    failed: list[Exception] = []

    async def run(scope: anyio.CancelScope) -> None:
        try:
            done.append(await body())
        except Exception as exc:  # re-raised plain below, not wrapped in an exception group
            failed.append(exc)
        finally:
            scope.cancel()

    async with anyio.create_task_group() as tg:
        tg.start_soon(watch, tg.cancel_scope)
        tg.start_soon(run, tg.cancel_scope)
    if caught:
        raise SignalledError(caught[0])
    if failed:
        raise failed[0]
    return done[0]


def run_command(body: Callable[[], Awaitable[T]]) -> T:
    """``anyio.run`` with :func:`run_until_signal` around ``body``."""
    return anyio.run(run_until_signal, body)
