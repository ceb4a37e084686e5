"""A small mcpkit server: the example from the README, also used by tests and benchmarks.

Run it over stdio (what a client such as Claude Desktop does)::

    python examples/echo_server.py
    python examples/echo_server.py --transport http --port 8000

``--resources`` and ``--prompts`` add one of each, to show that the capabilities grow only
when there is something to serve.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from mcpkit.errors import ValidationError
from mcpkit.results import text_result
from mcpkit.server import PromptArgumentSpec, PromptSpec, ResourceSpec, ServerOptions, build_server, serve
from mcpkit.tools import ToolSpec, coerce
from mcpkit.tools import params as p


async def echo(args: dict[str, Any]) -> str:
    return str(args["text"])


async def add(args: dict[str, Any]) -> Any:
    a = coerce.as_number_or_special(args["a"])
    b = coerce.as_number_or_special(args["b"])
    total = a + b
    shown = str(coerce.as_number_or_special(total))
    return text_result(shown, structured={"sum": total})


async def user_label(args: dict[str, Any]) -> str:
    user = coerce.as_id(args["user"], allow=("me", "current"))
    return "you" if isinstance(user, str) else f"user number {user}"


async def divide(args: dict[str, Any]) -> str:
    a, b = float(args["a"]), float(args["b"])
    if b == 0:
        raise ValidationError("Cannot divide by zero: give a divisor other than 0")
    return str(coerce.as_number_or_special(a / b))


async def crash(args: dict[str, Any]) -> str:
    raise RuntimeError("secret internal detail that must not reach the client")


TOOLS = [
    ToolSpec(
        name="echo",
        description="Return the given text unchanged.",
        input_schema=p.object_schema({"text": p.string("Text to send back")}, required=["text"]),
        handler=echo,
        category="basic",
        read_only=True,
    ),
    ToolSpec(
        name="add",
        description="Add two numbers given as numbers or as text.",
        input_schema=p.object_schema(
            {"a": p.string("First number as digits"), "b": p.string("Second number as digits")},
            required=["a", "b"],
        ),
        handler=add,
        category="math",
        read_only=True,
        output_schema=p.object_schema({"sum": p.number("The total")}, required=["sum"]),
    ),
    ToolSpec(
        name="user-label",
        description="Describe a user given by number or by the word me or current.",
        input_schema=p.object_schema({"user": p.string("User number, me or current")}, required=["user"]),
        handler=user_label,
        category="basic",
        read_only=True,
    ),
    ToolSpec(
        name="divide",
        description="Divide a by b and refuse a zero divisor with a clear message.",
        input_schema=p.object_schema(
            {"a": p.number("Dividend"), "b": p.number("Divisor")}, required=["a", "b"]
        ),
        handler=divide,
        category="math",
        read_only=True,
    ),
    ToolSpec(
        name="crash",
        description="Always fails inside, to show that a failure becomes a clean error result.",
        input_schema=p.object_schema(),
        handler=crash,
        category="debug",
        read_only=False,
        destructive=False,
        idempotent=True,
    ),
]


async def _readme() -> str:
    return "mcpkit example server: tools echo, add, user-label, divide, crash."


async def _greet(args: Any) -> str:
    return f"Say hello to {args.get('name', 'the user')} in one short sentence."


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--resources", action="store_true", help="also serve one resource")
    parser.add_argument("--prompts", action="store_true", help="also serve one prompt")
    opts = parser.parse_args()
    resources = [ResourceSpec("mcpkit://readme", "readme", _readme)] if opts.resources else None
    prompts = (
        [PromptSpec("greet", _greet, "Greet someone", [PromptArgumentSpec("name", "Who to greet")])]
        if opts.prompts
        else None
    )
    options = ServerOptions.from_environ(os.environ).with_http(host=opts.host, port=opts.port)
    server = build_server(
        "mcpkit-echo", "0.1.0", TOOLS, options=options, resources=resources, prompts=prompts
    )
    serve(server, opts.transport)


if __name__ == "__main__":
    main()
