"""Text results, the text cap, and one-line error results."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpkit.errors import ValidationError
from mcpkit.results import (
    ERROR_MESSAGE_LIMIT,
    cap_text,
    error_result,
    text_result,
    to_wire,
    validate_result,
)
from mcpkit.results._text import truncation_note

any_text = st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=()))


def test_text_result_wire_form() -> None:
    raw = to_wire(text_result("hello", structured={"n": 1}))
    assert raw["content"] == [{"type": "text", "text": "hello"}]
    assert raw["structuredContent"] == {"n": 1}
    assert raw["isError"] is False
    assert validate_result(raw) == []
    assert "structuredContent" not in to_wire(text_result("x"))


def test_structured_is_copied() -> None:
    data = {"items": [1]}
    result = text_result("x", structured=data)
    data["items"].append(2)
    assert result.structured_content == {"items": [1]}


def test_to_wire_with_a_version_applies_the_sdk_sieve() -> None:
    result = text_result("x")
    assert "resultType" in to_wire(result)
    assert "resultType" not in to_wire(result, protocol_version="2025-11-25")
    assert to_wire(result, protocol_version="2026-07-28")["resultType"] == "complete"
    with pytest.raises(ValueError):
        to_wire(result, protocol_version="1999-01-01")


def test_cap_text_says_how_much_was_shown() -> None:
    assert cap_text("short", 10) == "short"
    capped = cap_text("x" * 100, 30)
    assert capped == "x" * 30 + truncation_note(30, 100)
    assert "showed 30 of 100 characters" in capped
    by_line = cap_text("a" * 95 + "\n" + "b" * 20, 100)
    assert by_line == "a" * 95 + truncation_note(95, 116), "cuts at a line break near the limit"
    with pytest.raises(ValueError):
        cap_text("x", -1)


def test_text_result_caps_and_can_be_uncapped() -> None:
    assert (
        "[truncated: showed 5 of 20 characters]"
        in to_wire(text_result("a" * 20, limit=5))["content"][0]["text"]
    )
    assert to_wire(text_result("a" * 20, limit=None))["content"][0]["text"] == "a" * 20


def test_lone_surrogates_are_made_sendable() -> None:
    result = text_result("a\ud800b")
    json.loads(result.model_dump_json(by_alias=True))  # the SDK's own encoding must not fail
    assert result.content[0].text == "a\ufffdb"  # type: ignore[union-attr]


@settings(max_examples=300, deadline=None)
@given(text=any_text, limit=st.integers(0, 200))
def test_cap_never_exceeds_limit_plus_note(text: str, limit: int) -> None:
    capped = cap_text(text, limit)
    assert len(capped) <= limit + len(truncation_note(limit, len(text)))
    if len(text) <= limit:
        assert capped == text
    else:
        shown = capped[: capped.rindex("\n… [truncated")]
        assert text.startswith(shown)
        assert f"showed {len(shown)} of {len(text)} characters" in capped


def test_error_result_is_one_line_with_is_error() -> None:
    raw = to_wire(error_result("first line\nsecond\r\nthird\u2028fourth"))
    assert raw["isError"] is True
    assert raw["content"] == [{"type": "text", "text": "first line second third fourth"}]
    assert validate_result(raw) == []


def test_error_result_never_carries_a_traceback() -> None:
    message = 'Boom\nTraceback (most recent call last):\n  File "x.py", line 1\nKeyError: 1'
    assert to_wire(error_result(message))["content"][0]["text"] == "Boom"


def test_error_result_from_exceptions() -> None:
    assert error_result(ValidationError("Bad id 'x'.")).content[0].text == "Bad id 'x'."  # type: ignore[union-attr]
    assert error_result(KeyError("id")).content[0].text == "KeyError: 'id'"  # type: ignore[union-attr]
    assert error_result(RuntimeError()).content[0].text == "RuntimeError"  # type: ignore[union-attr]
    assert error_result("").content[0].text == "The tool failed without a message."  # type: ignore[union-attr]


def test_error_message_is_capped() -> None:
    text = error_result("e" * 5000).content[0].text  # type: ignore[union-attr]
    assert len(text) == ERROR_MESSAGE_LIMIT and text.endswith("…")


@settings(max_examples=300, deadline=None)
@given(message=any_text)
def test_any_message_yields_one_valid_line(message: str) -> None:
    raw = to_wire(error_result(message))
    text = raw["content"][0]["text"]
    assert len(text.splitlines()) == 1
    assert 0 < len(text) <= ERROR_MESSAGE_LIMIT
    assert "Traceback (most recent call last)" not in text
    text.encode("utf-8")
    assert validate_result(raw) == []


_any_text = st.text(alphabet=st.characters(codec=None, categories=None), max_size=6) | st.sampled_from(
    ["\ud800", "a\udfffb", "\ud83d\ude00", "ok"]
)
_json_with_surrogates = st.recursive(
    st.none() | st.integers() | _any_text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_any_text, inner, max_size=3),
    max_leaves=12,
)


@given(_json_with_surrogates)
def test_scrub_surrogates_in_leaves_every_string_sendable_and_the_rest_alone(value: object) -> None:
    from mcpkit.results import scrub_surrogates_in

    scrubbed = scrub_surrogates_in(value)
    json.dumps(scrubbed, ensure_ascii=False).encode("utf-8")  # never raises now
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        assert scrubbed != value
    else:
        assert scrubbed is value  # nothing to scrub: nothing copied
    # Only strings changed, each surrogate into one U+FFFD: the same shape, the same lengths
    # (unless two keys differing only in surrogates became one).
    if _keys(scrubbed) == _keys(value):
        assert _shape(scrubbed) == _shape(value)


def _shape(value: object) -> object:
    if isinstance(value, str):
        return len(value)
    if isinstance(value, list):
        return [_shape(v) for v in value]
    if isinstance(value, dict):
        return sorted(((len(k), _shape(v)) for k, v in value.items()), key=repr)
    return value


def _keys(value: object) -> int:
    if isinstance(value, list):
        return sum(_keys(v) for v in value)
    if isinstance(value, dict):
        return len(value) + sum(_keys(v) for v in value.values())
    return 0
