"""Local ``$ref`` resolution and inlining.

Several clients cannot follow ``$ref`` at all (Gemini's ``parameters`` subset has no such
keyword) and an unresolvable one makes Claude Code, Cursor and others drop the server's
whole tool list. Inlining replaces each local reference (``#/$defs/X``, ``#/definitions/X``,
any ``#/...`` pointer) by a copy of its target. A cycle cannot be inlined into a finite
schema, so it is reported and the schema left alone; so is a reference whose siblings
contradict its target, because merging them would change what the schema accepts.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any
from urllib.parse import unquote

from mcpkit.compat._walk import SCHEMA_LISTS, SCHEMA_MAPS, SCHEMA_SINGLE, subschemas, unescape
from mcpkit.errors import ValidationError

ANNOTATIONS = frozenset(
    {"description", "title", "default", "examples", "deprecated", "readOnly", "writeOnly", "$comment"}
)
"""Keywords that describe rather than constrain: a sibling of ``$ref`` may override them."""

MAX_INLINED_NODES = 20_000
"""Refuse to inline a schema that would grow past this many nodes (ref fan-out explodes)."""


class InlineError(ValidationError):
    """Why a schema's references could not be inlined (the message says which ref)."""


_MISSING = object()


def is_local(ref: str) -> bool:
    """A reference into the same document: ``#`` or ``#/...``."""
    return ref == "#" or ref.startswith("#/")


def resolve(root: Any, ref: str) -> Any:
    """The node ``ref`` points to in ``root``, or the ``_MISSING`` sentinel (see :func:`resolves`)."""
    if not is_local(ref):
        return _MISSING
    node = root
    for raw in ref[2:].split("/") if ref != "#" else []:
        token = unescape(unquote(raw))
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return _MISSING
    return node


def resolves(root: Any, ref: str) -> bool:
    """Whether a local ``ref`` points at a schema (an object or a boolean) inside ``root``."""
    target = resolve(root, ref)
    return target is not _MISSING and isinstance(target, dict | bool)


def refs(schema: Any, pointer: str = "") -> Iterator[tuple[str, str]]:
    """Every ``$ref`` string in ``schema`` as ``(pointer of the node holding it, ref)``."""
    for ptr, node in subschemas(schema, pointer):
        ref = node.get("$ref")
        if isinstance(ref, str):
            yield ptr, ref


def has_local_refs(schema: Any) -> bool:
    return any(is_local(ref) for _, ref in refs(schema))


class _Inliner:
    def __init__(self, root: dict[str, Any]) -> None:
        self.root = root
        self.nodes = 0

    def expand(self, node: Any, stack: tuple[str, ...]) -> Any:
        if not isinstance(node, dict):
            return copy.deepcopy(node)
        self.nodes += 1
        if self.nodes > MAX_INLINED_NODES:
            raise InlineError(f"inlining would exceed {MAX_INLINED_NODES} schema nodes")
        ref = node.get("$ref")
        if isinstance(ref, str) and is_local(ref):
            if ref in stack:
                raise InlineError(f"cyclic reference {ref} (through {' -> '.join(stack)})")
            target = resolve(self.root, ref)
            if target is _MISSING or not isinstance(target, dict | bool):
                raise InlineError(f"reference {ref} does not resolve")
            expanded = self.expand(target if isinstance(target, dict) else {}, (*stack, ref))
            if target is False:
                expanded = {"not": {}}
            siblings = {k: v for k, v in node.items() if k != "$ref"}
            return _merge(ref, expanded, self.expand(siblings, stack))
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in ("$defs", "definitions"):
                out[key] = copy.deepcopy(value)  # only reached through refs; dropped afterwards
            elif key in SCHEMA_MAPS and isinstance(value, dict):
                out[key] = {k: self.expand(v, stack) for k, v in value.items()}
            elif (key in SCHEMA_SINGLE or key == "items") and isinstance(value, dict):
                out[key] = self.expand(value, stack)
            elif (key in SCHEMA_LISTS or key == "items") and isinstance(value, list):
                out[key] = [self.expand(v, stack) for v in value]
            elif key == "dependencies" and isinstance(value, dict):
                out[key] = {k: self.expand(v, stack) if isinstance(v, dict) else v for k, v in value.items()}
            else:
                out[key] = copy.deepcopy(value)
        return out


def _merge(ref: str, target: dict[str, Any], siblings: dict[str, Any]) -> dict[str, Any]:
    """The target with the ref's siblings laid over it; a constraint that disagrees stops it."""
    out = dict(target)
    for key, value in siblings.items():
        if key in ANNOTATIONS or key not in out or out[key] == value:
            out[key] = value
        else:
            raise InlineError(f"keyword {key!r} next to {ref} contradicts the referenced schema")
    return out


def _drop_defs(schema: dict[str, Any]) -> None:
    for _, node in subschemas(schema):
        node.pop("$defs", None)
        node.pop("definitions", None)


def inline(schema: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``schema`` with every local ``$ref`` replaced by its target; ``$defs`` removed.

    Raises :class:`InlineError` for a cycle, a dangling reference or a contradicting sibling.
    Remote references (``https://...``) are kept: they are not this function's to fetch.
    """
    out = _Inliner(schema).expand(schema, ())
    if not isinstance(out, dict):  # pragma: no cover - expand keeps dicts as dicts
        raise InlineError("schema is not an object")
    if not any(not is_local(ref) for _, ref in refs(out)):
        _drop_defs(out)
    return out
