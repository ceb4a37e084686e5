"""Capability checks: declared means served (to the last page), undeclared means -32601.

A declared capability's list method must answer, with pages that match the schema and a
``nextCursor`` chain that ends; ``logging`` means ``logging/setLevel`` works and
``completions`` means ``completion/complete`` does. A method of a capability the server did
not declare must answer -32601 (method not found): a server that quietly serves it has a
handler its declaration hides (a server that served resources and prompts it never declared
left clients unable to trust its capabilities). ``ping`` must always answer an empty result.

The 2026-07-28 revision removed ``ping`` and ``logging/setLevel`` (a request carries its log
level in ``_meta``), so on that era neither is asked for, and a server that no longer answers
them is right.

An empty capability object such as ``"tools": {}`` is the normal declaration (every field
in it is optional), so it is not reported: no client is known to misread it.
"""

from __future__ import annotations

import re
from typing import Any

from mcp_types import METHOD_NOT_FOUND
from mcp_types.methods import validate_server_result
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError as PydanticValidationError

from mcpkit.check.listing import PROMPTS, RESOURCES, TEMPLATES, TOOLS, ListKind, Requester, walk
from mcpkit.check.model import CheckFinding, CheckReport
from mcpkit.client import CallError, JsonRpcError

LISTS: dict[str, ListKind] = {"tools": TOOLS, "resources": RESOURCES, "prompts": PROMPTS}
_VARIABLE = re.compile(r"\{[+#./;?&]?([A-Za-z0-9_]+)")


async def check_capabilities(
    session: Requester, report: CheckReport, timeout: float
) -> dict[str, list[dict[str, Any]]]:
    """Run the capability checks; return every listed item per list (tools, resources, ...)."""
    caps = session.capabilities
    if not report.capabilities:
        report.capabilities = dict(caps)
    stateless = session.protocol_version in MODERN_PROTOCOL_VERSIONS
    if not stateless:
        await _ping(session, report, timeout)
    listed: dict[str, list[dict[str, Any]]] = {}
    for name, kind in LISTS.items():
        if name in caps:
            items = await _declared(session, report, name, kind, timeout, "error")
            listed[name] = items or []
        else:
            await _undeclared(session, report, name, kind.method, timeout)
    if "resources" in caps:
        listed["resourceTemplates"] = (
            await _declared(session, report, "resources", TEMPLATES, timeout, "warning") or []
        )
    if "logging" in caps and not stateless:
        await _set_level(session, report, timeout)
    if "completions" in caps:
        await _complete(session, report, listed, timeout)
    return listed


async def _declared(
    session: Requester, report: CheckReport, name: str, kind: ListKind, timeout: float, severity: str
) -> list[dict[str, Any]] | None:
    try:
        return await walk(session, kind, report, timeout)
    except CallError as exc:
        if kind is TEMPLATES and isinstance(exc, JsonRpcError) and exc.code == METHOD_NOT_FOUND:
            return []  # many servers (the SDKs' low-level ones) serve no templates at all
        report.add(
            CheckFinding(
                "declared-method-fails",
                "error" if severity == "error" else "warning",
                "capabilities",
                f"{name} is declared but {kind.method} fails: {_say(exc)}",
                f"Either serve {kind.method} or stop declaring the {name} capability.",
                pointer=f"/capabilities/{name}",
            )
        )
        return None


async def _undeclared(
    session: Requester, report: CheckReport, name: str, method: str, timeout: float
) -> None:
    try:
        await session.request(method, None, timeout=timeout)
    except JsonRpcError as exc:
        if exc.code != METHOD_NOT_FOUND:
            report.add(
                CheckFinding(
                    "undeclared-wrong-error",
                    "warning",
                    "capabilities",
                    f"{method} (capability {name} not declared) answered error {exc.code}, not -32601",
                    "Answer -32601 (method not found) for methods of capabilities you do not declare.",
                )
            )
        return
    except CallError as exc:
        report.add(
            CheckFinding(
                "undeclared-method-fails",
                "warning",
                "capabilities",
                f"{method} (capability {name} not declared) did not answer: {exc}",
                "Answer -32601 (method not found) at once for methods you do not serve.",
            )
        )
        return
    report.add(
        CheckFinding(
            "undeclared-method-served",
            "error",
            "capabilities",
            f"{method} answers although capability {name!r} is not declared",
            f"Declare {name} in capabilities, or remove the {method} handler.",
        )
    )


