"""Names where Redmine wants a number: property tests of the pure decision (:func:`pick`, :func:`ref`).

Whatever case and spacing a model writes a name in, exactly one match is its id; several are
one line listing the candidates; none is one line listing the valid names; Redmine's own filter
words and numbers pass through untouched.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from mcpkit.errors import ValidationError
from mcpkit.redmine.tools.names import SHOWN, STATUS, TRACKER, USER, Candidate, Named, normal, pick, ref

WORD = st.text(alphabet=st.characters(categories=("L", "N"), max_codepoint=0x2FF), min_size=1, max_size=8)
NAME = st.lists(WORD, min_size=1, max_size=3).map(" ".join).filter(lambda n: not n.isdigit())


def sloppy(name: str, data: st.DataObject) -> str:
    """``name`` as a model might write it: any case, words joined by spaces, underscores or dashes."""
    words = name.split(" ")
    joins = data.draw(
        st.lists(st.sampled_from([" ", "_", "-", "  "]), min_size=len(words), max_size=len(words))
    )
    cased = "".join(
        (w.upper() if data.draw(st.booleans()) else w.lower()) + j for w, j in zip(words, joins, strict=True)
    )
    return " " + cased.rstrip(" _-") + "\t"


def candidates(names: list[str]) -> list[Candidate]:
    return [Candidate(i + 1, n, (n,)) for i, n in enumerate(names)]


@settings(max_examples=300, deadline=None)
@given(names=st.lists(NAME, min_size=1, max_size=12, unique_by=normal), data=st.data())
def test_any_spelling_of_a_name_means_its_id(names: list[str], data: st.DataObject) -> None:
    index = data.draw(st.integers(0, len(names) - 1))
    written = sloppy(names[index], data)
    assume(normal(written) == normal(names[index]))  # casefold of some letters differs from lower/upper
    value = ref(written, TRACKER, "tracker_id")
    assert isinstance(value, Named)
    assert pick(value, candidates(names)) == index + 1


@settings(max_examples=300, deadline=None)
@given(names=st.lists(NAME, min_size=1, max_size=40, unique_by=normal), other=NAME)
def test_an_unknown_name_is_one_line_listing_the_valid_ones(names: list[str], other: str) -> None:
    assume(normal(other) not in {normal(n) for n in names})
    with pytest.raises(ValidationError) as info:
        pick(Named(TRACKER, other, "tracker"), candidates(names))
    message = str(info.value)
    assert "\n" not in message and message.startswith("tracker: no tracker is named")
    for i, name in enumerate(names[:SHOWN]):
        assert f"{i + 1} {name}" in message
    if len(names) > SHOWN:
        assert f"and {len(names) - SHOWN} more" in message


@settings(max_examples=200, deadline=None)
@given(name=NAME, twins=st.integers(2, 5), others=st.lists(NAME, max_size=5))
def test_an_ambiguous_name_lists_every_candidate(name: str, twins: int, others: list[str]) -> None:
    assume(normal(name.upper()) == normal(name))  # the dotless i upper-cases to I
    same = [name.upper() if i % 2 else name for i in range(twins)]
    rest = [o for o in others if normal(o) != normal(name)]
    pool = candidates(same + rest)
    with pytest.raises(ValidationError) as info:
        pick(Named(STATUS, name, "status_id"), pool)
    message = str(info.value)
    assert f"names {twins} statuses" in message and "give the number" in message
    assert all(re.search(rf"\b{c.id} ", message) for c in pool[:twins])


@settings(max_examples=200, deadline=None)
@given(number=st.integers(1, 2**63 - 1), hash_=st.booleans(), pad=st.sampled_from(["", " ", "  "]))
def test_numbers_pass_through(number: int, hash_: bool, pad: str) -> None:
    written = pad + ("#" if hash_ else "") + str(number) + pad
    assert ref(written, TRACKER, "tracker_id") == number
    assert ref(number, TRACKER, "tracker_id") == number


@pytest.mark.parametrize("bad", ["0", "-3", "", "  ", "1.5"])
def test_what_is_neither_a_number_nor_a_name_is_refused(bad: str) -> None:
    with pytest.raises(ValidationError):
        ref(bad, TRACKER, "tracker")


@given(word=st.sampled_from(["open", "closed", "*"]), upper=st.booleans())
def test_redmines_filter_words_keep_their_meaning(word: str, upper: bool) -> None:
    written = f" {word.upper() if upper else word} "
    assert ref(written, STATUS, "status", words=("open", "closed", "*")) == word
    assert isinstance(ref("Closed", STATUS, "status_id"), Named), "a status name outside filters"


def test_a_users_login_or_full_name_beats_a_first_name() -> None:
    ann = Candidate(5, "Ann Lee (ann)", ("ann", "Ann Lee", "Lee Ann"), ("Ann", "Lee"))
    annie = Candidate(6, "Ann Smith (annie)", ("annie", "Ann Smith", "Smith Ann"), ("Ann", "Smith"))
    assert pick(Named(USER, "ANN", "assigned_to"), [ann, annie]) == 5, "login ann"
    assert pick(Named(USER, "smith", "assigned_to"), [ann, annie]) == 6, "last name, the only one"
    assert pick(Named(USER, "ann smith", "assigned_to"), [ann, annie]) == 6
    two = Candidate(7, "Bob Ann (bob)", ("bob", "Bob Ann"), ("Bob", "Ann"))
    with pytest.raises(ValidationError, match="names 2 users: 6 Ann Smith"):
        pick(Named(USER, "Ann", "assigned_to"), [annie, two])
    with pytest.raises(ValidationError, match="users whose names contain it"):
        pick(Named(USER, "An", "assigned_to"), [ann], complete=False)
