"""validate_result: one positive and one negative case per rule, version gates, output schemas."""

from __future__ import annotations

import base64
import sys
from typing import Any

import pytest

from mcpkit.results import error_result, text_result, to_wire, validate_result, xml_result
from mcpkit.results._xml import Element
from tests.support.env import REPO
from tests.support.raw_stdio import PROTOCOL_VERSION, RawStdioClient

PNG = base64.b64encode(b"\x89PNG\r\n").decode()
ALL_VERSIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"]


def result(*items: Any, **top: Any) -> dict[str, Any]:
    return {"content": list(items), "resultType": "complete", **top}


VALID_ITEMS = {
    "text": {"type": "text", "text": "hi", "annotations": {"audience": ["user"], "priority": 0.5}},
    "image": {"type": "image", "data": PNG, "mimeType": "image/png"},
    "audio": {"type": "audio", "data": "", "mimeType": "audio/wav"},
    "resource-text": {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "t"}},
    "resource-blob": {"type": "resource", "resource": {"uri": "mem://x", "blob": PNG, "mimeType": "x/y"}},
    "resource_link": {"type": "resource_link", "uri": "https://e.com/r?q=1", "name": "r", "size": 3},
}


@pytest.mark.parametrize("name", list(VALID_ITEMS))
def test_valid_items_pass(name: str) -> None:
    assert validate_result(result(VALID_ITEMS[name]), "2025-11-25") == []


@pytest.mark.parametrize(
    ("item", "problem"),
    [
        ({"type": "text"}, "/content/0: missing required field 'text'"),
        ({"type": "text", "text": 3}, "/content/0/text: must be a string, got number"),
        (
            {"type": "image", "data": "not base64!", "mimeType": "image/png"},
            "/content/0/data: is not valid base64",
        ),
        ({"type": "image", "data": PNG}, "/content/0: missing required field 'mimeType'"),
        ({"type": "audio", "mimeType": "a/b"}, "/content/0: missing required field 'data'"),
        ({"type": "resource", "resource": {"uri": "file:///a"}}, "/content/0/resource: needs 'text'"),
        (
            {"type": "resource", "resource": {"text": "t"}},
            "/content/0/resource: missing required field 'uri'",
        ),
        (
            {"type": "resource", "resource": {"uri": "x:y", "blob": "QQ="}},
            "/content/0/resource/blob: is not valid",
        ),
        ({"type": "resource", "resource": "file:///a"}, "/content/0/resource: must be an object"),
        ({"type": "resource_link", "uri": "https://e.com"}, "/content/0: missing required field 'name'"),
        ({"type": "resource_link", "uri": "a file.txt", "name": "n"}, "/content/0/uri: is not a valid URI"),
        (
            {"type": "resource_link", "uri": "x:y", "name": "n", "size": 1.5},
            "/content/0/size: must be an integer",
        ),
        (
            {"type": "resource_link", "uri": "x:y", "name": "n", "icons": [{"src": "x:i", "theme": "dim"}]},
            "/content/0/icons/0/theme: must be one of light, dark",
        ),
        ({"type": "video", "text": "x"}, "/content/0/type: unknown content type 'video'"),
        ({"text": "x"}, "/content/0: missing required field 'type'"),
        ("text", "/content/0: content item must be an object"),
        (
            {"type": "text", "text": "x", "annotations": {"audience": ["bot"]}},
            "/content/0/annotations/audience/0",
        ),
        (
            {"type": "text", "text": "x", "annotations": {"priority": 2}},
            "/content/0/annotations/priority: must be",
        ),
        (
            {"type": "text", "text": "x", "annotations": {"priority": True}},
            "/content/0/annotations/priority: must",
        ),
        ({"type": "text", "text": "x", "_meta": []}, "/content/0/_meta: must be an object"),
    ],
)
def test_each_item_rule_reports_its_problem(item: Any, problem: str) -> None:
    problems = validate_result(result(item), "2025-11-25")
    assert any(p.startswith(problem) for p in problems), problems


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        ({}, "/: missing required field 'content'"),
        ({"content": {"type": "text", "text": "x"}}, "/content: must be an array, got object"),
        ({"content": [], "isError": "true"}, "/isError: must be a boolean, got string"),
        ({"content": [], "isError": 1}, "/isError: must be a boolean, got number"),
        ({"content": [], "structuredContent": [1]}, "/structuredContent: must be an object, got array"),
        ({"content": [], "_meta": "x"}, "/_meta: must be an object, got string"),
    ],
)
def test_envelope_rules(raw: dict[str, Any], problem: str) -> None:
    assert problem in validate_result(raw, "2025-11-25")


