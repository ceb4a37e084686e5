"""The JSON cursor both the X and the Mastodon readers walk their big arrays with.

Whatever sizes the stream serves its text in (one character, a few, uneven), every value comes
back as json.loads reads it, a value cut anywhere is refused, and a value longer than the
limit is refused as too long rather than read without bound.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpkit.archive.importers.json_stream import (
    JsonCursor,
    JsonInvalidError,
    JsonStreamError,
    JsonTooLongError,
    JsonTruncatedError,
)

JSON_VALUE = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**20), 10**20)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=12,
)


def _served(text: str, sizes: list[int]) -> Callable[[int], str]:
    """``read(n)`` giving at most ``n`` characters, in the uneven sizes a decoder gives."""
    at = 0
    turn = iter(sizes * (len(text) + 1))

    def read(size: int) -> str:
        nonlocal at
        piece = text[at : at + min(size, next(turn))]
        at += len(piece)
        return piece

    return read


def _array(cursor: JsonCursor) -> Iterator[object]:
    assert cursor.next() == "["
    if cursor.peek() == "]":
        cursor.next()
        return
    while True:
        yield cursor.value()
        separator = cursor.next()
        if separator == "]":
            return
        assert separator == ","


@settings(max_examples=300)
@given(
    st.lists(JSON_VALUE, max_size=10),
    st.lists(st.integers(1, 9), min_size=1, max_size=5),
    st.integers(1, 32),
    st.sampled_from([None, 0, 2]),
)
def test_every_value_decodes_whatever_sizes_the_text_comes_in(
    items: list[object], sizes: list[int], chunk: int, indent: int | None
) -> None:
    text = json.dumps(items, indent=indent, ensure_ascii=False)
    cursor = JsonCursor(_served(text, sizes), max_value=1 << 20, chunk=chunk)
    assert list(_array(cursor)) == items
    assert cursor.peek() == "" and cursor.eof


@settings(max_examples=200)
@given(st.lists(JSON_VALUE, min_size=1, max_size=6), st.integers(1, 16), st.data())
def test_a_value_cut_anywhere_is_refused(items: list[object], chunk: int, data: st.DataObject) -> None:
    text = json.dumps(items)
    cut = data.draw(st.integers(1, len(text) - 1))
    cursor = JsonCursor(_served(text[:cut], [chunk]), max_value=1 << 20, chunk=chunk)
    with pytest.raises((JsonStreamError, AssertionError)):
        list(_array(cursor))
        raise AssertionError("the closing bracket is missing")  # the cut fell after the last item


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ('["' + "x" * 500 + '"]', JsonTooLongError),  # cut by the limit, valid
        ("[" + "1" * 500 + "]", JsonTooLongError),  # a number longer than the limit
        ('[{"a": 1,, "' + "x" * 500 + '"}]', JsonInvalidError),  # broken long before the limit
        ('[{"a": "unterminated', JsonTruncatedError),
        ("[tru", JsonTruncatedError),
    ],
)
def test_what_a_bad_value_is_called(text: str, error: type[JsonStreamError]) -> None:
    cursor = JsonCursor(_served(text, [7]), max_value=100, chunk=8)
    with pytest.raises(error):
        list(_array(cursor))


def test_lines_are_counted_across_reads() -> None:
    text = "[\n1,\n2,\n\n  3]"
    cursor = JsonCursor(_served(text, [2]), max_value=100, chunk=2)
    assert cursor.next() == "[" and cursor.value() == 1 and cursor.line() == 2
    assert [cursor.next(), cursor.value(), cursor.next(), cursor.value()] == [",", 2, ",", 3]
    assert cursor.line() == 5 and cursor.snippet() == "]"
