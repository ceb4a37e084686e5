"""build_server: an MCP server on the SDK's low-level ``Server`` that only says what is true.

Why not the SDK's high-level ``MCPServer``: it registers resource and prompt handlers even
when there are none, so a tools-only server advertises capabilities it does not serve (a
client then called ``resources/list`` on a server with no resources, and misread the empty
capability objects). Here a capability exists exactly when its handler does.

Every ``tools/call`` ends in a valid ``CallToolResult``: unknown or hidden tools, arguments
that do not match the input schema, and handler exceptions all become ``isError`` results
with one human-readable line; tracebacks go to the log only.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import warnings
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

import anyio
import mcp_types
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.models import InitializationOptions

from mcpkit import _sdk as sdk
from mcpkit import telemetry
from mcpkit.compat import Finding, lint
from mcpkit.errors import ConfigError, JsonRpcError, McpkitError
from mcpkit.results import error_result, text_result
from mcpkit.server._arguments import ArgumentError, ArgumentValidator
from mcpkit.server._ask import elicitor, input_required_of
from mcpkit.server._errors import sdk_errors
from mcpkit.server._extras import PromptSpec, ResourceSpec
from mcpkit.server._inflight import InFlight, drain
from mcpkit.server._options import ServerOptions
from mcpkit.server._tasks import TaskStore
from mcpkit.server._tasks import install as install_tasks
from mcpkit.tools import ToolContext, ToolSpec
from mcpkit.tools._context import takes_context

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

    Ctx = ServerRequestContext[Any, Any]
else:
    Ctx = Any

logger = logging.getLogger("mcpkit.server")


class ToolDefinitionError(ConfigError):
    """Tool definitions that cannot be served: duplicate names, or definitions a target client
    would reject or crash on (strict mode)."""

    def __init__(self, findings: Sequence[Finding] = (), message: str | None = None) -> None:
        self.findings = list(findings)
        if message is None:
            lines = [f"{f.tool}: {f.rule} {f.pointer} {f.message}" for f in self.findings[:20]]
            more = f"\n... and {len(self.findings) - 20} more" if len(self.findings) > 20 else ""
            message = (
                f"{len(self.findings)} tool definition error(s) for the chosen client profiles:\n"
                + "\n".join(lines)
                + more
            )
        super().__init__(message)


class _CompiledTool:
    """A visible tool with its argument validator compiled once."""

    __slots__ = ("_output", "spec", "validator", "with_context")

    def __init__(self, spec: ToolSpec, *, check: bool) -> None:
        self.spec = spec
        self.with_context = takes_context(spec.handler)
        self.validator = ArgumentValidator(spec.input_schema, check=check)
        self._output: Any = None
        if check:
            self.output_validator()

    def output_validator(self) -> Any:
        """The output schema's validator (compiled on first use), or ``None`` without one."""
        if self._output is None and self.spec.output_schema is not None:
            from jsonschema import Draft202012Validator

            self._output = Draft202012Validator(dict(self.spec.output_schema))
        return self._output


def _header_map(request: Any) -> dict[str, str]:
    """Lower-case header names of an HTTP request (a Starlette ``Request``); ``{}`` for stdio."""
    headers = getattr(request, "headers", None)
    if headers is None:
        return {}
    return {str(k).lower(): str(v) for k, v in headers.items()}


