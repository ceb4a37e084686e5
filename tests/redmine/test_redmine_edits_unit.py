"""replace_once: one passage replaced, whatever line ends the stored text and the copy use."""

from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from mcpkit.errors import ValidationError
from mcpkit.redmine.tools.edits import occurrences, replace_once

TEXT = st.text(alphabet=st.sampled_from("ab \n<&>\"'é"), max_size=60)


@given(TEXT, TEXT, TEXT, st.text(alphabet="xyz\n", min_size=1, max_size=10), st.booleans())
def test_a_unique_passage_is_replaced_and_nothing_else_changes(
    before: str, after: str, new: str, passage: str, crlf: bool
) -> None:
    """The stored text may use \\r\\n (browsers) while the model copied \\n from XML."""
    marked = "§" + passage + "§"  # § is in no other part, so the passage occurs once
    stored = before + marked + after
    expected = before + "§" + new + "§" + after
    if crlf and "\n" in stored:  # the replacement takes the stored text's line ends too
        stored, expected = stored.replace("\n", "\r\n"), expected.replace("\n", "\r\n")
    assert replace_once(stored, marked, "§" + new + "§", "the text") == expected


@given(TEXT, st.text(alphabet="ab", min_size=1, max_size=3))
def test_none_or_several_occurrences_are_refused_in_one_line(text: str, passage: str) -> None:
    found = occurrences(text, passage)
    assume(len(found) != 1)
    with pytest.raises(ValidationError) as info:
        replace_once(text, passage, "z", "the text")
    message = str(info.value)
    assert "\n" not in message
    assert ("not found" in message) if not found else (f"occurs {len(found)} times" in message)


def test_overlapping_occurrences_count() -> None:
    assert occurrences("aaa", "aa") == [0, 1]
    with pytest.raises(ValidationError, match="occurs 2 times"):
        replace_once("aaa", "aa", "b", "the text")


def test_an_empty_passage_is_refused() -> None:
    with pytest.raises(ValidationError, match="empty"):
        replace_once("text", "", "x", "the text")
