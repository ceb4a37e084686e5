"""Capability checks (seed 003): declared means served, undeclared means -32601, no empty objects.

A declared capability's list method must answer; a method of a capability the server did not
declare must answer -32601 (method not found), because a server that quietly serves it has a
handler its declaration hides. An empty capability object (``"prompts": {}``) is valid JSON
for "supported", but a client in seed 003 read it as "none", so it is reported.
"""

from __future__ import annotations

from mcp_types import METHOD_NOT_FOUND

from mcpkit.check.model import CheckFinding, Report
from mcpkit.client import ClientError, JsonRpcError, Session

LIST_METHODS = {"tools": "tools/list", "resources": "resources/list", "prompts": "prompts/list"}
# Capabilities whose empty object says nothing useful (``logging: {}`` and ``completions: {}``
# are complete as empty objects in the spec, so they are not reported).
EMPTY_MEANS_NOTHING = (*LIST_METHODS, "experimental", "extensions")


async def check_capabilities(session: Session, report: Report, timeout: float) -> None:
    caps = session.capabilities
    report.capabilities = dict(caps)
    for name, value in caps.items():
        if isinstance(value, dict) and not value and name in EMPTY_MEANS_NOTHING:
            report.add(
                CheckFinding(
                    "capability-empty-object",
                    "warning",
                    "capabilities",
                    f"capability {name!r} is an empty object",
                    f"Declare {name} only when its handlers exist, and say what it supports "
                    '(e.g. {"listChanged": false}); one client read {} as "not supported".',
                    pointer=f"/capabilities/{name}",
                )
            )
    for name, method in LIST_METHODS.items():
        if name in caps:
            await _declared(session, report, name, method, timeout)
        else:
            await _undeclared(session, report, name, method, timeout)


async def _declared(session: Session, report: Report, name: str, method: str, timeout: float) -> None:
    try:
        await session.request(method, None, timeout=timeout)
    except (ClientError, JsonRpcError) as exc:
        report.add(
            CheckFinding(
                "declared-method-fails",
                "error",
                "capabilities",
                f"{name} is declared but {method} fails: {exc}",
                f"Either serve {method} or stop declaring the {name} capability.",
                pointer=f"/capabilities/{name}",
            )
        )


async def _undeclared(session: Session, report: Report, name: str, method: str, timeout: float) -> None:
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
    except ClientError as exc:
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
