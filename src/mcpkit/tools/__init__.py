"""How a tool is defined: :class:`ToolSpec`, JSON Schema param helpers, and coercers.

Tool modules import from here only, so every tool looks the same::

    from mcpkit.tools import ToolSpec, params as p, coerce

    async def show_user(args):
        user_id = coerce.as_id(args["id"], allow=("current",))
        ...

    SHOW_USER = ToolSpec(
        name="show_user",
        description="Show one user by number or current for the key owner.",
        input_schema=p.object_schema({"id": p.string("User number or current")}, required=["id"]),
        handler=show_user,
        category="users",
        read_only=True,
    )
"""

from mcpkit.tools import coerce, params
from mcpkit.tools._context import LOG_LEVELS, ToolContext, current_context
from mcpkit.tools._flat import flat_validator
from mcpkit.tools._spec import ContextHandler, Handler, Provide, ToolResult, ToolSpec
from mcpkit.tools.coerce import as_number_or_special

__all__ = [
    "LOG_LEVELS",
    "ContextHandler",
    "Handler",
    "Provide",
    "ToolContext",
    "ToolResult",
    "ToolSpec",
    "as_number_or_special",
    "coerce",
    "current_context",
    "flat_validator",
    "params",
]
