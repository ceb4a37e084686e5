"""Check a server a doc block starts, as an MCP client would: initialize, list tools, maybe call one.

    python tests/docs/probe.py [--call NAME --args JSON --expect-error] (--url URL | -- COMMAND...)

Exit 0 when the server answered as expected, else 1 with one line on stderr. Over HTTP the
server is being started beside the probe, so connecting is retried until ``--wait`` seconds.
A stdio command is spawned by the client itself, which ends its process group on close.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import anyio

from mcpkit.client import JsonRpcError, ToolError, connect


async def probe(opts: argparse.Namespace) -> str:
    target: str | list[str] = opts.url or opts.command
    deadline = time.monotonic() + opts.wait
    while True:
        try:
            headers = {"Authorization": f"Bearer {os.environ[opts.bearer_env]}"} if opts.bearer_env else None
            async with connect(target, headers=headers) as session:
                tools = await session.list_tools()
                if not opts.call:
                    return f"{len(tools)} tools"
                try:
                    outcome = await session.call(opts.call, json.loads(opts.args))
                except ToolError as exc:
                    if opts.expect_error:
                        return f"isError result: {exc}"
                    raise SystemExit(f"{opts.call}: isError result: {exc}") from None
                except JsonRpcError as exc:
                    raise SystemExit(f"{opts.call}: a JSON-RPC error, not a tool result: {exc}") from None
                if opts.expect_error:
                    raise SystemExit(f"{opts.call}: expected an isError result, got {outcome.text!r}")
                return f"{len(tools)} tools; {opts.call}: {outcome.text[:200]}"
        except OSError:
            if not opts.url or time.monotonic() > deadline:
                raise
        except Exception as exc:
            if not opts.url or time.monotonic() > deadline or isinstance(exc, SystemExit):
                raise
        await anyio.sleep(0.2)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url")
    parser.add_argument("--call")
    parser.add_argument("--args", default="{}")
    parser.add_argument("--expect-error", action="store_true")
    parser.add_argument("--wait", type=float, default=120.0)
    parser.add_argument("--bearer-env", help="send Authorization: Bearer $NAME")
    parser.add_argument("command", nargs="*")
    opts = parser.parse_args()
    print(anyio.run(probe, opts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
