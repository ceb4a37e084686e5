"""Run every check against one server and collect the report."""

from __future__ import annotations

from collections.abc import Sequence

from mcpkit.check.capabilities import check_capabilities
from mcpkit.check.handshake import check_handshake, check_stdout
from mcpkit.check.model import CheckFinding, CheckOptions, Report
from mcpkit.check.probe import probe_tools
from mcpkit.check.tooldefs import check_tool_definitions
from mcpkit.client import ClientError, ServerConfig, Session, Tracer, resolve_target


async def check(
    target: str | Sequence[str] | ServerConfig,
    options: CheckOptions | None = None,
    *,
    tracer: Tracer | None = None,
) -> Report:
    """Connect to ``target`` and check it. Raises ConnectError when it cannot be reached or initialized."""
    opts = options or CheckOptions()
    server = resolve_target(target)
    async with Session(
        server,
        timeout=opts.call_timeout,
        connect_timeout=opts.connect_timeout,
        tracer=tracer,
        raise_on_error=False,
        client_info={"name": opts.client_name, "version": "0"} if opts.client_name else None,
    ) as session:
        return await check_session(
            session, opts, target=server.url or " ".join(server.command) or server.name
        )


async def check_session(session: Session, options: CheckOptions, *, target: str = "") -> Report:
    """Check an open session: handshake, capabilities, tool definitions, and (with probe) results."""
    report = Report(target=target or session.server.name)
    check_handshake(session, report)
    await check_capabilities(session, report, options.call_timeout)
    if "tools" in session.capabilities:
        try:
            tools = await session.list_tools()
        except ClientError:
            tools = []  # reported by the capability check
        check_tool_definitions(tools, report, options.profiles)
        if options.probe or options.probe_all:
            await probe_tools(
                session, tools, report, probe_all=options.probe_all, timeout=options.call_timeout
            )
    else:
        report.add(
            CheckFinding(
                "no-tools",
                "info",
                "capabilities",
                "the server declares no tools capability",
                "Fine for a resources- or prompts-only server.",
            )
        )
    check_stdout(session, report)
    return report
