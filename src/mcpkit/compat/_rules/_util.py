"""Small helpers the rule modules share."""

from __future__ import annotations

import json
from typing import Any

from mcpkit.compat._text import append_sentence

SNIPPET = 60


def types_of(node: dict[str, Any]) -> list[str]:
    """The node's ``type`` as a list of strings (empty when absent or malformed)."""
    value = node.get("type")
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    return []


def is_object_node(node: dict[str, Any]) -> bool:
    """Declared ``type: object`` (alone or in a type array)."""
    return "object" in types_of(node)


def show(value: Any) -> str:
    """A short one-line rendering of a value for a message."""
    try:
        text = json.dumps(value, ensure_ascii=False, default=repr)
    except (TypeError, ValueError):
        text = repr(value)
    text = text.replace("\n", "\\n")
    return text if len(text) <= SNIPPET else text[: SNIPPET - 3] + "..."


def add_description_sentence(node: dict[str, Any], sentence: str) -> None:
    """Append a sentence to a schema node's description (created when missing)."""
    current = node.get("description")
    node["description"] = append_sentence(current if isinstance(current, str) else None, sentence)


def input_root(definition: dict[str, Any]) -> dict[str, Any] | None:
    root = definition.get("inputSchema")
    return root if isinstance(root, dict) else None
