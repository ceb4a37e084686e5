"""Every tool's input handling, driven by hypothesis from the tool's own input schema.

Whatever arguments arrive, a call ends in a well-formed result: a parseable XML document or
a one-line isError message, never an internal error, never the key, never a request path
that climbs out of its resource, and never a DELETE without ``confirm: true``.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpkit.errors import ValidationError
from mcpkit.redmine.tools.issues import issue_fields, issue_filters
from mcpkit.redmine.tools.search import search_params
from mcpkit.redmine.tools.time_entries import time_fields, time_filters
from mcpkit.redmine.tools.wiki import page_title
from tests.redmine.support import KEY, Recorder, arguments_for, make_server

SERVER = make_server(Recorder())
TOOL_NAMES = sorted(t.name for t in SERVER.tools)


def result_text(result: Any) -> str:
    assert result.content, "a result always has content"
    return "".join(getattr(c, "text", "") for c in result.content)


def check_paths(recorder: Recorder) -> None:
    for request in recorder.requests:
        raw = request.url.raw_path.split(b"?")[0]
        segments = raw.split(b"/")
        assert b".." not in segments and b"." not in segments, raw
        assert raw.startswith(b"/sub/"), raw


@pytest.mark.parametrize("name", TOOL_NAMES)
def test_tool_input_handling(name: str) -> None:
    recorder = Recorder()
    server = make_server(recorder)
    spec = next(t for t in server.tools if t.name == name)

    @settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(args=arguments_for(spec.input_schema))
    def run(args: dict[str, Any]) -> None:
        recorder.requests.clear()
        result = anyio.run(server.call, name, args)
        text = result_text(result)
        assert "internal error" not in text, text
        assert KEY not in text
        if result.is_error:
            assert "\n" not in text.strip()
        else:
            ET.fromstring(text.encode("utf-8"))
        check_paths(recorder)
        if spec.is_destructive and args.get("confirm") is not True:
            assert all(r.method != "DELETE" for r in recorder.requests)

    run()


def test_there_are_at_least_50_tools_and_deletes_need_confirm() -> None:
    assert len(SERVER.tools) >= 50
    for spec in SERVER.tools:
        if spec.name.startswith("delete_"):
            assert spec.is_destructive and "confirm" in spec.input_schema["properties"], spec.name
        if spec.is_destructive:
            assert "confirm" in spec.input_schema["properties"], spec.name


def test_delete_without_confirm_is_a_preview() -> None:
    recorder = Recorder()
    server = make_server(recorder)
    result = anyio.run(server.call, "delete_issue", {"id": 5})
    root = ET.fromstring(result_text(result).encode())
    assert root.findtext("status") == "preview"
    assert root.find("impact/issue") is not None
    assert all(r.method != "DELETE" for r in recorder.requests)
    result = anyio.run(server.call, "delete_issue", {"id": 5, "confirm": True})
    assert ET.fromstring(result_text(result).encode()).findtext("status") == "success"
    assert [r.method for r in recorder.requests].count("DELETE") == 1


def test_update_after_204_reads_the_entity_back() -> None:
    recorder = Recorder()
    server = make_server(recorder)
    result = anyio.run(server.call, "update_issue", {"id": 5, "subject": "new"})
    root = ET.fromstring(result_text(result).encode())
    assert root.findtext("status") == "success"
    assert root.find("issue") is not None
    methods = [(r.method, r.url.path) for r in recorder.requests]
    assert ("PUT", "/sub/issues/5.json") in methods and methods[-1] == ("GET", "/sub/issues/5.json")


def test_read_only_hides_and_refuses_writes() -> None:
    server = make_server(Recorder(), read_only=True)
    names = {t.name for t in server.tools}
    assert "list_issues" in names and "create_issue" not in names and "delete_project" not in names
    assert all(t.read_only for t in server.tools)
    result = anyio.run(server.call, "create_issue", {"project": "p", "subject": "s"})
    assert result.is_error and "read-only" in result_text(result)


def test_text_attachment_is_returned_binary_refused_without_dir(tmp_path: Path) -> None:
    recorder = Recorder()
    result = anyio.run(make_server(recorder).call, "download_attachment", {"id": 1})
    content = ET.fromstring(result_text(result).encode()).find("content")
    assert (
        content is not None and content.text == "plain text <content>" and content.get("untrusted") == "true"
    )
    result = anyio.run(make_server(recorder).call, "download_attachment", {"id": 1, "save": True})
    assert result.is_error and "REDMINE_ATTACHMENTS_DIR" in result_text(result)
    result = anyio.run(
        make_server(recorder, attachments_dir=tmp_path).call, "download_attachment", {"id": 1, "save": True}
    )
    saved = ET.fromstring(result_text(result).encode()).findtext("saved_to")
    assert saved and Path(saved).read_bytes() == b"plain text <content>" and Path(saved).parent == tmp_path


def test_upload_refuses_paths_outside_the_directory(tmp_path: Path) -> None:
    (tmp_path / "ok.txt").write_text("hello")
    server = make_server(Recorder(), attachments_dir=tmp_path)
    for bad in ("../etc/passwd", "/etc/passwd", "missing.txt"):
        result = anyio.run(server.call, "upload_attachment", {"issue_id": 5, "path": bad})
        assert result.is_error, bad
    result = anyio.run(server.call, "upload_attachment", {"issue_id": 5, "path": "ok.txt"})
    assert not result.is_error, result_text(result)


# -- the pure translators ---------------------------------------------------------------------------


def test_issue_filters_translate_redmine_names() -> None:
    q = issue_filters(
        {
            "project": "my-project",
            "status": "closed",
            "assigned_to": "me",
            "author": "4",
            "tracker": 2,
            "created": ">=2025-01-01",
            "custom_fields": [{"id": 3, "value": "x"}],
            "sort": "id:desc",
            "subject": "crash",
        }
    )
    assert q == {
        "project_id": "my-project",
        "status_id": "closed",
        "assigned_to_id": "me",
        "author_id": 4,
        "tracker_id": 2,
        "created_on": ">=2025-01-01",
        "cf_3": "x",
        "sort": "id:desc",
        "subject": "~crash",
    }


@pytest.mark.parametrize(
    "args",
    [
        {"status": "0"},
        {"assigned_to": "-3"},
        {"tracker": ""},
        {"created": "yesterday-ish"},
        {"sort": "id desc; drop"},
        {"project": "Has Spaces"},
        {"query_id": 1, "status": "open"},
        {"query_id": 1, "custom_fields": [{"id": 3, "value": "x"}]},
    ],
)
def test_issue_filters_refuse_bad_values(args: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        issue_filters(args)


def test_what_the_schema_refuses_is_refused_once_by_the_server_in_one_line() -> None:
    result = anyio.run(SERVER.call, "list_issues", {"include": ["journals"]})
    assert result.is_error
    assert result_text(result).startswith('Invalid arguments for list_issues: include[0]: got "journals"')


@settings(max_examples=200, deadline=None)
@given(who=st.one_of(st.integers(1, 10**6).map(str), st.just("me")), me=st.integers(1, 100))
def test_assigned_to_me_becomes_the_key_owner(who: str, me: int) -> None:
    fields = issue_fields({"assigned_to": who}, me=me)
    assert fields["assigned_to_id"] == (me if who == "me" else int(who))


def test_time_entries_need_an_issue_or_project_and_hours() -> None:
    with pytest.raises(ValidationError):
        time_fields({"hours": 1}, creating=True)
    with pytest.raises(ValidationError):
        time_fields({"issue_id": 1, "hours": 0}, creating=True)
    assert time_fields({"project": "p", "hours": "1.5", "spent_on": "2025-01-02"}, creating=True) == {
        "project_id": "p",
        "hours": 1.5,
        "spent_on": "2025-01-02",
    }
    assert time_filters({"user": "me", "from": "2025-01-01"}) == {"user_id": "me", "from": "2025-01-01"}


@settings(max_examples=200, deadline=None)
@given(title=st.text(max_size=40))
def test_wiki_titles_are_safe_or_refused(title: str) -> None:
    try:
        out = page_title(title)
    except ValidationError:
        return
    assert out and "/" not in out and "." not in out and " " not in out


def test_search_params() -> None:
    assert search_params({"query": " hello ", "kinds": ["issues"], "titles_only": True}) == {
        "q": "hello",
        "issues": "1",
        "titles_only": "1",
    }
    with pytest.raises(ValidationError):
        search_params({"query": "  "})
