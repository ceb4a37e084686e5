"""A five-step tour of the mcpkit toolkit (what ``make demo`` shows until the archive app lands).

1. A tool definition in the style that crashed Claude Desktop (parentheses, underscores) is linted.
2. ``adapt`` rewrites it for that client and lint comes back clean.
3. The fixed tool is served by ``build_server``; its capabilities are exactly ``tools``.
4. A real SDK client calls it over stdio: good input, bad input, an unknown tool.
5. Every result is checked against the MCP schema.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from rich.console import Console
from rich.table import Table

from mcpkit.compat import adapt, lint
from mcpkit.results import to_wire, validate_result

console = Console()
HERE = Path(__file__).resolve().parent

CRASHING_STYLE = {
    "name": "show_user",
    "description": "Show a user (requires admin privileges).\nUse 'current' as ID for own details.\n"
    "Includes time_entries and custom_fields.",
    "inputSchema": {
        "type": "object",
        "properties": {"id": {"type": ["number", "string"], "description": "User ID (numeric) or 'current'"}},
        "required": ["id"],
    },
}


def step_lint_and_adapt() -> None:
    console.rule("[bold]1. lint a tool in the style that crashed Claude Desktop against claude-desktop-2025")
    findings = lint([CRASHING_STYLE], "claude-desktop-2025")
    table = Table("rule", "severity", "pointer", "message")
    for f in findings:
        table.add_row(f.rule, f.severity, f.pointer, f.message)
    console.print(table)
    console.rule("[bold]2. adapt it and lint again")
    fixed, changes = adapt(CRASHING_STYLE, "claude-desktop-2025")
    for change in changes:
        console.print(f"  [green]changed[/] {change}")
    assert isinstance(fixed, dict)
    console.print_json(data=fixed)
    remaining = [f for f in lint([fixed], "claude-desktop-2025") if f.severity == "error"]
    console.print(f"errors after adapt: [bold]{len(remaining)}[/]")


async def step_serve_and_call() -> None:
    console.rule("[bold]3-5. serve examples/echo_server.py and call it with the SDK client")
    params = StdioServerParameters(command=sys.executable, args=[str(HERE / "echo_server.py")])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        init = await session.initialize()
        caps = init.capabilities.model_dump(by_alias=True, exclude_none=True)
        console.print(f"capabilities: {caps}")
        calls: list[tuple[str, dict[str, Any]]] = [
            ("add", {"a": "2", "b": "40"}),
            ("user-label", {"user": "me"}),
            ("user-label", {"user": "somebody"}),
            ("divide", {"a": 1, "b": 0}),
            ("echo", {"txet": "typo"}),
            ("crash", {}),
            ("no-such-tool", {}),
        ]
        table = Table("call", "isError", "text", "valid")
        for name, args in calls:
            result = await session.call_tool(name, args)
            raw = to_wire(result)
            problems = validate_result(raw, "2025-11-25")
            text = " ".join(c.get("text", "") for c in raw["content"])
            table.add_row(
                f"{name} {args}", str(bool(raw.get("isError"))), text, "yes" if not problems else "NO"
            )
        console.print(table)
    console.print("\nNext: [bold]make test[/] runs everything; see README.md for the CLI and the apps.")


def main() -> None:
    step_lint_and_adapt()
    anyio.run(step_serve_and_call)


if __name__ == "__main__":
    main()
