"""The client library does not read the environment: the CLIs do, and pass what they read.

Library code that read ``MCPKIT_TRACE`` or looked for ``$MCPKIT_CONFIG`` on its own made a
program's behaviour depend on variables it never mentioned (a test run with ``MCPKIT_TRACE``
set traced every session of every test). What remains is named here with its reason.
"""

from __future__ import annotations

import ast
from pathlib import Path

CLIENT = Path(__file__).resolve().parents[2] / "src" / "mcpkit" / "client"
CLIS = {"cli.py", "target_cli.py"}
ALLOWED = {
    # A spawned server inherits our environment plus its own env, as every MCP client does.
    ("_spawn.py", "environ"),
    # load_config(path, environ=None): None is "this process's", what a CLI passes.
    ("_config.py", "environ"),
}


def _reads(tree: ast.AST) -> list[str]:
    return [
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "os"
        and node.attr in ("environ", "getenv", "environb")
    ]


def test_only_the_clis_read_the_environment() -> None:
    for path in sorted(CLIENT.glob("*.py")):
        if path.name in CLIS:
            continue
        for attr in _reads(ast.parse(path.read_text(encoding="utf-8"))):
            assert (path.name, attr) in ALLOWED, f"{path.name} reads os.{attr}: take it as an argument"
