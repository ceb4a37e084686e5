"""Handlers called directly, without a server: a RedmineContext on a stand-in Redmine and the arguments.

The stand-in is ``httpx2.MockTransport`` (see support.py for why); these pin the pure logic of
verify-after-write and of paging one issue's journals. Everything also runs against the real
Redmine in tests/integration/redmine.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from typing import Any

import anyio
import httpx2
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpkit.errors import ValidationError
from mcpkit.redmine.api import RedmineClient
from mcpkit.redmine.config import RedmineConfig
from mcpkit.redmine.tools import RedmineContext, issues
from mcpkit.redmine.tools.args import uncut
from mcpkit.redmine.tools.verify import WRITE_ONLY, compare, same
from mcpkit.redmine.xml import Formatter

KEY = "c0ffee" * 7


def ctx(answer: Any) -> RedmineContext:
    def handler(request: httpx2.Request) -> httpx2.Response:
        if request.url.path.endswith("/users/current.json"):
            return httpx2.Response(200, json={"user": {"id": 1, "login": "me"}})
        return answer(request)

    config = RedmineConfig(url="http://redmine.invalid", api_key=KEY)
    return RedmineContext(RedmineClient(config, transport=httpx2.MockTransport(handler)), Formatter())


def text_of(result: Any) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


def issue_with(journals: int, status: int = 1) -> dict[str, Any]:
    return {
        "id": 9,
        "subject": "S",
        "status": {"id": status, "name": "New"},
        "journals": [{"id": n, "notes": f"note {n}"} for n in range(journals)],
    }


def test_get_issue_pages_its_journals_and_points_at_the_next_page() -> None:
    rc = ctx(lambda r: httpx2.Response(200, json={"issue": issue_with(60)}))
    root = ET.fromstring(text_of(anyio.run(issues.get_issue, {"id": 9, "journals_limit": 25}, rc)))
    journals = root.find("journals")
    assert (
        journals is not None and journals.get("total_count") == "60" and journals.get("next_offset") == "25"
    )
    last = ET.fromstring(text_of(anyio.run(issues.get_issue, {"id": 9, "journals_offset": 50}, rc)))
    page = last.find("journals")
    assert page is not None and page.get("next_offset") is None
    assert [j.findtext("notes") for j in page] == [f"note {n}" for n in range(50, 60)]


def test_update_issue_reports_a_status_redmine_kept() -> None:
    def answer(request: httpx2.Request) -> httpx2.Response:
        if request.method == "PUT":
            return httpx2.Response(204)
        if request.url.path.endswith("/issue_statuses.json"):
            return httpx2.Response(
                200, json={"issue_statuses": [{"id": 1, "name": "New"}, {"id": 5, "name": "Closed"}]}
            )
        return httpx2.Response(200, json={"issue": issue_with(0)})

    rc = ctx(answer)
    unknown = anyio.run(issues.update_issue, {"id": 9, "status_id": 99}, rc)
    assert (
        unknown.is_error
        and "status_id asked 99 but kept 1 New" in text_of(unknown)
        and "no status 99" in text_of(unknown)
    )
    workflow = anyio.run(issues.update_issue, {"id": 9, "status_id": 5}, rc)
    assert workflow.is_error and "workflow" in text_of(workflow)
    applied = anyio.run(issues.update_issue, {"id": 9, "status_id": 1}, rc)
    assert not applied.is_error


def test_create_issue_sends_several_custom_field_values() -> None:
    sent: list[dict[str, Any]] = []

    def answer(request: httpx2.Request) -> httpx2.Response:
        if request.method == "GET":  # the custom field definitions: a key that may not read them
            return httpx2.Response(403)
        body = json.loads(request.content)
        sent.append(body)
        created = {
            "id": 3,
            "project": {"id": 2, "name": "P"},
            "subject": "S",
            "custom_fields": [{"id": 4, "name": "M", "value": ["a", "b"]}],
        }
        return httpx2.Response(201, json={"issue": created})

    rc = ctx(answer)
    args = {"project": 2, "subject": "S", "custom_fields": [{"id": 4, "values": ["a", "b"]}]}
    result = anyio.run(issues.create_issue, args, rc)
    assert not result.is_error, text_of(result)
    assert sent[0]["issue"]["custom_fields"] == [{"id": 4, "value": ["a", "b"]}]


SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.text(max_size=5))


@given(
    asked=st.dictionaries(
        st.sampled_from(["subject", "done_ratio", "notes", "status_id", "password"]), SCALARS
    )
)
def test_compare_sorts_every_checkable_field_into_applied_or_missed(asked: dict[str, Any]) -> None:
    applied, missed = compare(asked, asked)  # read back exactly as asked: everything applied
    assert not missed
    assert set(applied) == {k for k in asked if k not in WRITE_ONLY}
    _, missed = compare(asked, {})
    checkable = {k for k in asked if k not in WRITE_ONLY}
    assert {m.field for m in missed} <= checkable


@given(value=SCALARS)
def test_same_allows_redmine_spellings_and_is_symmetric(value: Any) -> None:
    assert same(value, value)
    assert same(1, "1.0") and same(" text\r\n", "text") and same(None, "") and same([2, 1], ["1", "2"])
    assert same(value, "zzz-other") == same("zzz-other", value)


@given(before=st.text(max_size=30), after=st.text(max_size=30), total=st.integers(1, 10**6))
def test_text_copied_from_an_excerpt_is_never_written_back(before: str, after: str, total: int) -> None:
    for marker in (
        f" … [excerpt: the first 500 of {total} characters",
        f"… [cut {total} of {total + 1} characters",
    ):
        with pytest.raises(ValidationError, match="excerpt"):
            uncut(before + marker + after, "description")
    if "… [" not in before + after:
        assert uncut(before + after, "description") == before + after


def test_update_issue_refuses_a_description_read_from_a_list() -> None:
    sent: list[str] = []

    def answer(request: httpx2.Request) -> httpx2.Response:
        sent.append(request.method)
        return httpx2.Response(204)

    excerpt = "Start of it … [excerpt: the first 500 of 9000 characters; call get_issue with id=9 to read it in full]"
    with pytest.raises(ValidationError, match="get issue"):
        anyio.run(issues.update_issue, {"id": 9, "description": excerpt}, ctx(answer))
    assert "PUT" not in sent
