"""Tool arguments as models really send them: coerced where the meaning is clear, then validated.

Models copy ids out of text and send ``"12"`` for an integer, write booleans as ``"true"``, lists
as ``"journals,watchers"``, a bare ``"journals"`` or a JSON string, and send ``null`` for an
optional parameter they mean to leave out. Refusing those loses a turn (or the whole task), and
the SDK's own high-level ``MCPServer`` accepts some of them. So before JSON Schema validation each
argument is coerced to the type its schema declares, only where the meaning is unambiguous:

* integer / number from a numeric string (``"135"``, ``" 12 "``; ``"2.5"`` only for number);
  whole numbers stay within int64;
* boolean from true/false, yes/no, on/off, 1/0 (any case), as text or 0/1;
* array from a JSON array string, a comma-separated string when the items are scalars, or a
  single value (one element; for object items also one object given as JSON text);
* object from a JSON object string;
* ``null`` (or the text ``null`` for a non-string parameter) for an optional parameter: absent;
* a string parameter keeps its value exactly; a number sent for it becomes its decimal text.

What is still invalid is refused in one line that names the parameter, what was given and an
example of a valid value.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from mcpkit.errors import ValidationError
from mcpkit.tools import flat_validator
from mcpkit.tools.coerce import as_bool

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError as SchemaError

__all__ = ["ArgumentError", "ArgumentValidator", "coerce_arguments", "example_for"]

_MAX_MESSAGE = 300
_MAX_SHOWN = 60
INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)
_INTEGER = re.compile(r"[+-]?\d+")
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")
_SCALARS = frozenset({"string", "integer", "number", "boolean"})
_ABSENT = object()


class ArgumentError(ValidationError):
    """Arguments that no safe coercion makes valid; the message is one line for the model."""


class _Refused(Exception):
    """Raised inside coercion for a value that is clearly wrong (an integer beyond int64)."""


def _declared(schema: Mapping[str, Any]) -> str | None:
    kind = schema.get("type")
    return kind if isinstance(kind, str) else None


def _show(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False) if _jsonable(value) else repr(value)
    text = " ".join(text.split())
    return text if len(text) <= _MAX_SHOWN else text[: _MAX_SHOWN - 3] + "..."


def _jsonable(value: Any) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


def _whole(value: int, where: str) -> int:
    if not INT64_MIN <= value <= INT64_MAX:
        raise _Refused(
            f"{where}: {_show(value)} is too large; whole numbers here fit in 64 bits, up to {INT64_MAX}"
        )
    return value


def _to_integer(value: Any, where: str) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return _whole(value, where)
    if isinstance(value, float) and value.is_integer():
        return _whole(int(value), where)
    if isinstance(value, str):
        text = value.strip()
        if _INTEGER.fullmatch(text):
            return _whole(int(text), where)
        if _NUMBER.fullmatch(text):
            number = float(text)
            if math.isfinite(number) and number.is_integer():
                return _whole(int(number), where)
    return value


def _to_number(value: Any) -> Any:
    if isinstance(value, str):
        text = value.strip()
        if _INTEGER.fullmatch(text) and INT64_MIN <= int(text) <= INT64_MAX:
            return int(text)
        if _NUMBER.fullmatch(text):
            number = float(text)
            if math.isfinite(number):
                return number
    return value


def _to_boolean(value: Any) -> Any:
    try:
        return as_bool(value)  # the same words a handler's own coercer accepts
    except ValidationError:
        return value


def _scalar_items(items: Mapping[str, Any]) -> bool:
    return _declared(items) in _SCALARS or "enum" in items


def _to_array(schema: Mapping[str, Any], value: Any, where: str) -> Any:
    items = schema.get("items")
    items = items if isinstance(items, Mapping) else {}
    if isinstance(value, str):
        text = value.strip()
        parsed: Any = _ABSENT
        if text.startswith(("[", "{")):
            try:
                parsed = json.loads(text)
            except (ValueError, RecursionError):
                parsed = _ABSENT
        if isinstance(parsed, list):
            value = parsed
        elif isinstance(parsed, dict) and _declared(items) == "object":
            value = [parsed]  # one object, sent as JSON text
        elif _declared(items) == "string" and "," not in value:
            value = [value]
        elif _scalar_items(items):
            value = [part.strip() for part in value.split(",")] if text else []
            if value and value[-1] == "":
                value.pop()
        else:
            return value
    elif not isinstance(value, list):
        value = [value]
    return [_coerce(items, item, f"{where}[{i}]") for i, item in enumerate(value)]


def _to_object(schema: Mapping[str, Any], value: Any, where: str) -> Any:
    if isinstance(value, str) and value.strip().startswith("{"):
        try:
            parsed = json.loads(value)
        except (ValueError, RecursionError):
            return value
        value = parsed
    if not isinstance(value, dict):
        return value
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return value
    required = _names(schema.get("required"))
    out: dict[str, Any] = {}
    for name, item in value.items():
        sub = properties.get(name)
        if isinstance(sub, Mapping):
            if _means_absent(sub, item) and name not in required:
                continue
            out[name] = _coerce(sub, item, f"{where}.{name}" if where else name)
        else:
            out[name] = item
    return out


def _names(value: Any) -> set[str]:
    """The string entries of a ``required`` list (a malformed schema may hold anything)."""
    return {n for n in value if isinstance(n, str)} if isinstance(value, list | tuple) else set()


def _means_absent(schema: Mapping[str, Any], value: Any) -> bool:
    if value is None:
        return True
    return isinstance(value, str) and value.strip() == "null" and _declared(schema) not in (None, "string")


def _coerce(schema: Mapping[str, Any], value: Any, where: str) -> Any:
    kind = _declared(schema)
    if kind == "integer":
        return _to_integer(value, where)
    if kind == "number":
        return _to_number(value)
    if kind == "boolean":
        return _to_boolean(value)
    if kind == "array":
        return _to_array(schema, value, where)
    if kind == "object":
        return _to_object(schema, value, where)
    if kind == "string" and isinstance(value, int | float) and not isinstance(value, bool):
        if isinstance(value, float) and not math.isfinite(value):
            return value
        return str(value) if isinstance(value, int) or not value.is_integer() else str(int(value))
    return value


def coerce_arguments(schema: Mapping[str, Any], arguments: Mapping[str, Any]) -> dict[str, Any]:
    """``arguments`` with each value coerced to the type ``schema`` declares for it (pure).

    Raises :class:`ArgumentError` only for values that are clearly wrong whatever the schema
    says otherwise (a whole number beyond int64); everything else is left for validation.
    """
    try:
        out = _to_object(schema, dict(arguments), "")
    except _Refused as exc:
        raise ArgumentError(str(exc)) from None
    return out if isinstance(out, dict) else dict(arguments)


def example_for(schema: Mapping[str, Any]) -> Any:
    """A valid-looking value for ``schema``, to show a model what would have been accepted."""
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        return enum[0]
    if "default" in schema:
        return schema["default"]
    kind = _declared(schema)
    if kind in ("integer", "number"):
        low, high = schema.get("minimum"), schema.get("maximum")
        value = 12 if kind == "integer" else 2.5
        if isinstance(low, int | float) and value < low:
            value = low
        if isinstance(high, int | float) and value > high:
            value = high
        return value
    if kind == "boolean":
        return True
    if kind == "array":
        items = schema.get("items")
        return [example_for(items)] if isinstance(items, Mapping) else []
    if kind == "object":
        properties = schema.get("properties")
        properties = properties if isinstance(properties, Mapping) else {}
        return {
            name: example_for(properties[name])
            for name in sorted(_names(schema.get("required")))
            if isinstance(properties.get(name), Mapping)
        }
    if schema.get("format") == "date":
        return "2025-01-31"
    return "text"


def _short(message: str) -> str:
    message = " ".join(message.split())
    return message if len(message) <= _MAX_MESSAGE else message[: _MAX_MESSAGE - 3] + "..."


def _expected(schema: Mapping[str, Any]) -> str:
    kind = _declared(schema)
    words = {
        "integer": "a whole number",
        "number": "a number",
        "boolean": "true or false",
        "array": "a list",
        "object": "an object",
        "string": "text",
    }
    return words.get(kind or "", "a value matching the schema")


class ArgumentValidator:
    """A validator for one tool's input schema, with the coercion in front of it.

    The JSON Schema validator is compiled on first use (``check=True`` compiles and checks the
    schema at once): importing jsonschema costs a server about a tenth of a second of start-up,
    which a client waiting for ``initialize`` should not pay.
    """

    def __init__(self, schema: Mapping[str, Any], *, check: bool = False) -> None:
        self.schema = dict(schema)
        self._validator: Any = None
        self._flat = flat_validator(self.schema)
        """The same verdict for a flat schema, without walking it (see mcpkit.tools.flat_validator)."""
        if check:
            self.compiled()

    def compiled(self) -> Any:
        """The compiled JSON Schema validator (checking the schema the first time)."""
        if self._validator is None:
            from jsonschema import Draft202012Validator

            Draft202012Validator.check_schema(self.schema)
            self._validator = Draft202012Validator(self.schema)
        return self._validator

    def prepare(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """The arguments a handler gets: coerced and valid, else :class:`ArgumentError`."""
        coerced = coerce_arguments(self.schema, arguments)
        problem = self.problem(coerced, given=arguments)
        if problem is not None:
            raise ArgumentError(problem)
        return coerced

    def problem(self, arguments: Mapping[str, Any], *, given: Mapping[str, Any] | None = None) -> str | None:
        """``None`` when ``arguments`` are valid, else one line on the worst problem."""
        validator = self.compiled()  # first: a schema jsonschema refuses is reported as before
        if self._flat is not None and self._flat(arguments):
            return None
        errors = list(validator.iter_errors(dict(arguments)))
        if not errors:
            return None
        from jsonschema.exceptions import best_match

        worst = best_match(errors)
        if worst is None:  # pragma: no cover - best_match returns one when errors exist
            return "arguments do not match the input schema"
        return _short(self._describe(worst, arguments, given if given is not None else arguments))

    def _describe(self, error: SchemaError, arguments: Mapping[str, Any], given: Mapping[str, Any]) -> str:
        path = list(error.absolute_path)
        where = ".".join(str(p) if not isinstance(p, int) else f"[{p}]" for p in path).replace(".[", "[")
        if error.validator == "additionalProperties":
            container = error.schema if isinstance(error.schema, Mapping) else {}
            props = container.get("properties")
            allowed = sorted(props) if isinstance(props, Mapping) else []
            instance = error.instance if isinstance(error.instance, Mapping) else {}
            extra = sorted(set(instance) - set(allowed))
            names = ", ".join(repr(e) for e in extra[:5])
            scope = f" in {where}" if where else ""
            return f"unknown argument {names}{scope}; accepted arguments: {', '.join(allowed) or 'none'}"
        if error.validator == "required":
            container = error.schema if isinstance(error.schema, Mapping) else {}
            instance = error.instance if isinstance(error.instance, Mapping) else {}
            missing = sorted(n for n in _names(container.get("required")) if n not in instance)
            name = missing[0] if missing else "an argument"
            props = container.get("properties")
            prop = props.get(name, {}) if isinstance(props, Mapping) else {}
            prop = prop if isinstance(prop, Mapping) else {}
            scope = f"{where}." if where else ""
            return f"{scope}{name} is required, for example {name}={_show(example_for(prop))}"
        schema = error.schema if isinstance(error.schema, Mapping) else {}
        original: Any = given
        for part in path:
            container_ok = isinstance(original, Mapping) or (
                isinstance(original, list) and isinstance(part, int)
            )
            if not container_ok or part not in (
                original if isinstance(original, Mapping) else range(len(original))
            ):
                original = error.instance  # coerced from another form: show the value as read
                break
            original = original[part]
        label = where or "arguments"
        example = _show(example_for(schema))
        if error.validator == "enum":
            enum = schema.get("enum")
            options = ", ".join(_show(v) for v in (enum if isinstance(enum, list) else [])[:8])
            return f"{label}: got {_show(original)}; expected one of {options}"
        if error.validator == "type":
            return f"{label}: got {_show(original)}; expected {_expected(schema)}, for example {example}"
        return f"{label}: got {_show(original)}; {error.message}; for example {example}"
