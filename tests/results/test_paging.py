"""The lossless list contract: stepping by next_offset visits every item exactly once."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpkit.results import Element, Window, cap_xml, page_of, text_page, to_wire, validate_result, xml_result


def _items(sizes: list[int], start: int) -> list[Element]:
    out = []
    for i, size in enumerate(sizes):
        item = Element("issue", {"id": start + i + 1})
        item.child("subject", None, f"issue {start + i + 1}")
        item.child("description", None, "d" * size)
        out.append(item)
    return out


def _serve(sizes: list[int], offset: int, limit: int, cap: int, known_total: bool) -> ET.Element:
    """One call of a tool that lists ``sizes`` items: the backend slice, then the capped page."""
    window = Window(offset, limit, len(sizes) if known_total else None)
    page = page_of(
        "issues",
        _items(sizes[offset : offset + limit], offset),
        window,
        next_call="list_issues with offset={offset}",
        item_call="get_issue with id={id}",
    )
    document = cap_xml(page, cap)
    return ET.fromstring(document)


@settings(max_examples=200, deadline=None)
@given(
    sizes=st.lists(st.integers(0, 3000), max_size=60),
    limit=st.integers(1, 40),
    cap=st.integers(400, 20_000),
    known_total=st.booleans(),
)
def test_stepping_by_next_offset_visits_every_item_once(
    sizes: list[int], limit: int, cap: int, known_total: bool
) -> None:
    seen: list[int] = []
    offset = 0
    for _ in range(len(sizes) + 2):
        root = _serve(sizes, offset, limit, cap, known_total)
        ids = [int(item.get("id", "0")) for item in root]
        assert root.get("returned") == str(len(ids))
        assert root.get("offset") == str(offset) and root.get("limit") == str(limit)
        if known_total:
            assert root.get("total_count") == str(len(sizes))
        seen.extend(ids)
        nxt = root.get("next_offset")
        if nxt is None:
            break
        assert int(nxt) == offset + len(ids), "next_offset must point at the first item not returned"
        offset = int(nxt)
    assert seen == list(range(1, len(sizes) + 1))


def test_a_shortened_page_says_so_and_names_the_next_call() -> None:
    page = page_of(
        "issues",
        _items([1200] * 100, 0),
        Window(0, 100, 120),
        next_call="list_issues with offset={offset}",
    )
    document = cap_xml(page, 50_000)
    root = ET.fromstring(document)
    returned = int(root.get("returned", "0"))
    assert 0 < returned < 100
    assert root.get("next_offset") == str(returned)
    assert f"Shortened to items 1 to {returned} of 120" in document
    assert f"call list_issues with offset={returned} for the rest" in document
    assert root.get("truncated") == "true"
    assert validate_result(to_wire(xml_result(page))) == []


def test_a_full_page_that_is_not_the_last_names_the_next_page() -> None:
    page = page_of(
        "issues", _items([10] * 25, 0), Window(0, 25, 120), next_call="list_issues offset={offset}"
    )
    document = cap_xml(page, 50_000)
    root = ET.fromstring(document)
    assert root.get("next_offset") == "25" and root.get("truncated") is None
    assert "Showing items 1 to 25 of 120; call list_issues offset=25 for the next page." in document


def test_last_page_has_no_next_offset() -> None:
    page = page_of("issues", _items([10] * 20, 100), Window(100, 25, 120), next_call="x {offset}")
    root = ET.fromstring(cap_xml(page, 50_000))
    assert root.get("next_offset") is None and root.get("returned") == "20"


def test_unknown_total_continues_only_after_a_full_page() -> None:
    full = page_of("rows", _items([1] * 5, 0), Window(0, 5), next_call="x {offset}")
    short = page_of("rows", _items([1] * 4, 5), Window(5, 5), next_call="x {offset}")
    assert full.attrs.get("next_offset") == "5"
    assert "next_offset" not in short.attrs and "total_count" not in short.attrs


def test_one_huge_item_keeps_identity_and_small_fields_and_points_at_its_reader() -> None:
    page = page_of(
        "issues",
        _items([200_000, 10], 0),
        Window(0, 2, 2),
        next_call="list_issues with offset={offset}",
        item_call="get_issue with id={id}",
    )
    document = cap_xml(page, 10_000)
    root = ET.fromstring(document)
    assert [item.get("id") for item in root] == ["1"]
    assert root.get("next_offset") == "1"
    item = root[0]
    assert item.findtext("subject") == "issue 1"
    description = item.findtext("description") or ""
    assert description.startswith("ddd")
    assert "call get_issue with id=1 to read it in full" in description
    assert len(document) <= 10_000


def test_nested_list_is_paged_before_any_text_is_cut() -> None:
    issue = Element("issue", {"id": 9})
    issue.child("subject", None, "long history")
    description = issue.child("description", None, "x" * 20_000)
    description.more = "get_issue with id=9 returns the full description"
    notes = []
    for n in range(60):
        journal = Element("journal", {"id": 1000 + n})
        journal.child("notes", None, "n" * 1200)
        notes.append(journal)
    issue.add(
        page_of(
            "journals",
            notes,
            Window(0, 60, 60),
            next_call="get_issue with id=9 and journals_offset={offset}",
        )
    )
    watchers = issue.child("watchers", {"type": "array"})
    watchers.child("user", {"id": 3}, "Alice")
    document = cap_xml(issue, 50_000)
    root = ET.fromstring(document)
    assert root.findtext("description") == "x" * 20_000, "the description is not cut while journals can page"
    journals = root.find("journals")
    assert journals is not None
    kept = len(journals)
    assert 0 < kept < 60
    assert journals.get("next_offset") == str(kept)
    assert f"get_issue with id=9 and journals_offset={kept}" in document
    assert root.find("watchers/user") is not None, "children after a paged list are kept"


def test_a_text_cut_names_the_reader_given_by_more() -> None:
    issue = Element("issue", {"id": 9})
    description = issue.child("description", None, "y" * 30_000)
    description.more = "get_issue with id=9 returns the full description"
    document = cap_xml(issue, 5_000)
    text = ET.fromstring(document).findtext("description") or ""
    assert "[cut " in text and "get_issue with id=9 returns the full description" in text


def test_window_refuses_nonsense() -> None:
    with pytest.raises(ValueError):
        Window(-1, 10)
    with pytest.raises(ValueError):
        Window(0, 0)


@settings(max_examples=200, deadline=None)
@given(
    sizes=st.lists(st.integers(0, 2000), max_size=50),
    limit=st.integers(1, 30),
    cap=st.integers(500, 10_000),
)
def test_text_pages_visit_every_item_once(sizes: list[int], limit: int, cap: int) -> None:
    texts = [f"<<{i}>>" + "t" * size for i, size in enumerate(sizes)]
    seen: list[int] = []
    offset = 0
    for _ in range(len(sizes) + 2):
        window = Window(offset, limit, len(texts))
        result = text_page(
            texts[offset : offset + limit], window, next_call="search with offset={offset}", cap=cap
        )
        body = result.content[0].text  # type: ignore[union-attr]
        shown = [int(part.split(">>")[0]) for part in body.split("<<")[1:]]
        seen.extend(shown)
        nxt = offset + len(shown)
        if nxt >= len(texts):
            assert "offset=" not in body
            break
        assert f"search with offset={nxt}" in body
        offset = nxt
    assert seen == list(range(len(sizes)))
