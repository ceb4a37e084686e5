"""A complete MCP server in 15 lines: docs/toolkit.md shows it, tests/test_toolkit_docs.py runs it."""

from mcpkit.results import Element, Window, page_of, xml_result
from mcpkit.server import build_server, serve
from mcpkit.tools import ToolContext, ToolSpec
from mcpkit.tools import params as p

ROWS = [f"row {n}" for n in range(1, 501)]


async def list_rows(args: dict, ctx: ToolContext):
    offset, limit = args.get("offset", 0), args.get("limit", 50)
    await ctx.progress(1, 1, "rows read")
    items = [
        Element("row", {"id": offset + i + 1}, text) for i, text in enumerate(ROWS[offset : offset + limit])
    ]
    return xml_result(
        page_of("rows", items, Window(offset, limit, len(ROWS)), next_call="list_rows with offset={offset}")
    )


schema = p.object_schema(
    {"offset": p.integer("Rows to skip", minimum=0), "limit": p.integer("Page size", minimum=1, maximum=100)}
)
serve(
    build_server(
        "rows",
        "1.0",
        [ToolSpec("list_rows", "List the rows, fifty at a time.", schema, list_rows, read_only=True)],
    )
)
