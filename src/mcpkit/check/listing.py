"""List methods walked to the end: result shapes, ``nextCursor`` pagination, duplicates.

A client that lists tools, resources or prompts follows ``nextCursor`` until a page has none;
a server whose cursor repeats makes it loop, one whose pages overlap shows an item twice, and
a page that does not match the schema makes a strict client (the TypeScript SDK) reject the
whole list. Every page is validated with the SDK's per-version result models.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from mcp_types.methods import validate_server_result
from pydantic import ValidationError as PydanticValidationError

from mcpkit.check.model import CheckFinding, CheckReport
from mcpkit.client import CallError

MAX_PAGES = 1000


class Requester(Protocol):
    """What the list and capability checks need of a connection, on either era: the
    handshake's :class:`~mcpkit.client.Session` or the checker's stateless wire."""

    @property
    def protocol_version(self) -> str: ...

    @property
    def capabilities(self) -> dict[str, Any]: ...

    async def request(
        self, method: str, params: Mapping[str, Any] | None = None, *, timeout: float | None = None
    ) -> Any: ...


@dataclass(frozen=True)
class ListKind:
    """One list method: where its items are and what identifies an item."""

    method: str
    items: str
    key: str


TOOLS = ListKind("tools/list", "tools", "name")
RESOURCES = ListKind("resources/list", "resources", "uri")
TEMPLATES = ListKind("resources/templates/list", "resourceTemplates", "uriTemplate")
PROMPTS = ListKind("prompts/list", "prompts", "name")


async def walk(
    session: Requester, kind: ListKind, report: CheckReport, timeout: float
) -> list[dict[str, Any]] | None:
    """Every item of ``kind`` across all pages (None when the first page fails: reported elsewhere)."""
    items: list[dict[str, Any]] = []
    seen_cursors: set[str] = set()
    seen_keys: set[str] = set()
    cursor: str | None = None
    for page_number in range(1, MAX_PAGES + 1):
        params = {"cursor": cursor} if cursor is not None else None
        try:
            page = await session.request(kind.method, params, timeout=timeout)
        except CallError as exc:
            if page_number == 1:
                raise
            _broken(report, kind, f"page {page_number} (cursor {cursor!r}) failed: {exc}")
            return items
        _validate(session, report, kind, page, page_number)
        for item in page.get(kind.items) or []:
            if not isinstance(item, dict):
                continue
            key = str(item.get(kind.key))
            if key in seen_keys and page_number > 1:
                report.add(
                    CheckFinding(
                        "pagination-duplicate",
                        "error",
                        "capabilities",
                        f"{kind.method}: {kind.key} {key!r} appears again on page {page_number}",
                        "Make each page continue where the last one ended; never repeat an item.",
                        tool=key if kind is TOOLS else None,
                    )
                )
            seen_keys.add(key)
            items.append(item)
        nxt = page.get("nextCursor")
        if nxt is None:
            return items
        if not isinstance(nxt, str):
            return items  # the schema check above reported it
        if nxt in seen_cursors or nxt == cursor:
            _broken(report, kind, f"nextCursor {nxt!r} was already followed: the pages loop")
            return items
        seen_cursors.add(nxt)
        cursor = nxt
    _broken(report, kind, f"still a nextCursor after {MAX_PAGES} pages")
    return items


def _broken(report: CheckReport, kind: ListKind, message: str) -> None:
    report.add(
        CheckFinding(
            "pagination-broken",
            "error",
            "capabilities",
            f"{kind.method}: {message}",
            "Return a nextCursor only when there is a next page, and make every cursor lead forward.",
        )
    )


def _validate(
    session: Requester, report: CheckReport, kind: ListKind, page: dict[str, Any], number: int
) -> None:
    if kind is TOOLS and isinstance(page.get("tools"), list):
        # Tool definitions are graded one by one, per client profile, by the tool checks (a
        # 2026-07-28 outputSchema may be any schema); here only the page's own shape.
        page = {**page, "tools": [_stub(t) for t in page["tools"]]}
    try:
        validate_server_result(kind.method, session.protocol_version, page)
    except (KeyError, ValueError) as exc:
        if not isinstance(exc, PydanticValidationError):
            return  # a method or version the SDK's models do not cover
        problem = exc.errors()[0]
        where = "/" + "/".join(str(p) for p in problem.get("loc", ()))
        report.add(
            CheckFinding(
                "list-result-invalid",
                "error",
                "capabilities",
                f"{kind.method} page {number}: {problem.get('msg')} at {where}",
                "Build list results with the SDK's types or check them against the MCP schema.",
                pointer=where,
            )
        )


def _stub(tool: Any) -> Any:
    """A tool reduced to what the page shape needs (its name); its other fields are graded elsewhere."""
    if not isinstance(tool, dict):
        return tool
    return {"name": tool.get("name"), "inputSchema": {"type": "object"}}
