"""docs/toolkit.md shows two example programs; they must be the files, and they must work."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.support.env import REPO

pytestmark = pytest.mark.slow


def _code_blocks(markdown: str) -> list[str]:
    return [block.strip() for block in re.findall(r"```python\n(.*?)```", markdown, flags=re.S)]


@pytest.mark.parametrize("name", ["toolkit_server.py", "toolkit_client.py"])
def test_the_page_shows_the_example_files_as_they_are(name: str) -> None:
    source = (REPO / "examples" / name).read_text()
    body = source.split('"""', 2)[2].strip()  # without the module docstring
    assert body in _code_blocks((REPO / "docs" / "toolkit.md").read_text())


def test_the_client_reads_every_row_of_the_server() -> None:
    done = subprocess.run(
        [sys.executable, "examples/toolkit_client.py"], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "read 500 rows"
