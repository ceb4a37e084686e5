"""Arguments a client sent against an adapted schema, put back into the downstream's terms.

``compat.adapt`` widens schemas in two ways a downstream may not accept back:

* a ``type`` array such as ``["number", "string"]`` becomes ``"string"`` (Claude Desktop,
  Gemini), so a model sends ``"5"`` or ``"[1, 2]"`` where the downstream wants a number or a
  list: a string that parses as JSON and then fits the original schema is sent parsed;
* OpenAI strict mode makes every property required and nullable, so the model sends
  ``null`` for each one it means to leave out: a ``null`` the original schema does not allow,
  on a property it does not require, is dropped.

Then the toolkit's tolerant coercion (:func:`mcpkit.server.coerce_arguments`, the same that
mcpkit's own servers apply) turns unambiguous sloppy forms into the declared types (``"yes"``
for ``true``, ``"a,b"`` for a list). Anything else is sent as the client wrote it; the
downstream validates its own arguments.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from jsonschema import Draft202012Validator

from mcpkit.server import ArgumentError, coerce_arguments
from mcpkit.tools import flat_validator


def _resolve(schema: Any, root: Mapping[str, Any], depth: int = 0) -> Any:
    """Follow a local ``$ref`` (``#/$defs/X``, ``#/definitions/X``) to its target."""
    while isinstance(schema, Mapping) and isinstance(schema.get("$ref"), str) and depth < 20:
        ref = schema["$ref"]
        if not ref.startswith("#/"):
            return schema
        target: Any = root
        for part in ref[2:].split("/"):
            if not isinstance(target, Mapping) or part not in target:
                return schema
            target = target[part]
        schema = target
        depth += 1
    return schema


def _fits(value: Any, schema: Any, root: Mapping[str, Any]) -> bool:
    if not isinstance(schema, Mapping):
        return True
    try:
        defs = {k: root[k] for k in ("$defs", "definitions") if k in root and k not in schema}
        return Draft202012Validator({**defs, **schema}).is_valid(value)
    except Exception:  # an unusual schema the validator cannot compile: let the downstream judge
        return True


class Restorer:
    """:func:`restore` for one tool, with its input schema compiled once.

    Most calls already fit the original schema (nothing was widened, or the model sent the
    original types): they pass after one validation, without walking the schema.
    """

    def __init__(self, original: Mapping[str, Any]) -> None:
        self.original = original
        self._flat = flat_validator(original)  # the same verdict, 50x cheaper, for flat schemas
        try:
            self._validator: Draft202012Validator | None = Draft202012Validator(dict(original))
        except Exception:  # not a schema the validator can compile: walk it every time
            self._validator = None

    def __call__(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        if self._flat is not None and self._validator is not None and self._flat(arguments):
            return dict(arguments)
        if self._validator is not None:
            try:
                if self._validator.is_valid(dict(arguments)):
                    return dict(arguments)
            except Exception:
                pass
        restored = restore(arguments, self.original)
        try:  # then the toolkit's own tolerant coercion: "yes" for true, "a,b" for a list, ...
            return coerce_arguments(self.original, restored)
        except ArgumentError:
            return restored  # the downstream says what is wrong, in its own words


def restore(arguments: Mapping[str, Any], original: Mapping[str, Any]) -> dict[str, Any]:
    """``arguments`` for the downstream whose input schema is ``original``."""
    return _restore_object(arguments, original, original)


def _restore_object(value: Mapping[str, Any], schema: Any, root: Mapping[str, Any]) -> dict[str, Any]:
    schema = _resolve(schema, root)
    props = schema.get("properties") if isinstance(schema, Mapping) else None
    required = set(schema.get("required") or ()) if isinstance(schema, Mapping) else set()
    out: dict[str, Any] = {}
    for key, item in value.items():
        sub = _resolve(props.get(key), root) if isinstance(props, Mapping) else None
        if sub is None:
            out[key] = item
            continue
        if item is None and key not in required and not _fits(None, sub, root):
            continue
        out[key] = _restore_value(item, sub, root)
    return out


def _restore_value(value: Any, schema: Any, root: Mapping[str, Any]) -> Any:
    if isinstance(value, str) and not _fits(value, schema, root):
        try:
            parsed = json.loads(value)
        except ValueError:
            return value
        if _fits(parsed, schema, root):
            return parsed
        return value
    if isinstance(value, Mapping) and isinstance(schema, Mapping) and "properties" in schema:
        return _restore_object(value, schema, root)
    if isinstance(value, list) and isinstance(schema, Mapping) and isinstance(schema.get("items"), Mapping):
        items = _resolve(schema["items"], root)
        return [_restore_value(v, items, root) for v in value]
    return value
