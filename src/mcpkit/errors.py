"""The root of mcpkit's error hierarchy.

Each part raises its own subclasses; the faces (MCP, JSON-RPC, CLI) translate them once,
so a handler never has to know how its error will be shown.
"""


class McpkitError(Exception):
    """Base class for every error mcpkit raises on purpose.

    Its ``str()`` is a one-line message meant for a human (and a model): what went wrong
    and, where it helps, what to do.
    """


class ValidationError(McpkitError, ValueError):
    """An argument or a piece of input data is not acceptable.

    Raised by the coercers in :mod:`mcpkit.tools.coerce` and by schema validation; a
    server turns it into an ``isError`` result naming the bad value.
    """
