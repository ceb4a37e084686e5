"""The floor for any gateway written in Python: a bare stdio relay, for bench/gateway_overhead.py.

It starts the command given as its arguments and passes JSON-RPC lines both ways, decoding
and re-encoding each one (a gateway must at least read the tool name and the id), on asyncio
with no SDK, no validation and no adaptation. Whatever a relay hop costs here, two more pipe
hops and two more process wake-ups per call, no Python gateway can go below.

    python bench/gateway_relay_floor.py python bench/gateway_echo_server.py
"""

from __future__ import annotations

import asyncio
import json
import os
import sys


async def relay(argv: list[str]) -> None:
    child = await asyncio.create_subprocess_exec(
        *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
    )
    assert child.stdin is not None and child.stdout is not None
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 26)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, os.fdopen(os.dup(1), "wb")
    )
    out = asyncio.StreamWriter(transport, protocol, None, loop)

    async def up() -> None:
        while line := await reader.readline():
            child.stdin.write((json.dumps(json.loads(line)) + "\n").encode())  # type: ignore[union-attr]
        child.stdin.close()  # type: ignore[union-attr]

    async def down() -> None:
        while line := await child.stdout.readline():  # type: ignore[union-attr]
            out.write((json.dumps(json.loads(line)) + "\n").encode())

    await asyncio.gather(up(), down())
    await child.wait()


if __name__ == "__main__":
    asyncio.run(relay(sys.argv[1:]))
