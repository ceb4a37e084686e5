"""Folding ``allOf``/``anyOf``/``oneOf`` branches of object schemas into one object schema.

Clients that refuse combinators at the root (OpenAI, Anthropic) or ``allOf`` anywhere
(OpenAI strict) still accept the same parameters declared flat. Folding keeps every
property; for ``allOf`` the required names add up (all branches hold), for ``anyOf`` and
``oneOf`` only names every branch requires stay required. The result accepts at least what
the original accepted, and the server still validates calls against its own schema.
"""

from __future__ import annotations

import copy
from typing import Any

from mcpkit.compat import _refs as refs
from mcpkit.compat._rules._util import types_of
from mcpkit.errors import ValidationError

_OBJECT_KEYS = frozenset({"type", "properties", "required", "additionalProperties", "description", "title"})


class MergeError(ValidationError):
    """The branches are not plain object schemas; folding them would change their meaning."""


def _branch(root: Any, branch: Any) -> dict[str, Any]:
    if isinstance(branch, dict) and isinstance(branch.get("$ref"), str):
        target = refs.resolve(root, branch["$ref"]) if refs.is_local(branch["$ref"]) else None
        if not isinstance(target, dict) or len(branch) > 1:
            raise MergeError(f"branch reference {branch['$ref']} cannot be folded")
        branch = target
    if not isinstance(branch, dict):
        raise MergeError("a branch is not an object schema")
    kinds = types_of(branch)
    if (kinds and kinds != ["object"]) or (set(branch) - _OBJECT_KEYS):
        extra = sorted(set(branch) - _OBJECT_KEYS)
        raise MergeError(f"a branch is not a plain object schema (type {kinds}, keywords {extra})")
    return branch


_ADJACENT = frozenset(
    {
        "properties",
        "patternProperties",
        "additionalProperties",
        "unevaluatedProperties",
        "items",
        "prefixItems",
        "unevaluatedItems",
        "$ref",
    }
)
"""Keywords whose meaning depends on their neighbours: schemas holding them are not merged."""


def _conjoin(first: Any, second: Any) -> dict[str, Any] | None:
    """One schema meaning "both", when the two use different keywords; else ``None``.

    Independent keywords of one schema already hold together, so ``{"not": X}`` and
    ``{"type": "string"}`` become ``{"not": X, "type": "string"}`` with the same meaning. A
    keyword both use with different values, or one whose meaning depends on its neighbours,
    keeps the pair apart.
    """
    if not isinstance(first, dict) or not isinstance(second, dict):
        return None
    if (set(first) | set(second)) & _ADJACENT:
        return None
    if any(first[k] != second[k] for k in set(first) & set(second)):
        return None
    return {**copy.deepcopy(first), **copy.deepcopy(second)}


def fold(node: dict[str, Any], keyword: str, root: Any) -> str:
    """Fold ``node[keyword]`` into ``node``; returns a one-line account, raises MergeError."""
    branches = node.get(keyword)
    if not isinstance(branches, list) or not branches:
        raise MergeError(f"{keyword} is not a non-empty list")
    parts = [_branch(root, b) for b in branches]
    props: dict[str, Any] = dict(node.get("properties") or {})
    combined = "allOf" if keyword == "allOf" else "anyOf"
    for part in parts:
        for name, sub in (part.get("properties") or {}).items():
            if name not in props:
                props[name] = copy.deepcopy(sub)
            elif props[name] != sub:
                both = _conjoin(props[name], sub) if combined == "allOf" else None
                props[name] = both if both is not None else {combined: [props[name], copy.deepcopy(sub)]}
    required_sets = [set(p.get("required") or []) for p in parts]
    own = list(node.get("required") or [])
    # allOf: every branch holds, so their required names add up; anyOf/oneOf: only the common ones
    extra = set().union(*required_sets) if keyword == "allOf" else set.intersection(*required_sets)
    required = own + sorted(n for n in extra if n not in own)
    del node[keyword]
    node["properties"] = props
    if required:
        node["required"] = required
    else:
        node.pop("required", None)
    if "type" not in node:
        node["type"] = "object"
    return f"folded {len(parts)} {keyword} branches into properties {sorted(props)}; required {required}"
