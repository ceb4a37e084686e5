"""Result checks (``--probe``): call tools and grade every result with ``validate_result``.

Only tools annotated ``readOnlyHint: true`` are called unless ``--probe-all``: a checker must
never be the reason a tool wrote something. An unknown tool and invalid arguments must come
back as ``isError`` results (the model can read those and correct itself); a JSON-RPC error is
reported as a warning, a successful answer as an error.
"""

from __future__ import annotations

from typing import Any

from mcpkit.check.argsgen import example_arguments
from mcpkit.check.model import CheckFinding, Report
from mcpkit.client import CallTimeoutError, ClientError, JsonRpcError, ServerExitedError, Session
from mcpkit.results import validate_result

UNKNOWN_TOOL = "mcpkit_check_no_such_tool"
BOGUS_ARGUMENT = "mcpkit_check_unexpected_argument"


_OUTPUT_SCHEMAS: dict[int, dict[str, Any]] = {}
"""Each probed session's tools' outputSchema by name, for the duration of its probe."""


class ServerGone(Exception):
    """The server died during probing; later probes are pointless."""


async def probe_tools(
    session: Session, tools: list[dict[str, Any]], report: Report, *, probe_all: bool, timeout: float
) -> None:
    _OUTPUT_SCHEMAS[id(session)] = {
        str(t.get("name")): t["outputSchema"] for t in tools if isinstance(t.get("outputSchema"), dict)
    }
    try:
        for tool in tools:
            if probe_all or _read_only(tool):
                await _probe_one(session, tool, report, timeout)
            else:
                report.add(
                    CheckFinding(
                        "probe-skipped-write",
                        "info",
                        "results",
                        "not called: not annotated read-only (use --probe-all to call it)",
                        "Annotate tools that never write with readOnlyHint: true.",
                        tool=str(tool.get("name")),
                    )
                )
        await _expect_error(session, report, UNKNOWN_TOOL, {}, "unknown-tool", timeout)
        target = next((t for t in tools if probe_all or _read_only(t)), None)
        if target is not None:
            bad = {BOGUS_ARGUMENT: True}
            await _expect_error(session, report, str(target.get("name")), bad, "invalid-arguments", timeout)
    except ServerGone:
        return
    finally:
        _OUTPUT_SCHEMAS.pop(id(session), None)


def _read_only(tool: dict[str, Any]) -> bool:
    ann = tool.get("annotations")
    return isinstance(ann, dict) and ann.get("readOnlyHint") is True


async def _call(
    session: Session, report: Report, name: str, args: dict[str, Any], timeout: float
) -> dict[str, Any] | None:
    """Call and validate; report transport-level failures; None when there is no result."""
    try:
        raw = await session.request("tools/call", {"name": name, "arguments": args}, timeout=timeout)
    except ServerExitedError as exc:
        report.add(
            CheckFinding(
                "server-crashed",
                "error",
                "results",
                f"the server died during a call to {name!r}: {exc}",
                "A tool must report failure as an isError result, never take the server down.",
                tool=name,
            )
        )
        raise ServerGone from exc
    except CallTimeoutError:
        report.add(
            CheckFinding(
                "probe-timeout",
                "warning",
                "results",
                f"no answer within {timeout:g} s",
                "Answer promptly or report progress; clients give up on silent tools.",
                tool=name,
            )
        )
        return None
    except JsonRpcError as exc:
        report.add(
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
    except ClientError as exc:
        report.add(CheckFinding("call-failed", "error", "results", str(exc), "", tool=name))
        return None
    _validate(session, report, name, raw)
    return raw


def _validate(session: Session, report: Report, name: str, raw: dict[str, Any]) -> None:
    schema = _OUTPUT_SCHEMAS.get(id(session), {}).get(name)
    for problem in validate_result(raw, session.protocol_version, output_schema=schema):
        pointer, _, message = problem.partition(": ")
        report.add(
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


async def _probe_one(session: Session, tool: dict[str, Any], report: Report, timeout: float) -> None:
    name = str(tool.get("name"))
    schema = tool.get("inputSchema")
    raw = await _call(
        session, report, name, example_arguments(schema if isinstance(schema, dict) else None), timeout
    )
    report.probed.append(name)
    if raw is not None and raw.get("isError") is True:
        report.add(
            CheckFinding(
                "probe-is-error",
                "info",
                "results",
                "the call with schema-generated arguments returned isError",
                "Fine if the example arguments make no sense for this tool.",
                tool=name,
            )
        )


async def _expect_error(
    session: Session, report: Report, name: str, args: dict[str, Any], rule: str, timeout: float
) -> None:
    """A call that must fail as an isError result."""
    try:
        raw = await session.request("tools/call", {"name": name, "arguments": args}, timeout=timeout)
    except JsonRpcError as exc:
        report.add(
            CheckFinding(
                f"{rule}-not-iserror",
                "warning",
                "results",
                f"{'an unknown tool' if rule == 'unknown-tool' else 'invalid arguments'} gave JSON-RPC error "
                f"{exc.code} instead of an isError result",
                "Return {content: [{type: text, text: why}], isError: true} so the model can correct itself.",
                tool=None if rule == "unknown-tool" else name,
            )
        )
        return
    except ServerExitedError as exc:
        report.add(
            CheckFinding(
                "server-crashed", "error", "results", f"the server died on {rule}: {exc}", "", tool=name
            )
        )
        raise ServerGone from exc
    except ClientError as exc:
        report.add(CheckFinding("call-failed", "error", "results", f"{rule}: {exc}", "", tool=name))
        return
    _validate(session, report, name, raw)
    if raw.get("isError") is not True:
        what = "an unknown tool" if rule == "unknown-tool" else f"an unexpected argument {BOGUS_ARGUMENT!r}"
        report.add(
            CheckFinding(
                f"{rule}-accepted",
                "error",
                "results",
                f"a call with {what} succeeded instead of returning isError",
                "Validate the tool name and the arguments against inputSchema before running anything.",
                tool=None if rule == "unknown-tool" else name,
            )
        )
