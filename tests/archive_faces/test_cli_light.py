"""``mcpkit archive --help``, ``users`` and ``stats`` start light: neither numpy nor the store is
loaded until a command runs a query. ``archive/cli.py`` once imported two integers from an
importer module whose package imports the store, so every archive command paid for numpy
(825 ms of imports against 132 for ``mcpkit``). Each check runs in a fresh child process and
reads its ``sys.modules``."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = "[m for m in sys.modules if m == 'numpy' or m == 'mcpkit.archive.store' or m.startswith('mcpkit.archive.store.')]"


def _heavy_after(code: str) -> list[str]:
    program = f"import sys\n{code}\nprint(__import__('json').dumps({HEAVY}))"
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    loaded: list[str] = json.loads(done.stdout.strip().splitlines()[-1])
    return loaded


def test_importing_the_archive_cli_loads_no_numpy_and_no_store() -> None:
    assert _heavy_after("import mcpkit.archive.cli") == []


@pytest.mark.parametrize("argv", [["--help"], ["users", "--help"], ["stats", "--help"], ["import", "--help"]])
def test_archive_help_loads_no_numpy_and_no_store(argv: list[str]) -> None:
    code = (
        "from typer.testing import CliRunner\n"
        "from mcpkit.cli import app\n"
        f"done = CliRunner().invoke(app, ['archive', *{argv!r}])\n"
        "assert done.exit_code == 0, done.output\n"
        "assert 'Usage' in done.output, done.output"
    )
    assert _heavy_after(code) == []
