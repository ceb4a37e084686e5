"""Run every check against one server and collect the report."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from urllib.parse import urlsplit

from mcpkit.check.baseline import apply_baseline
from mcpkit.check.capabilities import check_capabilities
from mcpkit.check.context import check_context
from mcpkit.check.handshake import check_handshake, check_stdout
from mcpkit.check.model import CheckFinding, CheckOptions, CheckReport
from mcpkit.check.origin import check_origin
from mcpkit.check.poisoning import check_poisoning
from mcpkit.check.probe import Prober, Restart
from mcpkit.check.secrets import check_secrets
from mcpkit.check.tooldefs import check_tool_definitions
from mcpkit.client import ConnectError, ServerConfig, Session, SessionOptions, Tracer, resolve_target


def describe_target(server: ServerConfig) -> str:
    """How reports name the server: never a whole command line, a query string or credentials."""
    if server.url:
        parts = urlsplit(server.url)
        return f"{parts.scheme}://{parts.hostname or ''}{f':{parts.port}' if parts.port else ''}{parts.path}"
    return server.name


class _Holder:
    """The checked server's session; reopened when a probe leaves the server hung or dead."""

    def __init__(self, server: ServerConfig, options: CheckOptions, tracer: Tracer | None) -> None:
        self.server = server
        self.options = options
        self.tracer = tracer
        self.session: Session | None = None
        self.restarts = 0

    async def open(self) -> Session:
        session = Session(
            self.server,
            SessionOptions(
                timeout=self.options.call_timeout,
                connect_timeout=self.options.connect_timeout,
                tracer=self.tracer,
                raise_on_error=False,
                shutdown_grace=0.5,
                client_info={"name": self.options.client_name, "version": "0"}
                if self.options.client_name
                else None,
            ),
        )
        await session.__aenter__()
        self.session = session
        return session

    async def restart(self) -> Session | None:
        await self.close()
        if self.restarts >= self.options.max_restarts:
            return None
        self.restarts += 1
        try:
            return await self.open()
        except ConnectError:
            return None

    async def close(self) -> None:
        session, self.session = self.session, None
        if session is not None:
            await session.aclose()


async def check(
    target: str | Sequence[str] | ServerConfig,
    options: CheckOptions | None = None,
    *,
    tracer: Tracer | None = None,
    config: str | Path | None = None,
) -> CheckReport:
    """Connect to ``target`` and check it. Raises ConnectError when it cannot be reached or initialized."""
    opts = options or CheckOptions()
    server = resolve_target(target, config=config)
    holder = _Holder(server, opts, tracer)
    session = await holder.open()
    report = CheckReport(target=describe_target(server), source=server.source, line=server.line)
    try:
        await check_session(session, opts, report=report, restart=holder.restart)
    finally:
        await holder.close()
    return report


async def check_session(
    session: Session,
    options: CheckOptions,
    *,
    target: str = "",
    report: CheckReport | None = None,
    restart: Restart | None = None,
) -> CheckReport:
    """Check an open session: handshake, capabilities, tool definitions, security, and (with probe) results.

    ``restart`` reopens the server after a probe hangs or crashes it (without it, probing
    stops at the first such tool).
    """
    report = report or CheckReport(target=target or describe_target(session.server))
    check_handshake(session, report)
    listed = await check_capabilities(session, report, options.call_timeout)
    if "tools" in session.capabilities:
        tools = listed.get("tools", [])
        check_tool_definitions(tools, report, options.profiles)
        check_poisoning(tools, report)
        check_context(tools, report)
        if options.baseline:
            apply_baseline(options.baseline, tools, report, update=options.update_baseline)
    else:
        tools = []
        report.add(
            CheckFinding(
                "no-tools",
                "info",
                "capabilities",
                "the server declares no tools capability",
                "Fine for a resources- or prompts-only server.",
            )
        )
    check_secrets(listed, report)
    if session.server.url:
        await check_origin(session.server, report, options.call_timeout)
    check_stdout(session, report)
    if tools and (options.probe or options.probe_all):

        async def no_restart() -> Session | None:
            return None

        prober = Prober(session, restart or no_restart, tools, report, options.call_timeout)
        await prober.run(tools, probe_all=options.probe_all)
        check_stdout(prober.session, report)
    return report
