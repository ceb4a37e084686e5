"""Fenced blocks of the project's Markdown pages, with their language, line and directive.

A page may say how one of its blocks is tested with an HTML comment on the line right before
the fence, which Markdown renders as nothing::

    <!-- docs-test: skip reason="needs a hosted LLM API" -->
    <!-- docs-test: continues -->     (a python block that runs after the page's previous one)
    <!-- docs-test: continues="from x import" -->   (... after the last earlier one starting so)
    <!-- docs-test: output -->        (what a command prints, not something to run)
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

FENCE = re.compile(r"^(?P<indent>\s*)(?P<ticks>`{3,}|~{3,})(?P<lang>[\w+-]*)")
DIRECTIVE = re.compile(r"<!--\s*docs-test:\s*(?P<body>.*?)\s*-->")


@dataclass(frozen=True)
class Block:
    page: str  # relative to the repository, e.g. "docs/client.md"
    line: int  # 1-based line of the opening fence
    lang: str
    text: str
    directive: dict[str, str] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"

    @property
    def first_line(self) -> str:
        return next((line.strip() for line in self.text.split("\n") if line.strip()), "")


def parse_directive(body: str) -> dict[str, str]:
    """``skip reason="x y"`` -> {"skip": "", "reason": "x y"}."""
    result: dict[str, str] = {}
    for word in shlex.split(body):
        key, _, value = word.partition("=")
        result[key] = value
    return result


def blocks_of(path: Path, page: str) -> list[Block]:
    # "\n" only: splitlines() also breaks at U+2028 and friends, which would shift every line
    # number after such a character away from the one an editor shows.
    lines = path.read_text(encoding="utf-8").split("\n")
    found: list[Block] = []
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        ticks, indent = opening["ticks"], len(opening["indent"])
        body: list[str] = []
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith(ticks):
            body.append(lines[j][indent:] if lines[j][:indent].isspace() else lines[j])
            j += 1
        before = lines[i - 1] if i else ""
        match = DIRECTIVE.search(before)
        directive = parse_directive(match["body"]) if match else {}
        found.append(Block(page, i + 1, opening["lang"].lower(), "\n".join(body) + "\n", directive))
        i = j + 1
    return found


def all_blocks(repo: Path) -> list[Block]:
    pages = [repo / "README.md", *sorted((repo / "docs").glob("*.md"))]
    return [block for path in pages for block in blocks_of(path, path.relative_to(repo).as_posix())]
