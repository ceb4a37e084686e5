"""build_server: an MCP server on the SDK's low-level ``Server`` that only says what is true.

Why not the SDK's high-level ``MCPServer``: it registers resource and prompt handlers even
when there are none, so a tools-only server advertises capabilities it does not serve (the
seed 003 bug). Here a capability exists exactly when its handler does.

Every ``tools/call`` ends in a valid ``CallToolResult``: unknown or hidden tools, arguments
that do not match the input schema, and handler exceptions all become ``isError`` results
with one human-readable line; tracebacks go to the log only.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast

import anyio
import mcp_types
from jsonschema import Draft202012Validator
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.server.stdio import stdio_server

from mcpkit.compat import DEFAULT_PROFILES, Finding, lint
from mcpkit.errors import McpkitError
from mcpkit.results import error_result, text_result
from mcpkit.server.arguments import ArgumentValidator
from mcpkit.server.extras import PromptSpec, ResourceSpec
from mcpkit.server.filters import ToolFilter
from mcpkit.server.stdin import claimed_stdin
from mcpkit.tools import ToolSpec

logger = logging.getLogger("mcpkit.server")

Ctx = ServerRequestContext[Any, Any]


class ToolDefinitionError(McpkitError):
    """Tool definitions that a target client would reject or crash on (strict mode)."""

    def __init__(self, findings: Sequence[Finding]) -> None:
        self.findings = list(findings)
        lines = [f"{f.tool}: {f.rule} {f.pointer} {f.message}" for f in self.findings[:20]]
        more = f"\n... and {len(self.findings) - 20} more" if len(self.findings) > 20 else ""
        super().__init__(
            f"{len(self.findings)} tool definition error(s) for the chosen client profiles:\n"
            + "\n".join(lines)
            + more
        )


def _strict_default() -> bool:
    """Fail fast when developing or testing, warn in production.

    ``MCPKIT_STRICT=1|0`` decides explicitly; otherwise strict under pytest, so a tool
    definition that breaks a client can never pass a test run.
    """
    explicit = os.environ.get("MCPKIT_STRICT")
    if explicit:
        return explicit.strip().lower() in ("1", "true", "yes", "on")
    return "PYTEST_CURRENT_TEST" in os.environ or "PYTEST_VERSION" in os.environ


class _CompiledTool:
    """A visible tool with its argument validator compiled once."""

    __slots__ = ("output_validator", "spec", "validator")

    def __init__(self, spec: ToolSpec) -> None:
        self.spec = spec
        self.validator = ArgumentValidator(spec.input_schema)
        self.output_validator = (
            Draft202012Validator(dict(spec.output_schema)) if spec.output_schema is not None else None
        )


DRAIN_SECONDS = 10.0
_SETTLE_SECONDS = 0.05


class _HonestServer(Server[Any]):
    """The SDK's low-level server, minus one empty capability object.

    mcp 2.3.0's ``create_initialization_options`` passes the server's (empty) extension map on
    explicitly, so every ``initialize`` answer carried ``"extensions": {}``: an empty capability
    object, which is what made a client misread capabilities in seed 003. An empty map is now
    left out; a server with real extensions still announces them.
    """

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        options = super().create_initialization_options(
            notification_options, experimental_capabilities, extensions
        )
        if options.capabilities.extensions == {}:
            capabilities = options.capabilities.model_copy(update={"extensions": None})
            options = options.model_copy(update={"capabilities": capabilities})
        return options


class McpkitServer:
    """A built server: the visible tools, the SDK server, and runners for stdio and HTTP."""

    def __init__(
        self,
        name: str,
        version: str,
        tools: Sequence[ToolSpec],
        hidden: Mapping[str, str],
        resources: Sequence[ResourceSpec],
        prompts: Sequence[PromptSpec],
        instructions: str | None,
        findings: Sequence[Finding],
    ) -> None:
        self.name = name
        self.version = version
        self.tools: list[ToolSpec] = list(tools)
        self.hidden: dict[str, str] = dict(hidden)
        self.resources = list(resources)
        self.prompts = list(prompts)
        self.findings = list(findings)
        self._compiled = {t.name: _CompiledTool(t) for t in self.tools}
        self._in_flight = 0
        self._tool_list = mcp_types.ListToolsResult(tools=[t.to_mcp() for t in self.tools])
        handlers: dict[str, Any] = {"on_list_tools": self._list_tools, "on_call_tool": self._call_tool}
        if self.resources:
            self._resources = {r.uri: r for r in self.resources}
            handlers["on_list_resources"] = self._list_resources
            handlers["on_read_resource"] = self._read_resource
        if self.prompts:
            self._prompts = {p.name: p for p in self.prompts}
            handlers["on_list_prompts"] = self._list_prompts
            handlers["on_get_prompt"] = self._get_prompt
        self.lowlevel: Server[Any] = _HonestServer(
            name, version=version, instructions=instructions, **handlers
        )

    # -- tools -------------------------------------------------------------------------------

    async def _list_tools(self, ctx: Ctx, params: mcp_types.PaginatedRequestParams | None) -> Any:
        return self._tool_list

    async def _call_tool(self, ctx: Ctx, params: mcp_types.CallToolRequestParams) -> mcp_types.CallToolResult:
        self._in_flight += 1
        try:
            return await self.call(params.name, params.arguments)
        finally:
            self._in_flight -= 1

    async def _drain(self) -> None:
        """At the end of stdin: let calls already read finish and their answers reach stdout.

        Bounded by ``DRAIN_SECONDS`` so a hung tool cannot keep an abandoned server alive.
        """
        with anyio.move_on_after(DRAIN_SECONDS):
            await anyio.sleep(_SETTLE_SECONDS)  # requests just read reach their handlers
            while self._in_flight:
                await anyio.sleep(0.01)
            await anyio.sleep(_SETTLE_SECONDS)  # the last answers reach the writer

    async def call(self, name: str, arguments: Mapping[str, Any] | None) -> mcp_types.CallToolResult:
        """Run one tool call exactly as a client's ``tools/call`` would (used by tests too)."""
        compiled = self._compiled.get(name)
        if compiled is None:
            if name in self.hidden:
                return error_result(f"Tool {name!r} is not available: {self.hidden[name]}.")
            known = ", ".join(sorted(self._compiled)[:30])
            return error_result(f"Unknown tool {name!r}. Available tools: {known or 'none'}.")
        args = dict(arguments or {})
        problem = compiled.validator.problem(args)
        if problem is not None:
            return error_result(f"Invalid arguments for {name}: {problem}")
        try:
            out = await compiled.spec.handler(args)
        except McpkitError as exc:
            return error_result(str(exc) or type(exc).__name__)
        except anyio.get_cancelled_exc_class():
            raise
        except Exception as exc:
            logger.exception("tool %s raised", name)
            return error_result(
                f"Tool {name} failed with an internal error {type(exc).__name__}; the server log has details."
            )
        result = text_result(out) if isinstance(out, str) else out
        return self._checked(compiled, result)

    def _checked(self, compiled: _CompiledTool, result: mcp_types.CallToolResult) -> mcp_types.CallToolResult:
        """Refuse to send a result that breaks the tool's own output schema (clients reject those)."""
        if compiled.output_validator is None or result.is_error:
            return result
        structured = result.structured_content
        if structured is None:
            logger.error(
                "tool %s declares an output schema but returned no structured content", compiled.spec.name
            )
            return error_result(
                f"Tool {compiled.spec.name} returned no structured content for its output schema."
            )
        error = next(iter(compiled.output_validator.iter_errors(structured)), None)
        if error is not None:
            logger.error("tool %s structured content breaks its output schema: %s", compiled.spec.name, error)
            return error_result(
                f"Tool {compiled.spec.name} returned a result that does not match its output schema."
            )
        return result

    # -- resources and prompts (only registered when given) ----------------------------------

    async def _list_resources(self, ctx: Ctx, params: mcp_types.PaginatedRequestParams | None) -> Any:
        return mcp_types.ListResourcesResult(
            resources=[
                mcp_types.Resource(uri=r.uri, name=r.name, description=r.description, mime_type=r.mime_type)
                for r in self.resources
            ]
        )

    async def _read_resource(self, ctx: Ctx, params: mcp_types.ReadResourceRequestParams) -> Any:
        from mcp.shared.exceptions import MCPError

        spec = self._resources.get(str(params.uri))
        if spec is None:
            raise MCPError(code=-32002, message=f"Resource not found: {params.uri}")
        text = await spec.read()
        return mcp_types.ReadResourceResult(
            contents=[mcp_types.TextResourceContents(uri=spec.uri, mime_type=spec.mime_type, text=text)]
        )

    async def _list_prompts(self, ctx: Ctx, params: mcp_types.PaginatedRequestParams | None) -> Any:
        return mcp_types.ListPromptsResult(
            prompts=[
                mcp_types.Prompt(
                    name=p.name,
                    description=p.description,
                    arguments=[
                        mcp_types.PromptArgument(name=a.name, description=a.description, required=a.required)
                        for a in p.arguments
                    ],
                )
                for p in self.prompts
            ]
        )

    async def _get_prompt(self, ctx: Ctx, params: mcp_types.GetPromptRequestParams) -> Any:
        from mcp.shared.exceptions import MCPError

        spec = self._prompts.get(params.name)
        if spec is None:
            raise MCPError(code=-32602, message=f"Unknown prompt: {params.name}")
        args = dict(params.arguments or {})
        missing = [a.name for a in spec.arguments if a.required and a.name not in args]
        if missing:
            raise MCPError(code=-32602, message=f"Missing required prompt arguments: {', '.join(missing)}")
        text = await spec.render(args)
        return mcp_types.GetPromptResult(
            description=spec.description,
            messages=[
                mcp_types.PromptMessage(role="user", content=mcp_types.TextContent(type="text", text=text))
            ],
        )

    # -- running -----------------------------------------------------------------------------

    def capabilities(self) -> dict[str, Any]:
        """The ``capabilities`` object this server announces in ``initialize``, in wire form."""
        caps = self.lowlevel.create_initialization_options().capabilities
        return caps.model_dump(by_alias=True, exclude_none=True, mode="json")

    async def run_stdio(self) -> None:
        """Serve one client over this process's stdin/stdout until stdin closes."""
        with claimed_stdin(self._drain) as lines:
            async with stdio_server(stdin=cast(Any, lines)) as (read_stream, write_stream):
                await self.lowlevel.run(
                    read_stream, write_stream, self.lowlevel.create_initialization_options()
                )

    async def run_http(self, host: str = "127.0.0.1", port: int = 8000, path: str = "/mcp") -> None:
        """Serve streamable HTTP at ``http://host:port/path`` until cancelled."""
        from mcpkit.server.runner import serve_http

        await serve_http(self, host, port, path)


