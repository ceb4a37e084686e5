"""The OAuth pieces that need no authorization server: the challenge header, audience comparison
and the options' own checks (the flows themselves are in test_oauth.py, against a real one)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpkit.server import HttpOptions, OAuthOptions, TokenRefused
from mcpkit.server._oauth import _same_resource, challenge, metadata_paths

OPTIONS = OAuthOptions(
    issuer="https://as.example", resource="https://mcp.example/team/mcp", scopes=("mcp:tools",)
)


@given(st.text())
def test_any_refusal_reason_makes_one_latin1_header_whose_description_reads_back(reason: str) -> None:
    header = challenge(OPTIONS, TokenRefused(reason))
    header.encode("latin-1")
    assert "\n" not in header and "\r" not in header
    found = re.search(r'error_description="((?:[^"\\]|\\.)*)"', header)
    assert found is not None
    unescaped = re.sub(r"\\(.)", r"\1", found.group(1))
    assert unescaped == "".join(c if 0x20 <= ord(c) < 0x7F else "?" for c in reason)
    assert header.endswith(
        'resource_metadata="https://mcp.example/.well-known/oauth-protected-resource/team/mcp"'
    )


def test_without_a_token_the_challenge_has_no_error_code() -> None:
    assert challenge(OPTIONS) == (
        'Bearer scope="mcp:tools", '
        'resource_metadata="https://mcp.example/.well-known/oauth-protected-resource/team/mcp"'
    )
    assert metadata_paths(OPTIONS) == {
        "/.well-known/oauth-protected-resource/team/mcp",
        "/.well-known/oauth-protected-resource",
    }


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("https://mcp.example/mcp", "https://MCP.example:443/mcp/", True),
        ("http://127.0.0.1:80/mcp", "http://127.0.0.1/mcp", True),
        ("https://mcp.example/mcp", "http://mcp.example/mcp", False),
        ("https://mcp.example/mcp", "https://mcp.example/other", False),
        ("https://mcp.example/mcp", "https://mcp.example.evil/mcp", False),
        ("https://mcp.example:99999/mcp", "https://mcp.example/mcp", False),
    ],
)
def test_audiences_compare_as_urls(a: str, b: str, same: bool) -> None:
    assert _same_resource(a, b) is same


def test_options_refuse_what_cannot_work() -> None:
    with pytest.raises(ValueError, match="no http"):
        OAuthOptions(issuer="as.example", resource="https://mcp.example/mcp")
    with pytest.raises(ValueError, match="both"):
        OAuthOptions(issuer="https://as.example", resource="https://mcp.example/mcp", client_id="c")
    with pytest.raises(ValueError, match="not both"):
        HttpOptions(bearer_token="t", oauth=OPTIONS)
