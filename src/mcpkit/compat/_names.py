"""Tool names that every constraint of a profile accepts, changed as little as possible.

Invalid characters become ``_`` (every client profile accepts it in names); a name that is
too long keeps its start and gets a short hash of the *original* name, so the result is
stable across runs and two long names with the same start stay distinct.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

from mcpkit.compat._model import NameConstraint

HASH_LEN = 6


def name_hash(original: str) -> str:
    """A short, stable hex digest of a name (the same on every machine and run)."""
    return hashlib.sha256(original.encode("utf-8", "surrogatepass")).hexdigest()[:HASH_LEN]


def violations(name: str, constraint: NameConstraint, server_name: str | None) -> list[str]:
    """What is wrong with ``name`` under one constraint, as short phrases (empty: fine)."""
    problems: list[str] = []
    if not name:
        problems.append("is empty")
    if constraint.chars is not None:
        bad = sorted({c for c in name if not re.fullmatch(f"[{constraint.chars}]", c)})
        if bad:
            problems.append("has characters outside [" + constraint.chars + "]: " + " ".join(map(repr, bad)))
    if constraint.first is not None and name and not re.fullmatch(f"[{constraint.first}]", name[0]):
        problems.append(f"must start with [{constraint.first}]")
    budget = constraint.budget(server_name)
    if budget is not None and len(name) > budget:
        if server_name is not None and "{server}" in constraint.template:
            full = constraint.template.format(server=server_name, tool=name)
            problems.append(f"makes {full!r} {len(full)} characters long, over {constraint.max_len}")
        else:
            problems.append(f"is {len(name)} characters long, over {budget}")
    return problems


def _allowed(char: str, constraints: Iterable[NameConstraint]) -> bool:
    return all(c.chars is None or re.fullmatch(f"[{c.chars}]", char) for c in constraints)


def fit(name: str, constraints: list[NameConstraint], server_name: str | None) -> str | None:
    """The closest name that meets every constraint, or None when no name can (budget < 1)."""
    budgets = [b for b in (c.budget(server_name) for c in constraints) if b is not None]
    budget = min(budgets) if budgets else None
    if budget is not None and budget < 1:
        return None
    out = "".join(ch if _allowed(ch, constraints) else "_" for ch in name) or "tool"
    firsts = [c.first for c in constraints if c.first is not None]
    if any(not re.fullmatch(f"[{f}]", out[0]) for f in firsts):
        out = "_" + out
    if budget is not None and len(out) > budget:
        suffix = "_" + name_hash(name)
        if budget <= len(suffix):
            return name_hash(name)[:budget] if not firsts else ("_" + name_hash(name))[:budget]
        out = out[: budget - len(suffix)] + suffix
    return out


def with_suffix(name: str, original: str, constraints: list[NameConstraint], server_name: str | None) -> str:
    """``name`` made distinct by a hash of ``original``, still within every budget."""
    suffix = "_" + name_hash(original)
    budgets = [b for b in (c.budget(server_name) for c in constraints) if b is not None]
    budget = min(budgets) if budgets else None
    if budget is not None and len(name) + len(suffix) > budget:
        name = name[: max(0, budget - len(suffix))]
    return (name + suffix)[:budget] if budget is not None else name + suffix
