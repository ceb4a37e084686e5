"""The query parser: upstream's term rules, example by example and as properties."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpkit.archive.query import TextFilter, parse_query, parse_terms, quote_term, split_query
from mcpkit.errors import ValidationError

# upstream's own table of cases (text_proc.py), restated as (input, includes, excludes)
UPSTREAM_CASES = [
    ("hello world", ["hello", "world"], []),
    ('"hello world" test', ["hello world", "test"], []),
    ('"quoted"', ["quoted"], []),
    ('"quoted" normal', ["quoted", "normal"], []),
    ("hello -world", ["hello"], ["world"]),
    ("-", [], []),
    (r"hello \-world", ["hello", "-world"], []),
    (r'"hello \"test\" world"', ['hello "test" world'], []),
    (r"test \"escaped\" normal", ["test", '"escaped"', "normal"], []),
    (r"\-", ["-"], []),
    (
        'apple "banana cake" -orange -"grape juice" \\\\backslash',
        ["apple", "banana cake", "\\backslash"],
        ["orange", "grape juice"],
    ),
    ("", [], []),
    ("   ", [], []),
    ("  hello world  ", ["hello", "world"], []),
    ("hello    world", ["hello", "world"], []),
]


@pytest.mark.parametrize(("text", "includes", "excludes"), UPSTREAM_CASES)
def test_upstream_cases(text: str, includes: list[str], excludes: list[str]) -> None:
    assert parse_terms(text) == TextFilter(tuple(includes), tuple(excludes))


def test_edges_of_quotes_and_escapes() -> None:
    assert parse_terms('"a"b').includes == ("a", "b")  # a closing quote ends the term
    assert parse_terms('ab"c d"e').includes == ("abc d", "e")
    assert parse_terms('"open quote runs on').includes == ("open quote runs on",)
    assert parse_terms("--x").excludes == ("-x",)
    assert parse_terms("a\\").includes == ("a\\",)  # a trailing backslash is itself
    assert parse_terms('""').includes == ()


def test_matching_is_case_insensitive_substring_and() -> None:
    assert parse_terms("AI google").matches("Google announced new ai tools")
    assert not parse_terms("AI google").matches("only ai here")
    assert not parse_terms("AI -Google").matches("AI at GOOGLE")
    assert parse_terms('"Cloudflare Workers"').matches("I like cloudflare workers a lot")
    assert not parse_terms('"Cloudflare Workers"').matches("Workers of Cloudflare")
    assert parse_terms("-x").matches(None)  # no text (not enriched) is an empty text


def test_split_and_parse_query() -> None:
    assert split_query(r"a\|b|c|d") == ("a|b", "c|d")
    assert split_query("plain") == ("plain", None)
    parsed = parse_query('猫 | "hello world" -dog a\\ b -')
    assert parsed.vector_text == "猫"
    assert parsed.text_filter == TextFilter(("hello world", "a b"), ("dog",))
    assert parse_query("| x").text_only
    assert parse_query("| -").text_only  # upstream: a text query with no terms left
    for empty in ("", "   ", "|", " |  "):
        with pytest.raises(ValidationError):
            parse_query(empty)


TERMS = st.lists(st.tuples(st.booleans(), st.text(min_size=1, max_size=8)), max_size=6)


@given(TERMS)
def test_quoted_terms_read_back_exactly(terms: list[tuple[bool, str]]) -> None:
    text = " ".join(("-" if excluded else "") + quote_term(term) for excluded, term in terms)
    assert parse_terms(text) == TextFilter(
        tuple(t for excluded, t in terms if not excluded), tuple(t for excluded, t in terms if excluded)
    )


PLAIN = st.text(alphabet=st.characters(blacklist_characters='\\"-'), max_size=40)


@given(PLAIN)
def test_plain_words_split_like_str_split(text: str) -> None:
    assert parse_terms(text) == TextFilter(tuple(text.split()), ())


@given(st.text(max_size=40))
def test_never_raises_and_never_yields_an_empty_term(text: str) -> None:
    parsed = parse_terms(text)
    assert all(parsed.includes) and all(parsed.excludes)
    assert parsed.matches(" ".join(parsed.includes)) or any(
        e.lower() in " ".join(parsed.includes).lower() for e in parsed.excludes
    )


@given(st.text(max_size=20), st.text(max_size=20))
def test_escaped_bar_is_part_of_the_vector_text(left: str, right: str) -> None:
    vector, text = split_query(left.replace("\\", "").replace("|", "\\|") + "|" + right)
    assert vector == left.replace("\\", "")
    assert text == right
