"""JSON-RPC 2.0 envelopes: parse incoming messages, build outgoing ones.

Pure functions with no I/O, so every rule about the wire (error codes, upstream's messages,
what makes a notification, how a batch is split) is in one place and can be property-tested
without a socket. The server and the client both build on it.

Streaming extension (upstream's, kept byte-compatible): a streamed result is sent as one
message per chunk, ``{"jsonrpc": "2.0", "id": .., "result": chunk, "more": bool}`` with ``more``
at the top level (upstream's documentation put it inside ``result``; its code, and every
client, reads it at the top level).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mcpkit.jsonrpc import INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR

JsonId = str | int | None


@dataclass(frozen=True, slots=True)
class Request:
    """One well-formed call. ``notification`` is true when the caller sent no ``id``."""

    method: str
    params: dict[str, Any] | list[Any]
    id: JsonId = None
    notification: bool = False


@dataclass(frozen=True, slots=True)
class Invalid:
    """A message (or batch element) that cannot be run; answered with this error."""

    code: int
    message: str
    id: JsonId = None


Parsed = Request | Invalid


@dataclass(frozen=True, slots=True)
class Incoming:
    """A decoded WebSocket message: one item, or a batch of items (answered as an array)."""

    items: list[Parsed]
    batch: bool


def _valid_id(value: Any) -> bool:
    # bool is an int subclass in Python but not a JSON-RPC id; floats are discouraged by the spec.
    return value is None or (isinstance(value, (str, int)) and not isinstance(value, bool))


def parse_item(obj: Any) -> Parsed:
    """Check one request object; upstream's message for a missing ``jsonrpc`` is kept verbatim."""
    if not isinstance(obj, dict):
        return Invalid(INVALID_REQUEST, "Invalid Request: expected a JSON object")
    has_id = "id" in obj
    raw_id = obj.get("id")
    req_id: JsonId = raw_id if _valid_id(raw_id) else None
    if has_id and not _valid_id(raw_id):
        return Invalid(INVALID_REQUEST, "Invalid Request: id must be a string, an integer or null")
    if "jsonrpc" not in obj:
        return Invalid(INVALID_REQUEST, "Invalid Request: missing jsonrpc field", req_id)
    if obj["jsonrpc"] != "2.0":
        return Invalid(INVALID_REQUEST, 'Invalid Request: jsonrpc must be "2.0"', req_id)
    method = obj.get("method")
    if "method" not in obj:
        return Invalid(INVALID_REQUEST, "Invalid Request: missing method field", req_id)
    if not isinstance(method, str) or not method:
        return Invalid(INVALID_REQUEST, "Invalid Request: method must be a non-empty string", req_id)
    params = obj.get("params")
    if params is None:
        params = {}
    if not isinstance(params, (dict, list)):
        return Invalid(INVALID_PARAMS, "Invalid params: params must be an object or an array", req_id)
    return Request(method=method, params=params, id=req_id, notification=not has_id)


def parse_message(text: str | bytes) -> Incoming:
    """Decode one WebSocket message into requests; never raises."""
    try:
        data = json.loads(text)
    except (ValueError, UnicodeDecodeError) as exc:
        return Incoming([Invalid(PARSE_ERROR, f"Parse error: {_one_line(str(exc))}")], batch=False)
    except RecursionError:  # the decoder's own depth guard, about a thousand levels
        return Incoming([Invalid(INVALID_PARAMS, "Invalid params: JSON nested too deep")], batch=False)
    if isinstance(data, list):
        if not data:
            return Incoming([Invalid(INVALID_REQUEST, "Invalid Request: empty batch")], batch=False)
        return Incoming([parse_item(x) for x in data], batch=True)
    return Incoming([parse_item(data)], batch=False)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def result_message(req_id: JsonId, result: Any, *, more: bool | None = None) -> dict[str, Any]:
    """A success response; ``more`` (streaming only) goes at the top level, as upstream sends it."""
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": req_id, "result": result}
    if more is not None:
        msg["more"] = more
    return msg


def error_message(req_id: JsonId, code: int, message: str, data: Any = None) -> dict[str, Any]:
    """An error response; ``data`` is included only when there is some."""
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return {"jsonrpc": "2.0", "id": req_id, "error": err}


def request_message(
    method: str, params: Mapping[str, Any] | list[Any] | None, req_id: JsonId
) -> dict[str, Any]:
    """A request as upstream's clients send it (``params`` always present)."""
    wire = list(params) if isinstance(params, list) else dict(params or {})
    return {"jsonrpc": "2.0", "id": req_id, "method": method, "params": wire}


def dumps(message: Any) -> str:
    """Serialise for the wire: UTF-8 text as upstream (no ``\\u`` escapes), never NaN/Infinity."""
    return json.dumps(message, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