class SdkServer(Server[Any]):
    """The SDK's low-level server as mcpkit runs it (its own servers and the gateway): both eras
    on one endpoint, saying of each list what is true of it.

    - ``server/discover`` lists every revision the endpoint serves (the SDK's own answer names
      only 2026-07-28, so a client reading it never learned that the same URL also speaks the
      2025-11-25 handshake).
    - ``changing``: the lists (``tools``, ``prompts``, ``resources``) whose changes this server
      announces. Only those declare ``listChanged``, on both eras, and ``subscriptions/listen`` is
      served exactly when there is one: :meth:`publish` delivers a change to every listen stream,
      handshake-era clients get ``notifications/<list>/list_changed`` from whoever holds their
      connections. The SDK, left to itself, declares ``listChanged`` for every list and
      ``resources.subscribe`` on the 2026 wire as soon as listen is served; here a list that never
      changes says so, and resource subscriptions, which nothing here publishes, are not claimed.
    - ``hints``: ``{method: (ttl_ms, scope)}`` caching hints for the 2026 wire's cacheable results.
    - An empty extension map is left out: mcp 2.3.0's ``create_initialization_options`` passed
      the server's (empty) map on explicitly, so every ``initialize`` answer carried
      ``"extensions": {}``, the kind of empty capability object that made a client believe a
      server offered what it had no handler for.
    """

    def __init__(
        self,
        name: str,
        *,
        changing: Iterable[str] = (),
        hints: Mapping[str, tuple[int, str]] | None = None,
        **handlers: Any,
    ) -> None:
        super().__init__(name, cache_hints=sdk.cache_hints(dict(hints or {})), **handlers)
        self.changing = frozenset(changing)
        unknown = self.changing - set(sdk.LISTS)
        if unknown:
            raise ValueError(f"changing names no list: {sorted(unknown)}")
        self.add_request_handler("server/discover", mcp_types.RequestParams, self._discover)
        self._bus: Any = None
        self._listen: Any = None
        # The 2025 wire's ``tasks`` capability, set when tasks are served (see :mod:`._tasks`).
        self.task_capability: mcp_types.ServerTasksCapability | None = None
        if self.changing:
            self._bus, self._listen = sdk.listen_handler()
            self.add_request_handler(
                "subscriptions/listen", mcp_types.SubscriptionsListenRequestParams, self._listen
            )

    async def publish(self, kind: str) -> None:
        """Tell every ``subscriptions/listen`` stream that asked for it that the ``kind`` list changed."""
        if kind in self.changing and self._bus is not None:
            await self._bus.publish(sdk.list_changed_event(kind))

    def end_listens(self) -> None:
        """End every listen stream with its final result (at shutdown: an open stream would keep
        the HTTP server waiting for it, and its client learns the end was meant)."""
        if self._listen is not None:
            self._listen.close()

    async def _discover(self, ctx: Ctx, params: mcp_types.RequestParams) -> mcp_types.DiscoverResult:
        return mcp_types.DiscoverResult(
            supported_versions=list(sdk.SERVED_VERSIONS),
            capabilities=self.get_capabilities(protocol_version=ctx.protocol_version),
            instructions=self.instructions,
        )

    def get_capabilities(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
        *,
        protocol_version: str | None = None,
    ) -> mcp_types.ServerCapabilities:
        caps = super().get_capabilities(
            notification_options, experimental_capabilities, extensions, protocol_version=protocol_version
        )
        if self.task_capability is not None:  # the 2026 sieve drops it; the extension says it there
            caps = caps.model_copy(update={"tasks": self.task_capability})
        if protocol_version not in sdk.SDK_MODERN_VERSIONS:
            return caps
        update: dict[str, Any] = {}
        if caps.tools is not None:
            update["tools"] = caps.tools.model_copy(update={"list_changed": "tools" in self.changing})
        if caps.prompts is not None:
            update["prompts"] = caps.prompts.model_copy(update={"list_changed": "prompts" in self.changing})
        if caps.resources is not None:
            update["resources"] = caps.resources.model_copy(
                update={"list_changed": "resources" in self.changing, "subscribe": False}
            )
        return caps.model_copy(update=update)

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        if notification_options is None and self.changing:
            notification_options = NotificationOptions(
                prompts_changed="prompts" in self.changing,
                resources_changed="resources" in self.changing,
                tools_changed="tools" in self.changing,
            )
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
        *,
        name: str,
        version: str,
        tools: Sequence[ToolSpec],
        hidden: Mapping[str, str] | None = None,
        resources: Sequence[ResourceSpec] = (),
        prompts: Sequence[PromptSpec] = (),
        instructions: str | None = None,
        findings: Sequence[Finding] | Callable[[], Sequence[Finding]] = (),
        client_logging: bool = False,
        options: ServerOptions | None = None,
        tools_change: bool = False,
    ) -> None:
        self.name = name
        self.version = version
        self.options = options if options is not None else ServerOptions()
        self.tools: list[ToolSpec] = list(tools)
        self.hidden: dict[str, str] = dict(hidden or {})
        self.resources = list(resources)
        self.prompts = list(prompts)
        deferred = callable(findings)
        self._lint: Callable[[], Sequence[Finding]] | None = findings if callable(findings) else None
        self._findings: list[Finding] | None = None if callable(findings) else list(findings)
        self._findings_lock = threading.Lock()
        self._asked = anyio.Event()  # set by the first tools/list or tools/call: warm-up may start
        self._compiled = {t.name: _CompiledTool(t, check=not deferred) for t in self.tools}
        self._in_flight = InFlight()
        self._log_level: str | None = None
        self._tool_list = mcp_types.ListToolsResult(tools=[t.to_mcp() for t in self.tools])
        # Connections that listed the tools: told by notification when they change (2025 wire).
        self._listers: weakref.WeakSet[Any] = weakref.WeakSet()
        handlers: dict[str, Any] = {"on_list_tools": self._list_tools, "on_call_tool": self._call_tool}
        if self.resources:
            self._resources = {r.uri: r for r in self.resources}
            handlers["on_list_resources"] = self._list_resources
            handlers["on_list_resource_templates"] = self._list_resource_templates
            handlers["on_read_resource"] = sdk_errors(self._read_resource)
        if self.prompts:
            self._prompts = {p.name: p for p in self.prompts}
            handlers["on_list_prompts"] = self._list_prompts
            handlers["on_get_prompt"] = sdk_errors(self._get_prompt)
        if client_logging:
            self._log_level = "info"
            handlers["on_set_logging_level"] = self._set_logging_level
        with warnings.catch_warnings():
            # logging/setLevel is deprecated from 2026-07-28 on, still served for older clients.
            warnings.filterwarnings("ignore", message="The logging capability is deprecated")
            self.lowlevel: SdkServer = SdkServer(
                name,
                version=version,
                instructions=instructions,
                hints=self.options.list_hints(changing={"tools"} if tools_change else set()),
                changing={"tools"} if tools_change else (),
                **handlers,
            )
        # A 2026 tool call that asks its user ends with a ``requestState`` (see :mod:`._ask`): the
        # SDK's boundary seals it under a key of this process and refuses any echo it did not mint.
        self.lowlevel.middleware.append(sdk.request_state_boundary(name))

        self.tasks: TaskStore | None = None
        if any(t.tasks for t in self.tools):
            self.tasks = TaskStore()
            install_tasks(
                self.lowlevel,
                self.tasks,
                is_task_tool=lambda name: name in self._compiled and self._compiled[name].spec.tasks,
                asks_first=lambda name: name in self._compiled and self._compiled[name].spec.asks_before_task,
                run_tool=self.call,
                context_of=self._tool_context,
            )

    @property
    def findings(self) -> list[Finding]:
        """Lint findings of the visible tools; a deferred lint runs (and logs) on first use."""
        with self._findings_lock:
            if self._findings is None:
                self._findings = list(self._lint() if self._lint is not None else ())
                _log_findings(self._findings)
        return self._findings

    def _warm(self) -> None:
        """Deferred start-up work: lint (logging what a client would reject), compile validators."""
        _ = self.findings
        for compiled in self._compiled.values():
            with contextlib.suppress(Exception):  # a broken schema is reported when called
                compiled.validator.compiled()
                compiled.output_validator()

    async def _warm_up(self) -> None:
        """Run :meth:`_warm` in a worker thread once a client asks for tools.

        It used to start with serving, so the thread (jsonschema's import, the lint, a validator
        per tool) held the GIL while ``initialize`` waited: about 85 ms of CPU and 190 ms of
        spawn-to-initialize on a loaded machine for ``mcpkit redmine mcp``. A client lists tools
        or calls one after ``initialize`` is answered, and a call compiles its own validator."""
        await self._asked.wait()
        await anyio.to_thread.run_sync(self._warm, abandon_on_cancel=True)

    # -- tools -------------------------------------------------------------------------------

    async def _list_tools(self, ctx: Ctx, params: mcp_types.PaginatedRequestParams | None) -> Any:
        self._asked.set()
        if self.lowlevel.changing:
            self._listers.add(sdk.connection_of(ctx))
        return self._tool_list

    async def set_tools(self, tools: Iterable[ToolSpec]) -> None:
        """Serve ``tools`` from now on (a server built with ``tools_change=True``), filtered as at
        build time, and tell the clients: ``notifications/tools/list_changed`` to every
        handshake-era connection that listed the tools, and a change event on every 2026
        ``subscriptions/listen`` stream that asked for tool changes. Definitions are linted
        again on next use of :attr:`findings`. Raises ``ToolDefinitionError`` for duplicate names
        or a tool that needs a context, and changes nothing then."""
        if "tools" not in self.lowlevel.changing:
            raise ToolDefinitionError(
                message=f"server {self.name!r} was built with a fixed tool list: build it with tools_change=True"
            )
        visible, hidden = self.options.tool_filter.apply(_checked_tools(tools))
        compiled = {t.name: _CompiledTool(t, check=False) for t in visible}
        profiles, name = list(self.options.profiles), self.name
        self.tools, self.hidden, self._compiled = visible, hidden, compiled
        self._tool_list = mcp_types.ListToolsResult(tools=[t.to_mcp() for t in visible])
        with self._findings_lock:
            self._lint = lambda: lint(visible, profiles, server_name=name) if profiles else []
            self._findings = None
        for connection in list(self._listers):
            try:
                await connection.outbound.notify("notifications/tools/list_changed", None)
            except Exception as exc:  # a client that went away must not stop the others
                logger.debug("tools list_changed not delivered: %s", exc)
        await self.lowlevel.publish("tools")

    async def _call_tool(
        self, ctx: Ctx, params: mcp_types.CallToolRequestParams
    ) -> mcp_types.CallToolResult | mcp_types.InputRequiredResult:
        self._asked.set()
        logger.debug("tools/call %s", params.name)  # with the caller's trace id (mcpkit.log)
        tel = telemetry.active()
        if tel is None:
            return await self._call_counted(ctx, params)
        op = tel.server("tools/call", params.name, request_id=ctx.request_id, meta=_meta_of(ctx))
        try:
            with op.current():
                result = await self._call_counted(ctx, params)
            op.result(result)
        except BaseException as exc:
            op.failed(telemetry.error_type(exc))
            raise
        finally:
            op.end()  # the span and the mcp.server.operation.duration histogram
        return result

    async def _call_counted(
        self, ctx: Ctx, params: mcp_types.CallToolRequestParams
    ) -> mcp_types.CallToolResult | mcp_types.InputRequiredResult:
        with self._in_flight.one():
            try:
                return await self.call(params.name, params.arguments, self._tool_context(ctx, params.name))
            except BaseException as exc:
                asked = input_required_of(exc)  # the handler asked its user a question (2026 wire)
                if asked is None:
                    raise
                return asked

    def _tool_context(self, ctx: Ctx, name: str) -> ToolContext:
        """The handler's view of this request: who calls, its headers, progress and log senders."""
        session = ctx.session
        client = session.client_params.client_info.name if session.client_params else None
        request_id = ctx.request_id

        async def send_progress(progress: float, total: float | None, message: str | None) -> None:
            # Scoped to this request by the SDK; a no-op when the client gave no progress token.
            await session.report_progress(progress, total, message)

        async def send_log(level: str, message: str) -> None:
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message="The logging capability is deprecated")
                await session.send_log_message(
                    cast(Any, level), message, logger=self.name, related_request_id=request_id
                )

        return ToolContext(
            tool=name,
            request_id=request_id,
            client_name=client,
            request_headers=_header_map(ctx.request),
            _send_progress=send_progress,
            _send_log=send_log,
            _log_threshold=lambda: self._log_level,
            _elicit=elicitor(ctx),
        )

    async def _set_logging_level(self, ctx: Ctx, params: mcp_types.SetLevelRequestParams) -> Any:
        self._log_level = str(params.level)
        return mcp_types.EmptyResult()

    async def _drain(self) -> None:
        """At the end of stdin: let calls already read finish and their answers reach stdout
        (within ``DRAIN_SECONDS``, so a hung tool cannot keep an abandoned server alive)."""
        await drain(self._in_flight)

    async def call(
        self, name: str, arguments: Mapping[str, Any] | None, context: ToolContext | None = None
    ) -> mcp_types.CallToolResult:
        """Run one tool call exactly as a client's ``tools/call`` would (used by tests too)."""
        compiled = self._compiled.get(name)
        if compiled is None:
            if name in self.hidden:
                return error_result(f"Tool {name!r} is not available: {self.hidden[name]}.")
            known = ", ".join(sorted(self._compiled)[:30])
            return error_result(f"Unknown tool {name!r}. Available tools: {known or 'none'}.")
        try:
            args = compiled.validator.prepare(arguments or {})
        except ArgumentError as exc:
            return error_result(f"Invalid arguments for {name}: {exc}")
        except Exception:  # a schema jsonschema cannot compile: the definition's fault, not the caller's
            logger.exception("tool %s: its input schema cannot be used", name)
            return error_result(
                f"Tool {name} has an input schema the server cannot use; the server log has details."
            )
        ctx = context if context is not None else ToolContext(tool=name)
        try:
            if compiled.with_context:
                out = await cast(Any, compiled.spec.handler)(args, ctx)
            else:
                out = await cast(Any, compiled.spec.handler)(args)
        except anyio.get_cancelled_exc_class():
            ctx.cancelled.set()
            raise
        except McpkitError as exc:
            return error_result(str(exc) or type(exc).__name__)
        except Exception as exc:
            logger.exception("tool %s raised", name)
            return error_result(
                f"Tool {name} failed with an internal error {type(exc).__name__}; the server log has details."
            )
        return self._checked(compiled, _tool_result(name, out))

    def _checked(self, compiled: _CompiledTool, result: mcp_types.CallToolResult) -> mcp_types.CallToolResult:
        """Refuse to send a result that breaks the tool's own output schema (clients reject those)."""
        validator = compiled.output_validator()
        if validator is None or result.is_error:
            return result
        structured = result.structured_content
        if structured is None:
            logger.error(
                "tool %s declares an output schema but returned no structured content", compiled.spec.name
            )
            return error_result(
                f"Tool {compiled.spec.name} returned no structured content for its output schema."
            )
        error = next(iter(validator.iter_errors(structured)), None)
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

    async def _list_resource_templates(
        self, ctx: Ctx, params: mcp_types.PaginatedRequestParams | None
    ) -> Any:
        """An empty list: the toolkit serves fixed resources only, and a client that lists
        templates of a server declaring ``resources`` is owed an answer, not -32601."""
        return mcp_types.ListResourceTemplatesResult(resource_templates=[])

    async def _read_resource(self, ctx: Ctx, params: mcp_types.ReadResourceRequestParams) -> Any:
        spec = self._resources.get(str(params.uri))
        if spec is None:
            raise JsonRpcError(-32002, f"Resource not found: {params.uri}")
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
        spec = self._prompts.get(params.name)
        if spec is None:
            raise JsonRpcError.invalid_params(f"Unknown prompt: {params.name}")
        args = dict(params.arguments or {})
        missing = [a.name for a in spec.arguments if a.required and a.name not in args]
        if missing:
            raise JsonRpcError.invalid_params(f"Missing required prompt arguments: {', '.join(missing)}")
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
        from mcp.server.stdio import stdio_server
        from mcp.shared.message import SessionMessage

        from mcpkit.server._stdin import AnsweredLines, claimed_stdin

        with claimed_stdin(self._drain) as lines:
            source = AnsweredLines(lines) if lines is not None else None
            async with (
                stdio_server(stdin=cast(Any, source)) as (read_stream, write_stream),
                anyio.create_task_group() as tg,
            ):

                async def answer(request_id: str | int | None, code: int, message: str) -> None:
                    error = mcp_types.JSONRPCError(
                        jsonrpc="2.0", id=request_id, error=mcp_types.ErrorData(code=code, message=message)
                    )
                    await write_stream.send(SessionMessage(error))

                if source is not None:
                    source.answer_with(answer)
                tg.start_soon(self._warm_up)
                await self.lowlevel.run(
                    read_stream, write_stream, self.lowlevel.create_initialization_options()
                )
                tg.cancel_scope.cancel()

    async def run_http(self) -> None:
        """Serve streamable HTTP as ``options.http`` says, until cancelled (see :mod:`._http`)."""
        from mcpkit.server._http import serve_http

        async with anyio.create_task_group() as tg:
            tg.start_soon(self._warm_up)
            await serve_http(self.lowlevel, self.options.http, name=self.name)
            tg.cancel_scope.cancel()


