"""Description rewriting: seed 000's examples, and properties over any text."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpkit.compat._text import (
    append_sentence,
    fold_lines,
    line_count,
    plain,
    remove_parentheses,
    remove_underscores,
)

TEXT = st.text(
    alphabet=st.sampled_from([*"ab _()\n.,;:é\t\r-", "\x85", "\u2028", "\x0b"]), max_size=200
) | st.text(max_size=80)


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("List all users (requires admin privileges)", "List all users, requires admin privileges"),
        ("Name (optional) of the project", "Name, optional, of the project"),
        ("Project ID (numeric) or identifier (string)", "Project ID, numeric, or identifier, string"),
        ("(optional) The name", "optional, The name"),
        ("Count (1-10).", "Count, 1-10."),
        ("call foo() now", "call foo now"),
        ("a ((b) c) d", "a, b, c, d"),
        ("unbalanced ( left", "unbalanced left"),
    ],
)
def test_remove_parentheses(before: str, after: str) -> None:
    assert remove_parentheses(before) == after


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (
            "Additional data like time_entries, custom_fields",
            "Additional data like time entries, custom fields",
        ),
        ("time_entry_activities", "time entry activities"),
        ("__init__ and _private", "init and private"),
        ("snake__double", "snake double"),
    ],
)
def test_remove_underscores(before: str, after: str) -> None:
    assert remove_underscores(before) == after


def test_fold_lines_drops_blank_lines_first() -> None:
    assert fold_lines("a\n\nb\n\nc", 4) == "a\nb\nc"
    assert fold_lines("1\n2\n3\n4\n5\n6", 4) == "1\n2\n3\n4 5 6"
    assert fold_lines("1\n2", 4) == "1\n2"


def test_append_sentence_keeps_the_line_count() -> None:
    assert append_sentence("User id", "Accepts a number or text.") == "User id. Accepts a number or text."
    assert append_sentence(None, "X.") == "X."
    assert line_count(append_sentence("a\nb", "c")) == 2


@settings(max_examples=300, deadline=None)
@given(text=TEXT)
def test_plain_text_meets_every_desktop_rule_and_is_stable(text: str) -> None:
    out = plain(text)
    assert "(" not in out and ")" not in out and "_" not in out
    assert line_count(out) <= 4
    assert plain(out) == out


@settings(max_examples=300, deadline=None)
@given(text=TEXT)
def test_rewrites_keep_every_word(text: str) -> None:
    words = re.compile(r"[^\W_]+")
    assert words.findall(remove_parentheses(text)) == words.findall(text)
    assert words.findall(remove_underscores(text)) == words.findall(text)
    assert words.findall(fold_lines(text, 4)) == words.findall(text)
