"""Strict validation of a raw ``tools/call`` result, as a client of a given version sees it.

A server once sent results its client could not read and nothing caught it, because the
tests looked at the server's own objects, not at the JSON on the wire. :func:`validate_result`
takes that JSON (a dict) and a protocol version and lists every problem with a JSON pointer.

Two layers: mcpkit's own rules (:mod:`mcpkit.results._content`, stricter than the SDK's lenient
pydantic models: no ``"true"`` for ``isError``, base64 and URIs checked, version gates), then
the SDK's own validator (``mcp_types.methods.validate_server_result``) as a second opinion for
the versions whose schema it was generated from, so such a result the SDK would refuse to send
or receive never passes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import mcp_types
import pydantic
from mcp_types.methods import validate_server_result

from mcpkit.results._checks import Report, pointer
from mcpkit.results._content import check_content_item, check_icons
from mcpkit.results._plain import plain_text_wire
from mcpkit.results._wire import to_wire
from mcpkit.tools import flat_validator

_MESSAGE_LIMIT = 300

SDK_SCHEMA_ERAS = frozenset({"2025-11-25", "2026-07-28"})
"""Versions whose own schema the SDK's models were generated from. The SDK checks older
versions against the 2025-11-25 shapes too, which would refuse fields those versions do not
define (and so allow anything in); for them mcpkit's rules, written per version, decide alone."""


def validate_result(
    raw: Mapping[str, Any] | mcp_types.CallToolResult,
    protocol_version: str = "2025-11-25",
    *,
    output_schema: Mapping[str, Any] | None = None,
) -> list[str]:
    """Problems of ``raw`` as a ``CallToolResult`` of ``protocol_version``; ``[]`` when valid.

    ``raw`` is the JSON a client received, or a result object, which is checked in the wire
    form the SDK would send for that version (see :func:`mcpkit.results.to_wire`).

    Each problem reads ``"<json pointer>: <what is wrong>"`` (``/`` is the root).
    ``output_schema`` is the tool's ``outputSchema``: unless the result is an error, its
    ``structuredContent`` must then be present and valid against it (as clients check).
    Raises ``ValueError`` for a protocol version the SDK does not know.
    """
    report = Report(protocol_version)
    if isinstance(raw, mcp_types.CallToolResult):
        try:
            raw = to_wire(raw, protocol_version=protocol_version)
        except pydantic.ValidationError as exc:
            return [
                f"{pointer([str(p) for p in e['loc']])}: SDK refuses to send it: {_short(e['msg'])}"
                for e in exc.errors()
            ]
    untrusted: object = raw  # callers pass whatever came off the wire
    if not isinstance(untrusted, Mapping):
        report.add([], "result must be a JSON object")
        return report.problems
    _check_envelope(report, raw)
    if output_schema is not None and raw.get("isError") is not True:
        _check_structured(report, raw, output_schema)
    if (
        not report.problems
        and protocol_version in SDK_SCHEMA_ERAS
        and plain_text_wire(raw, protocol_version) is None  # the SDK accepts every such result
    ):
        report.problems.extend(_sdk_opinion(raw, protocol_version))
    return report.problems


def _check_envelope(report: Report, raw: Mapping[str, Any]) -> None:
    if report.typed(raw, "content", "array", [], required=True):
        for i, item in enumerate(raw["content"]):
            check_content_item(report, item, ["content", i])
    report.typed(raw, "isError", "boolean", [], required=False)
    if report.has("2026-07-28"):
        report.typed(raw, "resultType", "string", [], required=True)
        _check_result_meta(report, raw)
    else:
        report.typed(raw, "_meta", "object", [], required=False)
    if "structuredContent" in raw:
        if not report.has("2025-06-18"):
            report.add(["structuredContent"], f"is not in protocol {report.version} (added in 2025-06-18)")
        elif not report.has("2026-07-28"):
            report.typed(raw, "structuredContent", "object", [], required=False)


def _check_result_meta(report: Report, raw: Mapping[str, Any]) -> None:
    """2026-07-28 ``_meta``: an object whose reserved serverInfo key is an Implementation."""
    if not report.typed(raw, "_meta", "object", [], required=False):
        return
    key = "io.modelcontextprotocol/serverInfo"
    if not report.typed(raw["_meta"], key, "object", ["_meta"], required=False):
        return
    info = raw["_meta"][key]
    here = ["_meta", key]
    report.strings(info, here, ("name", "version"), ("title", "description"))
    if "websiteUrl" in info:
        report.uri(info, "websiteUrl", here)
    check_icons(report, info, here)


def _check_structured(report: Report, raw: Mapping[str, Any], schema: Mapping[str, Any]) -> None:
    if "structuredContent" not in raw:
        report.add([], "missing 'structuredContent' although the tool declares an output schema")
        return
    compiled = _output_validator(schema)
    if isinstance(compiled, str):
        report.add(["structuredContent"], f"cannot check: the output schema is invalid: {compiled}")
        return
    flat, validator = compiled
    if flat is not None and flat(raw["structuredContent"]):
        return
    for error in sorted(validator.iter_errors(raw["structuredContent"]), key=lambda e: list(e.absolute_path)):
        where = ["structuredContent", *error.absolute_path]
        report.add(where, f"does not match the output schema: {_short(error.message)}")


_VALIDATORS: dict[int, tuple[Mapping[str, Any], Any]] = {}
_MAX_VALIDATORS = 512


def _output_validator(schema: Mapping[str, Any]) -> Any:
    """A flat check (when the schema is flat) and the compiled validator of ``schema``, or
    why it cannot be compiled (a one-line str).

    Checking a schema and building its validator takes about a millisecond, a hundred times
    the rest of a result's validation; a gateway or checker validates every result of a tool
    against the same schema object, so it is compiled once per object. The entry holds the
    schema, so its id cannot be reused while cached; a schema is taken as unchanged once used.
    """
    cached = _VALIDATORS.get(id(schema))
    if cached is not None and cached[0] is schema:
        return cached[1]
    import jsonschema  # lazily: a server that never checks structured content never pays for it
    from jsonschema.validators import validator_for

    plain = dict(schema)
    validator_class = validator_for(plain)
    compiled: Any
    try:
        validator_class.check_schema(plain)
        compiled = (flat_validator(plain), validator_class(plain))
    except jsonschema.SchemaError as exc:
        compiled = _short(exc.message)
    if len(_VALIDATORS) >= _MAX_VALIDATORS:
        del _VALIDATORS[next(iter(_VALIDATORS))]
    _VALIDATORS[id(schema)] = (schema, compiled)
    return compiled


def _sdk_opinion(raw: Mapping[str, Any], version: str) -> list[str]:
    """What the SDK's own validator says about ``raw`` (problems in the same format)."""
    try:
        validate_server_result("tools/call", version, raw)
    except pydantic.ValidationError as exc:
        return [
            f"{pointer([str(part) for part in error['loc']])}: SDK refuses it: {_short(error['msg'])}"
            for error in exc.errors()
        ]
    return []


def _short(message: str) -> str:
    flat = " ".join(message.split())
    return flat if len(flat) <= _MESSAGE_LIMIT else flat[: _MESSAGE_LIMIT - 1] + "…"
