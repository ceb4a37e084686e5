"""Custom fields per project and tracker, for an administrator and for a project member.

``mcpkit-required`` (made by scripts/redmine-up.sh) is a required list field of the Bug tracker,
enabled here on this test's project only. The administrator sees it as required before any
create; a Developer sees the field but not that it is required, until Redmine refuses a create
without it: then the hint names its id, and the list says it is required.
"""

from __future__ import annotations

import uuid
import xml.etree.ElementTree as ET

import pytest

from mcpkit.redmine.api import RedmineClient, RedmineError
from mcpkit.redmine.config import RedmineConfig
from mcpkit.redmine.tools import RedmineContext
from mcpkit.redmine.tools.custom_fields import create_failure_hint, list_issue_fields
from mcpkit.redmine.xml import Formatter
from tests.integration.redmine.redmine_session import RedmineEnv, mcp_session, rest

pytestmark = pytest.mark.anyio


def required_field(env: RedmineEnv) -> int:
    fields = rest(env, "GET", "custom_fields.json")["custom_fields"]
    return next(f["id"] for f in fields if f["name"] == "mcpkit-required")


def fields_of(root: ET.Element, tracker: str) -> dict[str, dict[str, str]]:
    box = next(t for t in root.findall("tracker") if t.get("name") == tracker)
    return {str(f.get("name")): dict(f.attrib) for f in box.findall("custom_field")}


async def test_required_fields_are_named_before_and_after_a_refused_create(redmine: RedmineEnv) -> None:
    required = required_field(redmine)
    ident = f"fields-{uuid.uuid4().hex[:10]}"
    async with mcp_session(redmine) as s:
        await s.ok("create_project", {"name": "Fields", "identifier": ident})
        rest(redmine, "PUT", f"projects/{ident}.json", {"project": {"issue_custom_field_ids": [required]}})
        rest(
            redmine,
            "POST",
            "issues.json",
            {
                "issue": {
                    "project_id": ident,
                    "subject": "A bug",
                    "tracker_id": 1,
                    "custom_fields": [{"id": required, "value": "low"}],
                }
            },
        )
        admin = await s.ok("list_issue_fields", {"project": ident})
        bug = fields_of(admin, "Bug")
        assert bug["mcpkit-required"]["required"] == "true" and bug["mcpkit-required"]["id"] == str(required)
        assert bug["mcpkit-text"]["required"] == "false"
        assert "mcpkit-required" not in fields_of(admin, "Feature"), "a field of the Bug tracker only"
        values = [
            v.text
            for v in admin.findall(
                "tracker[@name='Bug']/custom_field[@name='mcpkit-required']/possible_value"
            )
        ]
        assert values == ["low", "high"]
        only_bug = await s.ok("list_issue_fields", {"project": ident, "tracker_id": 1})
        assert [t.get("name") for t in only_bug.findall("tracker")] == ["Bug"]

    member = rest(redmine, "GET", "users/current.json", key=redmine.user_key)["user"]["id"]
    rest(
        redmine,
        "POST",
        f"projects/{ident}/memberships.json",
        {"membership": {"user_id": member, "role_ids": [4]}},
    )
    client = RedmineClient(RedmineConfig(url=redmine.url, api_key=redmine.user_key))
    rc = RedmineContext(client, Formatter(2000))
    try:
        before = ET.fromstring(_text(await list_issue_fields({"project": ident}, rc)))
        assert fields_of(before, "Bug")["mcpkit-required"]["required"] == "unknown"
        assert before.findtext("note"), "says why required is unknown"
        with pytest.raises(RedmineError) as refused:
            await client.post(
                "issues.json",
                what="a new issue",
                json={"issue": {"project_id": ident, "subject": "x", "tracker_id": 1}},
            )
        hint = await create_failure_hint(rc, ident, 1, str(refused.value))
        assert f"{required} mcpkit-required" in hint and "custom_fields" in hint
        after = ET.fromstring(_text(await list_issue_fields({"project": ident}, rc)))
        assert fields_of(after, "Bug")["mcpkit-required"]["required"] == "true"
        assert await create_failure_hint(rc, ident, 1, "Subject cannot be empty") == ""
    finally:
        await client.aclose()
    rest(redmine, "DELETE", f"projects/{ident}.json")


async def test_a_create_refused_for_a_required_field_names_its_id_and_values(redmine: RedmineEnv) -> None:
    required = required_field(redmine)
    ident = f"fields-{uuid.uuid4().hex[:10]}"
    rest(redmine, "POST", "projects.json", {"project": {"name": "Required", "identifier": ident}})
    try:
        rest(redmine, "PUT", f"projects/{ident}.json", {"project": {"issue_custom_field_ids": [required]}})
        async with mcp_session(redmine) as s:
            message = await s.error(
                "create_issue", {"project": ident, "subject": "No field", "tracker_id": 1}
            )
            # An administrator's key reads the definitions: refused before anything is sent
            # (a member's key gets Redmine's 422 with the hint: the test above).
            assert message.startswith("Nothing was created")
            assert f"{required} mcpkit-required, one of low, high" in message
            done = await s.ok(
                "create_issue",
                {
                    "project": ident,
                    "subject": "With field",
                    "tracker_id": 1,
                    "custom_fields": [{"id": required, "value": "high"}],
                },
            )
            assert done.findtext("status") == "success"
            # A refusal with nothing about custom fields stays Redmine's own line.
            other = await s.error(
                "create_issue",
                {
                    "project": ident,
                    "subject": "x",
                    "start_date": "2025-02-01",
                    "due_date": "2025-01-01",
                    "tracker_id": 2,
                },
            )
            assert "Required custom fields" not in other
    finally:
        rest(redmine, "DELETE", f"projects/{ident}.json")


def _text(result: object) -> str:
    return "".join(getattr(c, "text", "") for c in getattr(result, "content", []))
