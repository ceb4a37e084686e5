"""Coercers: as_number_or_special (a number or an allowed word, never a type array) and its helpers."""

from __future__ import annotations

import datetime as dt
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpkit.errors import ValidationError
from mcpkit.tools import coerce


@pytest.mark.parametrize(
    ("value", "allow", "expected"),
    [
        ("current", ["current"], "current"),
        ("me", ["me", "current"], "me"),
        (42, [], 42),
        ("42", [], 42),
        (" 7 ", [], 7),
        ("+7", [], 7),
        ("-3", [], -3),
        (12.0, [], 12),
        (1.5, [], 1.5),
        ("1e3", [], 1000),
        ("0.25", [], 0.25),
        ("007", [], 7),
    ],
)
def test_accepts(value: object, allow: list[str], expected: object) -> None:
    out = coerce.as_number_or_special(value, allow)
    assert out == expected and type(out) is type(expected), "whole numbers come back as int"


@pytest.mark.parametrize(
    "value",
    ["", "  ", "abc", "12abc", "Current", None, True, False, float("nan"), float("inf"), [], {}, "1,000"],
)
def test_refuses_with_message_naming_value_and_specials(value: object) -> None:
    with pytest.raises(ValidationError) as info:
        coerce.as_number_or_special(value, ["current", "me"])
    message = str(info.value)
    assert repr(value)[:20] in message
    assert "'current', 'me'" in message
    assert "\n" not in message


def test_message_without_specials() -> None:
    with pytest.raises(ValidationError, match=r"^Invalid value 'x': must be a number$"):
        coerce.as_number_or_special("x")


@given(st.integers())
def test_integers_round_trip(n: int) -> None:
    assert coerce.as_number_or_special(n) == n
    assert coerce.as_number_or_special(str(n)) == n
    assert coerce.as_number_or_special(f"  {n}\t") == n


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_floats_keep_their_value(x: float) -> None:
    out = coerce.as_number_or_special(x)
    assert float(out) == x or (x == 0 and float(out) == 0)


@given(st.text(), st.lists(st.text(min_size=1), max_size=3))
def test_any_text_is_special_number_or_clear_error(text: str, allow: list[str]) -> None:
    try:
        out = coerce.as_number_or_special(text, allow)
    except ValidationError as exc:
        assert "Invalid value" in str(exc) and "\n" not in str(exc)
    else:
        assert out in allow or math.isfinite(float(out))


@given(st.text(max_size=20))
def test_specials_pass_through_exactly(word: str) -> None:
    assert coerce.as_number_or_special(word, [word]) == word


def test_as_id() -> None:
    assert coerce.as_id("12") == 12
    assert coerce.as_id(5) == 5
    assert coerce.as_id("current", allow=("current",)) == "current"
    for bad in ("0", "-1", "1.5", "me", 2.5):
        with pytest.raises(ValidationError, match="positive whole number"):
            coerce.as_id(bad)


def test_as_id_or_key() -> None:
    assert coerce.as_id_or_key("my-project") == "my-project"
    assert coerce.as_id_or_key("42") == 42
    with pytest.raises(ValidationError, match="identifier"):
        coerce.as_id_or_key("Not A Key")


def test_as_int_bounds() -> None:
    assert coerce.as_int("10", minimum=1, maximum=100) == 10
    with pytest.raises(ValidationError, match="at least 1"):
        coerce.as_int(0, minimum=1)
    with pytest.raises(ValidationError, match="at most 100"):
        coerce.as_int("101", maximum=100)
    with pytest.raises(ValidationError, match="whole number"):
        coerce.as_int("1.5")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (True, True),
        ("yes", True),
        ("ON", True),
        ("1", True),
        (1, True),
        (False, False),
        ("no", False),
        ("off", False),
        (0, False),
        (" False ", False),
    ],
)
def test_as_bool(value: object, expected: bool) -> None:
    assert coerce.as_bool(value) is expected


@pytest.mark.parametrize("value", ["maybe", 2, None, "", [], 0.5])
def test_as_bool_refuses(value: object) -> None:
    with pytest.raises(ValidationError, match="must be true or false"):
        coerce.as_bool(value)


@given(st.dates())
def test_dates_round_trip(day: dt.date) -> None:
    assert coerce.as_date(day.isoformat()) == day
    assert coerce.as_datetime(day.isoformat()) == dt.datetime(day.year, day.month, day.day)


@given(st.datetimes(timezones=st.none() | st.just(dt.UTC)))
def test_datetimes_round_trip(moment: dt.datetime) -> None:
    assert coerce.as_datetime(moment.isoformat()) == moment


@pytest.mark.parametrize("value", ["2025-02-30", "25-01-01", "2025/01/01", "yesterday", "", 20250101])
def test_bad_dates(value: object) -> None:
    with pytest.raises(ValidationError, match="calendar date"):
        coerce.as_date(value)


def test_datetime_zulu() -> None:
    assert coerce.as_datetime("2025-01-31T09:30:00Z").tzinfo == dt.UTC
