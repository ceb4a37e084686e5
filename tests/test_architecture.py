"""The public line of the toolkit, checked: private modules, one error vocabulary, unique names.

import-linter (run by ``make lint``) enforces the layers and "apps import package roots only";
these tests keep its list of private modules complete and check what a linter cannot.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import tomllib
from collections import defaultdict
from pathlib import Path

import pytest

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
    # The SDK assumptions sit beside the core packages: apps reach them through mcpkit.server.
    expected.add("mcpkit._sdk")
    assert forbidden == expected


def _modules() -> list[Path]:
    return [p for p in SRC.rglob("*.py") if "__pycache__" not in p.parts]


def _part(path: Path) -> str:
    relative = path.relative_to(SRC).parts
    return relative[0].removesuffix(".py")


def _is_private(path: Path) -> bool:
    return any(part.startswith("_") and part != "__init__.py" for part in path.relative_to(SRC).parts)


def _root_exports(package: Path) -> set[str]:
    """A root's ``__all__``: a literal list, or for a lazy root (``mcpkit._lazy``) the names its
    ``if TYPE_CHECKING:`` block imports, from which its ``__all__`` is derived."""
    init = package / "__init__.py"
    if not init.exists():
        return set()
    lazy: set[str] = set()
    for node in ast.parse(init.read_text()).body:
        if (
            isinstance(node, ast.Assign)
            and any(getattr(t, "id", "") == "__all__" for t in node.targets)
            and isinstance(node.value, ast.List | ast.Tuple)
        ):
            return {elt.value for elt in node.value.elts if isinstance(elt, ast.Constant)}  # type: ignore[misc]
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            lazy |= {a.asname or a.name for c in node.body if isinstance(c, ast.ImportFrom) for a in c.names}
    return lazy if "lazy_exports(__name__)" in init.read_text() else set()


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


def _drawn_bases() -> set[str]:
    """The bases the error tree in ``mcpkit.errors`` draws: the children of ``McpkitError``."""
    import mcpkit.errors

    drawing = (mcpkit.errors.__doc__ or "").split("::", 1)[1]
    return {m.group(1) for m in re.finditer(r"^    (?:\u251c|\u2514)\u2500\u2500 (\w+)", drawing, re.M)}


def _exception_classes() -> dict[str, type[BaseException]]:
    """Every exception class defined at the top of a module under src/mcpkit, private ones too."""
    import importlib
    import inspect

    found: dict[str, type[BaseException]] = {}
    for path in _modules():
        if path.name == "__main__.py":
            continue
        dotted = ".".join(path.relative_to(SRC.parent).with_suffix("").parts).removesuffix(".__init__")
        try:
            module = importlib.import_module(dotted)
        except ImportError:
            continue  # optional extras not installed
        for name, value in vars(module).items():
            if inspect.isclass(value) and value.__module__ == dotted and issubclass(value, BaseException):
                found[f"{dotted}.{name}"] = value
    return found


def test_every_error_class_sits_under_a_base_the_error_tree_draws() -> None:
    """``except CallError`` (or ``ValidationError``, ``ConfigError``) catches every mcpkit error of
    its kind: none hangs off the root alone. Private control signals that are not errors
    (not ``McpkitError``\\ s, e.g. ``server._ask._InputRequired``) are left out."""
    from mcpkit import errors

    bases = _drawn_bases()
    assert bases == {"ValidationError", "ConfigError", "CallError"}
    drawn = tuple(getattr(errors, name) for name in bases)
    outside = {
        dotted
        for dotted, cls in _exception_classes().items()
        if cls is not errors.McpkitError
        and (issubclass(cls, errors.McpkitError) or not dotted.rsplit(".", 1)[1].startswith("_"))
        and not issubclass(cls, drawn)
    }
    assert sorted(outside) == []


# -- docs/architecture.md, checked against the code ------------------------------------------------
#
# The page once claimed six false things (that `archive search` did not import the SDK when it
# did, that the SDK was used only through server/ and client/, a `server -> client` arrow that
# did not exist ...). Each claim it makes now is compared with the code here, so the page
# fails a test the day it stops being true.

ARCHITECTURE = REPO / "docs" / "architecture.md"
BOTTOM = {
    "errors",
    "jsonrpc",
    "log",
    "telemetry",
    "cli_kit",
    "_lazy",
    "_sdk",
    "__init__",
    "__main__",
    "testing",
}


def _fenced_after(heading: str) -> list[str]:
    """The lines of the first fenced block after ``heading`` on the page."""
    text = ARCHITECTURE.read_text()
    rest = text[text.index(heading) :]
    start = rest.index("```\n") + 4
    return rest[start : rest.index("```", start)].strip().splitlines()


def _runtime_imports(path: Path) -> set[str]:
    """Dotted names this module imports when it runs (``if TYPE_CHECKING:`` bodies left out)."""
    names: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text()))
    return names


def _parts_imported_by(part: str) -> set[str]:
    files = [SRC / f"{part}.py"] if (SRC / f"{part}.py").exists() else list((SRC / part).rglob("*.py"))
    found: set[str] = set()
    for path in files:
        for name in _runtime_imports(path):
            pieces = name.split(".")
            if pieces[0] == "mcpkit" and len(pieces) > 1 and pieces[1] not in BOTTOM | {part, "__version__"}:
                found.add(pieces[1])
    return found


def test_the_dependency_picture_is_the_imports_of_the_code() -> None:
    drawn: dict[str, set[str]] = {}
    for line in _fenced_after("## Direction of dependencies"):
        part, _, targets = line.partition("->")
        listed = set() if "(" in targets else {t.strip() for t in targets.split(",") if t.strip()}
        drawn[part.strip()] = listed
    real = {part: _parts_imported_by(part) for part in drawn if part != "cli"}
    assert {p: v for p, v in drawn.items() if p != "cli"} == real
    parts = {p.name for p in SRC.iterdir() if p.is_dir() and not p.name.startswith("_")}
    assert parts - set(drawn) == set(), "a part of src/mcpkit is missing from the picture"


def test_the_list_of_sdk_imports_outside_server_and_client_is_the_code() -> None:
    listed: dict[str, set[str]] = {}
    for line in _fenced_after("### Where the MCP SDK is imported"):
        part, _, modules = line.partition(":")
        listed[part.strip()] = {m.strip() for m in modules.split(",")}
    real: dict[str, set[str]] = defaultdict(set)
    for path in _modules():
        part = _part(path)
        if part in {"server", "client"}:
            continue
        for name in _runtime_imports(path):
            if name == "mcp" or name.startswith("mcp."):
                real[part].add(name)
    # `from mcp.x import Y` names both mcp.x and mcp.x.Y: keep the modules the page lists
    modules = {part: {n for n in names if n.rsplit(".", 1)[0] not in names} for part, names in real.items()}
    assert listed == modules


def _modules_after(
    code: str, *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> set[str]:
    """Top-level package names loaded by a fresh interpreter that runs ``code`` (argv: ``args``)."""
    probe = (
        "import atexit, os, sys\n"
        "def _dump():\n"
        "    names = ' '.join(sorted({n.split('.')[0] for n in sys.modules}))\n"
        "    os.write(int(os.environ['DOCS_MODULES_FD']), names.encode())\n"
        "atexit.register(_dump)\n"
        f"sys.argv = ['mcpkit', *{list(args)!r}]\n"
        f"{code}\n"
    )
    read, write = os.pipe()
    try:
        subprocess.run(
            [sys.executable, "-c", probe],
            cwd=cwd,
            env={**os.environ, **(env or {}), "DOCS_MODULES_FD": str(write)},
            pass_fds=(write,),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=120,
        )
    finally:
        os.close(write)
    with os.fdopen(read) as pipe:
        return set(pipe.read().split())


RUN_CLI = "from mcpkit.cli import main\ntry:\n    main()\nexcept SystemExit:\n    pass"


@pytest.fixture(scope="module")
def sample_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("archive") / "archive.db"
    sample = SRC / "archive" / "data" / "sample_twilog.csv"
    done = subprocess.run(
        [sys.executable, "-m", "mcpkit.archive.cli", "import", str(sample), "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return db


@pytest.mark.slow
@pytest.mark.parametrize(
    "command", [["search", "猫が日向で寝ている"], ["text", "コーヒー"], ["stats"], ["users"]], ids=" ".join
)
def test_archive_query_commands_do_not_import_the_mcp_sdk(command: list[str], sample_db: Path) -> None:
    loaded = _modules_after(
        RUN_CLI, "archive", *command, "--db", str(sample_db), env={"MCPKIT_ARCHIVE_URL": "ws://127.0.0.1:9"}
    )
    assert "mcpkit" in loaded  # the command ran
    assert loaded & {"mcp", "mcp_types"} == set()


@pytest.mark.slow
def test_redmine_mcp_does_not_import_numpy() -> None:
    loaded = _modules_after(
        RUN_CLI, "redmine", "mcp", env={"REDMINE_URL": "http://127.0.0.1:9", "REDMINE_API_KEY": "0" * 40}
    )
    assert "mcpkit" in loaded
    assert "numpy" not in loaded


@pytest.mark.slow
@pytest.mark.parametrize(
    "code",
    [
        "import mcpkit.cli",
        "import mcpkit.cli_kit",
        "import mcpkit.errors",
        "from mcpkit.client import ServerConfig, load_config, spawn",
    ],
)
def test_these_imports_do_not_load_the_mcp_sdk(code: str) -> None:
    loaded = _modules_after(code)
    assert "mcpkit" in loaded
    assert loaded & {"mcp", "mcp_types", "pydantic"} == set()


@pytest.mark.slow
def test_the_command_root_loads_no_part_until_a_command_runs() -> None:
    code = "import mcpkit.cli, sys\nprint(sorted(n for n in sys.modules if n.startswith('mcpkit.')))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.split() == ["['mcpkit.cli']"] or "archive" not in done.stdout, done.stdout
    parts = {"archive", "redmine", "gateway", "check", "client", "server"}
    assert not any(f"'mcpkit.{part}" in done.stdout for part in parts), done.stdout


def test_the_public_modules_of_the_core_are_the_ones_the_page_names() -> None:
    public = {
        f"{package}.{path.stem}"
        for package in CORE
        for path in (SRC / package).glob("*.py")
        if not path.name.startswith("_")
    }
    assert public == {"tools.params", "tools.coerce", "client.cli", "client.target_cli", "server.relay"}
    text = ARCHITECTURE.read_text()
    assert all(f"`{name}`" in text for name in public)


def _defines(files: list[Path], name: str) -> bool:
    """Whether one of ``files`` defines ``name`` (a function, class, method or assignment), or
    exports it as a lazy root does (``from module import name as name``, see mcpkit._lazy)."""
    for path in files:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node.name == name:
                return True
            if isinstance(node, ast.ImportFrom) and any(a.asname == name for a in node.names):
                return True
            if isinstance(node, ast.Assign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if any(getattr(t, "id", getattr(t, "attr", None)) == name for t in targets):
                    return True
    return False


def test_every_file_class_and_function_the_page_names_exists() -> None:
    """The page names code (``server/_build.py``, ``Gateway.finished``, ``answers.checked``); a
    rename that leaves the page behind makes it describe code that is not there."""
    spans = set(re.findall(r"`([^`\s]+)`", ARCHITECTURE.read_text()))
    all_files = _modules()
    missing: list[str] = []
    for span in sorted(spans):
        span = span.rstrip("()")
        if span.endswith(".py"):
            if (
                span != "_name.py"
                and not (REPO / span).exists()
                and not any(p.as_posix().endswith(span.removeprefix("mcpkit/")) for p in all_files)
            ):
                missing.append(span)
            continue
        head, _, name = span.rpartition(".")
        if not head or not name.isidentifier() or "/" in head:
            continue
        module = SRC.joinpath(*head.removeprefix("mcpkit.").split("."), name)
        if module.with_suffix(".py").exists() or module.is_dir():
            continue  # package.module
        first = head.split(".")[-1]
        if first[:1].isupper():  # Class.member
            files = [p for p in all_files if f"class {first}" in p.read_text()]
        else:  # module.name or package.name
            base = SRC.joinpath(*head.removeprefix("mcpkit.").split("."))
            files = (
                [base.with_suffix(".py")] if base.with_suffix(".py").exists() else list(base.rglob("*.py"))
            )
            if not files:
                found = [p for p in all_files if p.stem == first]
                files = found
        if not files:
            continue  # not mcpkit's (mcp_types, ctx.session, ...)
        if not _defines(files, name):
            missing.append(span)
    assert missing == [], missing


# Folders of tests/ that are not named after a src package, and why: each tests something that
# cuts across packages, or holds what tests share rather than tests.
CROSS_CUTTING = {
    "archive_faces": "the archive's faces (CLI, MCP, WebSocket, shell) over its one API, side by side",
    "conformance": "the official MCP conformance suite against our servers",
    "data": "files the tests read",
    "docs": "the runner of the code blocks in README and docs/",
    "export_fixtures": "export files the archive tests build",
    "fixtures": "servers and set-up the tests start",
    "install": "the built wheel and the install channels, as a person installs them",
    "integration": "the apps against the real services they front (Redmine)",
    "search_quality": "the evaluation corpora of archive search",
    "support": "the shared raw-wire client and env helpers",
}
# Top-level test files that test no one module of src/mcpkit/ but the project as a whole.
WHOLE_PROJECT = {"architecture", "docs_run", "sdk_assumptions", "toolkit_docs"}


def test_every_test_file_sits_where_the_src_it_tests_sits() -> None:
    """tests/ mirrors src/mcpkit/: tests/archive/web/test_app.py tests src/mcpkit/archive/web/,
    a top-level tests/test_NAME.py the top-level module NAME.py (or _NAME.py)."""
    misplaced = []
    for path in sorted((REPO / "tests").rglob("*.py")):
        if not (path.name.startswith("test_") or path.stem.endswith("_test")):
            continue
        folders = path.relative_to(REPO / "tests").parts[:-1]
        if not folders:
            name = path.stem.removeprefix("test_")
            module = any((SRC / f"{prefix}{name}.py").is_file() for prefix in ("", "_"))
            if not (module or name in WHOLE_PROJECT):
                misplaced.append(f"{path.relative_to(REPO)}: no module src/mcpkit/{name}.py")
        elif folders[0] not in CROSS_CUTTING and not (SRC.joinpath(*folders) / "__init__.py").is_file():
            misplaced.append(f"{path.relative_to(REPO)}: no package src/mcpkit/{'/'.join(folders)}/")
    assert not misplaced, "test files that do not sit where their src sits:\n" + "\n".join(misplaced)
