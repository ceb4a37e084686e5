"""Downstream results on their way to the client: validated, fitted to the adapted definition.

A server that sent malformed or unvalidated results broke the clients reading them; behind a
gateway that holds too: a client must never receive a result it cannot read. Every downstream
result is checked with :func:`mcpkit.results.validate_result` against the protocol version
the downstream speaks and the tool's own output schema; an invalid one becomes an
``isError`` result naming the downstream, the tool and the first problem. Where the
adapted definition no longer declares the original output schema (a client refused its
shape), ``structuredContent`` that the client would now reject is dropped and its JSON is kept
as text, so nothing is lost.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

from mcpkit.results import error_result, scrub_surrogates, to_wire, validate_result

logger = logging.getLogger("mcpkit.gateway")


def failure(message: str) -> dict[str, Any]:
    """An ``isError`` result in wire form with one line of text."""
    return to_wire(error_result(message))


def gateway_failure(name: str, exc: Exception) -> dict[str, Any]:
    """The one-line result for a call of ``name`` that failed inside the gateway itself (the
    caller logs the traceback): never a traceback to the client, never no answer."""
    return failure(scrub_surrogates(f"The gateway failed on {name}: {type(exc).__name__}: {exc}"[:500]))


def checked(
    raw: Mapping[str, Any],
    *,
    server: str,
    tool: str,
    protocol_version: str,
    original: Mapping[str, Any],
    adapted: Mapping[str, Any],
) -> dict[str, Any]:
    """The result to send for ``raw`` (a downstream ``tools/call`` result)."""
    out = dict(raw)
    schema = original.get("outputSchema")
    if (
        "outputSchema" not in adapted
        and "structuredContent" in out
        and not isinstance(out["structuredContent"], dict)
    ):
        # The client was never shown this output schema (its root is not an object): a
        # non-object structuredContent would break it, so it travels as text instead.
        structured = out.pop("structuredContent")
        if not out.get("content"):
            out["content"] = [{"type": "text", "text": json.dumps(structured, ensure_ascii=False)}]
        schema = None
    expected = schema if isinstance(schema, Mapping) else None
    try:
        problems = validate_result(out, protocol_version, output_schema=expected)
    except ValueError:  # a protocol version the SDK does not know: judge by the newest rules
        problems = validate_result(out, output_schema=expected)
    if problems:
        logger.warning("%s/%s returned an invalid result: %s", server, tool, "; ".join(problems[:5]))
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        return failure(f"Server {server} returned an invalid result for {tool}: {problems[0]}{more}")
    return out
