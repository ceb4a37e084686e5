"""The stdin line reader (mcpkit.server._stdin.CancellableLines) on real descriptors."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpkit.server._stdin import CancellableLines

pytestmark = pytest.mark.anyio


def _pipe() -> tuple[int, int]:
    r, w = os.pipe()
    os.set_blocking(r, False)
    return r, w


async def test_lines_written_in_pieces_come_whole_and_in_order() -> None:
    r, w = _pipe()
    lines = CancellableLines(r)
    got: list[str] = []

    def write() -> None:  # a thread, as a real peer: a full pipe blocks the writer, not the loop
        for i in range(200):
            os.write(w, f'{{"n": {i}, '.encode())
            time.sleep(0.0005 if i % 20 == 0 else 0)
            os.write(w, b'"t": "\xc3\xa9"}\n' + (b"x" * 70_000 + b"\n" if i == 100 else b""))
        os.close(w)

    async with anyio.create_task_group() as tg:
        tg.start_soon(anyio.to_thread.run_sync, write)
        async for line in lines:
            got.append(line)
    lines.close()
    os.close(r)
    expected = [f'{{"n": {i}, "t": "é"}}\n' for i in range(200)]
    expected.insert(101, "x" * 70_000 + "\n")
    assert got == expected


async def test_a_regular_file_is_read_to_its_end(tmp_path: Path) -> None:
    path = tmp_path / "requests.jsonl"
    path.write_text("".join(f"line {i}\n" for i in range(5000)) + "last without newline")
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    lines = CancellableLines(fd)
    got = [line async for line in lines]
    lines.close()
    os.close(fd)
    assert len(got) == 5001 and got[0] == "line 0\n" and got[-1] == "last without newline"


async def test_a_waiting_reader_is_cancelled_at_once() -> None:
    r, w = _pipe()
    lines = CancellableLines(r)
    started = time.monotonic()
    with anyio.move_on_after(0.2):
        await lines.__anext__()
    assert time.monotonic() - started < 2
    os.write(w, b"after\n")  # still readable after a cancelled wait
    assert await lines.__anext__() == "after\n"
    lines.close()
    os.close(r)
    os.close(w)


async def test_unread_input_does_not_spin_the_loop_while_the_reader_is_busy() -> None:
    """Input waiting while nobody asks for a line must not wake the loop over and over."""
    r, w = _pipe()
    lines = CancellableLines(r)
    wakes = 0
    ready = lines._ready

    def counting() -> None:
        nonlocal wakes
        wakes += 1
        ready()

    lines._ready = counting  # type: ignore[method-assign]
    os.write(w, b"one\n")
    assert await lines.__anext__() == "one\n"
    os.write(w, b"two\n")  # arrives while the consumer "works"
    await anyio.sleep(0.3)  # hundreds of loop turns would pass here
    assert wakes <= 3, wakes
    assert await lines.__anext__() == "two\n"
    lines.close()
    os.close(r)
    os.close(w)


async def test_a_request_at_a_time_keeps_one_registration() -> None:
    """A client that waits for each answer: the descriptor is registered once, not per line."""
    import asyncio

    loop = asyncio.get_running_loop()
    registrations = 0
    add_reader = loop.add_reader

    def counting(fd: int, callback: Any, *args: Any) -> None:
        nonlocal registrations
        registrations += 1
        add_reader(fd, callback, *args)

    loop.add_reader = counting  # type: ignore[method-assign]
    r, w = _pipe()
    lines = CancellableLines(r)
    try:
        for i in range(50):
            os.write(w, f"request {i}\n".encode())
            assert await lines.__anext__() == f"request {i}\n"
            for _ in range(3):  # the "answer" takes a few loop turns
                await anyio.sleep(0)
    finally:
        loop.add_reader = add_reader  # type: ignore[method-assign]
        lines.close()
        os.close(r)
        os.close(w)
    assert registrations <= 2, registrations
