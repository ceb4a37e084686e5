"""The official conformance suite's fixture, written with mcpkit's ``build_server``.

``@modelcontextprotocol/conformance`` tests a server by calling tools, resources and prompts
it expects by name (``test_simple_text``, ``test://static-text``, ``test_simple_prompt``, ...),
the ones its own TypeScript "everything server" serves. This file serves every one of them
that mcpkit's toolkit can serve, with the same names and contents, so the suite measures
the toolkit rather than the absence of its fixture. What the toolkit does not serve (binary
resources, resource templates, subscriptions, completion, prompts with images or embedded
resources, sampling) is left out, and tests/conformance/expected_failures.toml says so for
each check that fails because of it.

    python examples/conformance_server.py --port 8765     # streamable HTTP at /mcp
    python examples/conformance_server.py                 # stdio (a gateway's downstream)
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import anyio
import mcp_types as types

from mcpkit.results import error_result
from mcpkit.server import (
    PromptArgumentSpec,
    PromptSpec,
    ResourceSpec,
    ServerOptions,
    ask,
    build_server,
    serve,
    start_task,
)
from mcpkit.tools import ToolContext, ToolSpec
from mcpkit.tools import params as p

# The suite's own 1x1 PNG and a tiny WAV (the everything server's TEST_IMAGE_BASE64/TEST_AUDIO_BASE64).
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
WAV = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="


def result(*content: Any) -> types.CallToolResult:
    return types.CallToolResult(content=list(content))


def text(value: str) -> types.TextContent:
    return types.TextContent(text=value)


def embedded(uri: str, mime: str, value: str) -> types.EmbeddedResource:
    return types.EmbeddedResource(resource=types.TextResourceContents(uri=uri, mime_type=mime, text=value))


async def simple_text(args: dict[str, Any]) -> types.CallToolResult:
    return result(text("This is a simple text response for testing."))


async def image(args: dict[str, Any]) -> types.CallToolResult:
    return result(types.ImageContent(data=PNG, mime_type="image/png"))


async def audio(args: dict[str, Any]) -> types.CallToolResult:
    return result(types.AudioContent(data=WAV, mime_type="audio/wav"))


async def embedded_resource(args: dict[str, Any]) -> types.CallToolResult:
    return result(embedded("test://embedded-resource", "text/plain", "This is an embedded resource content."))


async def mixed(args: dict[str, Any]) -> types.CallToolResult:
    return result(
        text("Multiple content types test:"),
        types.ImageContent(data=PNG, mime_type="image/png"),
        embedded("test://mixed-content-resource", "application/json", '{"test":"data","value":123}'),
    )


async def with_logging(args: dict[str, Any], ctx: ToolContext) -> str:
    for line in ("Tool execution started", "Tool processing data", "Tool execution completed"):
        await ctx.log("info", line)
    return "Tool with logging executed successfully"


async def with_progress(args: dict[str, Any], ctx: ToolContext) -> str:
    for step in (0, 50, 100):
        await ctx.progress(step, 100, f"Completed step {step} of 100")
    return "progress reported"


async def error_handling(args: dict[str, Any]) -> types.CallToolResult:
    return types.CallToolResult(
        content=[text("This tool intentionally returns an error for testing")], is_error=True
    )


def asking(message: str, schema: Mapping[str, Any], label: str) -> Any:
    """A tool that puts ``schema`` to the user (elicitation) and reports the answer as the fixture does."""

    async def run(args: dict[str, Any], ctx: ToolContext) -> str:
        answer = await ask(ctx, str(args.get("message") or message), schema)
        return f"{label}: action={answer.action}, content={dict(answer.content)}"

    return run


NAME_FORM = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


async def input_required_elicitation(args: dict[str, Any], ctx: ToolContext) -> str:
    """On the 2026-07-28 wire ``ask`` ends the call with an InputRequiredResult; the retry answers it."""
    answer = await ask(ctx, "What is your name?", NAME_FORM)
    return f"Hello, {answer.content.get('name')}!" if answer.accepted else f"No name given ({answer.action})."


OK_FORM = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
NAME_OPTIONAL = {"type": "object", "properties": {"name": {"type": "string"}}}


async def input_required_state(args: dict[str, Any], ctx: ToolContext) -> str:
    """The answer comes back with the call's requestState, which the SDK's boundary has checked."""
    answer = await ask(ctx, "Shall we go on?", OK_FORM)
    return f"state-ok: {answer.action}"


async def input_required_rounds(args: dict[str, Any], ctx: ToolContext) -> str:
    """Two questions: the handler runs again from the top each round, each ask answered returns at once."""
    first = await ask(ctx, "Step 1: What is your name?", NAME_OPTIONAL)
    second = await ask(ctx, "Step 2: And your colleague's?", NAME_OPTIONAL)
    return f"Both steps answered: {first.content.get('name')}, {second.content.get('name')}"


RESPONSE_FORM = {
    "type": "object",
    "properties": {"response": {"type": "string", "description": "User's response"}},
    "required": ["response"],
}
DEFAULTS_FORM = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "User name", "default": "John Doe"},
        "age": {"type": "integer", "description": "User age", "default": 30},
        "score": {"type": "number", "description": "User score", "default": 95.5},
        "status": {
            "type": "string",
            "description": "User status",
            "enum": ["active", "inactive", "pending"],
            "default": "active",
        },
        "verified": {"type": "boolean", "description": "Verification status", "default": True},
    },
    "required": [],
}
ENUMS_FORM = {
    "type": "object",
    "properties": {
        "untitledSingle": {
            "type": "string",
            "description": "Select one option",
            "enum": ["option1", "option2", "option3"],
        },
        "titledSingle": {
            "type": "string",
            "description": "Select one option with titles",
            "oneOf": [
                {"const": "value1", "title": "First Option"},
                {"const": "value2", "title": "Second Option"},
                {"const": "value3", "title": "Third Option"},
            ],
        },
        "legacyEnum": {
            "type": "string",
            "description": "Select one option (legacy)",
            "enum": ["opt1", "opt2", "opt3"],
            "enumNames": ["Option One", "Option Two", "Option Three"],
        },
        "untitledMulti": {
            "type": "array",
            "description": "Select multiple options",
            "minItems": 1,
            "maxItems": 3,
            "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
        },
        "titledMulti": {
            "type": "array",
            "description": "Select multiple options with titles",
            "minItems": 1,
            "maxItems": 3,
            "items": {
                "anyOf": [
                    {"const": "value1", "title": "First Choice"},
                    {"const": "value2", "title": "Second Choice"},
                    {"const": "value3", "title": "Third Choice"},
                ]
            },
        },
    },
    "required": [],
}


# The suite's JSON Schema 2020-12 tool (SEP-1613, SEP-2106): $schema, $defs with an $anchor, $ref,
# allOf/anyOf, if/then/else and additionalProperties, which a server must list unchanged.
SCHEMA_2020_12: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}


async def schema_2020_12(args: dict[str, Any]) -> str:
    return f"JSON Schema 2020-12 tool called with: {args}"


def tool(name: str, description: str, handler: Any, schema: dict[str, Any] | None = None) -> ToolSpec:
    return ToolSpec(name, description, schema or p.object_schema({}), handler, read_only=True)


TOOLS = [
    tool("test_simple_text", "Tests simple text content response", simple_text),
    tool("test_image_content", "Tests image content response", image),
    tool("test_audio_content", "Tests audio content response", audio),
    tool("test_embedded_resource", "Tests embedded resource content response", embedded_resource),
    tool("test_multiple_content_types", "Tests response with text, image and resource content", mixed),
    tool("test_tool_with_logging", "Tests tool that emits log messages during execution", with_logging),
    tool("test_tool_with_progress", "Tests tool that reports progress notifications", with_progress),
    tool("test_error_handling", "Tests error response handling", error_handling),
    tool(
        "test_elicitation",
        "Tests server-initiated elicitation, a user input request",
        asking("Please answer", RESPONSE_FORM, "User response"),
        p.object_schema({"message": p.string("The message to show the user")}, required=["message"]),
    ),
    tool(
        "test_elicitation_sep1034_defaults",
        "Tests elicitation with default values per SEP-1034",
        asking(
            "Please review and update the form fields with defaults", DEFAULTS_FORM, "Elicitation completed"
        ),
    ),
    tool(
        "test_elicitation_sep1330_enums",
        "Tests elicitation with enum schema improvements per SEP-1330",
        asking("Please select options from the enum fields", ENUMS_FORM, "Elicitation completed"),
    ),
    tool(
        "test_input_required_result_elicitation",
        "Asks the user's name: an input request on the 2026-07-28 wire, elicitation on 2025",
        input_required_elicitation,
    ),
    tool(
        "test_input_required_result_request_state",
        "Asks one question whose answer rides the call's integrity-protected requestState",
        input_required_state,
    ),
    tool("test_input_required_result_multi_round", "Asks two questions, one a round", input_required_rounds),
    tool(
        "test_input_required_result_tampered_state",
        "Asks one question; a tampered requestState is refused with -32602",
        input_required_state,
    ),
    tool(
        "json_schema_2020_12_tool",
        "Tool with JSON Schema 2020-12 features for conformance testing, SEP-1613",
        schema_2020_12,
        SCHEMA_2020_12,
    ),
]


# -- tasks (the io.modelcontextprotocol/tasks scenarios' fixture tools) ----------------------


async def greet(args: dict[str, Any]) -> str:
    return f"Hello, {args.get('name', 'World')}!"


async def slow_compute(args: dict[str, Any], ctx: ToolContext) -> str:
    """Sleeps ``seconds`` (the work a task stands for), reporting progress each second; a
    cancelled task stops here, so it settles as ``cancelled``."""
    seconds = max(0, int(args.get("seconds") or 0))
    for done in range(seconds):
        await ctx.progress(done, seconds)
        await anyio.sleep(1)
    return f"Computed {args.get('label', 'result')} in {seconds}s"


async def failing_job(args: dict[str, Any]) -> types.CallToolResult:
    return error_result("failing_job always fails: this is the tool's own error")


async def protocol_error_job(args: dict[str, Any]) -> str:
    raise RuntimeError("protocol_error_job always breaks")


CONFIRM_FORM = {"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]}


async def confirm_delete(args: dict[str, Any], ctx: ToolContext) -> str:
    """As a task the question parks it in input_required until tasks/update answers."""
    filename = str(args.get("filename") or "the file")
    answer = await ask(ctx, f"Delete {filename}?", CONFIRM_FORM)
    if answer.accepted and answer.content.get("confirm"):
        return f"Deleted {filename}"
    return f"Kept {filename} ({answer.action})"


async def multi_input(args: dict[str, Any], ctx: ToolContext) -> str:
    """Two questions asked at once: both keys are open on the task together."""
    answers: dict[str, Any] = {}

    async def put(key: str, message: str, schema: Mapping[str, Any]) -> None:
        answers[key] = await ask(ctx, message, schema)

    async with anyio.create_task_group() as tg:
        tg.start_soon(put, "name", "What is your name?", NAME_OPTIONAL)
        tg.start_soon(put, "confirm", "Go on?", OK_CONFIRM)
    return f"name={answers['name'].content.get('name')}, confirm={answers['confirm'].content.get('confirm')}"


async def tool_with_task(args: dict[str, Any], ctx: ToolContext) -> str:
    """Asks on the call (2026: input requests of the call's rounds), then goes on as a task."""
    answer = await ask(ctx, "What is your name?", NAME_FORM)
    await start_task(ctx)
    await anyio.sleep(0.2)  # the work the task stands for
    return f"Hello, {answer.content.get('name')}!" if answer.accepted else f"No name given ({answer.action})."


OK_CONFIRM = {"type": "object", "properties": {"confirm": {"type": "boolean"}}}


def task_tool(
    name: str, description: str, handler: Any, schema: dict[str, Any] | None = None, *, tasks: Any = True
) -> ToolSpec:
    return ToolSpec(name, description, schema or p.object_schema({}), handler, read_only=True, tasks=tasks)


TASK_SECONDS = p.object_schema(
    {"seconds": p.integer("How long the work takes, in seconds"), "label": p.string("A label for the result")}
)
TOOLS += [
    tool("greet", "Greets by name (sync only)", greet, p.object_schema({"name": p.string("Who to greet")})),
    task_tool("slow_compute", "Sleeps `seconds`, then answers; runs as a task", slow_compute, TASK_SECONDS),
    task_tool("failing_job", "Always a tool error; runs only as a task", failing_job, tasks="required"),
    task_tool("protocol_error_job", "Always breaks; runs as a task", protocol_error_job),
    task_tool(
        "confirm_delete",
        "Asks to confirm a deletion; as a task it waits in input_required",
        confirm_delete,
        p.object_schema({"filename": p.string("The file to delete")}),
    ),
    task_tool("multi_input", "Asks two questions at once; runs as a task", multi_input),
    replace(
        task_tool(
            "test_tool_with_task",
            "Asks a name on the call, then runs as a task",
            tool_with_task,
            tasks="required",
        ),
        asks_before_task=True,
    ),
]


async def static_text() -> str:
    return "This is the content of the static text resource."


RESOURCES = [
    ResourceSpec("test://static-text", "static-text", static_text, "A static text resource for testing"),
]


async def simple_prompt(args: Mapping[str, str]) -> str:
    return "This is a simple prompt for testing."


async def prompt_with_arguments(args: Mapping[str, str]) -> str:
    return f"Prompt with arguments: arg1='{args.get('arg1')}', arg2='{args.get('arg2')}'"


PROMPTS = [
    PromptSpec("test_simple_prompt", simple_prompt, "A simple prompt without arguments"),
    PromptSpec(
        "test_prompt_with_arguments",
        prompt_with_arguments,
        "A prompt with required arguments",
        (
            PromptArgumentSpec("arg1", "First test argument", required=True),
            PromptArgumentSpec("arg2", "Second test argument", required=True),
        ),
    ),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, help="serve streamable HTTP on this port (default: stdio)")
    port = parser.parse_args().port
    options = ServerOptions() if port is None else ServerOptions().with_http(port=port)
    server = build_server(
        "mcpkit-conformance-fixture",
        "1.0",
        TOOLS,
        options=options,
        resources=RESOURCES,
        prompts=PROMPTS,
        client_logging=True,
    )
    serve(server, "stdio" if port is None else "http")


if __name__ == "__main__":
    main()
