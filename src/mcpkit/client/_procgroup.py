"""Ending a server's whole process group, and nothing else.

A stdio server is started in a session of its own (``start_new_session``), so it and every
child it spawns share one process group id equal to its pid. Stopping the server means
stopping that group: the SDK-style "close stdin, then kill the pid" leaves grandchildren
running (a ``npx`` wrapper's node process, a shell's background job). Groups still alive at
interpreter exit are killed by an ``atexit`` hook so even an abandoned session leaves no
orphans behind.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal

import anyio

_live_groups: set[int] = set()


def register(pgid: int) -> None:
    """Remember a group so the exit hook can kill it if nobody else does."""
    _live_groups.add(pgid)


def unregister(pgid: int) -> None:
    _live_groups.discard(pgid)


def group_alive(pgid: int) -> bool:
    """Whether a running process is left in the group.

    Zombies do not count: a grandchild reparented to an init that never reaps (some container
    inits) stays a zombie forever, and it holds no resources we could free by waiting.
    """
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return bool(live_members(pgid)) if os.path.isdir("/proc") else True


def live_members(pgid: int) -> list[int]:
    """Pids of the group's members that are not zombies (Linux ``/proc``)."""
    found: list[int] = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as fh:
                stat = fh.read()
        except OSError:
            continue
        # Fields after the parenthesised command: state ppid pgrp ...
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) >= 3 and fields[2] == str(pgid) and fields[0] not in ("Z", "X"):
            found.append(int(entry))
    return found


def signal_group(pgid: int, sig: signal.Signals) -> None:
    """Send ``sig`` to the group; a group that is already gone is fine."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


async def wait_group_gone(pgid: int, timeout: float, interval: float = 0.02) -> bool:
    """Poll until the group is empty or ``timeout`` passes; True when it emptied."""
    with anyio.move_on_after(timeout):
        while group_alive(pgid):
            await anyio.sleep(interval)
        return True
    return not group_alive(pgid)


async def terminate_group(pgid: int, grace: float) -> None:
    """SIGTERM the group, SIGKILL whatever is left after ``grace`` seconds."""
    signal_group(pgid, signal.SIGTERM)
    if not await wait_group_gone(pgid, grace):
        signal_group(pgid, signal.SIGKILL)
        await wait_group_gone(pgid, grace)
    unregister(pgid)


@atexit.register
def _kill_leftovers() -> None:
    """Last resort at interpreter exit: SIGKILL every group no session closed."""
    for pgid in list(_live_groups):
        signal_group(pgid, signal.SIGKILL)
    _live_groups.clear()
