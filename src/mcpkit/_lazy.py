"""Package roots whose names load on first use (PEP 562).

A root that imports all its modules up front makes every light use pay for the heaviest: the
gateway reads its config and starts its servers before the MCP SDK is needed, and should not
wait half a second for it first. A root lists where each name lives; static type checkers
see the same names through ``if TYPE_CHECKING:`` imports beside the table.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_root(package: str, where: Mapping[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``, whose name ``n`` lives in module ``where[n]``
    (absolute, or relative to the package when it starts with a dot)."""
    namespace = importlib.import_module(package).__dict__

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        namespace[name] = value  # later lookups find it without this function
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *where})

    return __getattr__, __dir__
