"""Package roots whose names load on first use (PEP 562).

A root that imports all its modules up front makes every light use pay for the heaviest: the
gateway reads its config and starts its servers before the MCP SDK is needed, and should not
wait half a second for it first.

A root declares its names once, as the imports of its ``if TYPE_CHECKING:`` block, each
``from module import name as name`` (an explicit re-export, which is what static type checkers
read); :func:`lazy_exports` reads that block from the root's source when the root is imported
and derives ``__getattr__``, ``__dir__`` and ``__all__`` from it, as ``lazy_loader`` does from a
stub. The block is parsed with the interpreter's own ``_ast`` (no import of :mod:`ast`).
"""

from __future__ import annotations

import _ast
import importlib
import sys
from collections.abc import Callable, Mapping
from importlib.util import resolve_name
from typing import Any

Exports = tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]


def lazy_exports(module: str) -> Exports:
    """``(__getattr__, __dir__, __all__)`` for ``module`` (a package root or a module), whose
    names are the imports of its top-level ``if TYPE_CHECKING:`` block."""
    where = _declared(module)
    getattr_, dir_ = _hooks(module, {name: source for name, (source, _) in where.items()}, where)
    return getattr_, dir_, sorted(where)


def _hooks(
    module: str, where: Mapping[str, str], renamed: Mapping[str, tuple[str, str]]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    namespace = sys.modules[module].__dict__
    package = namespace.get("__package__") or module

    def __getattr__(name: str) -> Any:
        source = where.get(name)
        if source is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        original = renamed[name][1] if name in renamed else name
        value = getattr(importlib.import_module(source, package), original)
        namespace[name] = value  # later lookups find it without this function
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *where})

    return __getattr__, __dir__


def _declared(module: str) -> dict[str, tuple[str, str]]:
    """Exported name -> (absolute module, its name there), from the ``if TYPE_CHECKING:`` block."""
    namespace = sys.modules[module].__dict__
    path = namespace.get("__file__")
    if not path or not path.endswith(".py"):
        raise ImportError(f"{module}: its source file is needed to read its lazy names")
    with open(path, "rb") as file:
        source = file.read()
    tree = compile(source, path, "exec", _ast.PyCF_ONLY_AST)
    assert isinstance(tree, _ast.Module)
    package = namespace.get("__package__") or module
    names: dict[str, tuple[str, str]] = {}
    for node in tree.body:
        if not (
            isinstance(node, _ast.If) and isinstance(node.test, _ast.Name) and node.test.id == "TYPE_CHECKING"
        ):
            continue
        for child in node.body:
            if not isinstance(child, _ast.ImportFrom) or child.module is None:
                raise ImportError(
                    f"{module}: only 'from module import name as name' belongs in its TYPE_CHECKING block"
                )
            absolute = resolve_name("." * child.level + child.module, package)
            for alias in child.names:
                names[alias.asname or alias.name] = (absolute, alias.name)
    if not names:
        raise ImportError(f"{module}: no names in an 'if TYPE_CHECKING:' block to load lazily")
    return names
