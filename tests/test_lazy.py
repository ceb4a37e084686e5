"""Package roots whose names load on first use (``mcpkit._lazy``): one list per root.

A lazy root once kept three lists by hand (the ``if TYPE_CHECKING:`` imports, a name -> module
table and ``__all__``); a name added to one and not the others was invisible to type
checkers, or to ``from ... import *``, or failed only when first used. Now the
``if TYPE_CHECKING:`` imports are the list, and the runtime reads them: these tests check that
every root does so and that every name it exports loads and is the object its module defines.
"""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys

import pytest

from tests.support.env import REPO

SRC = REPO / "src" / "mcpkit"


def _dotted(path: object) -> str:
    relative = path.relative_to(SRC.parent).with_suffix("")  # type: ignore[attr-defined]
    return ".".join(relative.parts).removesuffix(".__init__")


def _users_of_lazy() -> list[str]:
    """Every module that makes itself a lazy root."""
    found = []
    for path in sorted(SRC.rglob("*.py")):
        if "__pycache__" not in path.parts and "from mcpkit._lazy import" in path.read_text():
            found.append(_dotted(path))
    return found


def _type_checking_imports(module: str) -> dict[str, tuple[str, str]]:
    """Exported name -> (absolute module, name there), read from the root's ``if TYPE_CHECKING:``."""
    path = SRC.parent / (module.replace(".", "/") + ".py")
    if not path.exists():
        path = SRC.parent / module.replace(".", "/") / "__init__.py"
    names: dict[str, tuple[str, str]] = {}
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for child in node.body:
                assert isinstance(child, ast.ImportFrom) and child.module, ast.unparse(child)
                for alias in child.names:
                    names[alias.asname or alias.name] = (child.module, alias.name)
    return names


ROOTS = _users_of_lazy()


def test_the_roots_are_found() -> None:
    assert {
        "mcpkit.archive.rpc",
        "mcpkit.client",
        "mcpkit.gateway",
        "mcpkit.server",
        "mcpkit.server.relay",
    } <= set(ROOTS)


@pytest.mark.parametrize("root", ROOTS)
def test_a_root_declares_its_names_once(root: str) -> None:
    """Its ``if TYPE_CHECKING:`` imports are the only list: no table, no literal ``__all__``."""
    path = SRC.parent / (root.replace(".", "/") + ".py")
    if not path.exists():
        path = SRC.parent / root.replace(".", "/") / "__init__.py"
    tree = ast.parse(path.read_text())
    assigned = {
        target.id
        for node in tree.body
        if isinstance(node, ast.Assign | ast.AnnAssign)
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if isinstance(target, ast.Name)
    }
    literal_all = [
        node
        for node in tree.body
        if isinstance(node, ast.Assign)
        and any(getattr(t, "id", "") == "__all__" for t in node.targets)
        and isinstance(node.value, ast.List | ast.Tuple)
    ]
    assert literal_all == [] and "_WHERE" not in assigned
    # each import re-exports explicitly (``name as name``), which is what strict mypy reads
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for child in node.body:
                for alias in child.names:  # type: ignore[attr-defined]
                    assert alias.asname == alias.name, f"{root}: import {alias.name} as {alias.name}"


@pytest.mark.parametrize("root", ROOTS)
def test_every_name_of_a_root_loads_and_all_and_dir_derive_from_the_one_list(root: str) -> None:
    declared = _type_checking_imports(root)
    assert declared, f"{root} declares no names"
    module = importlib.import_module(root)
    assert sorted(module.__all__) == sorted(declared)
    assert set(declared) <= set(dir(module))
    for name, (source, original) in declared.items():
        assert getattr(module, name) is getattr(importlib.import_module(source), original), name
    with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
        module.not_a_name  # noqa: B018


def test_a_root_loads_nothing_before_a_name_is_used() -> None:
    """Importing the roots loads none of the modules they name (a fresh interpreter)."""
    roots = ", ".join(repr(r) for r in ROOTS)
    code = (
        "import importlib, sys\n"
        f"roots = [{roots}]\n"
        "before = set(sys.modules)\n"
        "for r in roots: importlib.import_module(r)\n"
        "print('\\n'.join(sorted(set(sys.modules) - before)))\n"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    ).stdout.split()
    assert "mcp" not in loaded and "mcp_types" not in loaded
    named = {source for root in ROOTS for source, _ in _type_checking_imports(root).values()}
    assert sorted(named & set(loaded)) == []
