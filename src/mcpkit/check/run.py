"""Run every check against one server and collect the report, era by era.

An HTTP target is checked on both protocol eras by default: the ``initialize`` handshake
(2025-11-25) and the stateless wire (2026-07-28), because one endpoint usually serves both
and clients of either kind connect to it. A stdio target is checked on the handshake only by
default: that is what every stdio client speaks today. ``--protocol 2026-07-28`` (or ``both``)
checks its stateless wire too, in a process of its own, through the client as ``mcpkit call``
speaks it there: discover, the lists, caching hints and probing (the envelope and
``subscriptions/listen`` checks need an HTTP target).
Findings about the wire carry their era; what is the same on both (tool definitions, secrets,
rebinding) is reported once. A server that does not serve one era of ``both`` is told so in a
note, never failed for it: the revision it lacks is newer or older, not wrong.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from mcpkit.check.auth import check_auth
from mcpkit.check.baseline import apply_baseline
from mcpkit.check.capabilities import check_capabilities
from mcpkit.check.context import check_context
from mcpkit.check.handshake import check_handshake, check_stdout
from mcpkit.check.listing import Requester
from mcpkit.check.model import HANDSHAKE_ERA, STATELESS_ERA, CheckFinding, CheckOptions, CheckReport
from mcpkit.check.modern import check_agreement, check_caching, check_discover, check_envelope, check_listen
from mcpkit.check.origin import check_origin
from mcpkit.check.poisoning import check_poisoning
from mcpkit.check.probe import Prober, Restart
from mcpkit.check.schema import MessageValidator, ValidatingTracer
from mcpkit.check.secrets import check_secrets
from mcpkit.check.stateless import StatelessSession, StdioStatelessSession
from mcpkit.check.tooldefs import check_tool_definitions
from mcpkit.client import (
    CallError,
    ConnectError,
    ServerConfig,
    Session,
    SessionOptions,
    Tracer,
    resolve_target,
)

ERAS = (HANDSHAKE_ERA, STATELESS_ERA)


def eras_for(server: ServerConfig, protocols: tuple[str, ...] | None) -> tuple[str, ...]:
    """The eras to check: those asked for, else both on HTTP and the handshake on stdio."""
    if protocols:
        return tuple(era for era in ERAS if era in protocols)
    return ERAS if server.url and server.kind != "sse" else (HANDSHAKE_ERA,)


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
    """Connect to ``target`` and check it on each era of ``options.protocols``.

    Raises ConnectError when the server cannot be reached on any era checked (or, with one
    era asked for, on that one).
    """
    opts = options or CheckOptions()
    server = resolve_target(target, config=config)
    eras = eras_for(server, opts.protocols)
    report = CheckReport(target=describe_target(server), source=server.source, line=server.line)
    auth = await check_auth(server, report, opts.connect_timeout, foreign_token=opts.foreign_token)
    if auth.blocked:
        return report
    failures: list[CallError] = []
    if HANDSHAKE_ERA in eras:
        failure = await _handshake_era(server, opts, tracer, report)
        if failure is not None:
            failures.append(failure)
    if STATELESS_ERA in eras:
        failure = await _stateless_era(server, opts, report, strict=eras == (STATELESS_ERA,))
        if failure is not None:
            failures.append(failure)
    if len(failures) == len(eras):
        raise failures[0]
    handshake = report.eras.get(HANDSHAKE_ERA)
    if handshake is not None and not handshake["served"]:
        report.add(
            CheckFinding(
                "handshake-not-served",
                "info",
                "protocol",
                f"the server does not answer initialize ({handshake.get('error')}): only clients "
                f"of {STATELESS_ERA} can use it",
                "Fine for a server made for 2026 clients; most clients still speak the handshake.",
                era=HANDSHAKE_ERA,
            )
        )
    if server.url:
        await check_origin(server, report, opts.call_timeout)
    return report


async def _handshake_era(
    server: ServerConfig, opts: CheckOptions, tracer: Tracer | None, report: CheckReport
) -> CallError | None:
    """Every check on the initialize handshake; the failure when the server did not initialize."""
    report.era = HANDSHAKE_ERA
    validator = MessageValidator(report)
    facts: dict[str, Any] = {"served": False}
    report.eras[HANDSHAKE_ERA] = facts
    holder = _Holder(server, opts, ValidatingTracer(validator, tracer))
    try:
        session = await holder.open()
    except CallError as exc:
        facts["error"] = str(exc)
        report.era = None
        return exc
    try:
        facts.update(served=True, protocolVersion=session.protocol_version)
        await check_session(session, opts, report=report, restart=holder.restart, origin=False)
    finally:
        await holder.close()
        facts["messagesValidated"] = validator.checked
        report.era = None
    return None


async def _stateless_era(
    server: ServerConfig, opts: CheckOptions, report: CheckReport, *, strict: bool
) -> CallError | None:
    """The 2026-07-28 checks on the stateless wire; the failure when it is not served.

    ``strict``: the stateless era is all that was asked for; as part of ``both``, not serving
    it is also a note (and :func:`check` raises only when neither era was served).
    """
    if server.kind == "sse":
        return None
    report.era = STATELESS_ERA
    report.eras[STATELESS_ERA] = {"served": False, "protocolVersion": STATELESS_ERA}
    validator = MessageValidator(report, STATELESS_ERA)
    wire: StatelessSession | StdioStatelessSession
    if server.url is None:
        wire = StdioStatelessSession(
            server, validator, timeout=opts.call_timeout, client_name=opts.client_name
        )
    else:
        wire = StatelessSession(server, validator, timeout=opts.call_timeout, client_name=opts.client_name)
    try:
        handshake = report.protocol_version if report.eras.get(HANDSHAKE_ERA, {}).get("served") else None
        if not await check_discover(wire, report, handshake=handshake):
            error = report.eras[STATELESS_ERA].get("error", "server/discover failed")
            failure = ConnectError(f"the server does not serve {STATELESS_ERA}: {error}")
            if not strict:
                report.add(
                    CheckFinding(
                        "stateless-not-served",
                        "info",
                        "protocol",
                        f"the server does not serve {STATELESS_ERA} (server/discover: {error})",
                        "Fine while clients still speak the handshake; newer SDKs serve both eras.",
                    )
                )
            return failure  # a failure only when no era could be checked at all
        if not report.server_info and isinstance(report.eras[STATELESS_ERA].get("serverInfo"), dict):
            report.server_info = dict(report.eras[STATELESS_ERA]["serverInfo"])
            report.protocol_version = STATELESS_ERA
        listed = await check_capabilities(wire, report, opts.call_timeout)
        if handshake is not None:
            check_agreement(report.capabilities, wire.capabilities, report)
        await check_caching(wire, report, opts.call_timeout)
        if isinstance(wire, StatelessSession):  # HTTP's: the envelope headers, the listen stream
            await check_listen(wire, report, opts.call_timeout)
            await check_envelope(wire, report, opts.call_timeout)
        first = not report.tools
        if first and "tools" in wire.capabilities:
            # The handshake era was not checked or not served: grade the tools as listed here.
            report.era = None
            _grade_definitions(listed, report, opts)
            check_secrets(listed, report)
            report.era = STATELESS_ERA
        tools = listed.get("tools", [])
        if tools and (opts.probe or opts.probe_all):
            # The same calls on this era's wire: its results are judged by its own schema.
            async def same_wire() -> Requester | None:
                return wire  # stateless: a hung call leaves nothing behind for the next one

            prober = Prober(wire, same_wire, tools, report, opts.call_timeout)
            await prober.run(tools, probe_all=opts.probe_all, notes=first)
    finally:
        await wire.aclose()
        report.eras[STATELESS_ERA]["messagesValidated"] = validator.checked
        report.era = None
    return None


def _grade_definitions(
    listed: dict[str, list[dict[str, Any]]], report: CheckReport, options: CheckOptions
) -> list[dict[str, Any]]:
    """What is the same on every era: tool definitions per profile, poisoning, context cost, baseline."""
    tools = listed.get("tools", [])
    check_tool_definitions(tools, report, options.profiles)
    check_poisoning(tools, report)
    check_context(tools, report)
    if options.baseline:
        apply_baseline(options.baseline, tools, report, update=options.update_baseline)
    return tools


async def check_session(
    session: Session,
    options: CheckOptions,
    *,
    target: str = "",
    report: CheckReport | None = None,
    restart: Restart | None = None,
    origin: bool = True,
) -> CheckReport:
    """Check an open session: handshake, capabilities, tool definitions, security, and (with probe) results.

    ``restart`` reopens the server after a probe hangs or crashes it (without it, probing
    stops at the first such tool); ``origin`` runs the rebinding probes of an HTTP server
    (:func:`check` runs them once, after every era).
    """
    report = report or CheckReport(target=target or describe_target(session.server))
    check_handshake(session, report)
    listed = await check_capabilities(session, report, options.call_timeout)
    era, report.era = report.era, None  # definitions are the same on every era
    if "tools" in session.capabilities:
        tools = _grade_definitions(listed, report, options)
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
    report.era = era
    if origin and session.server.url:
        await check_origin(session.server, report, options.call_timeout)
    check_stdout(session, report)
    if tools and (options.probe or options.probe_all):
        prober = Prober(session, restart or _no_restart, tools, report, options.call_timeout)
        await prober.run(tools, probe_all=options.probe_all)
        if isinstance(prober.session, Session):
            check_stdout(prober.session, report)
    return report


async def _no_restart() -> Requester | None:
    """A server that cannot be restarted: probing stops at the first tool that breaks it."""
    return None