async def _ping(session: Requester, report: CheckReport, timeout: float) -> None:
    problem = await _empty_result(session, "ping", None, timeout)
    if problem:
        report.add(
            CheckFinding(
                "ping-fails",
                "error",
                "handshake",
                f"ping: {problem}",
                "Answer ping with an empty result at any time (the SDKs do this for you).",
            )
        )


async def _set_level(session: Requester, report: CheckReport, timeout: float) -> None:
    problem = await _empty_result(session, "logging/setLevel", {"level": "warning"}, timeout)
    if problem:
        report.add(
            CheckFinding(
                "logging-setlevel-fails",
                "error",
                "capabilities",
                f"logging is declared but logging/setLevel {problem}",
                "Serve logging/setLevel (answer {}) or stop declaring the logging capability.",
                pointer="/capabilities/logging",
            )
        )


async def _empty_result(
    session: Requester, method: str, params: dict[str, Any] | None, timeout: float
) -> str:
    """'' when ``method`` answers an empty result, else what went wrong."""
    try:
        result = await session.request(method, params, timeout=timeout)
    except CallError as exc:
        return f"failed: {_say(exc)}"
    extra = {k for k in result if k != "_meta"}
    return f"answered {sorted(extra)} instead of an empty result" if extra else ""


async def _complete(
    session: Requester, report: CheckReport, listed: dict[str, list[dict[str, Any]]], timeout: float
) -> None:
    params = _completion_request(listed)
    if params is None:
        return  # nothing with an argument to complete
    try:
        result = await session.request("completion/complete", params, timeout=timeout)
    except JsonRpcError as exc:
        _completion(
            report,
            "warning",
            f"completion/complete for {params['ref']} answered error {exc.code}: {exc.message}",
        )
        return
    except CallError as exc:
        _completion(report, "error", f"completion/complete for {params['ref']} failed: {exc}")
        return
    try:
        validate_server_result("completion/complete", session.protocol_version, result)
    except PydanticValidationError as exc:
        problem = exc.errors()[0]
        _completion(
            report, "error", f"completion/complete result: {problem.get('msg')} at {problem.get('loc')}"
        )
        return
    except (KeyError, ValueError):
        return
    values = result.get("completion", {}).get("values", [])
    if len(values) > 100:
        _completion(
            report, "error", f"completion/complete returned {len(values)} values; at most 100 are allowed"
        )


def _completion_request(listed: dict[str, list[dict[str, Any]]]) -> dict[str, Any] | None:
    for prompt in listed.get("prompts", []):
        args = prompt.get("arguments")
        if isinstance(args, list) and args and isinstance(args[0], dict) and args[0].get("name"):
            ref = {"type": "ref/prompt", "name": prompt.get("name")}
            return {"ref": ref, "argument": {"name": args[0]["name"], "value": ""}}
    for template in listed.get("resourceTemplates", []):
        found = _VARIABLE.search(str(template.get("uriTemplate", "")))
        if found:
            ref = {"type": "ref/resource", "uri": template.get("uriTemplate")}
            return {"ref": ref, "argument": {"name": found.group(1), "value": ""}}
    return None


def _completion(report: CheckReport, severity: str, message: str) -> None:
    report.add(
        CheckFinding(
            "completion-fails",
            "error" if severity == "error" else "warning",
            "capabilities",
            message,
            "Answer completion/complete with {completion: {values: [...]}} (empty when there is nothing to offer).",
            pointer="/capabilities/completions",
        )
    )


def _say(exc: Exception) -> str:
    if isinstance(exc, JsonRpcError):
        return f"JSON-RPC error {exc.code}: {exc.message}"
    return str(exc)
