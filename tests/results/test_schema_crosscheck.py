"""validate_result agrees with the official MCP JSON schemas on thousands of generated results.

The oracle is jsonschema over ../shared/mcp-schema/<version>/schema.json (skipped when that
directory is absent: a user's clone does not have it). Two formats the schema declares are
made assertive with checks written here independently of mcpkit's: ``byte`` (base64 via the
standard library) and ``uri`` (RFC 3986 character rules). The one intended difference: mcpkit
refuses ``structuredContent`` on versions before 2025-06-18, which the old schemas merely ignore.
"""

from __future__ import annotations

import base64
import binascii
import json
import string
from functools import cache
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema.validators import validator_for
from mcp_types.version import KNOWN_PROTOCOL_VERSIONS

from mcpkit.results import validate_result
from tests.support.env import SHARED

SCHEMAS = SHARED / "mcp-schema"
pytestmark = pytest.mark.skipif(not SCHEMAS.is_dir(), reason="../shared/mcp-schema not present")

_URI_CHARS = set(string.ascii_letters + string.digits + "-._~:/?#[]@!$&'()*+,;=%")


def oracle_byte(value: object) -> bool:
    if not isinstance(value, str):
        return True
    if len(value) % 4:
        return False
    try:
        base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def oracle_uri(value: object) -> bool:
    if not isinstance(value, str):
        return True
    scheme, colon, rest = value.partition(":")
    if not colon or not scheme or not (scheme[0].isascii() and scheme[0].isalpha()):
        return False
    if not all(c.isascii() and (c.isalnum() or c in "+-.") for c in scheme):
        return False
    if not all(c in _URI_CHARS for c in rest):
        return False
    return all(len(p) >= 2 and all(c in string.hexdigits for c in p[:2]) for p in rest.split("%")[1:])


FORMATS = jsonschema.FormatChecker(formats=())
FORMATS.checks("byte")(oracle_byte)
FORMATS.checks("uri")(oracle_uri)


@cache
def official(version: str) -> Any:
    schema = json.loads((SCHEMAS / version / "schema.json").read_text())
    defs = "definitions" if "definitions" in schema else "$defs"
    schema["$ref"] = f"#/{defs}/CallToolResult"
    cls = validator_for(schema)
    return cls(schema, format_checker=FORMATS)


def expected_valid(raw: dict[str, Any], version: str) -> bool:
    if not official(version).is_valid(raw):
        return False
    old = KNOWN_PROTOCOL_VERSIONS.index(version) < KNOWN_PROTOCOL_VERSIONS.index("2025-06-18")
    return not (old and "structuredContent" in raw)


# --- generators: mostly plausible values, with every kind of near miss mixed in ---------------

wrong: st.SearchStrategy[Any] = (
    st.none() | st.integers(-2, 3) | st.booleans() | st.lists(st.integers(), max_size=1) | st.just({})
)
good_b64 = st.binary(max_size=12).map(lambda b: base64.b64encode(b).decode())
bad_b64 = st.sampled_from(["QQ=", "QQQQ=", "Q===", "a b=", "-_-_", "QUJD\n", "ü===", "="]) | st.text(
    alphabet="AQ+/=", max_size=7
)
uri_body = st.text(alphabet="abcXYZ019-._~:/?#[]@!$&'()*+,;=", max_size=12)
good_uri = st.builds(
    lambda s, b, e: f"{s}:{b}{e}",
    st.from_regex(r"[a-zA-Z][a-zA-Z0-9+.\-]{0,5}", fullmatch=True),
    uri_body,
    st.sampled_from(["", "%20", "%aF"]),
)
bad_uri = st.sampled_from(
    ["", "no-scheme", "1x:y", "a b:c", "http://a b", "file:///ü", "x:%G0", "x:%2", ":x"]
)
text = st.text(max_size=8)


def maybe(value: st.SearchStrategy[Any], bad: st.SearchStrategy[Any] = wrong) -> st.SearchStrategy[Any]:
    """A field value: usually right (7 in 8), sometimes of the wrong kind."""
    return rarely(bad, otherwise=value)


