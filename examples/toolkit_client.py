"""A client in 15 lines: pages through examples/toolkit_server.py by next_offset (see docs/toolkit.md)."""

import sys
import xml.etree.ElementTree as ET

import anyio

from mcpkit.client import connect


async def main() -> None:
    seen, offset = 0, "0"
    async with connect([sys.executable, "examples/toolkit_server.py"]) as session:
        while offset is not None:
            outcome = await session.call("list_rows", {"offset": offset, "limit": "100"})  # strings are fine
            page = ET.fromstring(outcome.text)
            seen, offset = seen + len(page), page.get("next_offset")
    print(f"read {seen} rows")


anyio.run(main)
