"""Result checks (``--probe``): call tools and grade every result with ``validate_result``.

Only tools annotated ``readOnlyHint: true`` are called unless ``--probe-all``: a checker must
never be the reason a tool wrote something. A tool that hangs or takes the server down is
reported against that tool, then the server is restarted, so the next tool is graded on a
fresh server and never blamed for the last one's mess.

Then two calls that must fail. A tool that does not exist: the spec makes that a protocol
error (CallToolResult.isError: "errors in finding the tool ... should be reported as an MCP
error response"), so a JSON-RPC error and an ``isError`` result are both fine and only a
success is reported. An argument the tool's schema forbids (``additionalProperties:
false``), sent together with valid values for every required argument so that the bogus one
is the only thing wrong: a success is reported; a tool whose schema allows extra properties
is never tried.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from mcpkit.check.argsgen import example_arguments
from mcpkit.check.listing import Requester
from mcpkit.check.model import CheckFinding, CheckReport, CheckSeverity
from mcpkit.client import CallError, CallTimeoutError, JsonRpcError, ServerExitedError
from mcpkit.results import validate_result

UNKNOWN_TOOL = "mcpkit_check_no_such_tool"
BOGUS_ARGUMENT = "mcpkit_check_unexpected_argument"

Restart = Callable[[], Awaitable[Requester | None]]
"""Closes the current session and opens a new one (None when the server cannot be restarted)."""


class _ServerBrokenError(CallError):
    """The current call left the server hung or dead; restart before the next call."""


class Prober:
    """Calls tools on a session it may replace (after a hang or a crash)."""

    def __init__(
        self,
        session: Requester,
        restart: Restart,
        tools: list[dict[str, Any]],
        report: CheckReport,
        timeout: float,
    ) -> None:
        self.session = session
        self._restart = restart
        self.report = report
        self.timeout = timeout
        self.output_schemas = {
            str(t.get("name")): t["outputSchema"] for t in tools if isinstance(t.get("outputSchema"), dict)
        }

    async def run(self, tools: list[dict[str, Any]], *, probe_all: bool, notes: bool = True) -> None:
        """Probe ``tools``; ``notes``: say which tools were not called (once, not on every era)."""
        for tool in tools:
            if not (probe_all or _read_only(tool)):
                if notes:
                    self.report.add(
                        CheckFinding(
                            "probe-skipped-write",
                            "info",
                            "results",
                            "not called: not annotated read-only (use --probe-all to call it)",
                            "Annotate tools that never write with readOnlyHint: true.",
                            tool=str(tool.get("name")),
                        )
                    )
                continue
            if not await self._guarded(self._probe_one(tool)):
                return
        if not await self._guarded(self._unknown_tool()):
            return
        target = next((t for t in tools if (probe_all or _read_only(t)) and _closed_schema(t)), None)
        if target is not None:
            await self._guarded(self._bogus_argument(target))

    async def _guarded(self, step: Awaitable[None]) -> bool:
        """Run one probe; after a hang or crash restart the server. False: probing must stop."""
        try:
            await step
            return True
        except _ServerBrokenError:
            session = await self._restart()
            if session is None:
                self.report.add(
                    CheckFinding(
                        "call-failed",
                        "error",
                        "results",
                        "the server could not be restarted, so probing stopped here",
                        "See the findings above for the tool that broke it.",
                    )
                )
                return False
            self.session = session
            self.report.restarts += 1
            return True

    async def _request(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        return dict(
            await self.session.request("tools/call", {"name": name, "arguments": args}, timeout=self.timeout)
        )

    async def _probe_one(self, tool: dict[str, Any]) -> None:
        name = str(tool.get("name"))
        schema = tool.get("inputSchema")
        args = example_arguments(schema if isinstance(schema, dict) else None)
        if name not in self.report.probed:
            self.report.probed.append(name)
        raw = await self._call(name, args)
        if raw is not None and raw.get("isError") is True:
            self.report.add(
                CheckFinding(
                    "probe-is-error",
                    "info",
                    "results",
                    "the call with schema-generated arguments returned isError",
                    "Fine if the example arguments make no sense for this tool.",
                    tool=name,
                )
            )

    async def _call(self, name: str, args: dict[str, Any]) -> dict[str, Any] | None:
        """Call and validate; report transport-level failures; None when there is no result."""
        try:
            raw = await self._request(name, args)
        except ServerExitedError as exc:
            self._add("server-crashed", "error", f"the server died during a call to {name!r}: {exc}", name)
            raise _ServerBrokenError from exc
        except CallTimeoutError as exc:
            self._add(
                "probe-timeout", "warning", f"no answer within {self.timeout:g} s; server restarted", name
            )
            raise _ServerBrokenError from exc
        except JsonRpcError as exc:
            self.report.add(
                CheckFinding(
                    "call-rpc-error",
                    "warning",
                    "results",
                    f"tools/call answered JSON-RPC error {exc.code}: {exc.message}",
                    "Report tool failures as a result with isError: true so the model can read them.",
                    tool=name,
                )
            )
            return None
        except CallError as exc:
            self.report.add(CheckFinding("call-failed", "error", "results", str(exc), "", tool=name))
            return None
        self._validate(name, raw)
        return raw

    def _add(self, rule: str, severity: str, message: str, tool: str) -> None:
        hints = {
            "server-crashed": "A tool must report failure as an isError result, never take the server down.",
            "probe-timeout": "Answer promptly or report progress; clients give up on silent tools.",
        }
        level: CheckSeverity = "error" if severity == "error" else "warning"
        self.report.add(CheckFinding(rule, level, "results", message, hints.get(rule, ""), tool=tool))

    def _validate(self, name: str, raw: dict[str, Any]) -> None:
        schema = self.output_schemas.get(name)
        for problem in validate_result(raw, self.session.protocol_version, output_schema=schema):
            pointer, _, message = problem.partition(": ")
            self.report.add(
                CheckFinding(
                    "result-invalid",
                    "error",
                    "results",
                    f"result does not match the MCP schema: {message or problem}",
                    "Build results with a library that validates them (mcpkit.results).",
                    tool=name,
                    pointer=pointer if pointer.startswith("/") else "",
                )
            )

    async def _unknown_tool(self) -> None:
        raw = await self._expect_failure(UNKNOWN_TOOL)
        if raw is not None and raw.get("isError") is not True:
            self.report.add(
                CheckFinding(
                    "unknown-tool-accepted",
                    "error",
                    "results",
                    f"a call of a tool that does not exist ({UNKNOWN_TOOL!r}) succeeded",
                    "Answer a call of an unknown tool with a JSON-RPC error (-32602) or an isError result.",
                )
            )

    async def _bogus_argument(self, tool: dict[str, Any]) -> None:
        name = str(tool.get("name"))
        schema = tool.get("inputSchema")
        args = {**example_arguments(schema if isinstance(schema, dict) else None), BOGUS_ARGUMENT: True}
        try:
            raw = await self._request(name, args)
        except JsonRpcError as exc:
            if self.session.protocol_version >= "2025-11-25":
                self.report.add(
                    CheckFinding(
                        "invalid-arguments-not-iserror",
                        "info",
                        "results",
                        f"an argument the schema forbids gave JSON-RPC error {exc.code}, not an isError result",
                        "Since 2025-11-25 input validation errors are tool execution errors (isError: true).",
                        tool=name,
                    )
                )
            return
        except ServerExitedError as exc:
            self._add("server-crashed", "error", f"the server died on an unexpected argument: {exc}", name)
            raise _ServerBrokenError from exc
        except CallTimeoutError as exc:
            self._add("probe-timeout", "warning", "a call with an unexpected argument got no answer", name)
            raise _ServerBrokenError from exc
        except CallError:
            return
        self._validate(name, raw)
        if raw.get("isError") is not True:
            self.report.add(
                CheckFinding(
                    "invalid-arguments-accepted",
                    "warning",
                    "results",
                    f"a call with valid arguments plus {BOGUS_ARGUMENT!r}, which the schema forbids "
                    "(additionalProperties: false), succeeded",
                    "Validate arguments against inputSchema before running the tool.",
                    tool=name,
                )
            )

    async def _expect_failure(self, name: str) -> dict[str, Any] | None:
        try:
            raw = await self._request(name, {})
        except JsonRpcError:
            return None  # a protocol error is what the spec asks for here
        except ServerExitedError as exc:
            self._add("server-crashed", "error", f"the server died on a call of an unknown tool: {exc}", name)
            raise _ServerBrokenError from exc
        except CallTimeoutError as exc:
            self._add(
                "probe-timeout", "warning", "a call of an unknown tool got no answer; server restarted", name
            )
            raise _ServerBrokenError from exc
        except CallError:
            return None
        self._validate(name, raw)
        return raw


def _read_only(tool: dict[str, Any]) -> bool:
    ann = tool.get("annotations")
    return isinstance(ann, dict) and ann.get("readOnlyHint") is True


def _closed_schema(tool: dict[str, Any]) -> bool:
    """Whether the tool's schema forbids properties it does not list."""
    schema = tool.get("inputSchema")
    return isinstance(schema, dict) and schema.get("additionalProperties") is False