def rarely(odd: st.SearchStrategy[Any], *, otherwise: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """``odd`` one time in eight (one_of would pick it far more often), shrinking to ``otherwise``."""
    return st.sampled_from(range(8)).flatmap(lambda n: odd if n == 7 else otherwise)


annotation_objects = st.fixed_dictionaries(
    {},
    optional={
        "audience": maybe(st.lists(st.sampled_from(["user", "assistant"]), max_size=2)) | st.just(["bot"]),
        "priority": maybe(st.floats(-0.5, 1.5, allow_nan=False)),
        "lastModified": maybe(text),
    },
)
icon = st.fixed_dictionaries(
    {"src": maybe(good_uri, bad_uri)},
    optional={
        "mimeType": maybe(text),
        "sizes": maybe(st.lists(text, max_size=2)) | st.just([1]),
        "theme": st.sampled_from(["light", "dark", "dim"]),
    },
)
common = {"annotations": maybe(annotation_objects), "_meta": maybe(st.just({"k": 1})), "extra": wrong}


def item(kind: str, required: dict[str, Any], optional: dict[str, Any]) -> st.SearchStrategy[Any]:
    return st.fixed_dictionaries(
        {"type": st.just(kind)}, optional={**required, **optional, **common}
    ) | st.fixed_dictionaries({"type": st.just(kind), **required}, optional={**optional, **common})


resource_contents = st.fixed_dictionaries(
    {},
    optional={
        "uri": maybe(good_uri, bad_uri),
        "text": maybe(text),
        "blob": maybe(good_b64, bad_b64),
        "mimeType": maybe(text),
        "_meta": maybe(st.just({})),
    },
)
content_item = st.one_of(
    item("text", {"text": maybe(text)}, {}),
    item("image", {"data": maybe(good_b64, bad_b64), "mimeType": maybe(text)}, {}),
    item("audio", {"data": maybe(good_b64, bad_b64), "mimeType": maybe(text)}, {}),
    item("resource", {"resource": maybe(resource_contents)}, {}),
    item(
        "resource_link",
        {"uri": maybe(good_uri, bad_uri), "name": maybe(text)},
        {
            "title": maybe(text),
            "description": maybe(text),
            "mimeType": maybe(text),
            "size": maybe(st.integers(0, 9)) | st.sampled_from([1.0, 1.5, "3"]),
            "icons": maybe(st.lists(icon, max_size=2)),
        },
    ),
)
content_item = rarely(
    st.fixed_dictionaries({"type": st.sampled_from(["video", "TEXT", ""]) | wrong, "text": text}) | wrong,
    otherwise=content_item,
)
server_info = st.fixed_dictionaries(
    {},
    optional={
        "name": maybe(text),
        "version": maybe(text),
        "title": maybe(text),
        "websiteUrl": maybe(good_uri, bad_uri),
        "icons": maybe(st.lists(icon, max_size=1)),
    },
)
results_optional = {
    "content": maybe(st.lists(content_item, max_size=3)),
    "isError": maybe(st.booleans(), st.sampled_from(["true", 1, 0, None])),
    "structuredContent": maybe(st.dictionaries(text, st.integers(), max_size=2), st.just([1]) | wrong),
    "resultType": maybe(st.sampled_from(["complete", "input_required"])),
    "_meta": maybe(st.fixed_dictionaries({}, optional={"io.modelcontextprotocol/serverInfo": server_info})),
}
results = st.fixed_dictionaries({}, optional=results_optional) | st.fixed_dictionaries(
    {"content": st.lists(content_item, max_size=3), "resultType": st.just("complete")},
    optional={k: v for k, v in results_optional.items() if k not in ("content", "resultType")},
)


@settings(max_examples=1500, deadline=None)
@given(raw=results)
def test_agrees_with_official_schema_for_every_version(raw: dict[str, Any]) -> None:
    for version in KNOWN_PROTOCOL_VERSIONS:
        problems = validate_result(raw, version)
        assert (problems == []) == expected_valid(raw, version), (version, raw, problems)


@settings(max_examples=300, deadline=None)
@given(
    items=st.lists(item("text", {"text": text}, {}) | item("image", {"data": good_b64, "mimeType": text}, {}))
)
def test_generated_examples_include_valid_results(items: list[Any]) -> None:
    """Guards the generator: plenty of results must be valid, or agreement would prove little."""
    raw = {"content": items, "isError": False, "resultType": "complete"}
    for version in KNOWN_PROTOCOL_VERSIONS:
        assert (validate_result(raw, version) == []) == expected_valid(raw, version)


def test_generator_yields_both_verdicts() -> None:
    """Count verdicts over a fixed sample: both valid and invalid results must be common."""
    verdicts = {True: 0, False: 0}

    @settings(max_examples=400, deadline=None, database=None)
    @given(raw=results)
    def sample(raw: dict[str, Any]) -> None:
        verdicts[expected_valid(raw, "2025-11-25")] += 1

    sample()
    assert verdicts[True] >= 20 and verdicts[False] >= 20, verdicts
