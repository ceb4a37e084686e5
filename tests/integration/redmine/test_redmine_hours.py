"""Hours in Redmine's own forms (issue 39 point 6), end to end on the real Redmine.

Each form is logged through the tool and read back from Redmine itself: what Redmine stored
is what the form means, and the answer says success (the write is verified field by field).
"""

from __future__ import annotations

import uuid

import pytest

from tests.integration.redmine.redmine_session import RedmineEnv, mcp_session, rest

pytestmark = pytest.mark.anyio

FORMS = {"1:30": 1.5, "1h30": 1.5, "1h 30m": 1.5, "90m": 1.5, "1,25": 1.25, "2h": 2.0, "45 min": 0.75}


async def test_time_in_every_form_redmine_reads_is_stored_as_it_means(redmine: RedmineEnv) -> None:
    ident = f"hours-{uuid.uuid4().hex[:10]}"
    async with mcp_session(redmine) as s:
        await s.ok("create_project", {"name": "Hours", "identifier": ident})
        made = await s.ok(
            "create_issue", {"project": ident, "subject": "Estimate", "estimated_hours": "2h30"}
        )
        issue = int(made.findtext("issue/id") or 0)
        assert rest(redmine, "GET", f"issues/{issue}.json")["issue"]["estimated_hours"] == 2.5
        for written, hours in FORMS.items():
            logged = await s.ok(
                "create_time_entry", {"issue_id": issue, "hours": written, "activity_id": "development"}
            )
            assert logged.findtext("status") == "success", written
            entry = int(logged.findtext("time_entry/id") or 0)
            assert rest(redmine, "GET", f"time_entries/{entry}.json")["time_entry"]["hours"] == hours, written
        bad = await s.error("create_time_entry", {"issue_id": issue, "hours": "an hour", "activity_id": 9})
        assert "is not a number of hours" in bad and "1:30" in bad and "\n" not in bad
        spent = rest(redmine, "GET", f"time_entries.json?issue_id={issue}")
        assert spent["total_count"] == len(FORMS), "the refused value logged nothing"
        await s.ok("delete_project", {"project": ident, "confirm": True})