def build_server(
    name: str,
    version: str,
    tools: Iterable[ToolSpec],
    *,
    resources: Sequence[ResourceSpec] | None = None,
    prompts: Sequence[PromptSpec] | None = None,
    profiles: Sequence[str] = DEFAULT_PROFILES,
    strict: bool | None = None,
    tool_filter: ToolFilter | None = None,
    instructions: str | None = None,
) -> McpkitServer:
    """Build an honest server from tool specs.

    - Tool names must be unique (always an error).
    - Definitions are linted against ``profiles``; errors raise :class:`ToolDefinitionError`
      when ``strict`` (default: under tests or ``MCPKIT_STRICT=1``) and are logged otherwise.
    - ``tool_filter`` (default: from ``MCPKIT_TOOLS_INCLUDE``/``_EXCLUDE``/``MCPKIT_READ_ONLY``)
      hides tools; hidden tools are refused on call with the reason.
    - Capabilities: tools always; resources and prompts only when some are given.
    """
    all_tools = list(tools)
    seen: set[str] = set()
    for tool in all_tools:
        if tool.name in seen:
            raise ValueError(f"duplicate tool name {tool.name!r}")
        seen.add(tool.name)
    active_filter = tool_filter if tool_filter is not None else ToolFilter.from_env()
    visible, hidden = active_filter.apply(all_tools)
    findings = lint(visible, list(profiles), server_name=name) if profiles else []
    errors = [f for f in findings if f.severity == "error"]
    if errors:
        if strict if strict is not None else _strict_default():
            raise ToolDefinitionError(errors)
        for f in errors:
            logger.warning("tool definition problem: %s %s %s: %s", f.tool, f.rule, f.pointer, f.message)
    for f in findings:
        if f.severity != "error":
            logger.debug("tool definition warning: %s %s %s: %s", f.tool, f.rule, f.pointer, f.message)
    return McpkitServer(
        name,
        version,
        visible,
        hidden,
        list(resources or ()),
        list(prompts or ()),
        instructions,
        findings,
    )