def _meta_of(ctx: Ctx) -> dict[str, Any] | None:
    """The request's ``_meta`` as sent (its ``traceparent`` is the caller's span)."""
    meta = getattr(ctx, "meta", None)
    if meta is None:
        return None
    return meta.model_dump(by_alias=True) if hasattr(meta, "model_dump") else dict(meta)


def _what(value: object) -> str:
    """``value``'s kind for a one-line message: ``None``, ``a dict``, ``an int`` ..."""
    if value is None or value is Ellipsis:
        return repr(value)
    kind = type(value).__name__
    return ("an " if kind[:1].lower() in "aeiou" else "a ") + kind


def _tool_result(name: str, out: object) -> mcp_types.CallToolResult:
    """What a handler returned, as the result to send: text becomes a text result, a built
    ``CallToolResult`` stays, and anything else is refused as an ``isError`` result.

    A handler whose body was still ``...`` returned ``None``, which the SDK refused with JSON-RPC
    -32603 "Handler returned an invalid result" and a pydantic traceback on stderr: the client got
    no tool result at all, and the model no line naming the tool. A dict is refused even when it
    has the wire shape of a result (``{"content": [...]}``): a handler that returns its data as a
    dict meant structured content, and a dict that merely looks right would be sent unchecked;
    build results with :mod:`mcpkit.results`, which cannot produce an invalid one.
    """
    if isinstance(out, str):
        return text_result(out)
    if isinstance(out, mcp_types.CallToolResult):
        return out
    what = _what(out)
    logger.error("tool %s returned %s, not a tool result (text or a CallToolResult)", name, what)
    return error_result(
        f"Tool {name} returned {what} instead of a tool result; its handler must return text "
        "or a result built with mcpkit.results."
    )


