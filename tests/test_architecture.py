"""The public line of the toolkit, checked: private modules, one error vocabulary, unique names.

import-linter (run by ``make lint``) enforces the layers and "apps import package roots only";
these tests keep its list of private modules complete and check what a linter cannot.
"""

from __future__ import annotations

import ast
import tomllib
from collections import defaultdict
from pathlib import Path

from tests.support.env import REPO

SRC = REPO / "src" / "mcpkit"
CORE = ("tools", "compat", "results", "server", "client")


def _contract(name_part: str) -> dict[str, object]:
    config = tomllib.loads((REPO / "pyproject.toml").read_text())
    for contract in config["tool"]["importlinter"]["contracts"]:
        if name_part in contract["name"]:
            return dict(contract)
    raise AssertionError(f"no import-linter contract named like {name_part!r}")


def _private_modules(package: str) -> set[str]:
    base = SRC / package
    return {
        f"mcpkit.{package}.{p.stem if p.suffix == '.py' else p.name}"
        for p in base.iterdir()
        if p.name.startswith("_") and p.name != "__init__.py" and p.name != "__pycache__"
    }


def test_the_import_contract_lists_every_private_module_of_the_core() -> None:
    contract = _contract("package roots only")
    forbidden = set(contract["forbidden_modules"])  # type: ignore[arg-type]
    expected: set[str] = set()
    for package in CORE:
        if (SRC / package).is_dir() and any(
            p.name.startswith("_") and p.name != "__init__.py" for p in (SRC / package).iterdir()
        ):
            expected |= _private_modules(package) - {f"mcpkit.{package}.__pycache__"}
    assert forbidden == expected


def _modules() -> list[Path]:
    return [p for p in SRC.rglob("*.py") if "__pycache__" not in p.parts]


def _part(path: Path) -> str:
    relative = path.relative_to(SRC).parts
    return relative[0].removesuffix(".py")


def _is_private(path: Path) -> bool:
    return any(part.startswith("_") and part != "__init__.py" for part in path.relative_to(SRC).parts)


def _root_exports(package: Path) -> set[str]:
    init = package / "__init__.py"
    if not init.exists():
        return set()
    for node in ast.parse(init.read_text()).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "__all__" for t in node.targets):
            return {elt.value for elt in node.value.elts if isinstance(elt, ast.Constant)}  # type: ignore[attr-defined]
    return set()


def _public_classes() -> dict[str, set[str]]:
    """Class name -> parts where it is public (exported by a root, or top level of a public module)."""
    where: dict[str, set[str]] = defaultdict(set)
    for path in _modules():
        part = _part(path)
        exported = _root_exports(SRC / part) if (SRC / part).is_dir() else set()
        for node in ast.parse(path.read_text()).body:
            if not isinstance(node, ast.ClassDef) or node.name.startswith("_"):
                continue
            if (_is_private(path) and node.name not in exported) or node.name in {"Config"}:
                continue
            where[node.name].add(part)
    return where


def test_no_public_class_name_is_used_by_two_parts() -> None:
    duplicates = {name: sorted(parts) for name, parts in _public_classes().items() if len(parts) > 1}
    assert duplicates == {}


def test_every_exception_ends_in_error_and_derives_from_mcpkit_error() -> None:
    import importlib
    import inspect

    from mcpkit.errors import McpkitError

    problems: list[str] = []
    for path in _modules():
        if path.name == "__main__.py":
            continue
        dotted = ".".join(path.relative_to(SRC.parent).with_suffix("").parts).removesuffix(".__init__")
        try:
            module = importlib.import_module(dotted)
        except ImportError:
            continue  # optional extras not installed
        for name, value in vars(module).items():
            if not inspect.isclass(value) or value.__module__ != dotted or name.startswith("_"):
                continue
            if issubclass(value, BaseException):
                if not name.endswith("Error"):
                    problems.append(f"{dotted}.{name}: name does not end in Error")
                if not issubclass(value, McpkitError):
                    problems.append(f"{dotted}.{name}: does not derive from McpkitError")
    assert "\n".join(problems) == ""
