"""Handlers called directly, without a server: a RedmineCtx on a stand-in Redmine and the arguments.

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
from hypothesis import given
from hypothesis import strategies as st

from mcpkit.redmine.api import RedmineClient
from mcpkit.redmine.config import RedmineConfig
from mcpkit.redmine.tools import RedmineCtx, issues
from mcpkit.redmine.tools.verify import WRITE_ONLY, compare, same
from mcpkit.redmine.xml import Formatter

KEY = "c0ffee" * 7


def ctx(answer: Any) -> RedmineCtx:
    def handler(request: httpx2.Request) -> httpx2.Response:
        if request.url.path.endswith("/users/current.json"):
            return httpx2.Response(200, json={"user": {"id": 1, "login": "me"}})
        return answer(request)

    config = RedmineConfig(url="http://redmine.invalid", api_key=KEY)
    return RedmineCtx(RedmineClient(config, transport=httpx2.MockTransport(handler)), Formatter())


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
    root = ET.fromstring(text_of(anyio.run(issues.get_issue, rc, {"id": 9, "journals_limit": 25})))
    journals = root.find("journals")
    assert (
        journals is not None and journals.get("total_count") == "60" and journals.get("next_offset") == "25"
    )
    last = ET.fromstring(text_of(anyio.run(issues.get_issue, rc, {"id": 9, "journals_offset": 50})))
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
    unknown = anyio.run(issues.update_issue, rc, {"id": 9, "status_id": 99})
    assert (
        unknown.is_error
        and "status_id asked 99 but kept 1" in text_of(unknown)
        and "no status 99" in text_of(unknown)
    )
    workflow = anyio.run(issues.update_issue, rc, {"id": 9, "status_id": 5})
    assert workflow.is_error and "workflow" in text_of(workflow)
    applied = anyio.run(issues.update_issue, rc, {"id": 9, "status_id": 1})
    assert not applied.is_error


def test_create_issue_sends_several_custom_field_values() -> None:
    sent: list[dict[str, Any]] = []

    def answer(request: httpx2.Request) -> httpx2.Response:
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
    result = anyio.run(issues.create_issue, rc, args)
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