def _log_findings(findings: Sequence[Finding]) -> None:
    for f in findings:
        if f.severity == "error":
            logger.warning("tool definition problem: %s %s %s: %s", f.tool, f.rule, f.pointer, f.message)
        else:
            logger.debug("tool definition warning: %s %s %s: %s", f.tool, f.rule, f.pointer, f.message)


def build_server(
    name: str,
    version: str,
    tools: Iterable[ToolSpec],
    *,
    options: ServerOptions | None = None,
    resources: Sequence[ResourceSpec] | None = None,
    prompts: Sequence[PromptSpec] | None = None,
    instructions: str | None = None,
    client_logging: bool = False,
    tools_change: bool = False,
) -> McpkitServer:
    """Build an honest server from tool specs, run as ``options`` say (see :class:`ServerOptions`).

    - Tool names must be unique (:class:`ToolDefinitionError` otherwise).
    - Definitions are linted against ``options.profiles``. When ``options.strict`` that happens
      here and errors raise :class:`ToolDefinitionError`; otherwise it happens in the background
      once the server is serving (or on first use of ``server.findings``) and errors are logged,
      so start-up is not slowed by checks whose outcome is only a log line.
    - ``options.tool_filter`` hides tools; hidden tools are refused on call with the reason.
    - ``options.http.authorize`` checks each HTTP request's headers before the MCP transport
      sees it (a per-user key, for example); its :class:`HttpRefusal` becomes the HTTP answer.
    - ``client_logging`` declares the logging capability: ``ToolContext.log`` then reaches the
      client too, at the level it sets with ``logging/setLevel``.
    - Capabilities: tools always; resources and prompts only when some are given.
    - ``tools_change``: the tool list may change while the server runs (:meth:`McpkitServer.set_tools`):
      ``tools.listChanged`` is declared on both eras, ``subscriptions/listen`` is served, and the
      list's caching hint says ``ttlMs: 0``. Without it the list is fixed for the server's life
      and its hint lets clients keep it (:meth:`ServerOptions.list_hints`).

    ``options`` defaults to :func:`default_options`: plain ``ServerOptions()``, or what the
    ``mcpkit.testing`` pytest plugin set for a test run (strict, so a client-breaking definition
    fails the tests). The environment is never read here.
    """
    opts = options if options is not None else default_options()
    visible, hidden = opts.tool_filter.apply(_checked_tools(tools))
    profiles = list(opts.profiles)

    def run_lint() -> list[Finding]:
        return lint(visible, profiles, server_name=name) if profiles else []

    findings: list[Finding] | Callable[[], list[Finding]] = run_lint
    if opts.strict:
        findings = run_lint()
        errors = [f for f in findings if f.severity == "error"]
        if errors:
            raise ToolDefinitionError(errors)
    return McpkitServer(
        name=name,
        version=version,
        tools=visible,
        hidden=hidden,
        resources=list(resources or ()),
        prompts=list(prompts or ()),
        instructions=instructions,
        findings=findings,
        client_logging=client_logging,
        options=opts,
        tools_change=tools_change,
    )


def _checked_tools(tools: Iterable[ToolSpec]) -> list[ToolSpec]:
    """``tools`` as a list, refused with :class:`ToolDefinitionError` for a duplicate name or a
    tool still waiting for its application context."""
    all_tools = list(tools)
    seen: set[str] = set()
    for tool in all_tools:
        if tool.needs_context:
            raise ToolDefinitionError(
                message=f"tool {tool.name!r} needs an application context: bind it with ToolSpec.bind first"
            )
        if tool.name in seen:
            raise ToolDefinitionError(message=f"duplicate tool name {tool.name!r}: tool names must be unique")
        seen.add(tool.name)
    return all_tools


_default = ServerOptions()


def default_options() -> ServerOptions:
    """The options :func:`build_server` uses when given none."""
    return _default


def set_default_options(options: ServerOptions) -> None:
    """Make ``options`` what :func:`build_server` uses when given none, for this process.

    For a test harness, not for servers: the ``mcpkit.testing`` pytest plugin sets strict
    options for the whole test run, so every server a test builds in-process is checked.
    """
    global _default
    _default = options
