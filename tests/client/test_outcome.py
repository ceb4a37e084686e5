"""Outcome text joining: every item, in order, described when not text (pure functions)."""

from __future__ import annotations

import base64
import json

from hypothesis import given
from hypothesis import strategies as st

from mcpkit.client import Outcome, describe_content


@given(st.lists(st.text(), min_size=1, max_size=8))
def test_text_items_join_verbatim_in_order(texts: list[str]) -> None:
    raw = {"content": [{"type": "text", "text": t} for t in texts]}
    assert Outcome.from_raw(raw).text == "\n".join(texts)


@given(st.binary(max_size=5000), st.sampled_from(["image", "audio"]))
def test_binary_items_report_decoded_size(data: bytes, kind: str) -> None:
    item = {"type": kind, "data": base64.b64encode(data).decode(), "mimeType": f"{kind}/x"}
    assert describe_content(item) == f"[{kind}: {kind}/x, {len(data):,} bytes]"


def test_every_kind_of_item_is_kept_and_described() -> None:
    raw = {
        "content": [
            {"type": "text", "text": "a"},
            {"type": "resource", "resource": {"uri": "file:///t", "text": "body"}},
            {"type": "resource", "resource": {"uri": "file:///b", "mimeType": "x/y", "blob": "AAAA"}},
            {"type": "resource_link", "uri": "file:///l", "name": "l"},
            {"type": "widget", "n": 1},
            "not even a dict",
        ]
    }
    out = Outcome.from_raw(raw)
    assert len(out.contents) == 6
    lines = out.text.split("\n")
    assert lines[:5] == [
        "a",
        "[resource: file:///t]",
        "body",
        "[resource: file:///b, x/y, 3 bytes]",
        "[resource link: file:///l]",
    ]
    assert lines[5].startswith("[unknown content 'widget': ")
    assert lines[6].startswith("[unknown content None: ")


@given(st.dictionaries(st.text(max_size=5), st.integers(), max_size=4))
def test_empty_content_falls_back_to_structured_json(structured: dict[str, int]) -> None:
    out = Outcome.from_raw({"content": [], "structuredContent": structured})
    assert json.loads(out.text) == structured
    assert out.structured == structured


def test_no_content_and_no_structured_is_empty_text() -> None:
    assert Outcome.from_raw({"content": []}).text == ""
    assert Outcome.from_raw({}).text == ""


def test_is_error_only_when_true() -> None:
    assert Outcome.from_raw({"content": [], "isError": True}).is_error
    assert not Outcome.from_raw({"content": [], "isError": "yes"}).is_error
