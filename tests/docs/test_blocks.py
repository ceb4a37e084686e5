"""The harness's reading of a page: every fence found, with its language, line and directive.

A block the reader misses is a block no test runs, so a page could drift again unseen; these
properties hold for any page made of prose and fences.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.docs.blocks import Block, blocks_of
from tests.docs.plan import commands_of

PROSE = st.text(
    st.characters(blacklist_categories=("Cs", "Cc")) | st.sampled_from("\u2028\u2029"), max_size=40
).filter(lambda s: "`" not in s and "~" not in s and "<!--" not in s)
LANG = st.sampled_from(["", "bash", "sh", "console", "python", "json", "toml", "text"])
BODY_LINE = PROSE.map(lambda s: s.replace("\n", " "))
BLOCK = st.tuples(LANG, st.lists(BODY_LINE, max_size=5), st.booleans())


@given(
    st.lists(st.tuples(st.lists(PROSE.map(lambda s: s.replace("\n", " ")), max_size=3), BLOCK), max_size=6)
)
def test_every_fence_is_found_with_its_line_language_body_and_directive(
    tmp_path_factory: pytest.TempPathFactory, page: list[tuple[list[str], tuple[str, list[str], bool]]]
) -> None:
    lines: list[str] = []
    expected: list[tuple[int, str, str, bool]] = []
    for prose, (lang, body, skip) in page:
        lines.extend(prose)
        lines.append("")  # a directive belongs to the line right before a fence only
        if skip:
            lines.append('<!-- docs-test: skip reason="a hosted service" -->')
        expected.append((len(lines) + 1, lang, "".join(f"{b}\n" for b in body) or "\n", skip))
        lines.extend([f"```{lang}", *body, "```"])
    path = tmp_path_factory.mktemp("page") / "page.md"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    found = blocks_of(path, "page.md")
    assert [(b.line, b.lang, b.text if b.text.strip() else "\n", "skip" in b.directive) for b in found] == [
        (line, lang, text if text.strip() else "\n", skip) for line, lang, text, skip in expected
    ]
    assert all(b.directive.get("reason") == "a hosted service" for b in found if "skip" in b.directive)


# A line ending in a backslash continues on the next one, in a shell as here.
SHELL_LINE = BODY_LINE.filter(lambda s: not s.endswith("\\"))


@given(st.lists(st.tuples(SHELL_LINE.filter(str.strip), st.lists(SHELL_LINE, max_size=3)), max_size=5))
def test_a_console_block_is_its_dollar_lines_with_the_shell_input_after_each(
    session: list[tuple[str, list[str]]],
) -> None:
    text = ""
    for command, inputs in session:
        text += f"$ {command}\n" + "".join(f"mcp> {line}\n" for line in inputs)
    commands = commands_of(Block("page.md", 1, "console", text))
    assert [c.line for c in commands] == [command.strip() for command, _ in session]
    assert [c.stdin or "" for c in commands] == ["".join(f"{i}\n" for i in inputs) for _, inputs in session]
