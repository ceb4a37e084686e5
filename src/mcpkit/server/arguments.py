"""Argument validation against a tool's input schema, before its handler runs.

Handlers can then trust types, bounds and required names, and a model that sent bad
arguments gets one line that says which argument and what was expected.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError as SchemaError
from jsonschema.exceptions import best_match

_MAX_MESSAGE = 300


def _pointer(error: SchemaError) -> str:
    path = "/".join(str(p) for p in error.absolute_path)
    return path or "arguments"


def _short(message: str) -> str:
    message = " ".join(message.split())
    return message if len(message) <= _MAX_MESSAGE else message[: _MAX_MESSAGE - 3] + "..."


class ArgumentValidator:
    """A compiled validator for one tool's input schema."""

    def __init__(self, schema: Mapping[str, Any]) -> None:
        Draft202012Validator.check_schema(dict(schema))
        self._validator = Draft202012Validator(dict(schema))
        self._properties: tuple[str, ...] = tuple(sorted(schema.get("properties", {})))

    def problem(self, arguments: Mapping[str, Any]) -> str | None:
        """``None`` when ``arguments`` are valid, else a one-line description of the worst problem."""
        errors = list(self._validator.iter_errors(dict(arguments)))
        if not errors:
            return None
        worst = best_match(errors)
        if worst is None:  # pragma: no cover - best_match returns one when errors exist
            return "arguments do not match the input schema"
        if worst.validator == "additionalProperties" and not worst.absolute_path:
            allowed = self._properties
            extra = sorted(set(arguments) - set(allowed))
            names = ", ".join(repr(e) for e in extra[:5])
            return _short(f"unknown argument {names}; accepted arguments: {', '.join(allowed) or 'none'}")
        if worst.validator == "required":
            return _short(worst.message.replace("is a required property", "is required"))
        return _short(f"{_pointer(worst)}: {worst.message}")