def test_non_object_result() -> None:
    assert validate_result([], "2025-11-25") == ["/: result must be a JSON object"]  # type: ignore[arg-type]


def test_unknown_protocol_version_is_a_caller_error() -> None:
    with pytest.raises(ValueError, match="unknown MCP protocol version"):
        validate_result(result(), "2023-01-01")


@pytest.mark.parametrize(
    ("item_or_field", "added"),
    [
        ({"type": "audio", "data": "", "mimeType": "a/b"}, "2025-03-26"),
        ({"type": "resource_link", "uri": "x:y", "name": "n"}, "2025-06-18"),
        ("structuredContent", "2025-06-18"),
    ],
)
def test_features_are_refused_before_their_version(item_or_field: Any, added: str) -> None:
    raw = result(structuredContent={}) if item_or_field == "structuredContent" else result(item_or_field)
    for version in ALL_VERSIONS:
        problems = validate_result(raw, version)
        if version < added:
            assert problems and f"(added in {added})" in problems[0], (version, problems)
        else:
            assert problems == [], (version, problems)


def test_2026_requires_result_type_and_checks_server_info() -> None:
    assert "/: missing required field 'resultType'" in validate_result({"content": []}, "2026-07-28")
    assert validate_result({"content": []}, "2025-11-25") == []
    meta = {"io.modelcontextprotocol/serverInfo": {"name": "s"}}
    problems = validate_result(result(_meta=meta), "2026-07-28")
    assert problems == ["/_meta/io.modelcontextprotocol~1serverInfo: missing required field 'version'"]
    assert validate_result(result(structuredContent=[1, 2]), "2026-07-28") == []


SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


def test_structured_content_against_output_schema() -> None:
    assert validate_result(result(structuredContent={"n": 1}), output_schema=SCHEMA) == []
    assert validate_result(result(structuredContent={"n": "one"}), output_schema=SCHEMA) == [
        "/structuredContent/n: does not match the output schema: 'one' is not of type 'integer'"
    ]
    assert validate_result(result(), output_schema=SCHEMA) == [
        "/: missing 'structuredContent' although the tool declares an output schema"
    ]
    # Error results are exempt, as clients exempt them.
    assert validate_result(result(isError=True), output_schema=SCHEMA) == []
    broken = validate_result(result(structuredContent={}), output_schema={"type": 5})
    assert broken and "the output schema is invalid" in broken[0]


def test_sdk_second_opinion_is_consulted(monkeypatch: pytest.MonkeyPatch) -> None:
    """If mcpkit's rules miss something the SDK refuses, the SDK's complaint is reported."""
    import mcpkit.results._validate as validate_module

    monkeypatch.setattr(validate_module, "check_content_item", lambda report, item, path: None)
    problems = validate_result(result({"type": "text", "text": 5}), "2025-11-25")
    assert problems and all("SDK refuses it" in p for p in problems)


def test_pointer_escapes_slash_and_tilde() -> None:
    raw = result(structuredContent={"a/b~c": "x"})
    schema = {"type": "object", "properties": {"a/b~c": {"type": "integer"}}}
    assert validate_result(raw, output_schema=schema)[0].startswith("/structuredContent/a~1b~0c:")


@pytest.mark.parametrize("version", ALL_VERSIONS)
def test_every_builder_output_is_valid_in_every_version(version: str) -> None:
    built = [
        text_result("plain"),
        text_result("x" * 100, limit=10),
        error_result(RuntimeError("boom\nTraceback (most recent call last):")),
        xml_result(Element("r", {"a": "<&>"}, "\x00text")),
    ]
    for item in built:
        assert validate_result(to_wire(item), version) == [], (version, to_wire(item))
        assert validate_result(to_wire(item, protocol_version=version), version) == []


@pytest.mark.parametrize("kind", ["text", "error", "xml"])
def test_to_wire_matches_what_the_sdk_sends(kind: str) -> None:
    """The raw JSON a bare SDK server writes for a built result equals to_wire of that result."""
    from tests.results.bare_sdk_server import build

    text = 'a & <b>\u2028ü\nline \x01 "q"'
    script = str(REPO / "tests" / "results" / "bare_sdk_server.py")
    with RawStdioClient([sys.executable, script]) as client:
        client.initialize()
        reply = client.request("tools/call", {"name": "show", "arguments": {"kind": kind, "text": text}})
    raw = reply["result"]
    assert raw == to_wire(build(kind, text), protocol_version=PROTOCOL_VERSION)
    assert validate_result(raw, PROTOCOL_VERSION) == []


def test_a_result_object_is_checked_in_its_wire_form() -> None:
    good = text_result("hello")
    assert validate_result(good) == validate_result(to_wire(good)) == []
    assert validate_result(error_result("failed"), "2026-07-28") == []
