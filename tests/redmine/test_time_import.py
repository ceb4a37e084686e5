"""The CSV reader of import_time_entries: any text is read or refused in one line, and what a
spreadsheet writes reads back cell for cell."""

from __future__ import annotations

import csv
import io

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpkit.errors import ValidationError
from mcpkit.redmine.tools.time_import import COLUMNS, MAX_ROWS, parse_rows

CELLS = st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\x00\r"), max_size=12)


@given(st.text(max_size=300))
def test_any_text_is_read_or_refused_in_one_line(text: str) -> None:
    try:
        rows = parse_rows(text)
    except ValidationError as exc:
        assert "\n" not in str(exc) and str(exc)
        return
    assert rows and all(set(r.cells) <= set(COLUMNS.values()) for r in rows)


@given(
    st.sampled_from([",", ";", "\t"]),
    st.lists(st.tuples(CELLS, CELLS, CELLS), min_size=1, max_size=20),
)
def test_rows_written_by_a_spreadsheet_read_back(separator: str, rows: list[tuple[str, str, str]]) -> None:
    out = io.StringIO()
    writer = csv.writer(out, delimiter=separator, lineterminator="\r\n")
    writer.writerow(["Issue", "Hours", "Comments"])
    writer.writerows(rows)
    kept = [r for r in rows if any(c.strip() for c in r)]
    if not kept:
        with pytest.raises(ValidationError, match="no rows"):
            parse_rows(out.getvalue())
        return
    read = parse_rows(out.getvalue())
    expected = [
        {k: v.strip() for k, v in zip(("issue_id", "hours", "comments"), r, strict=True) if v.strip()}
        for r in kept
    ]
    assert [r.cells for r in read] == expected
    assert all(r.error is None for r in read)


def test_header_and_size_are_checked() -> None:
    with pytest.raises(ValidationError, match="unknown column 'minutes'"):
        parse_rows("issue,minutes\n1,30\n")
    with pytest.raises(ValidationError, match="two columns give issue_id"):
        parse_rows("issue,issue_id\n1,2\n")
    with pytest.raises(ValidationError, match=f"more than {MAX_ROWS} rows"):
        parse_rows("issue,hours\n" + "1,1\n" * (MAX_ROWS + 1))
    short = parse_rows("issue,hours,comments\n1,2\n")
    assert short[0].error == "2 cells, but the header names 3 columns"
    assert parse_rows("\ufeffSpent On;Hours\n2025-01-02;1\n")[0].cells == {
        "spent_on": "2025-01-02",
        "hours": "1",
    }


@pytest.mark.parametrize("text", ["\ufeff", "\ufeff \n", "\n\nissue,hours\n1,2\n", ",,\n1,2\n"])
def test_no_header_is_refused(text: str) -> None:
    with pytest.raises(ValidationError, match=r"empty|header"):
        parse_rows(text)
