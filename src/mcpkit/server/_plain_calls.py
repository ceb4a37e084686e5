"""Plain calls: the requests a fast path may answer without the SDK's server, and their answers.

Almost all of a server's traffic is ``tools/call``. A fast path (the gateway's stdio lane and
HTTP hot path; any mcpkit server that wants one) answers a *plain* call without the SDK's
per-request machinery and leaves everything else to the SDK unchanged. One definition of
"plain" serves every fast path, so they cannot drift: a single JSON-RPC request (not a batch,
not a notification) with a string or integer id, ``params`` an object, a string ``name``,
``arguments`` an object or absent, no other ``params`` field, and no progress token (progress
is relayed by the SDK's path).

The answer is written as the SDK writes it, to the byte (:func:`answer_line`): the SDK's rules
it copies are in :mod:`mcpkit._sdk`, each with a test.
"""

from __future__ import annotations

import json
import logging
from typing import Any, TypeGuard

from mcpkit._sdk import call_result_wire, message_bytes
from mcpkit.results import error_result, plain_text_wire, scrub_surrogates, to_wire

logger = logging.getLogger("mcpkit.server")

FAST_METHODS = frozenset({"tools/call", "ping"})
_PARAMS = {"tools/call": frozenset({"name", "arguments", "_meta"}), "ping": frozenset({"_meta"})}


def json_object(body: bytes | str) -> dict[str, Any] | None:
    """``body`` parsed, when it is one JSON object (else None: the SDK's path reports it)."""
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):
        return None
    return message if isinstance(message, dict) else None


def is_request_id(value: object) -> TypeGuard[str | int]:
    """A JSON-RPC id the fast paths take: a string or an integer (not a bool)."""
    return isinstance(value, str | int) and not isinstance(value, bool)


def plain_request(body: bytes | str) -> dict[str, Any] | None:
    """The JSON-RPC request in ``body`` when a fast path may answer it, else None."""
    message = json_object(body)
    if message is None or message.get("jsonrpc") != "2.0":
        return None
    if not is_request_id(message.get("id")) or message.get("method") not in FAST_METHODS:
        return None
    params = message.get("params", {})
    if params is None:
        params = {}
    if not isinstance(params, dict):
        return None
    meta = params.get("_meta")
    if meta is not None and (not isinstance(meta, dict) or "progressToken" in meta):
        return None  # progress needs the SDK's path, which relays it
    if not _PARAMS[message["method"]].issuperset(params):
        return None  # fields the SDK's models check (a task, ...): its path judges them
    if message["method"] == "tools/call":
        arguments = params.get("arguments", {})
        if not isinstance(params.get("name"), str) or not isinstance(arguments, dict | None):
            return None
    return message


def _failure(message: str) -> dict[str, Any]:
    return to_wire(error_result(message))


def wire_result(result: dict[str, Any], version: str, name: str) -> dict[str, Any]:
    """``result`` exactly as the SDK's path sends it for a handshake-era ``version``. A result
    the SDK would not send either becomes one line saying so. (2026-era results also get
    ``resultType`` and a ``serverInfo`` stamp; no fast path serves that era: they leave its
    requests to the SDK.)"""
    try:
        return call_result_wire(result, version)
    except Exception as exc:
        logger.warning("tools/call %s: result not sendable as %s: %s", name, version, exc)
        return call_result_wire(_failure(f"The result of {name} could not be sent: {exc}"[:300]), version)


def answer_line(request_id: str | int, result: dict[str, Any], version: str, name: str) -> bytes:
    """The JSON-RPC response for a ``tools/call`` result, exactly as the SDK's path sends it.

    A text result (the common case) is put on the wire directly (:func:`plain_text_wire`);
    any other shape takes :func:`wire_result`, the SDK's own models. Never raises: an answer
    that cannot be written becomes one line saying so.
    """
    plain = plain_text_wire(result, version)
    try:
        return response(request_id, plain if plain is not None else wire_result(result, version, name))
    except ValueError as exc:  # text no UTF-8 writer can send (a lone surrogate of our own)
        logger.warning("tools/call %s: the answer could not be written: %s", name, exc)
        problem = scrub_surrogates(f"The answer of {name} could not be written: {exc}"[:300])
        return response(request_id, _failure(problem))


def response(request_id: str | int, result: dict[str, Any]) -> bytes:
    """The JSON-RPC response carrying ``result``, to the byte as the SDK writes a message.
    Raises ``ValueError`` for text that cannot be UTF-8."""
    return message_bytes({"jsonrpc": "2.0", "id": request_id, "result": result})
